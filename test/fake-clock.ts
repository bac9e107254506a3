// A clock tests move by hand: timers fire only inside advance(), in due order (ties in the order they were
// set), and time jumps to each timer's due time before it fires.

import type { Clock, TimerHandle } from '../pkg/runtime/clock.js';

interface Timer {
  id: number;
  due: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  private time = 0;
  private nextId = 1;
  private readonly timers = new Map<number, Timer>();

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { id, due: this.time + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    if (typeof handle === 'number') this.timers.delete(handle);
  }

  /** Delays of the pending timers from now, earliest first. */
  pending(): number[] {
    return [...this.timers.values()].map((t) => t.due - this.time).sort((a, b) => a - b);
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      let next: Timer | undefined;
      for (const t of this.timers.values())
        if (t.due <= end && (!next || t.due < next.due || (t.due === next.due && t.id < next.id))) next = t;
      if (!next) break;
      this.timers.delete(next.id);
      this.time = next.due;
      next.fn();
    }
    this.time = end;
  }
}
