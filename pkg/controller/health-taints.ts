// Taints from member health (Karmada's cluster controller and taint manager): a member that has not been
// ready for `notReadyAfterMs` gets `cluster.karmada.io/not-ready` (it answers, but not ready) or
// `cluster.karmada.io/unreachable` (no answer) with effect NoSchedule — new placements avoid it — and,
// with failover on, the same key with NoExecute once it has been so for `evictionAfterMs`, which evicts
// the workloads placed there that do not tolerate it (placement.ts). Ready again: both go. Each taint
// keeps the `timeAdded` of when it was first added, so tolerationSeconds count from there. Pure.

import type { Readiness } from './member.js';

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

/**
 * The health taints a member should carry at `now`, keeping `previous` ones (their timeAdded) that still
 * apply. Undefined readiness (not probed yet): none.
 */
export function healthTaints(
  r: Readiness | undefined,
  now: number,
  o: HealthTaintOptions,
  previous: readonly HealthTaint[] = [],
): HealthTaint[] {
  if (!r || r.ready !== false) return [];
  const down = now - r.since;
  if (down < o.notReadyAfterMs) return [];
  const key = r.unreachable ? UNREACHABLE_TAINT : NOT_READY_TAINT;
  const effects: Array<HealthTaint['effect']> = ['NoSchedule'];
  if (o.failover && down >= o.evictionAfterMs) effects.push('NoExecute');
  return effects.map(
    (effect) => previous.find((t) => t.key === key && t.effect === effect) ?? { key, effect, timeAdded: iso(now) },
  );
}

/** When healthTaints() may answer differently without a readiness change (the next threshold), or undefined. */
export function nextHealthCheck(r: Readiness | undefined, now: number, o: HealthTaintOptions): number | undefined {
  if (!r || r.ready !== false) return undefined;
  const at = [r.since + o.notReadyAfterMs, ...(o.failover ? [r.since + o.evictionAfterMs] : [])].filter((t) => t > now);
  return at.length === 0 ? undefined : Math.min(...at);
}

/**
 * A Cluster's spec.taints with the health taints replaced by `health`: the taints people wrote stay as
 * they are, in their order, and the health taints come after them.
 */
export function withHealthTaints(taints: unknown, health: readonly HealthTaint[]): unknown[] {
  const theirs: unknown[] = Array.isArray(taints) ? taints : [];
  return [
    ...theirs.filter(
      (t) => !(typeof t === 'object' && t !== null && HEALTH_TAINT_KEYS.includes(String((t as { key?: unknown }).key))),
    ),
    ...health.map((t) => ({ ...t })),
  ];
}
