// Member access for the command line and the controller: kubeconfig loading, a keep-alive HTTP client
// per member, discovery, the ApplySet convention and the server-side-apply applier. It does not load
// @kubernetes/client-node (config.ts is the project's own kubeconfig model); commands that do not talk
// to clusters still import it only when they need it.
export {
  KubeconfigError,
  type KubeconfigErrorCode,
  TransportError,
  ApiError,
  UnknownKindError,
  displayServer,
} from './errors.js';
export {
  loadKubeconfig,
  loadContext,
  readKubeconfigFile,
  configForContext,
  contextNames,
  serverOf,
  type KubeconfigSource,
  type LoadedKubeconfig,
} from './kubeconfig.js';
export { KubeConfig, type Cluster, type Context, type User } from './config.js';
export { KubeClient, apiError, type ClientOptions, type KubeRequest, type KubeResponse } from './client.js';
export { httpsTransport, type Transport, type TransportRequest, type TransportResponse } from './transport.js';
export { Discovery, resourcePath, splitApiVersion, type ResourceInfo } from './discovery.js';
export {
  applySetId,
  groupKindString,
  parseGroupKind,
  parentObject,
  readParent,
  toolingBaseName,
  ParentError,
  PART_OF_LABEL,
  ID_LABEL,
  TOOLING_ANNOTATION,
  GROUP_KINDS_ANNOTATION,
  NAMESPACES_ANNOTATION,
  TOOL_NAME,
  type ParentRef,
  type ParentState,
} from './applyset.js';
export {
  MemberApplier,
  type Action,
  type ApplyMode,
  type ApplierOptions,
  type ConflictResolution,
  type DesiredObject,
  type MemberReport,
  type ObjectResult,
} from './applier.js';
export { unifiedDiff, type UnifiedDiffOptions } from './diff.js';
export { describeObject, withoutServerFields, deepEqual, type ObjectId, type JsonObject } from './objects.js';
export {
  APPLIED_HASH_ANNOTATION,
  appliedHash,
  stampAppliedHash,
  unchangedSinceApply,
  covers,
  overlaps,
  type ManagedFieldsEntry,
} from './ownership.js';
