// Taints from member health, against a fake clock: none while ready or not yet probed, NoSchedule after
// the not-ready delay, NoExecute after the eviction timeout only with failover, the key saying whether
// the member answers, and timeAdded kept while the taint stays.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  healthTaints,
  healthTaintsOf,
  nextHealthCheck,
  NOT_READY_TAINT,
  UNREACHABLE_TAINT,
  withHealthTaints,
} from './health-taints.js';
import type { Readiness } from './member-probe.js';

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

  it('a process that has not judged the member keeps the taints it has; a not-ready one keeps its effects', () => {
    const had = [
      { key: UNREACHABLE_TAINT, effect: 'NoSchedule' as const, timeAdded: '2026-11-25T09:00:00Z' },
      { key: UNREACHABLE_TAINT, effect: 'NoExecute' as const, timeAdded: '2026-11-25T09:05:00Z' },
    ];
    assert.deepEqual(healthTaints(undefined, T0, o, had), had);
    assert.deepEqual(healthTaints({ ready: undefined, failures: 0, since: T0 }, T0, o, had), had);
    // Just judged not ready (its own clock starts now): the effects stay, timeAdded too.
    assert.deepEqual(healthTaints(down(true), T0, o, had), had);
    // It answers now, but is not ready: the same effects under the key that says so.
    assert.deepEqual(healthTaints(down(false), T0, o, had), [
      { key: NOT_READY_TAINT, effect: 'NoSchedule', timeAdded: '2026-11-25T09:00:00Z' },
      { key: NOT_READY_TAINT, effect: 'NoExecute', timeAdded: '2026-11-25T09:05:00Z' },
    ]);
    assert.deepEqual(healthTaints({ ready: true, failures: 0, since: T0 }, T0, o, had), []);
  });

  it('holds: no taint added while the hub view is stale, no NoExecute in a disruption or before joining', () => {
    assert.deepEqual(healthTaints(down(true), T0 + 10 ** 9, o, [], { noNewTaints: true }), []);
    assert.deepEqual(keys(healthTaints(down(true), T0 + 10 ** 9, o, [], { noEviction: true })), [
      `${UNREACHABLE_TAINT}:NoSchedule`,
    ]);
    const had = healthTaints(down(true), T0 + 10 ** 9, o);
    assert.deepEqual(keys(had), [`${UNREACHABLE_TAINT}:NoSchedule`, `${UNREACHABLE_TAINT}:NoExecute`]);
    assert.deepEqual(healthTaints(down(true), T0 + 2 * 10 ** 9, o, had, { noNewTaints: true, noEviction: true }), had);
  });

  it("reads a Cluster's health taints (own properties, known keys and effects, one per effect)", () => {
    const at = '2026-11-25T09:00:00Z';
    assert.deepEqual(
      healthTaintsOf(
        [
          { key: 'team', effect: 'NoSchedule' },
          { key: UNREACHABLE_TAINT, effect: 'NoSchedule', timeAdded: at },
          { key: UNREACHABLE_TAINT, effect: 'NoSchedule', timeAdded: at },
          { key: NOT_READY_TAINT, effect: 'PreferNoSchedule' },
          { key: UNREACHABLE_TAINT, effect: 'NoExecute' },
          Object.create({ key: UNREACHABLE_TAINT, effect: 'NoExecute' }),
          'not a taint',
        ],
        T0,
      ),
      [
        { key: UNREACHABLE_TAINT, effect: 'NoSchedule', timeAdded: at },
        { key: UNREACHABLE_TAINT, effect: 'NoExecute', timeAdded: '2026-11-25T10:00:00Z' },
      ],
    );
    assert.deepEqual(healthTaintsOf(undefined, T0), []);
  });

  it("writes the health taints after people's, and stamps people's NoExecute taints that have no timeAdded", () => {
    const at = '2026-11-25T09:00:00Z';
    const health = [{ key: NOT_READY_TAINT, effect: 'NoSchedule' as const, timeAdded: at }];
    const theirs = [
      { key: 'fail-test', effect: 'NoExecute' },
      { key: 'kept', effect: 'NoExecute', timeAdded: at },
      { key: 'team', value: 'a', effect: 'NoSchedule' },
      { key: UNREACHABLE_TAINT, effect: 'NoExecute', timeAdded: at },
    ];
    assert.deepEqual(withHealthTaints(theirs, health, T0), [
      { key: 'fail-test', effect: 'NoExecute', timeAdded: '2026-11-25T10:00:00Z' },
      { key: 'kept', effect: 'NoExecute', timeAdded: at },
      { key: 'team', value: 'a', effect: 'NoSchedule' },
      { key: NOT_READY_TAINT, effect: 'NoSchedule', timeAdded: at },
    ]);
    // Without a time (the engine's view of the Cluster) the taints stay as written.
    assert.deepEqual(withHealthTaints(theirs.slice(0, 1), []), [{ key: 'fail-test', effect: 'NoExecute' }]);
  });
});
