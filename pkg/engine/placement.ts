// Placement: which clusters a propagation policy sends a template to, and how many replicas each gets.
//
// Clusters: clusterAffinity, or the first clusterAffinities term that yields a cluster, or every cluster;
// then taints (NoSchedule/NoExecute) against clusterTolerations; then spread constraints.
// Replicas: Duplicated gives every cluster the template's count; Divided with Weighted static weights
// hands seats out by Karmada's Webster (Sainte-Laguë) method.
//
// Offline there is no cluster capacity, so where Karmada's scheduler scores clusters by free resources
// (dynamic weights, Aggregated division, choosing which N clusters satisfy maxGroups) Flotilla either
// decides by name order (spread constraints, documented) or reports that it cannot (dynamic weights,
// Aggregated) instead of guessing.

import { arr, isObject, obj, str } from './json.js';
import { clusterMatches } from './selectors.js';
import type { ClusterInfo } from './types.js';

export class PlacementError extends Error {
  readonly code = 'PLACEMENT';
  constructor(message: string) {
    super(message);
    this.name = 'PlacementError';
  }
}

/** k8s ToleratesTaint. */
function tolerates(toleration: unknown, taint: { key: string; value: string; effect: string }): boolean {
  if (!isObject(toleration)) return false;
  const effect = str(toleration.effect) ?? '';
  if (effect !== '' && effect !== taint.effect) return false;
  const key = str(toleration.key) ?? '';
  if (key !== '' && key !== taint.key) return false;
  const op = str(toleration.operator) ?? '';
  if (op === 'Exists') return true;
  if (op === '' || op === 'Equal') return key !== '' && (str(toleration.value) ?? '') === taint.value;
  return false;
}

function toleratesAll(cluster: ClusterInfo, tolerations: unknown[]): boolean {
  return cluster.taints.every((t) => (t.effect !== 'NoSchedule' && t.effect !== 'NoExecute') || tolerations.some((tol) => tolerates(tol, t)));
}

function groupValue(cluster: ClusterInfo, constraint: Record<string, unknown>): string[] {
  const byLabel = str(constraint.spreadByLabel);
  if (byLabel) return cluster.labels[byLabel] !== undefined ? [cluster.labels[byLabel] ?? ''] : [];
  switch (str(constraint.spreadByField) ?? 'cluster') {
    case 'region':
      return cluster.region ? [cluster.region] : [];
    case 'provider':
      return cluster.provider ? [cluster.provider] : [];
    case 'zone':
      return cluster.zones.length > 0 ? [...cluster.zones] : [];
    default:
      return [cluster.name];
  }
}

/**
 * Spread constraints, decided by name order: groups are formed by the constraint's field or label, the
 * first maxGroups groups (by group name) are kept, and fewer than minGroups is an error.
 */
function spread(clusters: ClusterInfo[], constraints: unknown[]): ClusterInfo[] {
  let out = clusters;
  for (const c of constraints) {
    if (!isObject(c)) continue;
    const groups = new Map<string, ClusterInfo[]>();
    for (const cl of out) for (const g of groupValue(cl, c)) groups.set(g, [...(groups.get(g) ?? []), cl]);
    const names = [...groups.keys()].sort();
    const min = typeof c.minGroups === 'number' && c.minGroups > 0 ? c.minGroups : 1;
    const max = typeof c.maxGroups === 'number' && c.maxGroups > 0 ? c.maxGroups : names.length;
    const what = str(c.spreadByLabel) ? `label ${str(c.spreadByLabel)}` : (str(c.spreadByField) ?? 'cluster');
    if (names.length < min) throw new PlacementError(`spread constraint by ${what} needs at least ${min} groups, and only ${names.length} are available`);
    const keep = new Set(names.slice(0, max).flatMap((n) => groups.get(n) ?? []));
    out = out.filter((cl) => keep.has(cl));
  }
  return out;
}

/** The clusters a placement selects (sorted by name), or a PlacementError. */
export function selectClusters(placement: Record<string, unknown> | undefined, clusters: readonly ClusterInfo[]): { clusters: ClusterInfo[]; affinityName?: string } {
  const p = placement ?? {};
  const tolerations = arr(p.clusterTolerations) ?? [];
  const feasible = clusters.filter((c) => toleratesAll(c, tolerations));
  let selected: ClusterInfo[];
  let affinityName: string | undefined;
  const terms = arr(p.clusterAffinities);
  if (terms && terms.length > 0) {
    selected = [];
    for (const term of terms) {
      const hit = feasible.filter((c) => clusterMatches(c, term));
      if (hit.length > 0) {
        selected = hit;
        affinityName = isObject(term) ? str(term.affinityName) : undefined;
        break;
      }
    }
  } else if (p.clusterAffinity !== undefined && p.clusterAffinity !== null) {
    selected = feasible.filter((c) => clusterMatches(c, p.clusterAffinity));
  } else {
    selected = [...feasible];
  }
  const constraints = arr(p.spreadConstraints);
  if (constraints && constraints.length > 0) selected = spread(selected, constraints);
  return affinityName === undefined ? { clusters: selected } : { clusters: selected, affinityName };
}

/** Workload kinds whose spec.replicas defaults to 1 when absent. */
const REPLICATED_KINDS = new Set(['Deployment', 'StatefulSet', 'ReplicaSet']);

/** The template's replica count, or undefined when it has none (ConfigMaps, Services, …). */
export function templateReplicas(kind: string, object: Record<string, unknown>): number | undefined {
  const spec = obj(object.spec);
  const r = spec?.replicas;
  if (typeof r === 'number' && Number.isInteger(r) && r >= 0) return r;
  if (REPLICATED_KINDS.has(kind) && (r === undefined || r === null)) return 1;
  return undefined;
}

/**
 * Webster / Sainte-Laguë: each seat goes to the highest weight/(2·assigned+1); ties go to the cluster with
 * fewer seats, then the smaller name (Karmada's order without a binding UID).
 */
export function websterSeats(replicas: number, weights: ReadonlyArray<{ name: string; weight: number }>): Map<string, number> {
  const seats = weights.map(() => 0);
  for (let s = 0; s < replicas; s++) {
    let best = -1;
    let bestScore = 0;
    for (let i = 0; i < weights.length; i++) {
      const w = weights[i] as { name: string; weight: number };
      if (w.weight <= 0) continue;
      const a = seats[i] as number;
      const score = w.weight / (2 * a + 1);
      if (best < 0 || score > bestScore) {
        best = i;
        bestScore = score;
      } else if (score === bestScore) {
        const ab = seats[best] as number;
        if (a < ab || (a === ab && w.name < (weights[best] as { name: string }).name)) {
          best = i;
          bestScore = score;
        }
      }
    }
    if (best < 0) break;
    seats[best] = (seats[best] as number) + 1;
  }
  return new Map(weights.map((w, i) => [w.name, seats[i] as number]));
}

/**
 * Replicas per cluster, or undefined when every cluster gets the template's own count (Duplicated, or a
 * template without replicas).
 */
export function divideReplicas(placement: Record<string, unknown> | undefined, replicas: number | undefined, clusters: readonly ClusterInfo[]): Map<string, number> | undefined {
  const rs = obj(placement?.replicaScheduling);
  if (!rs || replicas === undefined) return undefined;
  const type = str(rs.replicaSchedulingType) ?? 'Divided';
  if (type !== 'Divided') return undefined;
  const preference = str(rs.replicaDivisionPreference) ?? 'Weighted';
  const wp = obj(rs.weightPreference);
  if (preference === 'Aggregated') {
    throw new PlacementError('replicaDivisionPreference Aggregated packs replicas by member capacity, which rendering without the members does not know; use Weighted with a staticWeightList');
  }
  if (str(wp?.dynamicWeight)) {
    throw new PlacementError(`dynamicWeight ${str(wp?.dynamicWeight)} divides replicas by member capacity, which rendering without the members does not know; use a staticWeightList`);
  }
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
