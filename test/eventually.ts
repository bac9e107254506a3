// Waiting for a condition that an asynchronous event brings about (a process group emptying, an object
// appearing on a member), instead of checking once right after the event: on a loaded machine the
// effect can trail the event by much more than any fixed sleep.

import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Calls `probe` until `done(value)` holds or `timeoutMs` has passed, and returns the last value either
 * way, so the caller's assertion on it shows what was seen when time ran out.
 */
export async function eventually<T>(
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() >= deadline) return value;
    await sleep(intervalMs);
  }
}

export const isEmpty = (items: readonly unknown[]): boolean => items.length === 0;
