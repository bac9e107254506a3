// Sorting the input objects into templates, policies and clusters. Policies of either group
// (policy.flotilla.io, policy.karmada.io) and either version are read in the v1alpha1 shape; Clusters of
// either group likewise. Anything that cannot be used is reported, never dropped silently.

import {
  KARMADA_API_VERSION as KARMADA_CLUSTER,
  API_VERSION as CLUSTER_API_VERSION,
} from '../../api/cluster/v1alpha1/types.js';
import { convertObject } from '../../api/conversion/index.js';
import { MAX_DEPTH, tooDeepUnder } from '../../api/internal/objects.js';
import {
  API_VERSION as POLICY_V1ALPHA1,
  GROUP as POLICY_GROUP,
  KARMADA_API_VERSION as KARMADA_POLICY,
  POLICY_KINDS,
  type PolicyKind,
} from '../../api/policy/v1alpha1/types.js';
import { arr, isObject, obj, str, stringList, stringMap, type JsonObject } from './json.js';
import { readApiEnablements, readCapacity } from './capacity.js';
import { isMutator, MUTATION_GROUP, readMutator, sortMutators, type Mutator } from './gatekeeper.js';
import type { ClusterInfo, ObjectRef, PolicyRef } from './types.js';

export interface Template {
  ref: ObjectRef;
  labels: Readonly<Record<string, string>>;
  object: JsonObject;
  /** Position in the input; placements come out in this order. */
  index: number;
}

export interface PolicyEntry {
  kind: PolicyKind;
  ref: PolicyRef;
  /** The namespace for namespaced kinds ("" for cluster-scoped ones). */
  namespace: string;
  name: string;
  spec: JsonObject;
  object: JsonObject;
}

export interface InputError {
  object: ObjectRef;
  message: string;
}

export interface Inputs {
  templates: Template[];
  propagation: PolicyEntry[];
  overrides: PolicyEntry[];
  clusters: ClusterInfo[];
  /** Gatekeeper's Assign/AssignMetadata, in the order Gatekeeper applies them. */
  mutators: Mutator[];
  /** Labels of the Namespaces in the input (which are templates too), for mutators' namespaceSelector. */
  namespaceLabels: Map<string, Record<string, string>>;
  errors: InputError[];
}

/** Built-in kinds that have no namespace. A template of another kind without a namespace goes to "default". */
const CLUSTER_SCOPED_KINDS = new Set([
  'Namespace',
  'Node',
  'PersistentVolume',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'StorageClass',
  'PriorityClass',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'APIService',
  'IngressClass',
  'RuntimeClass',
  'CSIDriver',
  'CSINode',
  'VolumeAttachment',
  'CertificateSigningRequest',
  'FlowSchema',
  'PriorityLevelConfiguration',
  'ComponentStatus',
]);

const CLUSTER_POLICY_KINDS = new Set(['ClusterPropagationPolicy', 'ClusterOverridePolicy']);

export function isClusterScoped(kind: string): boolean {
  return CLUSTER_SCOPED_KINDS.has(kind) || CLUSTER_POLICY_KINDS.has(kind) || kind === 'Cluster';
}

/** The identity of any object, as far as it can be read (for error messages). */
export function refOf(o: unknown): ObjectRef {
  const m = isObject(o) ? obj(o.metadata) : undefined;
  const ref: ObjectRef = {
    apiVersion: isObject(o) ? (str(o.apiVersion) ?? '') : '',
    kind: isObject(o) ? (str(o.kind) ?? '') : '',
    name: str(m?.name) ?? '',
  };
  const ns = str(m?.namespace);
  if (ns) ref.namespace = ns;
  return ref;
}

export function clusterInfo(o: JsonObject): ClusterInfo {
  const meta = obj(o.metadata) ?? {};
  const spec = obj(o.spec) ?? {};
  const fields: Record<string, string> = {};
  const provider = str(spec.provider) ?? '';
  const region = str(spec.region) ?? '';
  if (provider) fields.provider = provider;
  if (region) fields.region = region;
  const zones = stringList(spec.zones);
  const taints = (arr(spec.taints) ?? []).filter(isObject).map((t) => {
    const added = str(t.timeAdded) === undefined ? NaN : Date.parse(str(t.timeAdded) as string);
    return {
      key: str(t.key) ?? '',
      value: str(t.value) ?? '',
      effect: str(t.effect) ?? '',
      ...(Number.isFinite(added) ? { timeAdded: added } : {}),
    };
  });
  const capacity = readCapacity(o.status);
  const apis = readApiEnablements(o.status);
  return {
    name: str(meta.name) ?? '',
    labels: stringMap(meta.labels),
    fields,
    zones,
    taints,
    region: region || undefined,
    provider: provider || undefined,
    zone: zones[0] ?? (str(spec.zone) || undefined),
    ...(capacity ? { capacity } : {}),
    ...(apis ? { apis } : {}),
    object: o,
  };
}

function isPolicyKind(kind: string): kind is PolicyKind {
  return (POLICY_KINDS as readonly string[]).includes(kind);
}

/** Reads a policy document into the v1alpha1 shape, or returns why it cannot be used. */
function readPolicy(o: JsonObject, apiVersion: string, kind: string): JsonObject | string {
  if (apiVersion === POLICY_V1ALPHA1 || apiVersion === KARMADA_POLICY) return o;
  try {
    return convertObject(o, POLICY_V1ALPHA1);
  } catch (err: unknown) {
    return `cannot read ${kind} in ${apiVersion}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

function expandLists(objects: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const o of objects) {
    if (
      isObject(o) &&
      typeof o.kind === 'string' &&
      o.kind.endsWith('List') &&
      Array.isArray(o.items) &&
      o.metadata === undefined
    ) {
      out.push(...(o.items as unknown[]));
    } else if (isObject(o) && o.kind === 'List' && Array.isArray(o.items)) {
      out.push(...(o.items as unknown[]));
    } else {
      out.push(o);
    }
  }
  return out;
}

/** Reads a policy of either group into `inputs`; the message when it cannot be used. */
function addPolicy(
  inputs: Inputs,
  seen: Set<string>,
  o: JsonObject,
  ref: ObjectRef,
  group: string,
): string | undefined {
  if (!isPolicyKind(ref.kind))
    return `kind: Unsupported value: ${JSON.stringify(ref.kind)}: supported values: ${POLICY_KINDS.map((k) => JSON.stringify(k)).join(', ')}`;
  if (group === 'policy.karmada.io' && ref.apiVersion !== KARMADA_POLICY)
    return `apiVersion: Unsupported value: ${JSON.stringify(ref.apiVersion)}: supported values: "${KARMADA_POLICY}"`;
  const read = readPolicy(o, ref.apiVersion, ref.kind);
  if (typeof read === 'string') return read;
  const clusterScoped = CLUSTER_POLICY_KINDS.has(ref.kind);
  const namespace = clusterScoped ? '' : (ref.namespace ?? 'default');
  const policyRef: PolicyRef = clusterScoped
    ? { kind: ref.kind, name: ref.name }
    : { kind: ref.kind, namespace, name: ref.name };
  const key = `${ref.kind}/${namespace}/${ref.name}`;
  if (seen.has(key))
    return `duplicate ${ref.kind} ${namespace ? `${namespace}/` : ''}${ref.name}: the first one is used`;
  seen.add(key);
  const spec = obj(read.spec);
  if (!spec) return 'spec: Required value';
  const entry: PolicyEntry = { kind: ref.kind, ref: policyRef, namespace, name: ref.name, spec, object: read };
  if (ref.kind === 'PropagationPolicy' || ref.kind === 'ClusterPropagationPolicy') inputs.propagation.push(entry);
  else inputs.overrides.push(entry);
  return undefined;
}

/** Reads a Cluster of either group into `inputs`; the message when it cannot be used. */
function addCluster(inputs: Inputs, names: Set<string>, o: JsonObject, ref: ObjectRef): string | undefined {
  if (ref.kind !== 'Cluster')
    return `kind: Unsupported value: ${JSON.stringify(ref.kind)}: supported values: "Cluster"`;
  if (names.has(ref.name)) return `duplicate Cluster ${ref.name}: the first one is used`;
  names.add(ref.name);
  inputs.clusters.push(clusterInfo(o));
  return undefined;
}

/** Reads a Gatekeeper mutator into `inputs`; the message when it cannot be used. */
function addMutator(inputs: Inputs, seen: Set<string>, o: JsonObject, ref: ObjectRef): string | undefined {
  if (!isMutator(o))
    return `apiVersion: Unsupported value: ${JSON.stringify(ref.apiVersion)}: supported versions of ${MUTATION_GROUP}: v1, v1beta1, v1alpha1`;
  const key = `${MUTATION_GROUP}/${ref.kind}/${ref.name}`;
  if (seen.has(key)) return `duplicate ${ref.kind} ${ref.name}: the first one is used`;
  seen.add(key);
  const m = readMutator(o);
  if (typeof m === 'string') return m;
  inputs.mutators.push(m);
  return undefined;
}

export function sortInputs(objects: readonly unknown[]): Inputs {
  const inputs: Inputs = {
    templates: [],
    propagation: [],
    overrides: [],
    clusters: [],
    mutators: [],
    namespaceLabels: new Map(),
    errors: [],
  };
  const seen = new Set<string>();
  const clusterNames = new Set<string>();
  expandLists(objects).forEach((o, index) => {
    const ref = refOf(o);
    if (!isObject(o)) {
      inputs.errors.push({ object: ref, message: `document ${index + 1} is not an object` });
      return;
    }
    if (!ref.apiVersion) return void inputs.errors.push({ object: ref, message: 'apiVersion: Required value' });
    if (!ref.kind) return void inputs.errors.push({ object: ref, message: 'kind: Required value' });
    if (!ref.name) return void inputs.errors.push({ object: ref, message: 'metadata.name: Required value' });
    // Everything after this walks documents recursively; a bounded depth keeps those walks off the stack limit.
    const deep = tooDeepUnder(o);
    if (deep !== undefined)
      return void inputs.errors.push({
        object: ref,
        message: `${deep}: Forbidden: must not be nested more than ${MAX_DEPTH} levels deep`,
      });
    const group = ref.apiVersion.includes('/') ? ref.apiVersion.slice(0, ref.apiVersion.indexOf('/')) : '';

    const refuse = (message: string | undefined): void => {
      if (message !== undefined) inputs.errors.push({ object: ref, message });
    };
    if (group === POLICY_GROUP || ref.apiVersion === KARMADA_POLICY || group === 'policy.karmada.io')
      return refuse(addPolicy(inputs, seen, o, ref, group));
    if (ref.apiVersion === CLUSTER_API_VERSION || ref.apiVersion === KARMADA_CLUSTER)
      return refuse(addCluster(inputs, clusterNames, o, ref));
    if (group === 'cluster.flotilla.io' || group === 'cluster.karmada.io')
      return refuse(
        `apiVersion: Unsupported value: ${JSON.stringify(ref.apiVersion)}: supported values: "${CLUSTER_API_VERSION}", "${KARMADA_CLUSTER}"`,
      );
    if (group === MUTATION_GROUP) return refuse(addMutator(inputs, seen, o, ref));

    const templateRef: ObjectRef = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name };
    if (!isClusterScoped(ref.kind)) templateRef.namespace = ref.namespace ?? 'default';
    const key = `${templateRef.apiVersion}/${templateRef.kind}/${templateRef.namespace ?? ''}/${templateRef.name}`;
    if (seen.has(key))
      return void inputs.errors.push({ object: templateRef, message: 'duplicate object: the first one is used' });
    seen.add(key);
    inputs.templates.push({ ref: templateRef, labels: stringMap(obj(o.metadata)?.labels), object: o, index });
    if (ref.apiVersion === 'v1' && ref.kind === 'Namespace')
      inputs.namespaceLabels.set(ref.name, stringMap(obj(o.metadata)?.labels));
  });
  sortMutators(inputs.mutators);
  inputs.clusters.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return inputs;
}
