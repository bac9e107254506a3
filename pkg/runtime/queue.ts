// The controller's work queue, with client-go's workqueue guarantees and controller-runtime's vocabulary,
// run on p-queue:
//   - a key is queued at most once: adding a queued key does nothing;
//   - a key is never processed by two workers at once: a key added while it is being processed is marked
//     and runs once more after the current run ends, however many times it was added;
//   - up to `concurrency` different keys are processed at the same time, in the order they were queued;
//   - a failed run is retried after an exponential backoff with jitter (per-key failure count, reset by a
//     success or forget()); a TerminalError is not retried; Result.requeueAfter runs the key again later;
//   - addAfter() keeps one pending delayed add per key, the earliest; a run of the key cancels it, since the
//     run's own Result says when to come back;
//   - at most `maxQueued` entries wait (ready, re-run after the current one, or delayed). Past the bound a
//     new key is dropped: add() returns false, `dropped` counts it and onDrop is told. Nothing already
//     waiting is evicted. The controller's periodic resync (a full relist) brings dropped keys back.
//   - start(signal) runs the queue until the signal aborts; then nothing new starts, waiting and delayed
//     keys are discarded, the runs in flight finish (they get the signal, to cut long work short), and
//     start() resolves.
//   - runs that do no I/O (all in memory) resolve at once, and p-queue starts the next in the same turn of
//     the event loop: after YIELD_AFTER_MS of such back-to-back runs (on the queue's clock) the next waits
//     one turn (setImmediate), so timers and I/O (a Lease renewal and its deadline) are not held back for
//     as long as a backlog lasts.
// Clock and random are injected, so tests drive time and jitter.

import PQueue from 'p-queue';
import { systemClock, type Clock, type TimerHandle } from './clock.js';
import { errorClass } from '../../api/internal/errors.js';

/** What a reconcile asks for next (controller-runtime's reconcile.Result). */
export interface Result {
  /** Run the key again after this many milliseconds; the failure count is reset. */
  requeueAfter?: number;
  /** Run the key again after the backoff delay, as after a failure but without one. */
  requeue?: boolean;
}

/** Brings whatever a key names to its desired state. Throw to retry with backoff; throw a TerminalError not to. */
export interface Reconciler<K extends string = string> {
  /** Nothing returned means an empty Result: done, until the key is added again. */
  reconcile(key: K, signal: AbortSignal): Promise<Result | void>;
}

export class QueueError extends errorClass('QueueError', 'QUEUE') {}

/** An error retrying cannot fix (invalid input, a conflict only a person can resolve): the key is not requeued. */
export class TerminalError extends errorClass('TerminalError', 'TERMINAL') {}

/** True for a TerminalError or an error caused by one (looked up 16 causes deep at most). */
export function isTerminal(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 16 && e instanceof Error; depth++) {
    if (e instanceof TerminalError) return true;
    e = e.cause;
  }
  return false;
}

export interface BackoffOptions {
  /** Delay after the first failure. */
  baseDelayMs: number;
  /** Upper bound of any delay. */
  maxDelayMs: number;
  /** Each delay is scaled by a random factor in [1 - jitter, 1 + jitter] (then capped), so failing keys spread out. */
  jitter: number;
}

/**
 * 100 ms doubling to 5 minutes: a failed apply to a member is retried quickly once or twice, and a member
 * that stays down is asked about every few minutes, not hammered (controller-runtime: 5 ms to 1,000 s).
 */
export const DEFAULT_BACKOFF: BackoffOptions = { baseDelayMs: 100, maxDelayMs: 300_000, jitter: 0.2 };

/** The delay before retry number `failures` (1 for the first failure). */
export function backoffDelay(failures: number, options: BackoffOptions, random: () => number): number {
  const exponential = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.min(Math.max(failures, 1) - 1, 60));
  const r = Math.min(1, Math.max(0, random()));
  const jittered = exponential * (1 + options.jitter * (2 * r - 1));
  return Math.max(0, Math.min(options.maxDelayMs, Math.round(jittered)));
}

export type Outcome = 'success' | 'requeue' | 'requeueAfter' | 'error' | 'terminal';

/** One finished run, for logs and metrics (the queue itself does not log). */
export interface ReconcileEvent<K extends string> {
  key: K;
  outcome: Outcome;
  /** The thrown error, for 'error' and 'terminal'. */
  error?: unknown;
  durationMs: number;
  /** Consecutive failures of the key after this run (0 after a success). */
  failures: number;
  /** When the key is due again, if it was requeued with a delay (ms). */
  retryInMs?: number;
}

export interface WorkQueueOptions<K extends string> {
  /** Keys processed at the same time. Default 4. */
  concurrency?: number;
  /** Bound on waiting entries (ready, re-run pending, delayed). Default 100,000. */
  maxQueued?: number;
  backoff?: Partial<BackoffOptions>;
  clock?: Clock;
  /** [0, 1); Math.random by default. */
  random?: () => number;
  onResult?: (event: ReconcileEvent<K>) => void;
  onDrop?: (key: K) => void;
}

export interface QueueStats {
  /** Keys waiting for a worker (including keys to run again after their current run). */
  depth: number;
  /** Keys waiting for their time (addAfter, backoff). */
  delayed: number;
  inFlight: number;
  /** Totals since construction. */
  added: number;
  dropped: number;
  retries: number;
  processed: number;
}

/** How long back-to-back runs may hold the event loop before the next waits one turn. */
const YIELD_AFTER_MS = 20;

/** setTimeout's largest delay; longer delays are clamped to it. */
const MAX_DELAY_MS = 2_147_483_647;

function positiveInteger(name: string, v: number | undefined, fallback: number): number {
  const n = v ?? fallback;
  if (!Number.isInteger(n) || n < 1) throw new QueueError(`${name} must be an integer >= 1, not ${String(v)}`);
  return n;
}

export class WorkQueue<K extends string = string> {
  private readonly reconciler: Reconciler<K>;
  private readonly workers: PQueue;
  private readonly maxQueued: number;
  private readonly backoff: BackoffOptions;
  private readonly clock: Clock;
  /** When (on the clock) this turn of the event loop's back-to-back runs began; undefined once it turned. */
  private turn: number | undefined;
  private readonly random: () => number;
  private readonly onResult: ((event: ReconcileEvent<K>) => void) | undefined;
  private readonly onDrop: ((key: K) => void) | undefined;

  private readonly queued = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly dirty = new Set<K>();
  private readonly delayed = new Map<K, { due: number; timer: TimerHandle }>();
  private readonly failureCounts = new Map<K, number>();
  private state: 'new' | 'running' | 'stopped' = 'new';
  private signal: AbortSignal = new AbortController().signal;
  private readonly totals = { added: 0, dropped: 0, retries: 0, processed: 0 };

  constructor(reconciler: Reconciler<K>, options: WorkQueueOptions<K> = {}) {
    this.reconciler = reconciler;
    this.workers = new PQueue({
      concurrency: positiveInteger('concurrency', options.concurrency, 4),
      autoStart: false,
    });
    this.maxQueued = positiveInteger('maxQueued', options.maxQueued, 100_000);
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    const { baseDelayMs, maxDelayMs, jitter } = this.backoff;
    if (!(baseDelayMs >= 0) || !(maxDelayMs >= baseDelayMs) || !(jitter >= 0 && jitter <= 1)) {
      throw new QueueError(
        `backoff needs 0 <= baseDelayMs <= maxDelayMs and 0 <= jitter <= 1, not ${JSON.stringify(this.backoff)}`,
      );
    }
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.onResult = options.onResult;
    this.onDrop = options.onDrop;
  }

  /** Keys waiting for a worker: for the queue-depth metric. */
  get depth(): number {
    return this.queued.size + this.dirty.size;
  }

  /** Every waiting entry: ready, re-run pending and delayed (what maxQueued bounds). */
  get size(): number {
    return this.queued.size + this.dirty.size + this.delayed.size;
  }

  get inFlight(): number {
    return this.processing.size;
  }

  stats(): QueueStats {
    return { depth: this.depth, delayed: this.delayed.size, inFlight: this.processing.size, ...this.totals };
  }

  /** Consecutive failures of a key (controller-runtime's NumRequeues). */
  failures(key: K): number {
    return this.failureCounts.get(key) ?? 0;
  }

  /** Queues a key to run as soon as a worker is free. False when stopped or full (the key is dropped). */
  add(key: K): boolean {
    if (this.state === 'stopped') return false;
    if (this.queued.has(key)) return true;
    if (this.processing.has(key)) {
      if (this.dirty.has(key)) return true;
      if (!this.hasRoom()) return this.drop(key);
      this.dirty.add(key);
      this.totals.added++;
      return true;
    }
    if (!this.hasRoom()) return this.drop(key);
    this.totals.added++;
    this.enqueue(key);
    return true;
  }

  /** Queues a key after `ms`; an earlier pending delayed add of the key wins. False when stopped or full. */
  addAfter(key: K, ms: number): boolean {
    if (this.state === 'stopped') return false;
    if (!(ms > 0)) return this.add(key);
    const delay = Math.min(ms, MAX_DELAY_MS);
    const due = this.clock.now() + delay;
    const pending = this.delayed.get(key);
    if (pending) {
      if (pending.due <= due) return true;
      this.clock.clearTimeout(pending.timer);
    } else if (!this.hasRoom()) {
      return this.drop(key);
    }
    const timer = this.clock.setTimeout(() => {
      if (this.delayed.get(key)?.timer !== timer) return;
      this.delayed.delete(key);
      this.add(key);
    }, delay);
    this.delayed.set(key, { due, timer });
    return true;
  }

  /** Queues a key after its backoff delay and counts a failure (controller-runtime's AddRateLimited). */
  addRateLimited(key: K): boolean {
    return this.addAfter(key, this.nextBackoff(key));
  }

  /** Resets a key's failure count, so its next backoff starts from the base delay. */
  forget(key: K): void {
    this.failureCounts.delete(key);
  }

  /**
   * Runs the queue until `signal` aborts, then drains: waiting and delayed keys are discarded, nothing new
   * starts, and the promise resolves once the runs in flight have finished. Keys added before start() wait.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.state !== 'new') throw new QueueError('the queue was already started');
    this.state = 'running';
    this.signal = signal;
    const aborted = new Promise<void>((resolve) => {
      const halt = () => {
        this.halt();
        resolve();
      };
      if (signal.aborted) halt();
      else signal.addEventListener('abort', halt, { once: true });
    });
    if (!signal.aborted) this.workers.start();
    await aborted;
    await this.workers.onPendingZero();
  }

  /** Stops at once (synchronously, on abort), so that runs ending from now on requeue nothing. */
  private halt(): void {
    this.state = 'stopped';
    this.workers.pause();
    this.workers.clear();
    this.queued.clear();
    this.dirty.clear();
    for (const { timer } of this.delayed.values()) this.clock.clearTimeout(timer);
    this.delayed.clear();
  }

  /** A method, not a field read, so that TypeScript does not carry a narrowing across an await. */
  private isStopped(): boolean {
    return this.state === 'stopped';
  }

  private hasRoom(): boolean {
    return this.size < this.maxQueued;
  }

  private drop(key: K): boolean {
    this.totals.dropped++;
    this.notify(() => this.onDrop?.(key));
    return false;
  }

  private nextBackoff(key: K): number {
    const failures = this.failures(key) + 1;
    this.failureCounts.set(key, failures);
    this.totals.retries++;
    return backoffDelay(failures, this.backoff, this.random);
  }

  private enqueue(key: K): void {
    this.queued.add(key);
    // Rejects only when halt() clears the waiting task (an AbortError); process() itself never throws.
    this.workers.add(() => this.process(key)).catch(() => undefined);
  }

  private cancelDelayed(key: K): void {
    const pending = this.delayed.get(key);
    if (!pending) return;
    this.clock.clearTimeout(pending.timer);
    this.delayed.delete(key);
  }

  private async process(key: K): Promise<void> {
    const now = this.clock.now();
    if (this.turn === undefined) {
      this.turn = now;
      setImmediate(() => (this.turn = undefined));
    } else if (now - this.turn > YIELD_AFTER_MS) await new Promise((resolve) => setImmediate(resolve));
    this.queued.delete(key);
    if (this.state === 'stopped') return;
    this.processing.add(key);
    this.cancelDelayed(key);
    const started = this.clock.now();
    let outcome: Outcome;
    let error: unknown;
    let result: Result | undefined;
    try {
      result = (await this.reconciler.reconcile(key, this.signal)) ?? undefined;
      outcome =
        result?.requeueAfter !== undefined && result.requeueAfter > 0
          ? 'requeueAfter'
          : result?.requeue === true
            ? 'requeue'
            : 'success';
    } catch (err: unknown) {
      error = err;
      outcome = isTerminal(err) ? 'terminal' : 'error';
    } finally {
      this.processing.delete(key);
      this.totals.processed++;
    }
    let retryInMs: number | undefined;
    if (outcome === 'error' || outcome === 'requeue') {
      retryInMs = this.nextBackoff(key);
    } else {
      this.forget(key);
      if (outcome === 'requeueAfter') retryInMs = result?.requeueAfter;
    }
    if (retryInMs !== undefined) this.addAfter(key, retryInMs);
    if (this.dirty.delete(key) && !this.isStopped()) this.enqueue(key);
    const event: ReconcileEvent<K> = {
      key,
      outcome,
      durationMs: this.clock.now() - started,
      failures: this.failures(key),
    };
    if (outcome === 'error' || outcome === 'terminal') event.error = error;
    if (retryInMs !== undefined && !this.isStopped()) event.retryInMs = retryInMs;
    this.notify(() => this.onResult?.(event));
  }

  /** Observers must not break the queue: what they throw is dropped. */
  private notify(fn: () => void): void {
    try {
      fn();
    } catch {
      // An observer's failure is its own; the queue's bookkeeping is already done.
    }
  }
}
