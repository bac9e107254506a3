// Taints from member health (Karmada's cluster controller and taint manager): a member that has not been
// ready for `notReadyAfterMs` gets `cluster.karmada.io/not-ready` (it answers, but not ready) or
// `cluster.karmada.io/unreachable` (no answer) with effect NoSchedule — new placements avoid it — and,
// with failover on, the same key with NoExecute once it has been so for `evictionAfterMs`, which evicts
// the workloads placed there that do not tolerate it (placement.ts). Ready again: both go. Each taint
// keeps the `timeAdded` of when it was first added, so tolerationSeconds count from there; a process
// that starts keeps the taints the hub's Cluster carries until it has judged the member itself. A
// NoExecute taint people add without a `timeAdded` is given one when the Cluster's taints are written
// (withHealthTaints), as Karmada's Cluster API does. Pure.

import { isObject, ownString } from '../kube/objects.js';
import type { Readiness } from './member-probe.js';

export const NOT_READY_TAINT = 'cluster.karmada.io/not-ready';
export const UNREACHABLE_TAINT = 'cluster.karmada.io/unreachable';
export const HEALTH_TAINT_KEYS: readonly string[] = [NOT_READY_TAINT, UNREACHABLE_TAINT];

export interface HealthTaint {
  key: string;
  effect: 'NoSchedule' | 'NoExecute';
  /** RFC 3339, seconds precision. */
  timeAdded: string;
}

export interface HealthTaintOptions {
  /** How long a member is not ready before it is tainted NoSchedule. */
  notReadyAfterMs: number;
  /** Add NoExecute (evicting) taints at all. */
  failover: boolean;
  /** How long a member is not ready before it is tainted NoExecute (failover only). */
  evictionAfterMs: number;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** What holds health taints back from what the thresholds say (cluster-health.ts decides it). */
export interface HealthHold {
  /** This process's view of the hub is stale: no taint is added (those present stay). */
  noNewTaints?: boolean;
  /** Most clusters are unhealthy at once, or the cluster has never been ready: no NoExecute is added. */
  noEviction?: boolean;
}

/**
 * The health taints a member should carry at `now`, keeping `previous` ones (their timeAdded) while it
 * is not ready: a not-ready member keeps the effects it has (under the key that says why now), and gets
 * those whose thresholds passed unless `hold` says otherwise. Ready: none. Readiness not known (not
 * probed yet, or this process has not judged it): `previous`, unchanged.
 */
export function healthTaints(
  r: Readiness | undefined,
  now: number,
  o: HealthTaintOptions,
  previous: readonly HealthTaint[] = [],
  hold: HealthHold = {},
): HealthTaint[] {
  if (!r || r.ready === undefined) return [...previous];
  if (r.ready) return [];
  const down = now - r.since;
  const key = r.unreachable ? UNREACHABLE_TAINT : NOT_READY_TAINT;
  const want = new Set<HealthTaint['effect']>(previous.map((t) => t.effect));
  if (!hold.noNewTaints && down >= o.notReadyAfterMs) want.add('NoSchedule');
  if (!hold.noNewTaints && !hold.noEviction && o.failover && down >= o.evictionAfterMs) want.add('NoExecute');
  return (['NoSchedule', 'NoExecute'] as const)
    .filter((effect) => want.has(effect))
    .map((effect) => {
      const kept = previous.find((t) => t.effect === effect);
      return { key, effect, timeAdded: kept?.timeAdded ?? iso(now) };
    });
}

/**
 * The health taints among a Cluster's spec.taints (what an earlier process decided), own properties only;
 * one without a readable timeAdded is stamped `now`.
 */
export function healthTaintsOf(taints: unknown, now: number): HealthTaint[] {
  const out: HealthTaint[] = [];
  for (const t of Array.isArray(taints) ? (taints as unknown[]) : []) {
    if (!isObject(t)) continue;
    const key = ownString(t, 'key');
    const effect = ownString(t, 'effect');
    const timeAdded = ownString(t, 'timeAdded');
    if (typeof key !== 'string' || !HEALTH_TAINT_KEYS.includes(key)) continue;
    if (effect !== 'NoSchedule' && effect !== 'NoExecute') continue;
    if (out.some((x) => x.effect === effect)) continue;
    const at = typeof timeAdded === 'string' && Number.isFinite(Date.parse(timeAdded)) ? timeAdded : undefined;
    out.push({ key, effect, timeAdded: at ?? iso(now) });
  }
  return out;
}

/** When healthTaints() may answer differently without a readiness change (the next threshold), or undefined. */
export function nextHealthCheck(r: Readiness | undefined, now: number, o: HealthTaintOptions): number | undefined {
  if (!r || r.ready !== false) return undefined;
  const at = [r.since + o.notReadyAfterMs, ...(o.failover ? [r.since + o.evictionAfterMs] : [])].filter((t) => t > now);
  return at.length === 0 ? undefined : Math.min(...at);
}

/**
 * A Cluster's spec.taints with the health taints replaced by `health`: the taints people wrote stay as
 * they are, in their order, and the health taints come after them. With `now`, a NoExecute taint people
 * wrote without a `timeAdded` gets one (`now`), as Karmada's Cluster API gives every NoExecute taint on
 * each write (its registry's Canonicalize, mutation.MutateCluster): tolerationSeconds count from it, and
 * a taint without one would be tolerated for ever (placement.ts, as Karmada's taint manager does).
 */
export function withHealthTaints(taints: unknown, health: readonly HealthTaint[], now?: number): unknown[] {
  const theirs: unknown[] = Array.isArray(taints) ? taints : [];
  return [
    ...theirs
      .filter((t) => !(isObject(t) && HEALTH_TAINT_KEYS.includes(String(t.key))))
      .map((t) => (now !== undefined && unstampedNoExecute(t) ? { ...t, timeAdded: iso(now) } : t)),
    ...health.map((t) => ({ ...t })),
  ];
}

function unstampedNoExecute(t: unknown): t is Record<string, unknown> {
  return isObject(t) && t.effect === 'NoExecute' && (!Object.hasOwn(t, 'timeAdded') || t.timeAdded == null);
}
