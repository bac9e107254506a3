// Scheduling a claimed template: the clusters its placement picks (placement.ts) and its replicas on
// each (division.ts), or the reason it goes nowhere.

import { estimateReplicas, replicaRequests, UNLIMITED } from './capacity.js';
import { describeEntry } from './copy.js';
import { divideReplicas, templateReplicas } from './division.js';
import type { PolicyEntry, Template } from './inputs.js';
import { obj } from './json.js';
import { PlacementError, selectClusters, type Demand, type Selection } from './placement.js';
import type { DetailedRenderError } from './render.js';
import type { ClusterInfo } from './types.js';

/** Where a claimed template goes: the clusters its placement picks, and their replicas when divided. */
export interface Schedule {
  /** Clusters, in placement's order; a divided workload's clusters with no replica are left out. */
  targets: ClusterInfo[];
  division: Map<string, number> | undefined;
  /** Clusters a NoExecute taint keeps out (not tolerated, or tolerationSeconds ran out). */
  evicted: string[];
  /** Every known cluster the template does not go to, with why. */
  skipped: Array<{ cluster: string; reason: string }>;
  /** When a tolerated NoExecute taint runs out on a target (the schedule changes then). */
  recheckAt?: number;
}

/** Why a placement selected no cluster: the clusters evicted, and every cluster with its reason. */
export type Unplaced = Pick<Schedule, 'evicted' | 'skipped'>;

/**
 * Picks the clusters of a template claimed by `policy` and divides its replicas. Undefined, with the
 * reason appended to `errors`, when its placement fails or selects nothing; when it selects nothing,
 * `unplaced` (when given) gets the clusters a NoExecute taint evicted and why each was left out.
 */
export function scheduleClaimed(
  t: Template,
  policy: PolicyEntry,
  clusters: readonly ClusterInfo[],
  errors: DetailedRenderError[],
  now?: number,
  scheduled?: ReadonlySet<string>,
  excluded?: ReadonlySet<string>,
  unplaced?: Unplaced,
): Schedule | undefined {
  const placement = obj(policy.spec.placement);
  let targets: ClusterInfo[];
  let division: Map<string, number> | undefined;
  let replicas: number | undefined;
  let selection: Selection;
  try {
    replicas = templateReplicas(t.ref.kind, t.object);
    const demand = demandOf(t, replicas, now, scheduled, excluded);
    selection = selectClusters(placement, clusters, demand);
    targets = selection.clusters;
    division = divideReplicas(placement, replicas, targets, (c) => demand.available(c));
  } catch (err: unknown) {
    if (!(err instanceof PlacementError)) throw err;
    errors.push({
      object: t.ref,
      policy: policy.ref,
      message: `${describeEntry(policy)}: spec.placement: ${err.message}`,
    });
    return undefined;
  }
  const skipped = [...selection.skipped];
  if (division && (replicas ?? 0) > 0) {
    for (const c of targets)
      if ((division.get(c.name) ?? 0) === 0)
        skipped.push({ cluster: c.name, reason: 'gets no replica from the division' });
    targets = targets.filter((c) => (division.get(c.name) ?? 0) > 0);
  }
  const order = new Map(clusters.map((c, i) => [c.name, i]));
  skipped.sort((a, b) => (order.get(a.cluster) ?? 0) - (order.get(b.cluster) ?? 0));
  if (targets.length === 0) {
    if (unplaced) {
      unplaced.evicted.push(...selection.evicted);
      unplaced.skipped.push(...skipped);
    }
    const why = skipped.slice(0, 10).map((x) => `${x.cluster}: ${x.reason}`);
    if (skipped.length > 10) why.push(`and ${skipped.length - 10} more`);
    errors.push({
      object: t.ref,
      policy: policy.ref,
      message: `${describeEntry(policy)}: no cluster matches its placement (${clusters.length} cluster${clusters.length === 1 ? '' : 's'} known${clusters.length ? `: ${clusters.map((c) => c.name).join(', ')}` : ''})${why.length ? `; ${why.join('; ')}` : ''}`,
    });
    return undefined;
  }
  const schedule: Schedule = { targets, division, evicted: selection.evicted, skipped };
  if (selection.recheckAt !== undefined) schedule.recheckAt = selection.recheckAt;
  return schedule;
}

/**
 * What placing this template asks of a cluster: its kind, and the replicas that fit there (Karmada's
 * calAvailableReplicas with the general estimator; a template without replicas is not estimated and
 * counts its own replicas, 0). Estimates are computed once per cluster.
 */
function demandOf(
  t: Template,
  replicas: number | undefined,
  now: number | undefined,
  scheduled: ReadonlySet<string> | undefined,
  excluded: ReadonlySet<string> | undefined,
): Demand {
  const requests = replicaRequests(t.ref.kind, t.object);
  const cache = new Map<string, number>();
  return {
    ref: t.ref,
    replicas,
    now,
    scheduled,
    excluded,
    available(c: ClusterInfo): number {
      if (!replicas) return replicas ?? 0;
      let n = cache.get(c.name);
      if (n === undefined) cache.set(c.name, (n = estimateReplicas(c, requests)));
      return n === UNLIMITED ? replicas : n;
    },
  };
}
