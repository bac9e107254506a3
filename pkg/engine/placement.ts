// Placement, the cluster half: which clusters a propagation policy sends a template to (division.ts then
// says how many replicas each gets).
//
// clusterAffinity, or the first clusterAffinities term that yields a cluster, or every cluster; then taints
// (NoSchedule/NoExecute) against clusterTolerations and, when the Cluster lists its API enablements, the
// template's kind; then spread constraints, which keep the clusters (or groups) with the most available
// replicas (capacity.ts: Karmada's general estimator on status.resourceSummary), ties by name; by cluster,
// the clusters the template is on now come first (Karmada's ClusterLocality score), so a template stays
// where it is rather than move back to a cluster it left (a taint removed, a cluster that grew).

import { servesKind } from './capacity.js';
import { arr, isObject, obj, own, str } from './json.js';
import { clusterMatches } from './selectors.js';
import type { ClusterInfo, ObjectRef } from './types.js';

/** What is being placed: its kind (API enablements), and how many replicas fit on a cluster. */
export interface Demand {
  ref: Pick<ObjectRef, 'apiVersion' | 'kind'>;
  /** The template's replicas (undefined for kinds without any). */
  replicas: number | undefined;
  /** The time placement is decided at (ms since the epoch), for NoExecute tolerationSeconds; undefined: not applied. */
  now?: number | undefined;
  /** Clusters the template is placed on now: a NoSchedule taint does not take it off them. */
  scheduled?: ReadonlySet<string> | undefined;
  /** Clusters the template was evicted from by application failover: not candidates (reported as evicted). */
  excluded?: ReadonlySet<string> | undefined;
  /** Available replicas of this template on the cluster (Karmada's calAvailableReplicas). */
  available(cluster: ClusterInfo): number;
}

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

/**
 * Whether a cluster's taints let the placement use it at `now`: every NoSchedule and NoExecute taint
 * tolerated, and no NoExecute toleration's `tolerationSeconds` run out since its taint's `timeAdded`
 * (Karmada's taint manager: the earliest such deadline evicts). Without `now` (render() as a library
 * call, which reads no clock) deadlines are not applied. `deadline` is the earliest one still ahead.
 */
function taintVerdict(
  cluster: ClusterInfo,
  tolerations: unknown[],
  now: number | undefined,
  scheduled: ReadonlySet<string> | undefined,
): { ok: true; deadline?: number } | { ok: false; evicted: boolean; reason: string } {
  let deadline: number | undefined;
  let blocked: string | undefined;
  const show = (t: { key: string; value: string; effect: string }) =>
    `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`;
  for (const t of cluster.taints) {
    if (t.effect !== 'NoSchedule' && t.effect !== 'NoExecute') continue;
    const tol = tolerations.find((x) => tolerates(x, t));
    if (tol === undefined && t.effect === 'NoExecute')
      return { ok: false, evicted: true, reason: `evicted: untolerated taint ${show(t)}` };
    // NoSchedule keeps new placements off; a template already there stays (Karmada's TaintToleration filter).
    if (tol === undefined) {
      if (!scheduled?.has(cluster.name)) blocked ??= `untolerated taint ${show(t)}`;
      continue;
    }
    if (t.effect !== 'NoExecute' || now === undefined || t.timeAdded === undefined || !isObject(tol)) continue;
    const seconds = tol.tolerationSeconds;
    if (typeof seconds !== 'number' || !Number.isFinite(seconds)) continue;
    const at = t.timeAdded + Math.max(0, seconds) * 1000;
    if (at <= now)
      return { ok: false, evicted: true, reason: `evicted: tolerationSeconds ${seconds} of taint ${show(t)} ran out` };
    if (deadline === undefined || at < deadline) deadline = at;
  }
  if (blocked !== undefined) return { ok: false, evicted: false, reason: blocked };
  return deadline === undefined ? { ok: true } : { ok: true, deadline };
}

function groupValue(cluster: ClusterInfo, constraint: Record<string, unknown>): string[] {
  const byLabel = str(constraint.spreadByLabel);
  if (byLabel) {
    const value = own(cluster.labels, byLabel);
    return value !== undefined ? [value] : [];
  }
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
 * Spread constraints: groups are formed by the constraint's field or label; the maxGroups groups with the
 * most available replicas are kept (ties by group name), and fewer than minGroups is an error. By
 * cluster, the clusters in `scheduled` (where the template is now) come before the others: Karmada sorts
 * them by score first, and its only scoring plugin, ClusterLocality, gives 100 to a cluster the binding
 * already targets and 0 to the rest (spreadconstraint.sortClusters). By cluster, when the replicas must fit (`needReplicas`: Divided by available replicas), a kept cluster is
 * swapped for a bigger one left out until they do (Karmada's selectBestClustersByCluster).
 */
function spread(
  clusters: ClusterInfo[],
  constraints: unknown[],
  available: (c: ClusterInfo) => number,
  needReplicas: number | undefined,
  scheduled: ReadonlySet<string> | undefined,
): ClusterInfo[] {
  let out = clusters;
  for (const c of constraints) {
    if (!isObject(c)) continue;
    const groups = new Map<string, ClusterInfo[]>();
    for (const cl of out) for (const g of groupValue(cl, c)) groups.set(g, [...(groups.get(g) ?? []), cl]);
    const total = (g: string) => (groups.get(g) ?? []).reduce((n, cl) => n + available(cl), 0);
    const what = str(c.spreadByLabel) ? `label ${str(c.spreadByLabel)}` : (str(c.spreadByField) ?? 'cluster');
    const here = (g: string) => (what === 'cluster' && scheduled?.has(g) ? 1 : 0);
    const names = [...groups.keys()].sort(
      (a, b) => here(b) - here(a) || total(b) - total(a) || (a < b ? -1 : a > b ? 1 : 0),
    );
    const min = typeof c.minGroups === 'number' && c.minGroups > 0 ? c.minGroups : 1;
    const max = typeof c.maxGroups === 'number' && c.maxGroups > 0 ? c.maxGroups : names.length;
    if (names.length < min)
      throw new PlacementError(
        `spread constraint by ${what} needs at least ${min} groups, and only ${names.length} are available`,
      );
    let kept = names.slice(0, max);
    if (what === 'cluster' && needReplicas !== undefined)
      kept = fitByCluster(names, kept.length, available, groups, needReplicas);
    const keep = new Set(kept.flatMap((n) => groups.get(n) ?? []));
    out = out.filter((cl) => keep.has(cl));
  }
  return out;
}

/** Karmada's replica check when selecting N clusters: swap in bigger clusters from the back until they fit. */
function fitByCluster(
  names: string[],
  count: number,
  available: (c: ClusterInfo) => number,
  groups: Map<string, ClusterInfo[]>,
  needReplicas: number,
): string[] {
  const avail = (n: string) => available((groups.get(n) ?? [])[0] as ClusterInfo);
  const order = [...names];
  const sum = () => order.slice(0, count).reduce((n, x) => n + avail(x), 0);
  for (let i = count - 1; i >= 0 && sum() < needReplicas; i--) {
    let best = -1;
    for (let j = count; j < order.length; j++)
      if (
        avail(order[j] as string) > avail(order[i] as string) &&
        (best < 0 || avail(order[j] as string) > avail(order[best] as string))
      )
        best = j;
    if (best >= 0) [order[i], order[best]] = [order[best] as string, order[i] as string];
  }
  if (sum() < needReplicas) throw new PlacementError(`no enough resource when selecting ${count} clusters`);
  return order.slice(0, count);
}

/** The clusters a placement selects (sorted by name), or a PlacementError. */
export function selectClusters(
  placement: Record<string, unknown> | undefined,
  clusters: readonly ClusterInfo[],
  demand?: Demand,
): Selection {
  const p = placement ?? {};
  const tolerations = arr(p.clusterTolerations) ?? [];
  const evicted: string[] = [];
  const skipped: Array<{ cluster: string; reason: string }> = [];
  const terms = arr(p.clusterAffinities);
  const byTerms = terms !== undefined && terms.length > 0;
  const affinityField = byTerms ? 'spec.placement.clusterAffinities' : 'spec.placement.clusterAffinity';
  // The reason given is the affinity's when it rejects the cluster anyway: it depends on less than taints
  // or capacity do, so it changes only when the cluster's labels and fields do.
  const affine = (c: ClusterInfo): boolean =>
    byTerms
      ? (terms ?? []).some((t) => clusterMatches(c, t))
      : p.clusterAffinity === undefined || p.clusterAffinity === null || clusterMatches(c, p.clusterAffinity);
  const skip = (c: ClusterInfo, reason: string) =>
    skipped.push({ cluster: c.name, reason: affine(c) ? reason : `not selected by ${affinityField}` });
  let recheckAt: number | undefined;
  const feasible = clusters.filter((c) => {
    if (demand?.excluded?.has(c.name)) {
      evicted.push(c.name);
      skip(c, 'evicted by application failover (its copy stayed unhealthy)');
      return false;
    }
    const v = taintVerdict(c, tolerations, demand?.now, demand?.scheduled);
    if (!v.ok) {
      if (v.evicted) evicted.push(c.name);
      skip(c, v.reason);
      return false;
    }
    if (v.deadline !== undefined && (recheckAt === undefined || v.deadline < recheckAt)) recheckAt = v.deadline;
    if (demand && !servesKind(c, demand.ref)) {
      skip(c, `does not serve ${demand.ref.apiVersion} ${demand.ref.kind} (status.apiEnablements)`);
      return false;
    }
    return true;
  });
  let selected: ClusterInfo[];
  let affinityName: string | undefined;
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
  const picked = new Set(selected);
  for (const c of feasible)
    if (!picked.has(c))
      skipped.push({
        cluster: c.name,
        reason: `not selected by ${affinityField}${byTerms && affinityName ? ` (term ${affinityName} was used)` : ''}`,
      });
  const constraints = arr(p.spreadConstraints);
  if (constraints && constraints.length > 0) {
    const available = demand ? (c: ClusterInfo) => demand.available(c) : () => 0;
    const before = selected;
    selected = spread(
      selected,
      constraints,
      available,
      byCapacity(p) ? demand?.replicas : undefined,
      demand?.scheduled,
    );
    const kept = new Set(selected);
    for (const c of before)
      if (!kept.has(c))
        skip(
          c,
          `cut by spread constraints (the groups with the most available replicas were kept${demand ? `; ${demand.available(c)} fit here` : ''})`,
        );
  }
  const out: Selection = { clusters: selected, evicted, skipped };
  if (affinityName !== undefined) out.affinityName = affinityName;
  if (recheckAt !== undefined) out.recheckAt = recheckAt;
  return out;
}

export interface Selection {
  clusters: ClusterInfo[];
  affinityName?: string;
  /** Clusters left out by a NoExecute taint (not tolerated, or its tolerationSeconds ran out): evicted. */
  evicted: string[];
  /** Every cluster not selected, with why (the first reason that left it out), in cluster order. */
  skipped: Array<{ cluster: string; reason: string }>;
  /** The earliest time a tolerated NoExecute taint runs out on a selected cluster (placement changes then). */
  recheckAt?: number;
}

/** Whether replicas are divided by what the clusters can take (dynamic weights or Aggregated). */
export function byCapacity(placement: Record<string, unknown> | undefined): boolean {
  const rs = obj(placement?.replicaScheduling);
  if (!rs || (str(rs.replicaSchedulingType) ?? 'Divided') !== 'Divided') return false;
  return (
    str(rs.replicaDivisionPreference) === 'Aggregated' || str(obj(rs.weightPreference)?.dynamicWeight) !== undefined
  );
}

/**
 * Whether a placement could select this cluster: affinity, without spread constraints and taints (which
 * only narrow, and whose NoSchedule effect depends on where the template is now).
 */
export function couldSelect(placement: Record<string, unknown> | undefined, cluster: ClusterInfo | undefined): boolean {
  if (!cluster) return false;
  try {
    return (
      selectClusters(placement ? { ...placement, spreadConstraints: undefined } : undefined, [
        { ...cluster, taints: [] },
      ]).clusters.length > 0
    );
  } catch {
    return true;
  }
}

/** Whether a placement selects no cluster at all (its error then names every cluster). */
export function selectsNone(placement: Record<string, unknown> | undefined, clusters: readonly ClusterInfo[]): boolean {
  try {
    return selectClusters(placement, clusters).clusters.length === 0;
  } catch {
    return true;
  }
}
