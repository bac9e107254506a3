// The engine: pure functions from input objects to per-cluster objects and their provenance.
export { pruneServerFields } from './copy.js';
export {
  render,
  renderDetailed,
  renderEach,
  type RenderInput,
  type RenderResult,
  type RenderError,
  type Placement,
  type DetailedPlacement,
  type DetailedResult,
  type RenderOptions,
  type RenderSummary,
} from './render.js';
export { explainPlacement, formatExplanation, describePolicy, type PathExplanation } from './explain.js';
export { sortInputs, clusterInfo, refOf, isClusterScoped } from './inputs.js';
export { applyOperation, getValue, PatchError, type PatchOperation } from './patch.js';
export { websterSeats } from './webster.js';
export type { Change, ChangeSource, ClusterInfo, ObjectRef, PolicyRef, AppliedRule } from './types.js';
export {
  EngineState,
  templateKey,
  type EngineStateOptions,
  type Mutation,
  type Rejection,
  type TemplateResult,
  type StateCounts,
} from './state.js';
export { DEFAULT_DISPATCH, dispatchOf, isSuspended, type ApplicationFailover, type Dispatch } from './dispatch.js';
export { OverrideSet, AdmissionOverrideError } from './admit.js';
export { ADDED_ANNOTATION } from './additions.js';
export type { AdmitRequest, AdmitResult } from './admit.js';
export type { AdmissionOperation } from './overrides.js';
export { isMutator, readMutator, MUTATION_GROUP, MUTATOR_KINDS, type Mutator } from './gatekeeper.js';
