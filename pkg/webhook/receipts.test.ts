import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';

import { eventually } from '../../test/eventually.js';
import { Receipts } from './receipts.js';
import type { Unacknowledged } from './unacked.js';

/** What Receipts uses of a connection: its ports, whether it is gone, destroy and 'close'. */
class FakeConnection extends EventEmitter {
  destroyed = false;
  constructor(
    readonly localPort: number,
    readonly remotePort: number,
  ) {
    super();
  }
  destroy(): this {
    this.destroyed = true;
    this.emit('close');
    return this;
  }
}

/** A kernel whose send queues the test sets, counting the reads of its tables. */
function kernel() {
  const queues = new Map<number, number>();
  let reads = 0;
  const read = (): Unacknowledged => {
    reads++;
    const snapshot = new Map(queues);
    return (_local, remote) => (remote === undefined ? undefined : (snapshot.get(remote) ?? 0));
  };
  return { queues, read, reads: () => reads };
}

const POLL_MS = 20;
const LONG = 60_000;
const conn = (remote: number) => new FakeConnection(8443, remote) as unknown as Parameters<Receipts['watch']>[0];

/** Waits until the tables have been read `n` more times (ticks, not wall-clock time, are what count). */
const ticks = (k: ReturnType<typeof kernel>, n: number) => {
  const target = k.reads() + n;
  return eventually(
    () => k.reads(),
    (r) => r >= target,
    10_000,
    5,
  );
};

describe('Receipts', () => {
  it('never judges an answer by a table read before it was handed over', async () => {
    const k = kernel();
    const r = new Receipts({ read: k.read }, POLL_MS);
    const released: number[] = [];
    // The first client has its answer by the first tick; the second's answer is handed to the kernel
    // after that read, and its client never reads.
    k.queues.set(1, 1_000_000);
    r.watch(conn(1), () => released.push(1), Date.now() + LONG);
    k.queues.set(1, 0);
    await ticks(k, 1);
    assert.deepEqual(released, [1]);
    k.queues.set(2, 900_000);
    r.watch(conn(2), () => released.push(2), Date.now() + LONG);
    await ticks(k, 3);
    assert.deepEqual(released, [1], 'the second answer is still unacknowledged');
    assert.equal(r.size, 1);
  });

  it('reads the tables once per tick however many connections wait', async () => {
    const k = kernel();
    const r = new Receipts({ read: k.read }, POLL_MS);
    for (let i = 0; i < 50; i++) {
      k.queues.set(i, 1);
      r.watch(conn(i), () => undefined, Date.now() + LONG);
    }
    await ticks(k, 1);
    assert.equal(k.reads(), 1);
    for (let i = 0; i < 50; i++) k.queues.set(i, 0);
    await ticks(k, 1);
    assert.equal(r.size, 0);
  });

  it('closes a connection not acknowledged by its deadline and releases all its answers once', async () => {
    const k = kernel();
    const r = new Receipts({ read: k.read }, POLL_MS);
    const c = conn(7);
    k.queues.set(7, 5);
    let released = 0;
    r.watch(c, () => released++, Date.now() + POLL_MS);
    r.watch(c, () => released++, Date.now() + LONG);
    await eventually(
      () => c.destroyed,
      (d) => d,
      10_000,
      5,
    );
    assert.equal(c.destroyed, true);
    assert.equal(released, 2);
    assert.equal(r.size, 0);
  });

  it('without the tables, a next request is the receipt, and an idle connection goes at its deadline', async () => {
    const r = new Receipts({ read: () => undefined }, POLL_MS);
    const busy = conn(1);
    const idle = conn(2);
    let released = 0;
    r.watch(busy, () => released++, Date.now() + POLL_MS * 4);
    r.watch(idle, () => released++, Date.now() + POLL_MS * 4);
    // Only after a read has failed is a next request taken as the receipt.
    await eventually(
      () => (r.nextRequest(busy), released),
      (n) => n === 1,
      10_000,
      5,
    );
    assert.equal(released, 1);
    await eventually(
      () => idle.destroyed,
      (d) => d,
      10_000,
      5,
    );
    assert.equal(busy.destroyed, false);
    assert.equal(idle.destroyed, true);
    assert.equal(released, 2);
  });

  it('with the tables, a next request is no receipt', async () => {
    const k = kernel();
    const r = new Receipts({ read: k.read }, POLL_MS);
    const c = conn(3);
    k.queues.set(3, 10);
    let released = 0;
    r.watch(c, () => released++, Date.now() + LONG);
    await ticks(k, 2);
    r.nextRequest(c);
    assert.equal(released, 0);
  });

  it('leaves no listener behind on a kept-alive connection that takes one large answer after another', async () => {
    const k = kernel();
    const r = new Receipts({ read: k.read }, POLL_MS);
    const c = conn(9);
    for (let i = 0; i < 20; i++) {
      r.watch(c, () => undefined, Date.now() + LONG);
      await ticks(k, 1);
    }
    assert.equal(r.size, 0);
    assert.equal((c as unknown as EventEmitter).listenerCount('close'), 0);
  });
});
