import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { rendezvous, shardFieldManager, shardOf, ShardView } from './shards.js';

const T0 = Date.parse('2026-11-26T00:00:00Z');
const lease = (name: string, acquired: number, renewed: number, seconds = 15, holder = 'h') => ({
  metadata: { name },
  spec: {
    holderIdentity: holder,
    acquireTime: new Date(acquired).toISOString(),
    renewTime: new Date(renewed).toISOString(),
    leaseDurationSeconds: seconds,
  },
});
const members = Array.from({ length: 200 }, (_, i) => `member${i}`);

describe('rendezvous', () => {
  it('gives every key one owner, the same whatever the order of the replicas', () => {
    for (const m of members) assert.equal(rendezvous(m, ['a', 'b', 'c']), rendezvous(m, ['c', 'a', 'b']));
    assert.equal(rendezvous('x', []), undefined);
  });

  it('moves only the members a joining replica wins, and only the leaving one’s members when it goes', () => {
    const before = new Map(members.map((m) => [m, rendezvous(m, ['a', 'b'])]));
    const after = new Map(members.map((m) => [m, rendezvous(m, ['a', 'b', 'c'])]));
    for (const m of members) if (after.get(m) !== before.get(m)) assert.equal(after.get(m), 'c');
    const moved = members.filter((m) => after.get(m) === 'c').length;
    // About a third; far from none and from all.
    assert.ok(moved > 40 && moved < 100, String(moved));
    const without = new Map(members.map((m) => [m, rendezvous(m, ['a', 'c'])]));
    for (const m of members) if (after.get(m) !== 'b') assert.equal(without.get(m), after.get(m));
  });
});

describe('ShardView', () => {
  it('counts a joining replica at half the handoff for the others, and at the whole for itself', () => {
    const a = new ShardView('a', 6_000);
    const c = new ShardView('c', 6_000);
    for (const v of [a, c]) {
      v.set('a', shardOf(lease('a', T0 - 60_000, T0)));
      v.set('c', shardOf(lease('c', T0, T0)));
    }
    const won = members.filter((m) => rendezvous(m, ['a', 'c']) === 'c');
    assert.ok(won.length > 0);
    // Before T0 + 3 s both see a alone: a works on everything, c on nothing.
    assert.ok(won.every((m) => a.owns(m, T0 + 2_000) && !c.owns(m, T0 + 2_000)));
    // From 3 s to 6 s: a has let go of what c wins, and c has not started: nobody writes those members.
    assert.ok(won.every((m) => !a.owns(m, T0 + 4_000) && !c.owns(m, T0 + 4_000)));
    // From 6 s: c works on them.
    assert.ok(won.every((m) => !a.owns(m, T0 + 6_500) && c.owns(m, T0 + 6_500)));
    assert.equal(a.nextChange(T0 + 1_000), T0 + 3_000);
    assert.equal(c.nextChange(T0 + 4_000), T0 + 6_000);
  });

  it("takes a replica's members over only once its Lease has expired", () => {
    const a = new ShardView('a', 6_000);
    a.set('a', shardOf(lease('a', T0 - 60_000, T0)));
    a.set('b', shardOf(lease('b', T0 - 60_000, T0 - 1_000, 15)));
    const bs = members.filter((m) => rendezvous(m, ['a', 'b']) === 'b');
    assert.ok(bs.every((m) => !a.owns(m, T0 + 13_000)));
    // Expired as the watch shows it: counted until a read of the hub confirms it.
    assert.deepEqual(a.unconfirmed(T0 + 14_001), ['b']);
    a.confirmExpired('b', T0 + 14_001);
    assert.ok(bs.every((m) => a.owns(m, T0 + 14_001)));
    assert.deepEqual(a.expired(T0 + 14_001), ['b']);
    assert.equal(a.isCoordinator(T0 + 14_001), true);
    // b renews (the same acquisition): its members are b's again at once, not when a's last answer would lapse.
    a.set('b', shardOf(lease('b', T0 - 60_000, T0 + 14_002, 15)));
    assert.ok(bs.every((m) => !a.owns(m, T0 + 14_003)));
    // Time going backwards (a clock step) is looked at afresh too.
    assert.ok(bs.every((m) => !a.owns(m, T0 + 13_000)));
  });

  it('keeps a replica whose Lease looks expired (a watch behind) until the hub confirms it; a renewal read keeps it', () => {
    const a = new ShardView('a', 6_000);
    a.set('a', shardOf(lease('a', T0 - 60_000, T0 + 10_000)));
    a.set('b', shardOf(lease('b', T0 - 60_000, T0 - 1_000, 15)));
    const bs = members.filter((m) => rendezvous(m, ['a', 'b']) === 'b');
    // Past b's expiry as last watched: its members are still b's, and no entry of b's is cleared.
    assert.ok(bs.every((m) => !a.owns(m, T0 + 14_001)));
    assert.deepEqual(a.expired(T0 + 14_001), []);
    assert.equal(a.isCoordinator(T0 + 14_001), rendezvous('', ['a', 'b']) === 'a');
    // The hub, read, has b renewed at T0 + 12 s: not expired, nothing to confirm.
    a.set('b', shardOf(lease('b', T0 - 60_000, T0 + 12_000, 15)));
    a.confirmExpired('b', T0 + 14_002);
    assert.deepEqual(a.unconfirmed(T0 + 14_002), []);
    assert.ok(bs.every((m) => !a.owns(m, T0 + 14_002)));
  });

  it('has exactly one coordinator among replicas that agree on the live set', () => {
    const names = ['a', 'b', 'c'];
    const views = names.map((n) => new ShardView(n, 6_000));
    for (const v of views) for (const n of names) v.set(n, shardOf(lease(n, T0 - 60_000, T0)));
    assert.equal(views.filter((v) => v.isCoordinator(T0 + 1_000)).length, 1);
    // A member belongs to exactly one of them.
    for (const m of members) assert.equal(views.filter((v) => v.owns(m, T0 + 1_000)).length, 1);
  });

  it('reads a Lease without a holder, or with junk times, as no replica', () => {
    assert.equal(shardOf(lease('x', T0, T0, 15, '')), undefined);
    assert.equal(shardOf({ metadata: { name: 'x' }, spec: { holderIdentity: 'h', renewTime: 'soon' } }), undefined);
    assert.equal(shardOf({ metadata: { name: 'x' }, spec: 'nope' }), undefined);
  });

  it('keeps field managers within 128 characters and distinct', () => {
    assert.equal(shardFieldManager('r1'), 'flotilla-controller.shard.r1');
    assert.ok(shardFieldManager('x'.repeat(253)).length <= 128);
    assert.notEqual(shardFieldManager(`${'x'.repeat(200)}a`), shardFieldManager(`${'x'.repeat(200)}b`));
  });
});
