// Placement, the replica half: how many replicas each selected cluster gets (Karmada's
// pkg/scheduler/core/division_algorithm.go).
//
// Duplicated gives every cluster the template's count; Divided with Weighted static weights hands seats out
// by Karmada's Webster (Sainte-Laguë) method (webster.ts); `dynamicWeight: AvailableReplicas` uses the
// available replicas as weights, and Aggregated the fewest clusters with the most available replicas that
// hold them all, divided the same way (Karmada's first schedule: each render is a fresh schedule).

import { arr, isObject, obj, str } from './json.js';
import { jobReplicas } from './job-replicas.js';
import { PlacementError } from './placement.js';
import { clusterMatches } from './selectors.js';
import type { ClusterInfo } from './types.js';
import { MAX_REPLICAS, websterSeats } from './webster.js';

/** Workload kinds whose spec.replicas defaults to 1 when absent. */
const REPLICATED_KINDS = new Set(['Deployment', 'StatefulSet', 'ReplicaSet']);

/**
 * The template's replica count, or undefined when it has none (ConfigMaps, Services, …). A Job's are its
 * parallelism (job-replicas.ts).
 */
export function templateReplicas(kind: string, object: Record<string, unknown>): number | undefined {
  const spec = obj(object.spec);
  if (kind === 'Job') return jobReplicas(spec);
  const r = spec?.replicas;
  if (typeof r === 'number' && Number.isInteger(r) && r >= 0) return r;
  if (REPLICATED_KINDS.has(kind) && (r === undefined || r === null)) return 1;
  return undefined;
}

/**
 * Replicas per cluster, or undefined when every cluster gets the template's own count (Duplicated, or a
 * template without replicas).
 */
export function divideReplicas(
  placement: Record<string, unknown> | undefined,
  replicas: number | undefined,
  clusters: readonly ClusterInfo[],
  available: (c: ClusterInfo) => number = () => 0,
): Map<string, number> | undefined {
  const rs = obj(placement?.replicaScheduling);
  if (!rs || replicas === undefined) return undefined;
  const type = str(rs.replicaSchedulingType) ?? 'Divided';
  if (type !== 'Divided') return undefined;
  const preference = str(rs.replicaDivisionPreference) ?? 'Weighted';
  const wp = obj(rs.weightPreference);
  if (replicas > MAX_REPLICAS)
    throw new PlacementError(
      `spec.replicas ${replicas} cannot be divided: Kubernetes allows at most ${MAX_REPLICAS} (int32)`,
    );
  if (preference === 'Aggregated' || str(wp?.dynamicWeight))
    return divideByCapacity(replicas, clusters, available, preference === 'Aggregated');
  const rules = arr(wp?.staticWeightList) ?? [];
  let weights = clusters.map((c) => {
    let w = 0;
    for (const r of rules) {
      if (!isObject(r)) continue;
      const weight = typeof r.weight === 'number' ? r.weight : 0;
      if (weight > w && clusterMatches(c, r.targetCluster)) w = weight;
    }
    return { name: c.name, weight: rules.length === 0 ? 1 : w };
  });
  if (weights.every((w) => w.weight === 0)) weights = weights.map((w) => ({ ...w, weight: 1 }));
  return websterSeats(replicas, weights);
}

/**
 * Karmada's dynamic division on a first schedule: available replicas are the weights (Webster), most
 * available first; Aggregated keeps only the shortest such prefix that holds every replica. Fewer
 * available replicas than wanted is an error, with Karmada's words.
 */
function divideByCapacity(
  replicas: number,
  clusters: readonly ClusterInfo[],
  available: (c: ClusterInfo) => number,
  aggregated: boolean,
): Map<string, number> {
  let ordered = byAvailableStable(clusters, available);
  const total = ordered.reduce((n, c) => n + available(c), 0);
  if (total < replicas) {
    const unknown = clusters.every((c) => c.capacity === undefined);
    throw new PlacementError(
      `Clusters available replicas ${total} are not enough to schedule.${unknown ? ' No candidate Cluster has status.resourceSummary: the controller writes it from the members; offline, render Cluster objects that carry it (e.g. from kubectl get clusters -o yaml)' : ''}`,
    );
  }
  if (replicas === 0) return new Map(clusters.map((c) => [c.name, 0]));
  if (aggregated) {
    let sum = 0;
    const cut = ordered.findIndex((c) => (sum += available(c)) >= replicas);
    ordered = ordered.slice(0, cut + 1);
  }
  const seats = websterSeats(
    replicas,
    ordered.map((c) => ({ name: c.name, weight: available(c) })),
  );
  for (const c of clusters) if (!seats.has(c.name)) seats.set(c.name, 0);
  return seats;
}

/** Most available first; equal ones keep their order (candidates come sorted by name). */
function byAvailableStable(clusters: readonly ClusterInfo[], available: (c: ClusterInfo) => number): ClusterInfo[] {
  return clusters
    .map((c, i) => ({ c, i, a: available(c) }))
    .sort((x, y) => y.a - x.a || x.i - y.i)
    .map((x) => x.c);
}
