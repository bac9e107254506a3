// The ResourceBinding (api/work/v1alpha1): the controller's record of one template on the hub, where
// kubectl shows it. Pure: names, member health and the object are computed from what reconcile
// found; writing it is the caller's business.
//
// Naming: in the template's namespace, named `<name>-<kind>` in lower case (Karmada's
// GenerateBindingName), so a Deployment and a Service both called `web` get two bindings
// (`web-deployment`, `web-service`). A cluster-scoped template's binding lives in the controller's
// namespace under the same rule. A name longer than 253 characters is cut and ends in a hash.

import { createHash } from 'node:crypto';

import {
  BINDING,
  TEMPLATE_UID_LABEL,
  type ClusterState,
  type ClusterStatus,
  type GracefulEvictionTask,
  type MemberHealth,
  type PolicyRef,
  type RequiredBy,
} from '../../api/work/v1alpha1/types.js';
import { isObject, type JsonObject } from '../kube/objects.js';
import { evictingCondition } from './eviction.js';
import { controllerReference, type TemplateIdentity } from './ownership.js';

export type {
  ClusterState,
  ClusterStatus,
  MemberHealth,
  PolicyRef,
  PurgeMode,
  RequiredBy,
} from '../../api/work/v1alpha1/types.js';
export const BINDING_API_VERSION = BINDING.apiVersion;
export const BINDING_KIND = BINDING.kind;
export const BINDING_PLURAL = BINDING.plural;

/** A graceful eviction task as the controller holds it: the binding's, with times in milliseconds. */
export interface EvictionTask extends Omit<GracefulEvictionTask, 'gracePeriodSeconds'> {
  created: number;
  /** How long a Gracefully evicted copy is kept at most (application failover's gracePeriodSeconds). */
  gracePeriodMs?: number;
}

export interface BindingInput {
  template: TemplateIdentity & { generation?: number };
  /** The controller's namespace, for cluster-scoped templates. */
  controllerNamespace: string;
  /** The claiming policy; absent when no policy claims the template any more. */
  policy?: PolicyRef;
  conflictResolution?: string;
  /** From the claiming policy: the clusters dispatching to is suspended (every one, or those named). */
  suspended?: 'all' | ReadonlySet<string>;
  /** From the claiming policy (set only when true). */
  preserveResourcesOnDeletion?: boolean;
  /** Targeted clusters and, after them, clusters the object is still being removed from or kept on (Evicting). */
  clusters: ClusterStatus[];
  /**
   * Entries other writers own (sharded: the other replicas' members; pull clusters under sharding), as
   * they wrote them (or Pending before they do): counted in READY and the conditions, but not written.
   */
  agentClusters?: ClusterStatus[];
  /** The workloads that take this template with them (propagateDeps), each with its clusters. */
  requiredBy?: readonly RequiredBy[];
  /** Clusters the template was evicted from, while their copies are being dealt with. */
  evictionTasks?: readonly EvictionTask[];
  /** Known clusters the template does not go to, and why. */
  notChosen?: ReadonlyArray<{ cluster: string; reason: string }>;
  /** Errors that are about the template rather than one cluster (placement). */
  errors: readonly string[];
}

const MAX_NAME = 253;

export function bindingName(name: string, kind: string): string {
  const full = `${name.replace(/:/g, '.')}-${kind.toLowerCase()}`;
  if (full.length <= MAX_NAME) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, MAX_NAME - 9).replace(/[.-]+$/, '')}-${hash}`;
}

export function bindingNamespace(t: { namespace?: string }, controllerNamespace: string): string {
  return t.namespace ?? controllerNamespace;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * How a member object is doing, from its status: Deployments, StatefulSets, ReplicaSets by ready and
 * available replicas (and the generation the member's controller observed), DaemonSets by ready pods on
 * the nodes that should run one, Jobs by completions; any other kind is Healthy once it exists.
 */
export function memberHealth(object: JsonObject | undefined): MemberHealth {
  if (!object) return { state: 'Unknown', message: 'not on the member' };
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const spec = isObject(object.spec) ? object.spec : {};
  const status = isObject(object.status) ? object.status : {};
  const meta = isObject(object.metadata) ? object.metadata : {};
  const generation = num(meta.generation);
  const observed = num(status.observedGeneration);
  const stale = generation !== undefined && (observed === undefined || observed < generation);
  switch (kind) {
    case 'Deployment':
    case 'StatefulSet':
    case 'ReplicaSet': {
      const replicas = num(spec.replicas) ?? 1;
      const readyReplicas = num(status.readyReplicas) ?? 0;
      const availableReplicas = num(status.availableReplicas) ?? (kind === 'StatefulSet' ? readyReplicas : 0);
      const h: MemberHealth = { state: 'Progressing', replicas, readyReplicas, availableReplicas };
      if (stale) h.message = `the member has not observed generation ${generation ?? 0} yet`;
      else if (readyReplicas >= replicas && availableReplicas >= replicas) h.state = 'Healthy';
      else h.message = `${readyReplicas}/${replicas} replicas ready`;
      return h;
    }
    case 'DaemonSet': {
      const replicas = num(status.desiredNumberScheduled) ?? 0;
      const readyReplicas = num(status.numberReady) ?? 0;
      const availableReplicas = num(status.numberAvailable) ?? 0;
      const h: MemberHealth = { state: 'Progressing', replicas, readyReplicas, availableReplicas };
      if (stale || status.desiredNumberScheduled === undefined) h.message = 'the member has not reported on it yet';
      else if (readyReplicas >= replicas && availableReplicas >= replicas) h.state = 'Healthy';
      else h.message = `${readyReplicas}/${replicas} pods ready`;
      return h;
    }
    case 'Job': {
      const completions = num(spec.completions) ?? 1;
      const succeeded = num(status.succeeded) ?? 0;
      const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isObject) : [];
      const failed = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
      const h: MemberHealth = {
        state: 'Progressing',
        replicas: completions,
        readyReplicas: succeeded,
        availableReplicas: num(status.ready) ?? 0,
      };
      if (failed)
        h.message = `failed: ${typeof failed.message === 'string' ? failed.message : 'see the Job on the member'}`;
      else if (succeeded >= completions || conditions.some((c) => c.type === 'Complete' && c.status === 'True'))
        h.state = 'Healthy';
      else h.message = `${succeeded}/${completions} completions`;
      return h;
    }
    default:
      return { state: 'Healthy' };
  }
}

/** An entry of a binding's status.clusters as written (by an agent), read back; undefined when unreadable. */
export function clusterStatusOf(o: unknown): ClusterStatus | undefined {
  if (!isObject(o) || typeof o.name !== 'string' || typeof o.state !== 'string') return undefined;
  const h = isObject(o.health) ? o.health : undefined;
  const state =
    h && (h.state === 'Healthy' || h.state === 'Progressing' || h.state === 'Unknown') ? h.state : undefined;
  return {
    name: o.name,
    state: o.state as ClusterState,
    ...(typeof o.message === 'string' ? { message: o.message } : {}),
    ...(num(o.replicas) === undefined ? {} : { replicas: num(o.replicas)! }),
    ...(num(o.observedGeneration) === undefined ? {} : { observedGeneration: num(o.observedGeneration)! }),
    ...(typeof o.keptUntil === 'string' ? { keptUntil: o.keptUntil } : {}),
    ...(h && state
      ? {
          health: {
            state,
            ...(num(h.replicas) === undefined ? {} : { replicas: num(h.replicas)! }),
            ...(num(h.readyReplicas) === undefined ? {} : { readyReplicas: num(h.readyReplicas)! }),
            ...(num(h.availableReplicas) === undefined ? {} : { availableReplicas: num(h.availableReplicas)! }),
            ...(typeof h.message === 'string' ? { message: h.message } : {}),
          },
        }
      : {}),
  };
}

/** The ResourceBinding for a template: metadata, spec and status (the caller writes status on its subresource). */
export function bindingObject(b: BindingInput): JsonObject {
  const t = b.template;
  const every = [...b.clusters, ...(b.agentClusters ?? [])];
  const targeted = every.filter((c) => c.state !== 'Removing' && c.state !== 'Evicting');
  const counts: Counts = {
    every,
    targeted,
    ready: targeted.filter((c) => c.state === 'Applied' && c.health?.state === 'Healthy').length,
    applied: targeted.filter((c) => c.state === 'Applied').length,
  };
  const spec = bindingSpec(b, targeted);
  const status = bindingStatus(b, counts, bindingConditions(b, counts));
  return {
    apiVersion: BINDING_API_VERSION,
    kind: BINDING_KIND,
    metadata: {
      name: bindingName(t.name, t.kind),
      namespace: bindingNamespace(t, b.controllerNamespace),
      labels: { [TEMPLATE_UID_LABEL]: t.uid },
      ownerReferences: [controllerReference(t)],
    },
    spec,
    status,
  };
}

/** Of a binding's cluster entries: all, the targeted ones, and how many of those are applied and ready. */
interface Counts {
  every: ClusterStatus[];
  targeted: ClusterStatus[];
  ready: number;
  applied: number;
}

/** What the binding's conditions say: claimed or not, applied, suspended, evicting, ready. */
function bindingConditions(b: BindingInput, counts: Counts): JsonObject[] {
  const { every, targeted, ready, applied } = counts;
  // A kept evicted copy is not a delivery problem: the Evicting condition says why it is there.
  const problems = every.filter((c) => c.state !== 'Applied' && c.state !== 'Evicting');
  const conditions: JsonObject[] = [];
  const required = b.requiredBy ?? [];
  const by = b.policy ? describePolicy(b.policy) : `the workloads that use it (${describeWorkloads(required)})`;
  if (!b.policy && required.length > 0) {
    conditions.push({
      type: 'Claimed',
      status: 'False',
      reason: 'RequiredBy',
      message: truncate(
        `no propagation policy claims it; it goes where the workloads that use it go (propagateDeps): ${describeWorkloads(required)}`,
      ),
    });
  } else if (!b.policy) {
    conditions.push({
      type: 'Claimed',
      status: 'False',
      reason: 'NoPolicy',
      message: 'no propagation policy claims the template; what was propagated stays on the members until one does',
    });
  }
  if (b.policy)
    conditions.push({
      type: 'Claimed',
      status: 'True',
      reason: 'Claimed',
      message: `claimed by ${describePolicy(b.policy)}`,
    });
  if (b.policy || required.length > 0) {
    const applyMessage =
      b.errors.length > 0
        ? b.errors.join('; ')
        : problems.length === 0
          ? `applied to ${applied} cluster${applied === 1 ? '' : 's'}`
          : problems.map((c) => `${c.name}: ${c.state}${c.message ? `: ${c.message}` : ''}`).join('; ');
    const reason =
      b.errors.length > 0 ? 'RenderFailed' : problems.length === 0 ? 'Applied' : (problems[0]?.state ?? 'Pending');
    conditions.push({
      type: 'Applied',
      status: b.errors.length === 0 && problems.length === 0 && targeted.length > 0 ? 'True' : 'False',
      reason,
      message: truncate(applyMessage),
    });
    const suspended = targeted.filter((c) => c.state === 'Suspended');
    if (suspended.length > 0)
      conditions.push({
        type: 'Suspended',
        status: 'True',
        reason: 'DispatchingSuspended',
        message: truncate(
          `dispatching to ${suspended.map((c) => c.name).join(', ')} is suspended by ${by}: template, override and drift changes are not written there`,
        ),
      });
    const evicting = evictingCondition(every, targeted.length);
    if (evicting) conditions.push({ ...evicting, message: truncate(String(evicting.message)) });
    const unhealthy = targeted.filter((c) => c.state === 'Applied' && c.health?.state !== 'Healthy');
    conditions.push({
      type: 'Ready',
      status: targeted.length > 0 && ready === targeted.length ? 'True' : 'False',
      reason: ready === targeted.length && targeted.length > 0 ? 'Ready' : 'NotReady',
      message: truncate(
        targeted.length === 0
          ? 'no target cluster'
          : `${ready}/${targeted.length} clusters ready${unhealthy.length ? `; ${unhealthy.map((c) => `${c.name}: ${c.health?.message ?? c.health?.state ?? 'unknown'}`).join('; ')}` : ''}`,
      ),
    });
  }
  return conditions;
}

/** The binding's spec: the template, where it goes, and what the claiming policy says of dispatching. */
function bindingSpec(b: BindingInput, targeted: readonly ClusterStatus[]): JsonObject {
  const t = b.template;
  const required = b.requiredBy ?? [];
  const resource: JsonObject = { apiVersion: t.apiVersion, kind: t.kind, name: t.name, uid: t.uid };
  if (t.namespace) resource.namespace = t.namespace;
  const spec: JsonObject = {
    resource,
    clusters: targeted.map((c) =>
      c.replicas === undefined ? { name: c.name } : { name: c.name, replicas: c.replicas },
    ),
  };
  if (b.policy) spec.policy = { ...b.policy };
  if (required.length > 0)
    spec.requiredBy = required.map((r) => ({
      apiVersion: r.apiVersion,
      kind: r.kind,
      ...(r.namespace ? { namespace: r.namespace } : {}),
      name: r.name,
      clusters: r.clusters.map((name) => ({ name })),
    }));
  if (b.evictionTasks && b.evictionTasks.length > 0)
    spec.gracefulEvictionTasks = b.evictionTasks.map(({ created: _created, gracePeriodMs, ...t }) => ({
      ...t,
      ...(gracePeriodMs === undefined ? {} : { gracePeriodSeconds: Math.round(gracePeriodMs / 1000) }),
    }));
  if (b.conflictResolution) spec.conflictResolution = b.conflictResolution;
  if (b.suspended === 'all') spec.suspension = { dispatching: true };
  else if (b.suspended && b.suspended.size > 0)
    spec.suspension = { dispatchingOnClusters: { clusterNames: [...b.suspended].sort() } };
  if (b.preserveResourcesOnDeletion) spec.preserveResourcesOnDeletion = true;
  return spec;
}

/** The binding's status: the APPLIED and READY counts, the conditions and each cluster's entry. */
function bindingStatus(b: BindingInput, counts: Counts, conditions: JsonObject[]): JsonObject {
  const { targeted, ready, applied } = counts;
  const generation = b.template.generation;
  const status: JsonObject = {
    // kubectl's APPLIED and READY columns: of the target clusters, how many hold the copy, how many are healthy.
    applied: `${applied}/${targeted.length}`,
    ready: `${ready}/${targeted.length}`,
    conditions,
    clusters: b.clusters.map((c) => {
      const out: JsonObject = { name: c.name, state: c.state };
      if (c.message) out.message = truncate(c.message);
      if (c.observedGeneration !== undefined) out.observedGeneration = c.observedGeneration;
      if (c.overrides && c.overrides.length > 0) out.overrides = c.overrides.map((p) => ({ ...p }));
      if (c.health) out.health = { ...c.health };
      if (c.keptUntil) out.keptUntil = c.keptUntil;
      return out;
    }),
  };
  if (generation !== undefined) status.observedGeneration = generation;
  if (b.notChosen && b.notChosen.length > 0)
    status.notChosen = b.notChosen.slice(0, 50).map((n) => ({ name: n.cluster, reason: truncate(n.reason) }));
  if (b.errors.length > 0) status.errors = b.errors.map(truncate);
  return status;
}

function describeWorkloads(rs: readonly RequiredBy[]): string {
  return rs.map((r) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`).join(', ');
}

export function describePolicy(p: PolicyRef): string {
  return `${p.kind} ${p.namespace ? `${p.namespace}/` : ''}${p.name}`;
}

/** Status messages stay readable and bounded (an apiserver message can quote a whole object). */
function truncate(s: string): string {
  return s.length <= 1024 ? s : `${s.slice(0, 1021)}...`;
}
