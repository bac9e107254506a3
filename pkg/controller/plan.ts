// plan(): what each member should hold for one template, from the engine's render — pure, no I/O. The
// template reconciler (template.ts) computes a plan and hands each member its part; the member work
// (execute.ts) carries it out on that member alone, so a slow member holds back nobody else.

import type { ClusterStatus, PolicyRef, PurgeMode, RequiredBy } from '../../api/work/v1alpha1/types.js';
import { copyReplicas } from '../engine/copy.js';
import {
  isSuspended as suspendedIn,
  type ApplicationFailover,
  type Dispatch,
  type DispatchConflict,
  type StatePreservationRule,
} from '../engine/dispatch.js';
import type { TemplateResult } from '../engine/state.js';
import type { JsonObject } from '../kube/objects.js';
import { isObject } from '../kube/objects.js';
import { appliedHash } from '../kube/ownership.js';
import type { EvictionTask } from './binding.js';
import { stampOwnership, type TemplateIdentity } from './ownership.js';
import { SharedValues } from './shared-values.js';

/** One member's part of a plan. */
export type MemberStep =
  /**
   * Apply this object (stamped with the template's labels); `hash` is its applied hash (`appliedHash`),
   * computed once per distinct copy, which the member's apply stamps when it sends the object unchanged.
   */
  | { action: 'apply'; object: JsonObject; hash?: string }
  /** Targeted, but rendering failed there: the member keeps what it has until the render works. */
  | { action: 'keep'; message: string }
  /** Not targeted: what the template has there goes. */
  | { action: 'remove' }
  /** The policy suspends dispatching there: nothing is written (applied, pruned or put back). */
  | { action: 'suspended' };

export interface TemplatePlan {
  /** Counts up with each plan of a template, so an outcome of an older plan is known as such. */
  version: number;
  identity: TemplateIdentity;
  generation: number | undefined;
  policy: PolicyRef | undefined;
  /** The claiming policy's conflictResolution (the engine's dispatch settings, as are the fields below). */
  conflictResolution: 'Abort' | 'Overwrite';
  /** Targeted clusters, as the binding lists them before any member reports (Pending, or Failed to render); shared with other plans: never changed in place. */
  clusters: Map<string, ClusterStatus>;
  /** Errors about the template rather than one cluster (placement). */
  errors: readonly string[];
  /** `cluster: message` of each cluster whose render failed. */
  overrideFailed: readonly string[];
  /** Each targeted cluster's step; a member not listed is not targeted. Equal objects are one object, shared: never changed in place. */
  steps: Map<string, MemberStep>;
  /** Clusters the policy suspends dispatching to (`suspension`): every one, or those named. */
  suspended: 'all' | ReadonlySet<string>;
  /** The policy's preserveResourcesOnDeletion: members keep their copies when the template is deleted. */
  preserveOnDeletion: boolean;
  /** The workloads that take the template with them (propagateDeps); the caller fills it in. */
  requiredBy: readonly RequiredBy[];
  /** Clusters a NoExecute taint evicted the template from and what happens to their copies; the caller fills it in. */
  evictionTasks: readonly EvictionTask[];
  /** The clusters placement evicted the template from (NoExecute taints, application failover). */
  evicted: ReadonlySet<string>;
  /** Binding entries of the evicted clusters whose copies a task keeps (Evicting); the caller fills it in. */
  evicting: readonly ClusterStatus[];
  /** The known clusters the template does not go to, and why (the engine's first reason). */
  notChosen: ReadonlyArray<{ cluster: string; reason: string }>;
  /** The policy's failover.application. */
  appFailover?: ApplicationFailover | undefined;
  /** The policy's failover.cluster.purgeMode; absent when it has no failover.cluster (the controller's default then). */
  clusterPurgeMode?: PurgeMode | undefined;
  /** The policy's failover.cluster.statePreservation rules; absent when it has none. */
  clusterStatePreservation?: readonly StatePreservationRule[] | undefined;
  /** A dependency no policy claims: the settings its workloads' policies disagree on (Karmada's DependencyPolicyConflict). */
  dependencyConflicts?: readonly DispatchConflict[] | undefined;
  /** Placement failed (no cluster, too few replicas fit): every member keeps what it has, as Karmada keeps its last schedule. */
  placementFailed?: string;
}

/** Cluster entries equal across plans (a member Pending with no overrides) are one object. */
const entries = new SharedValues();

type ApplyStep = Extract<MemberStep, { action: 'apply' }>;

/**
 * The apply step of the placement's object stamped with the template's identity, with its applied hash,
 * or the step of an equal one `copies` already holds: the hash both finds equal copies and is what each
 * member's apply stamps, so a copy is serialised once here, not again per member; members given equal
 * copies share one step, one object and one hash.
 */
function shared(copies: Map<string, ApplyStep>, object: JsonObject, identity: TemplateIdentity): ApplyStep {
  stampOwnership(object, identity);
  const hash = appliedHash(object);
  const seen = copies.get(hash);
  if (seen) return seen;
  const step: ApplyStep = { action: 'apply', object, hash };
  copies.set(hash, step);
  return step;
}

/** An empty set shared by every plan that names no cluster (nothing suspended, nothing evicted). */
const NONE: ReadonlySet<string> = new Set<string>();

/** An empty list shared by every plan's lists that hold nothing (most of them, in most plans). */
const EMPTY: readonly never[] = Object.freeze([]);

const listOf = <T>(items: readonly T[] | undefined): readonly T[] => (items && items.length > 0 ? items : EMPTY);

const setOf = (names: readonly string[] | undefined): ReadonlySet<string> =>
  names && names.length > 0 ? new Set(names) : NONE;

export function isSuspended(p: Pick<TemplatePlan, 'suspended'>, cluster: string): boolean {
  return p.suspended === 'all' || p.suspended.has(cluster);
}

/**
 * The plan of a claimed template. `render` is the engine's result for it; `dispatch` what the claiming
 * policy says about dispatching it (the engine's `render.dispatch` on the hub; the Work's spec in an
 * agent). Members that are not targeted are not listed: stepFor() says `remove`.
 */
export function plan(
  identity: TemplateIdentity,
  template: JsonObject,
  render: TemplateResult,
  dispatch: Dispatch,
  version: number,
): TemplatePlan {
  const meta = isObject(template.metadata) ? template.metadata : {};
  const clusters = new Map<string, ClusterStatus>();
  const steps = new Map<string, MemberStep>();
  const suspended = dispatch.suspended === 'all' ? 'all' : setOf(dispatch.suspended);
  const policyName = render.policy
    ? `${render.policy.kind} ${render.policy.namespace ? `${render.policy.namespace}/` : ''}${render.policy.name}`
    : 'its policy';
  // Members given the same copy share one step: a plan holds one per distinct copy, not one per member.
  const copies = new Map<string, ApplyStep>();
  for (const p of render.placements) {
    const step = shared(copies, p.object, identity);
    const replicas = copyReplicas(step.object);
    const hold = suspendedIn(dispatch, p.cluster);
    steps.set(p.cluster, hold ? { action: 'suspended' } : step);
    clusters.set(
      p.cluster,
      entries.share({
        name: p.cluster,
        state: hold ? 'Suspended' : 'Pending',
        ...(hold ? { message: `dispatching is suspended by ${policyName}` } : {}),
        overrides: p.overrides.map((o) => ({ ...o })),
        ...(replicas === undefined ? {} : { replicas }),
      }),
    );
  }
  const errors: string[] = [];
  const overrideFailed: string[] = [];
  for (const e of render.errors) {
    if (e.cluster) {
      clusters.set(e.cluster, { name: e.cluster, state: 'Failed', message: e.message });
      steps.set(e.cluster, { action: 'keep', message: e.message });
      overrideFailed.push(`${e.cluster}: ${e.message}`);
    } else errors.push(e.message);
  }
  const placementFailed = render.placements.length === 0 && clusters.size === 0 && errors.length > 0;
  return {
    ...(placementFailed ? { placementFailed: errors.join('; ') } : {}),
    version,
    identity,
    generation: typeof meta.generation === 'number' ? meta.generation : undefined,
    policy: render.policy,
    conflictResolution: dispatch.conflictResolution,
    clusters,
    errors: listOf(errors),
    overrideFailed: listOf(overrideFailed),
    steps,
    suspended,
    preserveOnDeletion: dispatch.preserveResourcesOnDeletion,
    requiredBy: EMPTY,
    evictionTasks: EMPTY,
    evicted: setOf(render.evicted),
    evicting: EMPTY,
    notChosen: listOf(render.notChosen),
    appFailover: dispatch.application,
    clusterPurgeMode: dispatch.clusterPurgeMode,
    clusterStatePreservation: dispatch.clusterStatePreservation,
    ...(dispatch.conflicts ? { dependencyConflicts: dispatch.conflicts } : {}),
  };
}

/**
 * A member's step in a plan: its own, or `remove` when the plan does not target it — unless placement
 * failed, when nothing is removed (Karmada keeps the last schedule when scheduling fails) but from a
 * cluster the template was evicted from: there its eviction task, if any, decides (a step of its own).
 */
export function stepFor(p: TemplatePlan, member: string): MemberStep {
  const own = p.steps.get(member);
  if (own) return own;
  if (isSuspended(p, member)) return { action: 'suspended' };
  if (p.placementFailed !== undefined && !p.evicted.has(member)) return { action: 'keep', message: p.placementFailed };
  return { action: 'remove' };
}

/**
 * The binding's cluster list: each targeted cluster as its member last reported for this plan (Pending
 * until then), then clusters the template is still being removed from, then evicted clusters whose
 * copies are kept (Evicting).
 */
export function bindingClusters(
  p: TemplatePlan,
  reports: ReadonlyMap<string, { version: number; status: ClusterStatus }>,
  noAccess: (cluster: string) => string | undefined,
): ClusterStatus[] {
  const out: ClusterStatus[] = [];
  for (const [name, base] of p.clusters) {
    const r = reports.get(name);
    if (base.state === 'Failed' || base.state === 'Suspended') out.push(base);
    else if (r && r.version === p.version) out.push({ ...base, ...r.status, name });
    else {
      const why = noAccess(name);
      out.push(why ? { ...base, state: 'Unreachable', message: `no access to cluster ${name}: ${why}` } : base);
    }
  }
  for (const [name, r] of reports) {
    if (!p.clusters.has(name) && r.version === p.version && r.status.state === 'Removing') out.push(r.status);
  }
  for (const e of p.evicting) if (!p.clusters.has(e.name)) out.push(e);
  return out;
}

/**
 * Whether every member the plan applies to (`own`: a member of this process, not a pull cluster or
 * another replica's) has reported on this plan.
 */
export function allReported(
  p: TemplatePlan,
  reports: ReadonlyMap<string, { version: number }> | undefined,
  own: (cluster: string) => boolean,
): boolean {
  return [...p.steps].every(
    ([name, s]) => s.action !== 'apply' || !own(name) || reports?.get(name)?.version === p.version,
  );
}
