// Works (work.flotilla.io/v1alpha1): a pull cluster's share of the hub's decisions. Pure: names, the
// object the controller writes and the entry the agent reports; writing them is the callers' business.
//
// Each pull cluster has a namespace on the hub, its execution space `flotilla-es-<cluster>` (Karmada's
// karmada-es-<cluster>), and one Work there per template the cluster holds or should hold, named
// `<binding namespace>.<binding name>` (a namespace has no dots, so two bindings never share a Work name;
// a name longer than 253 characters is cut and ends in a hash). The controller writes the spec: the
// binding's spec cut down to that cluster (its suspension too: `dispatching: true` when the claiming policy
// suspends dispatching there). The agent writes the status: its entry, as the binding would
// list it, or nothing once the cluster holds no copy. An agent therefore reads and writes one namespace,
// and its writes reach only the controller: with every agent reading every binding instead, each entry
// an agent wrote went to every other agent (C² watch events per template).
//
// When the controller keeps a Work (workWanted): while the binding places the template on the cluster
// or evicts it from there, while its agent reports a copy, and while no policy claims the template
// (the claim was released: what was propagated stays). Otherwise it deletes it; a Work that is gone
// means "hold nothing" to the agent.

import { createHash } from 'node:crypto';

import { TEMPLATE_UID_LABEL, WORK, type ClusterStatus } from '../../api/work/v1alpha1/types.js';
import { DEFAULT_DISPATCH, type Dispatch } from '../engine/dispatch.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import { bindingName, bindingNamespace, clusterStatusOf } from './binding.js';
import type { TemplateIdentity } from './ownership.js';

export const WORK_API_VERSION = WORK.apiVersion;
export const WORK_KIND = WORK.kind;
export const WORK_PLURAL = WORK.plural;

const MAX_NAME = 253;
const MAX_NAMESPACE = 63;
const PREFIX = 'flotilla-es-';

/** A pull cluster's namespace on the hub; a name that does not fit a namespace name is hashed. */
export function executionSpace(cluster: string): string {
  const full = `${PREFIX}${cluster}`;
  if (full.length <= MAX_NAMESPACE && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(cluster)) return full;
  return `${PREFIX}${createHash('sha256').update(cluster).digest('hex').slice(0, 20)}`;
}

/** The Work of template `t` in any pull cluster's namespace. */
export function workName(t: TemplateIdentity, controllerNamespace: string): string {
  const full = `${bindingNamespace(t, controllerNamespace)}.${bindingName(t.name, t.kind)}`;
  if (full.length <= MAX_NAME) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, MAX_NAME - 9).replace(/[.-]+$/, '')}-${hash}`;
}

export function workPath(cluster: string, name: string): string {
  return `/apis/${WORK_API_VERSION}/namespaces/${encodeURIComponent(executionSpace(cluster))}/${WORK_PLURAL}/${encodeURIComponent(name)}`;
}

/** The binding's spec as far as it concerns `cluster` (other clusters and their tasks left out). */
export function workSpec(bindingSpec: JsonObject, cluster: string): JsonObject {
  const out: JsonObject = {};
  for (const k of ['resource', 'policy', 'conflictResolution', 'preserveResourcesOnDeletion'])
    if (Object.hasOwn(bindingSpec, k)) out[k] = bindingSpec[k]!;
  const mine = (list: unknown, key: string) =>
    (Array.isArray(list) ? list : []).filter((e): e is JsonObject => isObject(e) && e[key] === cluster);
  out.clusters = mine(bindingSpec.clusters, 'name');
  if (suspendedIn(bindingSpec.suspension, cluster)) out.suspension = { dispatching: true };
  const tasks = mine(bindingSpec.gracefulEvictionTasks, 'fromCluster');
  if (tasks.length > 0) out.gracefulEvictionTasks = tasks;
  const required = Array.isArray(bindingSpec.requiredBy) ? bindingSpec.requiredBy.filter(isObject) : [];
  if (required.length > 0) out.requiredBy = required.map((r) => ({ ...r, clusters: mine(r.clusters, 'name') }));
  return out;
}

/** Whether a binding's spec.suspension (the policy's shape) suspends dispatching to `cluster`. */
function suspendedIn(suspension: unknown, cluster: string): boolean {
  if (!isObject(suspension)) return false;
  if (suspension.dispatching === true) return true;
  const on = isObject(suspension.dispatchingOnClusters) ? suspension.dispatchingOnClusters.clusterNames : undefined;
  return Array.isArray(on) && on.includes(cluster);
}

/**
 * What the claiming policy says about dispatching to the Work's cluster, as the hub wrote it in the Work
 * (the agent reads nothing else): suspension, conflictResolution, preserveResourcesOnDeletion. No Work:
 * the defaults.
 */
export function workDispatch(spec: JsonObject | undefined): Dispatch {
  if (!spec) return DEFAULT_DISPATCH;
  return {
    suspended: isObject(spec.suspension) && spec.suspension.dispatching === true ? 'all' : [],
    conflictResolution: ownString(spec, 'conflictResolution') === 'Overwrite' ? 'Overwrite' : 'Abort',
    preserveResourcesOnDeletion: spec.preserveResourcesOnDeletion === true,
  };
}

/**
 * Whether the controller keeps `cluster`'s Work of a binding (see the file comment), given the Work as it
 * is on the hub (undefined: there is none).
 */
export function workWanted(bindingSpec: JsonObject, cluster: string, existing: JsonObject | undefined): boolean {
  const spec = workSpec(bindingSpec, cluster);
  if ((spec.clusters as JsonObject[]).length > 0 || spec.gracefulEvictionTasks !== undefined) return true;
  if (!existing) return false;
  if (workEntry(existing, cluster) !== undefined) return true;
  const claimed = isObject(spec.policy) || Array.isArray(spec.requiredBy);
  return !claimed;
}

/** The Work the controller applies (spec and metadata; the status is the agent's). */
export function workObject(
  t: TemplateIdentity,
  controllerNamespace: string,
  cluster: string,
  bindingSpec: JsonObject,
): JsonObject {
  return {
    apiVersion: WORK_API_VERSION,
    kind: WORK_KIND,
    metadata: {
      name: workName(t, controllerNamespace),
      namespace: executionSpace(cluster),
      labels: { [TEMPLATE_UID_LABEL]: t.uid },
    },
    spec: workSpec(bindingSpec, cluster),
  };
}

/** The template a Work is about, when it names one. */
export function workTemplate(work: JsonObject): TemplateIdentity | undefined {
  const r = isObject(work.spec) && isObject(work.spec.resource) ? work.spec.resource : undefined;
  const apiVersion = ownString(r, 'apiVersion');
  const kind = ownString(r, 'kind');
  const name = ownString(r, 'name');
  const namespace = ownString(r, 'namespace');
  if (!apiVersion || !kind || !name) return undefined;
  return { apiVersion, kind, name, ...(namespace ? { namespace } : {}), uid: ownString(r, 'uid') ?? '' };
}

/** What `cluster`'s agent reported in its Work, as a binding entry (undefined: nothing, it holds no copy). */
export function workEntry(work: JsonObject, cluster: string): ClusterStatus | undefined {
  const status = isObject(work.status) ? work.status : undefined;
  if (!status || typeof status.state !== 'string') return undefined;
  return clusterStatusOf({ ...status, name: cluster });
}

/** A binding entry as the agent writes it in its Work's status (without the name; bounded message). */
export function workStatus(c: ClusterStatus | undefined): JsonObject {
  if (!c) return {};
  const out: JsonObject = { state: c.state };
  if (c.message) out.message = c.message.length <= 1024 ? c.message : `${c.message.slice(0, 1021)}...`;
  if (c.replicas !== undefined) out.replicas = c.replicas;
  if (c.observedGeneration !== undefined) out.observedGeneration = c.observedGeneration;
  if (c.overrides && c.overrides.length > 0) out.overrides = c.overrides.map((p) => ({ ...p }));
  if (c.health) out.health = { ...c.health };
  return out;
}
