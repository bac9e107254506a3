// What the claiming policy says about dispatching a template, read once, when the engine renders it:
// `suspension`, `conflictResolution`, `preserveResourcesOnDeletion` and `failover` (cluster: the purge
// mode of a taint eviction and its statePreservation; application: Karmada's application failover). Karmada's detector copies the
// same fields from the policy into the ResourceBinding's spec when it claims a template; here the engine's
// answer for the template (EngineState.renderTemplate) carries them, and the controller reads them there.
// Policies of either group and version are read in the v1alpha1 shape (inputs.ts), so a Karmada-group
// policy says the same as its policy.flotilla.io twin. Pure.

import type { PurgeMode } from '../../api/work/v1alpha1/types.js';
import { isObject, str, type JsonObject } from './json.js';

/** A statePreservation rule: the evicted copy's status at `jsonPath` becomes label `aliasLabelName` on the new copy. */
export interface StatePreservationRule {
  aliasLabelName: string;
  jsonPath: string;
}

/** Karmada's `failover.application`, read with its defaults. */
export interface ApplicationFailover {
  /** decisionConditions.tolerationSeconds (default 300), in ms. */
  tolerationMs: number;
  /** Directly, Gracefully (the default) or Never. */
  purgeMode: PurgeMode;
  /** gracePeriodSeconds (default 600), in ms. */
  gracePeriodMs: number;
  /** statePreservation.rules with both fields set. */
  rules: StatePreservationRule[];
}

/** A setting the requiring workloads' policies disagree on, as Karmada's DependencyPolicyConflict names it. */
export type DispatchConflict = 'ConflictResolution' | 'PreserveResourcesOnDeletion';

export interface Dispatch {
  /** Clusters dispatching to is suspended: every one (`all`), or those named (sorted; none: empty). */
  suspended: 'all' | readonly string[];
  conflictResolution: 'Abort' | 'Overwrite';
  /** Members keep their copies, released, when the template is deleted. */
  preserveResourcesOnDeletion: boolean;
  /** failover.cluster.purgeMode (Gracefully when failover.cluster names none); absent with no failover.cluster. */
  clusterPurgeMode?: PurgeMode;
  /** failover.cluster.statePreservation.rules with both fields set; absent when there are none. */
  clusterStatePreservation?: StatePreservationRule[];
  /** failover.application; absent when the policy has none. */
  application?: ApplicationFailover;
  /**
   * A dependency no policy claims: the settings its requiring workloads' policies disagree on
   * (required-dispatch.ts); absent when they agree, and for a claimed template.
   */
  conflicts?: readonly DispatchConflict[];
}

/** What a policy that says nothing about dispatching means (and what a template no policy claims gets). */
export const DEFAULT_DISPATCH: Readonly<Dispatch> = Object.freeze({
  suspended: [],
  conflictResolution: 'Abort',
  preserveResourcesOnDeletion: false,
});

const purgeModeOf = (v: unknown): PurgeMode => (v === 'Directly' || v === 'Never' ? v : 'Gracefully');

/** Karmada's `suspension`: `dispatching: true` suspends every cluster, else `dispatchingOnClusters.clusterNames`. */
function suspendedOf(spec: JsonObject): Dispatch['suspended'] {
  const s = isObject(spec.suspension) ? spec.suspension : undefined;
  if (!s) return [];
  if (s.dispatching === true) return 'all';
  const on = isObject(s.dispatchingOnClusters) ? s.dispatchingOnClusters.clusterNames : undefined;
  return [...new Set(Array.isArray(on) ? on.filter((n): n is string => typeof n === 'string') : [])].sort();
}

function applicationOf(spec: JsonObject): ApplicationFailover | undefined {
  const f = isObject(spec.failover) && isObject(spec.failover.application) ? spec.failover.application : undefined;
  if (!f) return undefined;
  const dc = isObject(f.decisionConditions) ? f.decisionConditions : {};
  const toleration = typeof dc.tolerationSeconds === 'number' && dc.tolerationSeconds >= 0 ? dc.tolerationSeconds : 300;
  const grace = typeof f.gracePeriodSeconds === 'number' && f.gracePeriodSeconds > 0 ? f.gracePeriodSeconds : 600;
  return {
    tolerationMs: toleration * 1000,
    purgeMode: purgeModeOf(str(f.purgeMode)),
    gracePeriodMs: grace * 1000,
    rules: statePreservationOf(f),
  };
}

/** A failover behaviour's statePreservation.rules (application or cluster), those with both fields set. */
function statePreservationOf(f: JsonObject): StatePreservationRule[] {
  const sp = isObject(f.statePreservation) && Array.isArray(f.statePreservation.rules) ? f.statePreservation.rules : [];
  return sp
    .filter(isObject)
    .map((r) => ({ aliasLabelName: str(r.aliasLabelName) ?? '', jsonPath: str(r.jsonPath) ?? '' }))
    .filter((r) => r.aliasLabelName !== '' && r.jsonPath !== '');
}

/** The dispatch settings of a propagation policy's spec (v1alpha1 shape). */
export function dispatchOf(spec: JsonObject): Dispatch {
  const cluster = isObject(spec.failover) && isObject(spec.failover.cluster) ? spec.failover.cluster : undefined;
  const application = applicationOf(spec);
  const clusterRules = cluster ? statePreservationOf(cluster) : [];
  return {
    suspended: suspendedOf(spec),
    conflictResolution: str(spec.conflictResolution) === 'Overwrite' ? 'Overwrite' : 'Abort',
    preserveResourcesOnDeletion: spec.preserveResourcesOnDeletion === true,
    ...(cluster ? { clusterPurgeMode: purgeModeOf(str(cluster.purgeMode)) } : {}),
    ...(clusterRules.length > 0 ? { clusterStatePreservation: clusterRules } : {}),
    ...(application ? { application } : {}),
  };
}

export function isSuspended(d: Pick<Dispatch, 'suspended'>, cluster: string): boolean {
  return d.suspended === 'all' || d.suspended.includes(cluster);
}
