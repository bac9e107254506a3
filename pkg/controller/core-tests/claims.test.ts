// Claims and preemption, on the controller run against in-memory apiservers: which policy claims a
// template (recorded on the hub template with Karmada's claim annotations, and in its binding), and where
// its copies go as a result. Karmada's rules (pkg/detector: ClaimPolicyForObject, preemption.go): the best
// match claims first (explicit priority, then PropagationPolicy over ClusterPropagationPolicy); a claim
// sticks when a better policy appears, unless that policy says `preemption: Always` and either is a
// PropagationPolicy preempting a ClusterPropagationPolicy or has a strictly higher explicit priority;
// a ClusterPropagationPolicy never preempts a PropagationPolicy. Each policy targets its own member, so
// where the copy is says which policy claims it.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  bindingOf,
  cluster,
  clusterPolicy,
  configMap,
  holders,
  meta,
  policy,
  templateOnHub,
  until,
  withFleet,
  type Fleet,
  type Obj,
} from './fleet.js';

const MEMBERS = ['m1', 'm2', 'm3'];
const clusters = MEMBERS.map((m) => cluster(m));

/** Which policy the hub template records as its claim (`PP ns/name` or `CPP name`), if any. */
function claimOf(f: Fleet): string | undefined {
  const a = (meta(templateOnHub(f, 'cfg')).annotations ?? {}) as Record<string, string>;
  if (a['propagationpolicy.karmada.io/name'])
    return `PP ${a['propagationpolicy.karmada.io/namespace']}/${a['propagationpolicy.karmada.io/name']}`;
  if (a['clusterpropagationpolicy.karmada.io/name']) return `CPP ${a['clusterpropagationpolicy.karmada.io/name']}`;
  return undefined;
}

/** The template's data changes; returns once member `on` holds the change (every earlier event was handled). */
async function settle(f: Fleet, on: string, value: string): Promise<void> {
  f.hub.edit('v1', 'ConfigMap', 'default', 'cfg', 'kubectl', (o) => (o.data = { k: value }));
  await until(
    `the change on ${on}`,
    () => f.member(on).get('v1', 'ConfigMap', 'default', 'cfg')?.data,
    (d) => (d as Obj | undefined)?.k === value,
  );
}

interface Case {
  name: string;
  /** Policies there from the start. */
  first: Obj[];
  /** Claim and holders once the first propagation settled. */
  claimed: { by: string; on: string[] };
  /** A policy added once the template was claimed (and the member it targets). */
  then?: Obj;
  /** Claim and holders after it. */
  after?: { by: string; on: string[] };
}

const pp = (name: string, member: string, spec: Obj = {}) => policy(name, { names: ['cfg'], clusters: [member], spec });
const cpp = (name: string, member: string, spec: Obj = {}) =>
  clusterPolicy(name, { names: ['cfg'], clusters: [member], spec });

const CASES: Case[] = [
  {
    name: 'of two matching PropagationPolicies the higher explicit priority claims',
    first: [pp('low', 'm1', { priority: 1 }), pp('high', 'm2', { priority: 5 })],
    claimed: { by: 'PP default/high', on: ['m2'] },
  },
  {
    name: 'a PropagationPolicy claims before a ClusterPropagationPolicy of higher priority',
    first: [cpp('wide', 'm1', { priority: 100 }), pp('local', 'm2')],
    claimed: { by: 'PP default/local', on: ['m2'] },
  },
  {
    name: 'a claim sticks: a higher-priority policy without preemption does not take it',
    first: [pp('a', 'm1')],
    claimed: { by: 'PP default/a', on: ['m1'] },
    then: pp('b', 'm2', { priority: 10 }),
    after: { by: 'PP default/a', on: ['m1'] },
  },
  {
    name: 'preemption: Always with a strictly higher priority takes the template, and its copies move',
    first: [pp('a', 'm1', { priority: 1 })],
    claimed: { by: 'PP default/a', on: ['m1'] },
    then: pp('b', 'm2', { priority: 2, preemption: 'Always' }),
    after: { by: 'PP default/b', on: ['m2'] },
  },
  {
    name: 'preemption: Always with an equal priority does not',
    first: [pp('a', 'm1', { priority: 3 })],
    claimed: { by: 'PP default/a', on: ['m1'] },
    then: pp('b', 'm2', { priority: 3, preemption: 'Always' }),
    after: { by: 'PP default/a', on: ['m1'] },
  },
  {
    name: 'a PropagationPolicy with preemption preempts a ClusterPropagationPolicy whatever the priorities',
    first: [cpp('wide', 'm1', { priority: 100 })],
    claimed: { by: 'CPP wide', on: ['m1'] },
    then: pp('local', 'm3', { priority: 0, preemption: 'Always' }),
    after: { by: 'PP default/local', on: ['m3'] },
  },
  {
    name: 'a ClusterPropagationPolicy never preempts a PropagationPolicy',
    first: [pp('local', 'm1')],
    claimed: { by: 'PP default/local', on: ['m1'] },
    then: cpp('wide', 'm2', { priority: 100, preemption: 'Always' }),
    after: { by: 'PP default/local', on: ['m1'] },
  },
];

describe('claims and preemption', () => {
  for (const c of CASES)
    test(c.name, async () => {
      await withFleet({ members: MEMBERS, hub: [...clusters, ...c.first, configMap('cfg')] }, async (f) => {
        await until(
          'the first claim',
          () => claimOf(f),
          (v) => v === c.claimed.by,
        );
        await until(
          'the first copies',
          () => holders(f, 'cfg'),
          (h) => h.join() === c.claimed.on.join(),
        );
        const policyOf = (b: Obj | undefined) => (b?.spec as Obj | undefined)?.policy as Obj | undefined;
        await until(
          'the binding names the claim',
          () => policyOf(bindingOf(f, 'cfg'))?.name,
          (n) => c.claimed.by.endsWith(`/${String(n)}`) || c.claimed.by === `CPP ${String(n)}`,
        );
        if (!c.then || !c.after) return;
        f.hub.put(c.then, 'kubectl');
        await until(
          'the claim after',
          () => claimOf(f),
          (v) => v === c.after!.by,
        );
        await settle(f, c.after.on[0]!, 'v2');
        assert.deepEqual(holders(f, 'cfg'), c.after.on, 'where the copies are');
        assert.equal(claimOf(f), c.after.by);
      });
    });

  test('the claiming policy deleted: the next best match claims and the copies follow it', async () => {
    await withFleet(
      { members: MEMBERS, hub: [...clusters, pp('a', 'm1', { priority: 5 }), pp('b', 'm2'), configMap('cfg')] },
      async (f) => {
        await until(
          'claimed by a',
          () => claimOf(f),
          (v) => v === 'PP default/a',
        );
        await until(
          'on m1',
          () => holders(f, 'cfg'),
          (h) => h.join() === 'm1',
        );
        f.hub.delete('policy.flotilla.io/v1beta1', 'PropagationPolicy', 'default', 'a');
        await until(
          'claimed by b',
          () => claimOf(f),
          (v) => v === 'PP default/b',
        );
        await until(
          'on m2 only',
          () => holders(f, 'cfg'),
          (h) => h.join() === 'm2',
        );
      },
    );
  });

  test('no policy claims any more: the copies stay and the binding says Claimed False', async () => {
    await withFleet({ members: MEMBERS, hub: [...clusters, pp('a', 'm1'), configMap('cfg')] }, async (f) => {
      await until(
        'on m1',
        () => holders(f, 'cfg'),
        (h) => h.join() === 'm1',
      );
      f.hub.delete('policy.flotilla.io/v1beta1', 'PropagationPolicy', 'default', 'a');
      await until(
        'the claim record removed',
        () => claimOf(f),
        (v) => v === undefined,
      );
      const claimed = (b: Obj | undefined) =>
        (((b?.status ?? {}) as Obj).conditions as Obj[] | undefined)?.find((x) => x.type === 'Claimed')?.status;
      await until(
        'the binding says Claimed False',
        () => claimed(bindingOf(f, 'cfg')),
        (s) => s === 'False',
      );
      assert.deepEqual(holders(f, 'cfg'), ['m1'], 'what was propagated stays (Karmada keeps it)');
    });
  });
});
