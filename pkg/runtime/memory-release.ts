// Giving a burst's memory back to the system once the process is quiet. V8 (Node 24) keeps the pages its
// collections free in a pool for reuse and unmaps them only in a collection that reduces memory; its
// memory reducer starts one for a process in the foreground only once allocation has slowed, and in a
// Node process that does not happen: a controller that had propagated 1,000 templates to 20 members held
// 93 MiB of V8 pages for 31 MiB of live objects, and the same RSS 130 s later, after a full collection. A
// probe burst (`--max-semi-space-size=16`) left 315 MiB of RSS over a 5 MiB heap; one last-resort
// collection took it to 64 in 48 ms.
//
// So the controller and the agent look every `intervalMs`: when the event loop was busy for less than
// `quietUtilization` of the interval, and the RSS outside V8's heap pages in use (RSS less the heap's
// physical size: the pool, malloc's heap, the binary's pages) is `growthBytes` above the least it has
// been since the last release, one last-resort collection (V8's gc extension, taken into a context of its
// own: the process's global scope gets no `gc`) runs. A young generation grown back by the next burst is
// in the heap's size, so it does not count: a release is for pages V8 no longer uses. Constant state, at
// most one collection per interval, none while the process works.

import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import type { Logger } from './log.js';
import type { Counter } from './metrics.js';

const MiB = 1024 * 1024;

export const MEMORY_RELEASE_DEFAULTS = {
  intervalMs: 2_000,
  quietUtilization: 0.1,
  growthBytes: 16 * MiB,
} as const;

/** What the releaser reads and does; the process's own in production (processProbe). */
export interface MemoryProbe {
  rss(): number;
  /** RSS outside V8's heap pages in use: what a collection that reduces memory can give back, and more. */
  outsideHeap(): number;
  /** The share of time the event loop was busy since the last call (the first call: since start). */
  utilization(): number;
  /** One collection that gives freed pages back to the system. */
  collect(): Promise<void>;
}

export interface MemoryReleaseOptions {
  logger: Logger;
  /** Counts the releases (`flotilla_memory_releases_total`). */
  releases?: Counter;
  intervalMs?: number;
  quietUtilization?: number;
  growthBytes?: number;
}

export class MemoryReleaser {
  private mark: number | undefined;
  private running = false;
  private disabled = false;

  constructor(
    private readonly o: MemoryReleaseOptions,
    private readonly probe: MemoryProbe,
  ) {}

  /** One look; whether it released. */
  async tick(): Promise<boolean> {
    if (this.running || this.disabled) return false;
    const busy = this.probe.utilization();
    const outside = this.probe.outsideHeap();
    if (this.mark === undefined || outside < this.mark) this.mark = outside;
    const growth = this.o.growthBytes ?? MEMORY_RELEASE_DEFAULTS.growthBytes;
    if (busy >= (this.o.quietUtilization ?? MEMORY_RELEASE_DEFAULTS.quietUtilization) || outside - this.mark < growth)
      return false;
    const before = this.probe.rss();
    this.running = true;
    const started = performance.now();
    try {
      await this.probe.collect();
    } catch (err: unknown) {
      this.disabled = true;
      this.o.logger.warn('could not give memory back to the system; not trying again', {
        error: err instanceof Error ? err.message : String(err),
      });
      return false;
    } finally {
      this.running = false;
    }
    this.mark = this.probe.outsideHeap();
    this.probe.utilization(); // the collection's own time is not the next interval's work
    this.o.releases?.inc();
    this.o.logger.debug('gave memory back to the system', {
      rssBeforeMiB: Math.round(before / MiB),
      rssAfterMiB: Math.round(this.probe.rss() / MiB),
      tookMs: Math.round(performance.now() - started),
    });
    return true;
  }
}

type GcFunction = (options: { type: 'major'; execution: 'async'; flavor: 'last-resort' }) => Promise<void>;

/** V8's gc function: the global one when node was started with --expose-gc, else one from a context of its own. */
function gcFunction(): GcFunction {
  const global = (globalThis as { gc?: unknown }).gc;
  if (typeof global === 'function') return global as GcFunction;
  setFlagsFromString('--expose-gc');
  try {
    const gc: unknown = runInNewContext('gc');
    if (typeof gc !== 'function') throw new Error('V8 did not provide its gc function');
    return gc as GcFunction;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/** This process: its RSS, its event loop, V8's last-resort collection (the gc function taken at the first release). */
export function processProbe(): MemoryProbe {
  let last: EventLoopUtilization | undefined;
  let gc: GcFunction | undefined;
  return {
    rss: () => process.memoryUsage.rss(),
    outsideHeap: () => process.memoryUsage.rss() - getHeapStatistics().total_physical_size,
    utilization: () => {
      const now = performance.eventLoopUtilization();
      const since = last ? performance.eventLoopUtilization(now, last) : now;
      last = now;
      return since.utilization;
    },
    collect: async () => {
      gc ??= gcFunction();
      await gc({ type: 'major', execution: 'async', flavor: 'last-resort' });
    },
  };
}

/** Looks every intervalMs until `signal` aborts (the timer does not keep the process alive). */
export function releaseMemoryWhenQuiet(
  o: MemoryReleaseOptions,
  signal: AbortSignal,
  probe: MemoryProbe = processProbe(),
): MemoryReleaser {
  const releaser = new MemoryReleaser(o, probe);
  if (signal.aborted) return releaser;
  const timer = setInterval(() => void releaser.tick(), o.intervalMs ?? MEMORY_RELEASE_DEFAULTS.intervalMs);
  timer.unref();
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  return releaser;
}
