// The controllers' memory as `bench:fleet` measures it, at several fleet sizes. At each size, once the
// controllers are quiet (CPU idle), three readings per controller (sample()):
//
//   retained heap: the heap in use after a full collection (the /metrics scrape runs the collection);
//   RSS 2 s after gc: VmRSS right after that collection (V8 keeps the pages it freed);
//   RSS as seen once settled: VmRSS once V8's memory reducer has run after that collection, at most
//   BENCH_FLEET_QUIET_MS (default 130 s) later: what an operator sees of a controller that has settled.
//
// Each reading is fitted by least squares over the sizes (the first size and BENCH_FLEET_GROW_STEPS more,
// default 3): the slope is MiB per 1,000 template-member pairs, printed with the reading at each size.

import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { HEAP_METRIC } from '../../pkg/runtime/heap-gauge.js';

/** The parts of a Flotilla process (fleet-common.ts's Proc) read here. */
export interface Measurable {
  child: { pid?: number | undefined };
  /** Where it serves /metrics with the heap-after-gc gauge. */
  metricsPort?: number;
}

const MiB = 1024 * 1024;
const QUIET_MS = Number(process.env.BENCH_FLEET_QUIET_MS ?? 130_000);
const STEPS = Math.max(1, Number(process.env.BENCH_FLEET_GROW_STEPS ?? 3));

/** A controller's memory at one fleet size. */
export interface Sample {
  /** VmRSS once settled: after the collection and V8's memory reducer (what an operator sees). */
  rss: number;
  /** Heap in use after a full collection. */
  heap: number;
  /** VmRSS 2 s after that collection. */
  rssAfterGc: number;
}

/** The controllers at several fleet sizes. */
export interface Growth {
  pairsAdded: number;
  /** Per controller: at the first size, at the last. */
  at: Array<[Sample, Sample]>;
  /** Each size: its template-member pairs, and each controller's sample there. */
  sizes: Array<{ pairs: number; samples: Sample[] }>;
}

/** Least-squares line through (x, y). */
export function fit(points: Array<[number, number]>): { intercept: number; slope: number } {
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const slope = sxx === 0 ? NaN : sxy / sxx;
  return { intercept: my - slope * mx, slope };
}

export interface Usage {
  cpuSeconds: number;
  rssBytes: number;
  peakBytes: number;
}

/** CPU seconds, RSS and peak RSS of a process, from /proc. */
export function usage(pid: number | undefined): Usage {
  if (pid === undefined) return { cpuSeconds: NaN, rssBytes: NaN, peakBytes: NaN };
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuSeconds = (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { cpuSeconds, rssBytes: kb('VmRSS'), peakBytes: kb('VmHWM') };
  } catch {
    return { cpuSeconds: NaN, rssBytes: NaN, peakBytes: NaN };
  }
}

/** The controller's heap in use after a full collection (its /metrics gauge; the scrape runs the collection). */
export async function heapAfterGc(p: Measurable): Promise<number> {
  if (p.metricsPort === undefined) return NaN;
  try {
    const text = await (await fetch(`http://127.0.0.1:${p.metricsPort}/metrics`)).text();
    return Number(new RegExp(`^${HEAP_METRIC} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

/** Waits until every controller is quiet: under 5% of a core over 3 s (at most 2 minutes). */
export async function quiet(controllers: Measurable[]): Promise<void> {
  const busyUntil = Date.now() + 120_000;
  for (;;) {
    const a = controllers.map((c) => usage(c.child.pid).cpuSeconds);
    await sleep(3_000);
    const b = controllers.map((c) => usage(c.child.pid).cpuSeconds);
    if (b.every((x, i) => !(x - (a[i] ?? 0) > 0.15)) || Date.now() > busyUntil) break;
  }
}

/**
 * Each controller quiet: its heap after gc (the scrape collects), its RSS 2 s after that collection, then
 * its RSS once V8's memory reducer has returned what the collection freed (RSS down by a tenth), at most
 * QUIET_MS later. A full collection alone returns little: V8 keeps the pages it freed. The reducer starts
 * only after a full collection, and in Node reads the allocation rate only at collections: after a burst
 * it reads it as high for as long as nothing allocates, and collects on its watchdog, about 100 s after
 * the last full collection. A controller that has made no full collection since a burst keeps the burst's
 * RSS until it makes one: what an operator sees settles only after it.
 */
export async function sample(controllers: Measurable[]): Promise<Sample[]> {
  await quiet(controllers);
  const heap = await Promise.all(controllers.map(heapAfterGc));
  await sleep(2_000);
  const after = controllers.map((c) => usage(c.child.pid).rssBytes);
  const deadline = Date.now() + QUIET_MS;
  while (Date.now() < deadline) {
    await sleep(2_000);
    if (controllers.every((c, i) => usage(c.child.pid).rssBytes < 0.9 * (after[i] ?? 0))) {
      await sleep(4_000);
      break;
    }
  }
  return controllers.map((c, i) => ({
    rss: usage(c.child.pid).rssBytes,
    heap: heap[i] ?? NaN,
    rssAfterGc: after[i] ?? NaN,
  }));
}

/** The steps of `count` more templates after `from`: [from, to) each, BENCH_FLEET_GROW_STEPS of them. */
export function growSteps(from: number, count: number): Array<[number, number]> {
  const steps: Array<[number, number]> = [];
  let at = from;
  for (let s = 1; s <= STEPS; s++) {
    const to = from + Math.round((count * s) / STEPS);
    if (to > at) steps.push([at, to]);
    at = to;
  }
  return steps;
}

/** The Growth of the samples at each size. */
export function growth(pairsAdded: number, sizes: Growth['sizes']): Growth {
  const first = sizes[0]?.samples ?? [];
  const last = sizes[sizes.length - 1]?.samples ?? [];
  const none: Sample = { rss: NaN, heap: NaN, rssAfterGc: NaN };
  return { pairsAdded, at: first.map((f, i) => [f, last[i] ?? none]), sizes };
}

/** Per controller, the slope of one reading over the sizes, in MiB per 1,000 pairs, with its value at each size. */
function slopeOf(g: Growth, read: (s: Sample) => number): string {
  return g.at
    .map(([a], i) => {
      const values = g.sizes.map((z) => read(z.samples[i] ?? a) / MiB);
      const line = fit(g.sizes.map((z, k) => [z.pairs / 1000, values[k] ?? NaN]));
      return `${line.slope.toFixed(2)} (${values.map((v) => v.toFixed(0)).join(' -> ')})`;
    })
    .join(' + ');
}

export const MEMORY_COLUMNS = [
  'controller retained heap per 1,000 pairs (after gc; slope over the sizes, MiB at each)',
  "controller RSS per 1,000 pairs, as seen once settled (after gc and V8's memory reducer; slope)",
  'controller RSS per 1,000 pairs, 2 s after gc (slope)',
];

/** The cells of MEMORY_COLUMNS. */
export function memoryCells(g: Growth | undefined): string[] {
  if (!g) return MEMORY_COLUMNS.map(() => '-');
  return [(s: Sample) => s.heap, (s: Sample) => s.rss, (s: Sample) => s.rssAfterGc].map(
    (read) => `${slopeOf(g, read)} MiB`,
  );
}
