// ClusterHealth on a fake clock: the hub's taints kept until a cluster is judged, nothing judged before
// the Clusters are listed, no NoExecute in a disruption or while the hub view is stale, and not-ready
// time counted from the end of a disruption.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { afterEach, describe, it } from 'node:test';

import { createLogger } from '../runtime/log.js';
import { ClusterHealth } from './cluster-health.js';
import { UNREACHABLE_TAINT, type HealthTaint } from './health-taints.js';
import type { Readiness } from './member-probe.js';

const T0 = Date.parse('2026-11-25T10:00:00Z');

describe('ClusterHealth', () => {
  let now = T0;
  let listed = true;
  let stale = false;
  const readiness = new Map<string, Readiness>();
  const changes: Array<[string, string[]]> = [];
  let h: ClusterHealth | undefined;
  const make = () =>
    new ClusterHealth({
      notReadyAfterMs: 1_000,
      failover: true,
      evictionAfterMs: 10_000,
      unhealthyThreshold: 0.55,
      readiness: (n) => readiness.get(n),
      isPull: () => false,
      awaitingAgent: () => false,
      names: () => readiness.keys(),
      hubStale: () => stale,
      listed: () => listed,
      onChange: (n, t) => changes.push([n, t.map((x) => `${x.key}:${x.effect}`)]),
      logger: createLogger({ level: 'error', stream: new PassThrough() }),
      now: () => now,
    });
  const set = (n: string, ready: boolean | undefined, since = now) =>
    readiness.set(n, { ready, failures: ready === false ? 1 : 0, since, unreachable: true });
  const effects = (n: string) => h!.get(n).map((t) => t.effect);
  afterEach(() => {
    h?.stop();
    readiness.clear();
    changes.length = 0;
    now = T0;
    listed = true;
    stale = false;
  });

  it("keeps the hub's taints until it has judged the cluster; judges nothing before the Clusters are listed", () => {
    h = make();
    listed = false;
    set('m3', false);
    h.evaluate('m3');
    const hub: HealthTaint[] = [
      { key: UNREACHABLE_TAINT, effect: 'NoSchedule', timeAdded: '2026-11-25T09:00:00Z' },
      { key: UNREACHABLE_TAINT, effect: 'NoExecute', timeAdded: '2026-11-25T09:05:00Z' },
    ];
    h.seed('m3', hub);
    assert.deepEqual(h.get('m3'), hub);
    listed = true;
    set('m1', true);
    set('m2', true);
    h.evaluateAll();
    // Down since just now on this clock, but it keeps what the hub says it had.
    assert.deepEqual(h.get('m3'), hub);
    assert.deepEqual(changes, []);
    // Once judged, the hub's copy (still showing the old taints) is not taken again.
    set('m3', true);
    h.evaluate('m3');
    h.seed('m3', hub);
    assert.deepEqual(h.get('m3'), []);
  });

  it('no NoExecute while none is ready; after the disruption, not-ready time counts from its end', () => {
    h = make();
    set('m1', false, T0);
    set('m2', false, T0);
    now = T0 + 20_000;
    h.evaluateAll();
    assert.deepEqual(effects('m1'), ['NoSchedule']);
    assert.deepEqual(effects('m2'), ['NoSchedule']);
    // m1 is back: the disruption ends; m2 has been down 20 s, but its clock starts now.
    set('m1', true);
    h.evaluate('m1');
    assert.deepEqual(effects('m2'), ['NoSchedule']);
    now = T0 + 29_999;
    h.evaluate('m2');
    assert.deepEqual(effects('m2'), ['NoSchedule']);
    now = T0 + 30_000;
    h.evaluate('m2');
    assert.deepEqual(effects('m2'), ['NoSchedule', 'NoExecute']);
  });

  it('no taint added while the hub view is stale; its clock restarts when it comes back', () => {
    h = make();
    set('m1', true);
    set('m2', true);
    set('m3', false, T0);
    stale = true;
    now = T0 + 20_000;
    h.evaluateAll();
    assert.deepEqual(effects('m3'), []);
    stale = false;
    h.evaluateAll();
    now = T0 + 21_000;
    h.evaluate('m3');
    assert.deepEqual(effects('m3'), ['NoSchedule']);
    now = T0 + 30_000;
    h.evaluate('m3');
    assert.deepEqual(effects('m3'), ['NoSchedule', 'NoExecute']);
  });
});
