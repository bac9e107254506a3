// A pull cluster's health from its agent's Lease, judged on this process's clock: what it sees at first
// sight, a renewal, a Lease not renewed for its duration, a hub view that was stale, an agent never seen.

import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import { AgentLeases, joinedBefore, type AgentState } from './agent-leases.js';

const T0 = Date.parse('2026-11-25T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('AgentLeases', () => {
  let now = T0;
  const leases = new Map<string, object>();
  const said: Array<[string, AgentState]> = [];
  let joined = false;
  let confirmed = T0;
  const make = () =>
    new AgentLeases({
      namespace: 'ns',
      lease: (key) => leases.get(key) as never,
      synced: () => true,
      joinedBefore: () => joined,
      set: (name, state) => said.push([name, state]),
      confirmedAt: () => confirmed,
      now: () => now,
    });
  const lease = (renewedAt: number, holder = 'agent-a') =>
    leases.set('ns/c1', { spec: { holderIdentity: holder, renewTime: iso(renewedAt), leaseDurationSeconds: 10 } });
  let a: AgentLeases | undefined;
  afterEach(() => {
    a?.stop();
    leases.clear();
    said.length = 0;
    now = T0;
    confirmed = T0;
    joined = false;
  });

  it('a current Lease at first sight is ready; one not renewed for its duration on this clock is not', () => {
    a = make();
    lease(T0 - 1_000);
    a.observe('c1');
    assert.deepEqual(said, [['c1', 'ready']]);
    now = T0 + 9_000;
    confirmed = now;
    a.observe('c1');
    assert.deepEqual(said, [['c1', 'ready']]);
    now = T0 + 10_000;
    confirmed = now;
    a.observe('c1');
    assert.deepEqual(said, [
      ['c1', 'ready'],
      ['c1', 'expired'],
    ]);
  });

  it('judged from when the renewal was observed, not from the renewTime the agent wrote', () => {
    a = make();
    lease(T0 - 60_000); // another clock, or a Lease read late: stale by renewTime
    a.observe('c1');
    assert.deepEqual(said, []); // no verdict at first sight of a stale Lease
    now = T0 + 5_000;
    lease(T0 - 55_000); // renewed (renewTime still far behind this clock)
    a.observe('c1');
    assert.deepEqual(said, [['c1', 'ready']]);
  });

  it('no expiry from a view the hub has not confirmed since the deadline', () => {
    a = make();
    lease(T0);
    a.observe('c1');
    now = T0 + 20_000;
    confirmed = T0 + 9_000;
    a.observe('c1');
    assert.deepEqual(said, [['c1', 'ready']]);
  });

  it('a stale hub view judges nothing; when it comes back each Lease has twice its duration', () => {
    a = make();
    lease(T0);
    a.observe('c1');
    a.pause();
    now = T0 + 60_000;
    confirmed = now;
    a.observe('c1');
    assert.deepEqual(said, [['c1', 'ready']]);
    a.resume(['c1']);
    now = T0 + 60_000 + 19_000;
    confirmed = now;
    a.observe('c1');
    assert.deepEqual(said, [['c1', 'ready']]);
    now = T0 + 60_000 + 20_000;
    confirmed = now;
    a.observe('c1');
    assert.deepEqual(said.at(-1), ['c1', 'expired']);
  });

  it('no Lease and no agent ever: waiting for its agent; once joined, a Lease gone is expired', () => {
    a = make();
    a.observe('c1');
    assert.deepEqual(said, [['c1', 'awaiting']]);
    assert.equal(a.awaiting('c1'), true);
    lease(T0);
    a.observe('c1');
    leases.clear();
    a.observe('c1');
    assert.deepEqual(said, [
      ['c1', 'awaiting'],
      ['c1', 'ready'],
      ['c1', 'expired'],
    ]);
    assert.equal(a.awaiting('c1'), false);
    joined = true;
    const b = make();
    b.observe('c1');
    b.stop();
    assert.deepEqual(said.at(-1), ['c1', 'expired']);
  });

  it("joinedBefore: a Cluster whose Ready condition came from its agent's Lease", () => {
    const c = (reason: string) => ({ status: { conditions: [{ type: 'Ready', status: 'False', reason }] } });
    assert.equal(joinedBefore(c('AgentLeaseExpired')), true);
    assert.equal(joinedBefore(c('AgentLeaseRenewed')), true);
    assert.equal(joinedBefore(c('AgentNotJoined')), false);
    assert.equal(joinedBefore({}), false);
    assert.equal(joinedBefore(undefined), false);
  });
});
