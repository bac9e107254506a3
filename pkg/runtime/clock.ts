// Time as the runtime sees it, injected so that queues and backoff can be tested without waiting.

export type TimerHandle = unknown;

export interface Clock {
  /** Milliseconds; only differences are meaningful. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** Node's timers and a monotonic clock (performance.now), so wall-clock jumps do not move due times. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Resolves after `ms`, or as soon as `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** At most one pending timer per key (unref'd: none keeps the process alive); a new one replaces the key's. */
export class KeyedTimers {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

  /** Calls `fn` after `ms` milliseconds, instead of whatever was pending for `key`. */
  set(key: string, ms: number, fn: () => void): void {
    this.clear(key);
    const t = setTimeout(fn, ms);
    t.unref();
    this.timers.set(key, t);
  }

  clear(key: string): void {
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
  }

  clearAll(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
