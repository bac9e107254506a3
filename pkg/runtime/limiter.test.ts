import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyedLimiter, LimiterFullError } from './limiter.js';

/** A call the test finishes by hand, recording when it started. */
function gate(log: string[], name: string) {
  let open!: () => void;
  let fail!: (e: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    open = () => resolve(name);
    fail = reject;
  });
  return {
    fn: () => {
      log.push(name);
      return done;
    },
    open,
    fail,
  };
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

// The timeout only turns a hang (a broken limiter never releasing a call) into a failure.
describe('KeyedLimiter', { timeout: 10_000 }, () => {
  it('runs at most maxInFlight calls per key, the rest in order, and keys independently', async () => {
    const limiter = new KeyedLimiter({ maxInFlight: 2 });
    const log: string[] = [];
    const calls = ['m1-a', 'm1-b', 'm1-c', 'm1-d', 'm2-a'].map((n) => ({ n, g: gate(log, n) }));
    const results = calls.map(({ n, g }) => limiter.run(n.slice(0, 2), g.fn));
    await settle();
    assert.deepEqual(log, ['m1-a', 'm1-b', 'm2-a']);
    assert.equal(limiter.inFlight('m1'), 2);
    assert.equal(limiter.waiting('m1'), 2);
    calls[1]?.g.open();
    await settle();
    assert.deepEqual(log, ['m1-a', 'm1-b', 'm2-a', 'm1-c']);
    for (const { g } of calls) g.open();
    assert.deepEqual(await Promise.all(results), ['m1-a', 'm1-b', 'm1-c', 'm1-d', 'm2-a']);
    assert.equal(limiter.keys, 0, 'idle keys are forgotten');
  });

  it('frees the slot when a call fails', async () => {
    const limiter = new KeyedLimiter({ maxInFlight: 1 });
    const log: string[] = [];
    const first = gate(log, 'first');
    const second = gate(log, 'second');
    const p1 = limiter.run('m', first.fn);
    const p2 = limiter.run('m', second.fn);
    first.fail(new Error('boom'));
    await assert.rejects(p1, /boom/);
    await settle();
    assert.deepEqual(log, ['first', 'second']);
    second.open();
    assert.equal(await p2, 'second');
  });

  it('rejects at once past maxWaiting per key and past maxKeys', async () => {
    const limiter = new KeyedLimiter({ maxInFlight: 1, maxWaiting: 1, maxKeys: 2 });
    const log: string[] = [];
    const a = gate(log, 'a');
    const b = gate(log, 'b');
    const c = gate(log, 'c');
    const pa = limiter.run('m1', a.fn);
    const pb = limiter.run('m1', b.fn);
    await assert.rejects(
      limiter.run('m1', () => Promise.resolve('x')),
      LimiterFullError,
    );
    const pc = limiter.run('m2', c.fn);
    await assert.rejects(
      limiter.run('m3', () => Promise.resolve('x')),
      LimiterFullError,
    );
    for (const g of [a, b, c]) g.open();
    assert.deepEqual(await Promise.all([pa, pb, pc]), ['a', 'b', 'c']);
  });

  it('gives up a waiting place when the signal aborts, without taking a slot', async () => {
    const limiter = new KeyedLimiter({ maxInFlight: 1 });
    const log: string[] = [];
    const a = gate(log, 'a');
    const b = gate(log, 'b');
    const c = gate(log, 'c');
    const controller = new AbortController();
    const pa = limiter.run('m', a.fn);
    const pb = limiter.run('m', b.fn, controller.signal);
    const pc = limiter.run('m', c.fn);
    controller.abort();
    await assert.rejects(pb, { name: 'AbortError' });
    assert.equal(limiter.waiting('m'), 1);
    a.open();
    await settle();
    assert.deepEqual(log, ['a', 'c']);
    c.open();
    assert.deepEqual(await Promise.all([pa, pc]), ['a', 'c']);
    await assert.rejects(
      limiter.run('m', () => Promise.resolve(1), controller.signal),
      { name: 'AbortError' },
    );
    assert.equal(limiter.keys, 0);
  });
});
