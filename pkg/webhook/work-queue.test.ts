import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { eventually } from '../../test/eventually.js';
import { WorkQueue } from './work-queue.js';

describe('WorkQueue', () => {
  it('runs jobs in order, one per turn of the event loop: what a job sets for the next turn runs before the next job', async () => {
    const q = new WorkQueue<object>();
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
});
