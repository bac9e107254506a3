import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';

import { eventually } from '../../test/eventually.js';
import { WorkQueue } from './work-queue.js';

describe('WorkQueue', () => {
  it('runs jobs in order, one per turn of the event loop without a slice: what a job sets for the next turn runs before the next job', async () => {
    const q = new WorkQueue<object>(1024, 4, 0);
    const seen: string[] = [];
    const a = {};
    const b = {};
    q.push(a, () => {
      seen.push('job 1');
      setImmediate(() => seen.push('set by job 1 for the next turn'));
    });
    q.push(b, () => seen.push('job 2'));
    q.push(a, () => seen.push('job 3'));
    await eventually(
      () => seen.length,
      (n) => n === 4,
      10_000,
      5,
    );
    assert.deepEqual(seen, ['job 1', 'set by job 1 for the next turn', 'job 2', 'job 3']);
    assert.equal(q.length, 0);
  });

  it('refuses jobs past its bound, and past the bound for one connection', async () => {
    const q = new WorkQueue<object>(3, 2);
    const one = {};
    assert.equal(
      q.push(one, () => undefined),
      true,
    );
    assert.equal(
      q.push(one, () => undefined),
      true,
    );
    assert.equal(
      q.push(one, () => undefined),
      false,
      'a third for the same connection',
    );
    assert.equal(
      q.push({}, () => undefined),
      true,
    );
    assert.equal(
      q.push({}, () => undefined),
      false,
      'a fourth in all',
    );
    await eventually(
      () => q.length,
      (n) => n === 0,
      10_000,
      5,
    );
    assert.equal(q.length, 0);
    assert.equal(
      q.push(one, () => undefined),
      true,
      'room again once run',
    );
  });

  it('runs jobs until its slice has passed, then yields', async () => {
    const q = new WorkQueue<object>(1024, 4, 5);
    const seen: string[] = [];
    q.push({}, () => seen.push('cheap 1'));
    q.push({}, () => {
      seen.push('busy');
      setImmediate(() => seen.push('set during the slice'));
      const until = performance.now() + 10;
      while (performance.now() < until);
    });
    q.push({}, () => seen.push('cheap 2'));
    await eventually(
      () => seen.length,
      (n) => n === 4,
      10_000,
      5,
    );
    assert.deepEqual(seen, ['cheap 1', 'busy', 'set during the slice', 'cheap 2']);
  });

  it('judges small reviews before large ones', async () => {
    const q = new WorkQueue<object>(1024, 4, 0);
    const seen: string[] = [];
    q.push({}, () => seen.push('large 1'), 2_000_000);
    q.push({}, () => seen.push('small 1'), 1_500);
    q.push({}, () => seen.push('large 2'), 2_000_000);
    q.push({}, () => seen.push('small 2'), 1_500);
    await eventually(
      () => seen.length,
      (n) => n === 4,
      10_000,
      5,
    );
    assert.deepEqual(seen, ['small 1', 'small 2', 'large 1', 'large 2']);
  });
});
