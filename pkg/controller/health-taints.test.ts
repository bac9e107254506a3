// Taints from member health, against a fake clock: none while ready or not yet probed, NoSchedule after
// the not-ready delay, NoExecute after the eviction timeout only with failover, the key saying whether
// the member answers, and timeAdded kept while the taint stays.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { healthTaints, nextHealthCheck, NOT_READY_TAINT, UNREACHABLE_TAINT } from './health-taints.js';
import type { Readiness } from './member.js';

const T0 = Date.parse('2026-11-25T10:00:00Z');
const o = { notReadyAfterMs: 30_000, failover: true, evictionAfterMs: 300_000 };
const down = (unreachable: boolean): Readiness => ({ ready: false, failures: 3, since: T0, unreachable });
const keys = (ts: Array<{ key: string; effect: string }>) => ts.map((t) => `${t.key}:${t.effect}`);

describe('healthTaints', () => {
  it('none while ready or before the first probe', () => {
    assert.deepEqual(healthTaints({ ready: true, failures: 0, since: T0 }, T0 + 10 ** 9, o), []);
    assert.deepEqual(healthTaints(undefined, T0, o), []);
    assert.deepEqual(healthTaints({ ready: undefined, failures: 0, since: T0 }, T0 + 10 ** 9, o), []);
  });

  it('NoSchedule after the delay, then NoExecute after the eviction timeout, each stamped when added', () => {
    assert.deepEqual(healthTaints(down(true), T0 + 29_999, o), []);
    const first = healthTaints(down(true), T0 + 30_000, o);
    assert.deepEqual(first, [{ key: UNREACHABLE_TAINT, effect: 'NoSchedule', timeAdded: '2026-11-25T10:00:30Z' }]);
    const later = healthTaints(down(true), T0 + 300_000, o, first);
    assert.deepEqual(later, [
      { key: UNREACHABLE_TAINT, effect: 'NoSchedule', timeAdded: '2026-11-25T10:00:30Z' },
      { key: UNREACHABLE_TAINT, effect: 'NoExecute', timeAdded: '2026-11-25T10:05:00Z' },
    ]);
  });

  it('without failover: never NoExecute; a member that answers but is not ready: not-ready', () => {
    assert.deepEqual(keys(healthTaints(down(false), T0 + 10 ** 9, { ...o, failover: false })), [
      `${NOT_READY_TAINT}:NoSchedule`,
    ]);
  });

  it('says when to look again: the next threshold still ahead', () => {
    assert.equal(nextHealthCheck(down(true), T0 + 1, o), T0 + 30_000);
    assert.equal(nextHealthCheck(down(true), T0 + 30_000, o), T0 + 300_000);
    assert.equal(nextHealthCheck(down(true), T0 + 300_000, o), undefined);
    assert.equal(nextHealthCheck({ ready: true, failures: 0, since: T0 }, T0, o), undefined);
  });
});
