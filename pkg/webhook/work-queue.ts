// Admission work, a slice per turn of the event loop. Judging a review is synchronous and can take tens of
// milliseconds or more (a large object, many policies); run as each body completes, a burst of them ran
// back to back while everything else waited, and /healthz answers took seconds behind heavy /override
// requests. Queued here instead, each turn runs jobs until SLICE_MS has passed (at least one) and then
// lets Node read the sockets again, so probes, handshakes and new bodies wait for one slice, never for
// the whole queue; cheap reviews still run many to a turn.
//
// Small reviews (bodies under SMALL_BYTES, what the apiserver sends nearly always) go before large ones:
// they take a fraction of a millisecond each and should not wait behind a multi-megabyte object. A large
// review waits while small ones keep coming, up to the request timeout (server.ts then answers 503).
//
// The queue is bounded in jobs (each job's body is already bounded by the in-flight ceiling) and per
// connection, so one client pipelining requests cannot fill it; past either bound the caller answers 503.

import { performance } from 'node:perf_hooks';

/** How long one turn keeps running jobs once the first has run. */
export const SLICE_MS = 5;
/** Bodies under this size are judged before larger ones. */
export const SMALL_BYTES = 64 * 1024;
/** Jobs waiting at once, over all connections. */
export const MAX_QUEUED_JOBS = 1024;
/** Jobs one connection may have waiting (the apiserver sends one request at a time on a connection). */
export const MAX_QUEUED_PER_CONNECTION = 4;

export class WorkQueue<K extends object> {
  private readonly small: Array<{ key: K; run: () => void }> = [];
  private readonly large: Array<{ key: K; run: () => void }> = [];
  private scheduled = false;
  private readonly perKey = new WeakMap<K, number>();

  constructor(
    private readonly limit = MAX_QUEUED_JOBS,
    private readonly perKeyLimit = MAX_QUEUED_PER_CONNECTION,
    private readonly sliceMs = SLICE_MS,
  ) {}

  /** Jobs waiting. */
  get length(): number {
    return this.small.length + this.large.length;
  }

  /**
   * Queues `run` for `key` (its connection), a review of `bytes`; false, and nothing queued, when a bound
   * is reached.
   */
  push(key: K, run: () => void, bytes = 0): boolean {
    const mine = this.perKey.get(key) ?? 0;
    if (this.length >= this.limit || mine >= this.perKeyLimit) return false;
    this.perKey.set(key, mine + 1);
    (bytes < SMALL_BYTES ? this.small : this.large).push({ key, run });
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.turn);
    }
    return true;
  }

  /** Runs the oldest jobs for one slice, then yields to the event loop until the next turn. */
  private readonly turn = (): void => {
    const started = performance.now();
    try {
      for (let job = this.next(); job !== undefined; job = this.next()) {
        this.perKey.set(job.key, (this.perKey.get(job.key) ?? 1) - 1);
        job.run();
        if (performance.now() - started >= this.sliceMs) break;
      }
    } finally {
      if (this.length > 0) setImmediate(this.turn);
      else this.scheduled = false;
    }
  };

  private next(): { key: K; run: () => void } | undefined {
    return this.small.shift() ?? this.large.shift();
  }
}
