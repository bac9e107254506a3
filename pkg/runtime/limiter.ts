// A keyed limiter: at most `maxInFlight` calls run at once per key (per member cluster, so one slow or
// unreachable member cannot take every worker), callers beyond that wait in order. Bounded: at most
// `maxWaiting` callers wait per key and at most `maxKeys` keys are tracked; past either bound run()
// rejects at once with a LimiterFullError instead of queueing without end. A key is forgotten as soon as
// nothing runs or waits for it.

export class LimiterFullError extends Error {
  readonly code = 'LIMITER_FULL';
  constructor(message: string) {
    super(message);
    this.name = 'LimiterFullError';
  }
}

export interface KeyedLimiterOptions {
  /** Calls running at once per key. */
  maxInFlight: number;
  /** Callers waiting per key. Default 1,000. */
  maxWaiting?: number;
  /** Keys with calls running or waiting. Default 10,000. */
  maxKeys?: number;
}

interface Waiter {
  start: () => void;
}

interface Slot {
  running: number;
  waiting: Waiter[];
}

/** The signal's reason as an Error (an AbortError DOMException unless the caller gave another reason). */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(`aborted: ${String(reason)}`);
}

function positiveInteger(name: string, v: number | undefined, fallback: number): number {
  const n = v ?? fallback;
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name} must be an integer >= 1, not ${String(v)}`);
  return n;
}

export class KeyedLimiter {
  private readonly maxInFlight: number;
  private readonly maxWaiting: number;
  private readonly maxKeys: number;
  private readonly slots = new Map<string, Slot>();

  constructor(options: KeyedLimiterOptions) {
    this.maxInFlight = positiveInteger('maxInFlight', options.maxInFlight, 1);
    this.maxWaiting = positiveInteger('maxWaiting', options.maxWaiting, 1000);
    this.maxKeys = positiveInteger('maxKeys', options.maxKeys, 10_000);
  }

  /** Keys with calls running or waiting. */
  get keys(): number {
    return this.slots.size;
  }

  inFlight(key: string): number {
    return this.slots.get(key)?.running ?? 0;
  }

  waiting(key: string): number {
    return this.slots.get(key)?.waiting.length ?? 0;
  }

  /**
   * Runs `fn` when the key has a free slot. `signal` aborting while the call waits rejects with its reason
   * and gives up the place; once `fn` runs, the slot is held until it settles (pass the signal to `fn` to
   * cut it short).
   */
  async run<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw abortReason(signal);
    let slot = this.slots.get(key);
    if (!slot) {
      if (this.slots.size >= this.maxKeys) throw new LimiterFullError(`limiter: ${this.maxKeys} keys already busy`);
      slot = { running: 0, waiting: [] };
      this.slots.set(key, slot);
    }
    if (slot.running >= this.maxInFlight) {
      if (slot.waiting.length >= this.maxWaiting)
        throw new LimiterFullError(`limiter: ${this.maxWaiting} calls already waiting for ${key}`);
      await this.waitTurn(key, slot, signal);
    } else {
      slot.running++;
    }
    try {
      return await fn();
    } finally {
      this.release(key, slot);
    }
  }

  /** Resolves when a finishing call hands its slot over (already counted as running). */
  private waitTurn(key: string, slot: Slot, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { start: resolve };
      if (signal) {
        const onAbort = () => {
          const i = slot.waiting.indexOf(waiter);
          if (i >= 0) slot.waiting.splice(i, 1);
          this.forgetIfIdle(key, slot);
          reject(abortReason(signal));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiter.start = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
      }
      slot.waiting.push(waiter);
    });
  }

  private release(key: string, slot: Slot): void {
    const next = slot.waiting.shift();
    if (next) {
      next.start(); // the slot passes straight to the next caller: `running` stays the same
      return;
    }
    slot.running--;
    this.forgetIfIdle(key, slot);
  }

  private forgetIfIdle(key: string, slot: Slot): void {
    if (slot.running === 0 && slot.waiting.length === 0 && this.slots.get(key) === slot) this.slots.delete(key);
  }
}
