// Webster (Sainte-Laguë) seat apportionment, as Karmada divides replicas by static or dynamic weights;
// the same answer as handing seats out one by one, without the loop.

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
