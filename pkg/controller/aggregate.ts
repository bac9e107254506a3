// Status back on the template (Karmada's aggregated status, pkg/resourceinterpreter/default/native/
// aggregatestatus.go): the template's status on the hub is computed from its members' copies, so
// `kubectl get` and `kubectl rollout status` against the hub say how the workload is doing everywhere.
// Pure: member observations in, the status to write out. The per-cluster statuses stay in the binding.
//
// - Deployment, StatefulSet, ReplicaSet, DaemonSet: counts summed over the members; `observedGeneration`
//   is the template's generation only when every targeted member has its copy and has observed that
//   copy's generation (else it is left out, so `kubectl rollout status` keeps waiting);
// - Job: active, succeeded, failed summed, startTime the earliest (no conditions: see jobStatus);
// - Service of type LoadBalancer: every member's ingress points, in cluster order;
// - PersistentVolumeClaim: Bound when every member's is, else the first other phase; Pod: the same with
//   Running/Succeeded/Failed/Pending.
// Other kinds: no status is written.

import { isObject, type JsonObject } from '../kube/objects.js';

/** One targeted member's copy as last seen, or undefined when it has none (yet). */
export interface MemberObservation {
  cluster: string;
  object: { generation?: number; status?: JsonObject } | undefined;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

const COUNTS: Readonly<Record<string, readonly string[]>> = {
  Deployment: ['replicas', 'readyReplicas', 'availableReplicas', 'updatedReplicas', 'unavailableReplicas'],
  StatefulSet: ['replicas', 'readyReplicas', 'availableReplicas', 'currentReplicas', 'updatedReplicas'],
  ReplicaSet: ['replicas', 'readyReplicas', 'availableReplicas', 'fullyLabeledReplicas'],
  DaemonSet: [
    'currentNumberScheduled',
    'desiredNumberScheduled',
    'numberAvailable',
    'numberMisscheduled',
    'numberReady',
    'updatedNumberScheduled',
    'numberUnavailable',
  ],
};

/** Kinds whose status is aggregated (core and apps/batch groups). */
export function aggregates(apiVersion: string, kind: string): boolean {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  if (group === 'apps') return kind in COUNTS;
  if (group === 'batch') return kind === 'Job';
  if (group === '') return kind === 'Service' || kind === 'PersistentVolumeClaim' || kind === 'Pod';
  return false;
}

function allObserved(members: readonly MemberObservation[]): boolean {
  return (
    members.length > 0 &&
    members.every((m) => {
      if (!m.object || !isObject(m.object.status)) return false;
      const observed = m.object.status.observedGeneration;
      return m.object.generation === undefined || (typeof observed === 'number' && observed >= m.object.generation);
    })
  );
}

/**
 * The template's status from its targeted members, or undefined for kinds that are not aggregated.
 * `generation` is the template's own, on the hub.
 */
export function aggregateStatus(
  kind: string,
  generation: number | undefined,
  members: readonly MemberObservation[],
): JsonObject | undefined {
  const statuses = members.map((m) => (m.object && isObject(m.object.status) ? m.object.status : {}));
  const counts = COUNTS[kind];
  if (counts) {
    const out: JsonObject = {};
    for (const field of counts) out[field] = statuses.reduce((n, s) => n + num(s[field]), 0);
    if (generation !== undefined && allObserved(members)) out.observedGeneration = generation;
    return out;
  }
  if (kind === 'Job') return jobStatus(statuses);
  if (kind === 'Service') {
    const ingress = statuses.flatMap((s) =>
      isObject(s.loadBalancer) && Array.isArray(s.loadBalancer.ingress) ? s.loadBalancer.ingress.filter(isObject) : [],
    );
    return { loadBalancer: ingress.length > 0 ? { ingress } : {} };
  }
  if (kind === 'PersistentVolumeClaim') return { phase: phaseOf(statuses, 'Bound', 'Pending') };
  if (kind === 'Pod') return { phase: phaseOf(statuses, 'Running', 'Pending') };
  return undefined;
}

/** `good` when every member says it, else the first member phase that is not `good` (or `unknown`). */
function phaseOf(statuses: readonly JsonObject[], good: string, unknown: string): string {
  if (statuses.length === 0) return unknown;
  const phases = statuses.map((s) => (typeof s.phase === 'string' ? s.phase : unknown));
  if (phases.every((p) => p === good)) return good;
  if (good === 'Running' && phases.every((p) => p === 'Succeeded')) return 'Succeeded';
  return phases.find((p) => p === 'Failed') ?? phases.find((p) => p !== good) ?? unknown;
}

/**
 * Counts and the earliest start. No conditions: the apiserver checks a Job's conditions against its own
 * state machine (a Complete condition needs the Job's own success criteria, completion time and no
 * active pods), which a sum over clusters cannot follow; the binding says per cluster how each Job did.
 */
function jobStatus(statuses: readonly JsonObject[]): JsonObject {
  const out: JsonObject = {
    active: statuses.reduce((n, s) => n + num(s.active), 0),
    succeeded: statuses.reduce((n, s) => n + num(s.succeeded), 0),
    failed: statuses.reduce((n, s) => n + num(s.failed), 0),
  };
  const starts = statuses.map((s) => s.startTime).filter((t): t is string => typeof t === 'string');
  if (starts.length > 0) out.startTime = starts.sort()[0];
  return out;
}
