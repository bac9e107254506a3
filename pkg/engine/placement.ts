// Placement: which clusters a propagation policy sends a template to, and how many replicas each gets.
//
// Clusters: clusterAffinity, or the first clusterAffinities term that yields a cluster, or every cluster;
// then taints (NoSchedule/NoExecute) against clusterTolerations and, when the Cluster lists its API
// enablements, the template's kind; then spread constraints, which keep the clusters (or groups) with the
// most available replicas (capacity.ts: Karmada's general estimator on status.resourceSummary), ties by name.
// Replicas: Duplicated gives every cluster the template's count; Divided with Weighted static weights
// hands seats out by Karmada's Webster (Sainte-Laguë) method; `dynamicWeight: AvailableReplicas` uses the
// available replicas as weights, and Aggregated the fewest clusters with the most available replicas that
// hold them all, divided the same way (Karmada's first schedule: each render is a fresh schedule).

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
 * cluster, when the replicas must fit (`needReplicas`: Divided by available replicas), a kept cluster is
 * swapped for a bigger one left out until they do (Karmada's selectBestClustersByCluster).
 */
function spread(
  clusters: ClusterInfo[],
  constraints: unknown[],
  available: (c: ClusterInfo) => number,
  needReplicas: number | undefined,
): ClusterInfo[] {
  let out = clusters;
  for (const c of constraints) {
    if (!isObject(c)) continue;
    const groups = new Map<string, ClusterInfo[]>();
    for (const cl of out) for (const g of groupValue(cl, c)) groups.set(g, [...(groups.get(g) ?? []), cl]);
    const total = (g: string) => (groups.get(g) ?? []).reduce((n, cl) => n + available(cl), 0);
    const names = [...groups.keys()].sort((a, b) => total(b) - total(a) || (a < b ? -1 : a > b ? 1 : 0));
    const min = typeof c.minGroups === 'number' && c.minGroups > 0 ? c.minGroups : 1;
    const max = typeof c.maxGroups === 'number' && c.maxGroups > 0 ? c.maxGroups : names.length;
    const what = str(c.spreadByLabel) ? `label ${str(c.spreadByLabel)}` : (str(c.spreadByField) ?? 'cluster');
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
    selected = spread(selected, constraints, available, byCapacity(p) ? demand?.replicas : undefined);
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

/** Most replicas a template can ask for: spec.replicas is an int32 in every Kubernetes workload. */
export const MAX_REPLICAS = 2_147_483_647;

/** One cluster's weight; the name breaks ties. */
type Weighted = { readonly name: string; readonly weight: number };

/**
 * Webster / Sainte-Laguë: each seat goes to the highest weight/(2·assigned+1); ties go to the cluster with
 * fewer seats, then the smaller name, then the earlier entry (Karmada's order without a binding UID).
 * Weights that are not positive (or NaN) get nothing; when no weight is positive nobody gets a seat.
 *
 * Handing seats out one by one costs O(replicas × clusters), which is half a minute for an int32 replica
 * count. The same answer without the loop: seat k (0-based) of cluster i has the priority
 * p(i,k) = weight_i/(2k+1), computed in the same floating point as one-by-one would, and the one-by-one
 * method always takes the best remaining seat in the order (priority desc, k asc, name asc, index asc)
 * — every cluster's seats are already in that order — so it ends with exactly the first `replicas` seats of
 * that order. So: find the priority λ of the last seat taken (lastSeatPriority), take every seat with
 * p > λ, and give what is left to the seats with p = λ in (k, name, index) order. Counting the seats with
 * p ≥ λ costs O(clusters); finding λ takes O(log clusters) counts when the quota estimate is close (it is
 * for ordinary weights) and at most 64 when it is not (infinite or extremely uneven weights).
 *
 * `replicas` must be an integer from 0 to MAX_REPLICAS (a RangeError otherwise).
 */
export function websterSeats(replicas: number, weights: ReadonlyArray<Weighted>): Map<string, number> {
  if (!Number.isInteger(replicas) || replicas < 0 || replicas > MAX_REPLICAS) {
    throw new RangeError(`replicas must be an integer from 0 to ${MAX_REPLICAS}, not ${replicas}`);
  }
  const seats = weights.map(() => 0);
  const eligible = weights.flatMap((w, i) => (w.weight > 0 ? [i] : []));
  if (replicas > 0 && eligible.length > 0) assignSeats(replicas, weights, eligible, seats);
  return new Map(weights.map((w, i) => [w.name, seats[i] as number]));
}

function assignSeats(
  replicas: number,
  weights: ReadonlyArray<Weighted>,
  eligible: readonly number[],
  seats: number[],
): void {
  const w = weights.map((x) => x.weight);
  const weightOf = (i: number): number => w[i] as number;
  /** Seats with p >= λ, counted up to `replicas` (a larger answer is cut short: only "enough" matters). */
  const seatsFrom = (lambda: number): number => {
    let n = 0;
    for (const i of eligible) {
      n += seatsAtLeast(weightOf(i), lambda, replicas);
      if (n >= replicas) break;
    }
    return n;
  };
  const lambda = lastSeatPriority(replicas, weightOf, eligible, seatsFrom);
  const above = lambda === Number.POSITIVE_INFINITY ? undefined : nextUp(lambda);
  // Seats with p > λ are all taken (fewer than `replicas` of them, or λ would be higher); seats with p = λ
  // are [taken_i, upTo_i) for each cluster and share what is left.
  let left = replicas;
  const upTo = seats.map(() => 0);
  for (const i of eligible) {
    const taken = above === undefined ? 0 : seatsAtLeast(weightOf(i), above, replicas);
    seats[i] = taken;
    left -= taken;
    upTo[i] = seatsAtLeast(weightOf(i), lambda, replicas);
  }
  if (left <= 0) return;
  // Tied seats go by k first: find the level K below which every tied seat is taken.
  const tiedBelow = (level: number): number => {
    let n = 0;
    for (const i of eligible) n += Math.max(0, Math.min(level, upTo[i] as number) - (seats[i] as number));
    return n;
  };
  let kLo = 0;
  let kHi = replicas + 1;
  while (kHi - kLo > 1) {
    const mid = Math.floor((kLo + kHi) / 2);
    if (tiedBelow(mid) <= left) kLo = mid;
    else kHi = mid;
  }
  const level = kLo;
  left -= tiedBelow(level);
  for (const i of eligible) seats[i] = Math.max(seats[i] as number, Math.min(level, upTo[i] as number));
  // Then, at that level, by name and input order.
  const atLevel = eligible.filter((i) => (seats[i] as number) === level && (upTo[i] as number) > level);
  atLevel.sort((a, b) => compareNames((weights[a] as Weighted).name, (weights[b] as Weighted).name) || a - b);
  for (const i of atLevel.slice(0, left)) seats[i] = (seats[i] as number) + 1;
}

/** Most priorities searched directly inside the estimated bracket, per eligible cluster. */
const CANDIDATES_PER_CLUSTER = 8;

/**
 * λ, the priority of the `replicas`-th best seat: the largest λ with seatsFrom(λ) >= replicas.
 *
 * The quota estimate (round(replicas·w/W) seats each) gives a bracket: its last seats' lowest priority and
 * its next seats' highest. When counting confirms the bracket, λ is one of the few priorities inside it,
 * found by bisecting them. Otherwise (infinite weights, or weights so far apart that the estimate is
 * useless) the doubles themselves are bisected, at most 64 rounds.
 */
function lastSeatPriority(
  replicas: number,
  weightOf: (i: number) => number,
  eligible: readonly number[],
  seatsFrom: (lambda: number) => number,
): number {
  const bracket = estimatedBracket(replicas, weightOf, eligible, seatsFrom);
  if (bracket === undefined) return bisectDoubles(0, Number.POSITIVE_INFINITY, seatsFrom, replicas);
  const { lo, hi } = bracket;
  const aboveHi = nextUp(hi);
  const ranges = eligible.map((i) => ({
    i,
    from: seatsAtLeast(weightOf(i), aboveHi, replicas),
    to: seatsAtLeast(weightOf(i), lo, replicas),
  }));
  const total = ranges.reduce((n, r) => n + (r.to - r.from), 0);
  if (total > CANDIDATES_PER_CLUSTER * eligible.length) return bisectDoubles(lo, hi, seatsFrom, replicas);
  const candidates: number[] = [];
  for (const { i, from, to } of ranges) for (let k = from; k < to; k++) candidates.push(weightOf(i) / (2 * k + 1));
  candidates.sort((a, b) => b - a);
  // seatsFrom grows as λ falls; λ is the first candidate (from the top) that leaves enough seats.
  let bad = -1;
  let good = candidates.length - 1;
  while (good - bad > 1) {
    const mid = Math.floor((bad + good) / 2);
    if (seatsFrom(candidates[mid] as number) >= replicas) good = mid;
    else bad = mid;
  }
  return candidates[good] as number;
}

/** A bracket [lo, hi] around λ from the quota estimate, confirmed by counting; undefined when unusable. */
function estimatedBracket(
  replicas: number,
  weightOf: (i: number) => number,
  eligible: readonly number[],
  seatsFrom: (lambda: number) => number,
): { lo: number; hi: number } | undefined {
  let max = 0;
  for (const i of eligible) max = Math.max(max, weightOf(i));
  if (!Number.isFinite(max)) return undefined;
  let sum = 0;
  for (const i of eligible) sum += weightOf(i) / max; // in (0, clusters]: no overflow
  // The estimate's seats S: λ is at least S's lowest priority when S has `replicas` seats, and at most the
  // higher of that and the best priority S leaves out. Rounding can leave S a seat or two off, so the
  // bracket is only used once counting confirms it.
  let lowestIn = Number.POSITIVE_INFINITY;
  let bestOut = 0;
  let size = 0;
  for (const i of eligible) {
    const quota = Math.min(replicas, Math.max(0, Math.floor((replicas * (weightOf(i) / max)) / sum + 0.5)));
    size += quota;
    if (quota > 0) lowestIn = Math.min(lowestIn, weightOf(i) / (2 * quota - 1));
    bestOut = Math.max(bestOut, weightOf(i) / (2 * Math.min(quota, replicas - 1) + 1));
  }
  if (lowestIn === Number.POSITIVE_INFINITY) lowestIn = 0;
  // With exactly `replicas` seats in S, λ >= S's lowest; when nothing left out beats it, λ is that lowest.
  const lo = size === replicas ? lowestIn : Math.min(lowestIn, bestOut);
  const hi = Math.max(lowestIn, bestOut);
  if (!(lo <= hi) || seatsFrom(lo) < replicas || seatsFrom(nextUp(hi)) >= replicas) return undefined;
  return { lo, hi };
}

/** The largest double λ in [lo, hi] with seatsFrom(λ) >= replicas, given that lo has enough and above hi not. */
function bisectDoubles(lo: number, hi: number, seatsFrom: (lambda: number) => number, replicas: number): number {
  // Non-negative doubles sort as their IEEE-754 bit patterns do, so bisecting the bits bisects the values.
  let good = bitsOf(lo);
  let bad = bitsOf(hi) + 1n; // above hi: not enough (one past +Infinity is no double at all)
  while (bad - good > 1n) {
    const mid = (good + bad) >> 1n;
    if (seatsFrom(doubleOf(mid)) >= replicas) good = mid;
    else bad = mid;
  }
  return doubleOf(good);
}

/**
 * How many of a cluster's first `limit` seats have p(k) = weight/(2k+1) >= λ. p falls as k grows, so the
 * answer is the first k where the test fails. It is guessed from the real-number solution and confirmed
 * with the same floating-point expression the one-by-one method uses (2k+1 for k = guess - 1 is
 * 2·guess - 1); a wrong guess is corrected by galloping and bisection from it.
 */
function seatsAtLeast(weight: number, lambda: number, limit: number): number {
  const real = lambda > 0 ? Math.floor((weight / lambda - 1) / 2) + 1 : limit;
  const guess = Number.isFinite(real) ? Math.min(limit, Math.max(0, real)) : real > 0 ? limit : 0;
  const belowPasses = guess === 0 || weight / (2 * guess - 1) >= lambda;
  const atPasses = guess < limit && weight / (2 * guess + 1) >= lambda;
  if (belowPasses && !atPasses) return guess;
  return correctGuess(weight, lambda, limit, guess, atPasses);
}

function correctGuess(weight: number, lambda: number, limit: number, guess: number, guessPasses: boolean): number {
  const passes = (k: number): boolean => weight / (2 * k + 1) >= lambda;
  if (guessPasses) {
    let good = guess;
    let bad = limit;
    for (let step = 1; good + step < limit; step *= 2) {
      if (passes(good + step)) good += step;
      else {
        bad = good + step;
        break;
      }
    }
    return firstFailure(passes, good, bad);
  }
  let bad = guess - 1;
  let good = -1;
  for (let step = 1; bad - step >= 0; step *= 2) {
    if (passes(bad - step)) {
      good = bad - step;
      break;
    }
    bad -= step;
  }
  return firstFailure(passes, good, bad);
}

/** With passes(good) (or good = -1) and !passes(bad) (or bad = the limit): the first k that fails. */
function firstFailure(passes: (k: number) => boolean, good: number, bad: number): number {
  let g = good;
  let b = bad;
  while (b - g > 1) {
    const mid = Math.floor((g + b) / 2);
    if (passes(mid)) g = mid;
    else b = mid;
  }
  return b;
}

const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);
const u32 = new Uint32Array(f64.buffer);
const LOW = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1; // the low word's index

function bitsOf(x: number): bigint {
  f64[0] = x;
  return u64[0] as bigint;
}

function doubleOf(bits: bigint): number {
  u64[0] = bits;
  return f64[0] as number;
}

/** The next double above a finite non-negative x (+Infinity above the largest). */
function nextUp(x: number): number {
  f64[0] = x;
  const low = u32[LOW] as number;
  if (low === 0xffffffff) {
    u32[LOW] = 0;
    u32[1 - LOW] = (u32[1 - LOW] as number) + 1;
  } else u32[LOW] = low + 1;
  return f64[0];
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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
