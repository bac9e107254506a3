// Eviction and failover, on the controller run against in-memory apiservers: a NoExecute taint on a
// Cluster the template is on evicts it from there (Karmada's taint manager); what happens to the copy
// follows the policy's failover.cluster.purgeMode, else the controller's evictionPurgeMode — Directly
// removes it at once, Gracefully keeps it until the clusters still targeted report it healthy (or, with
// nowhere else to go, until the timeout), Never (the controller's setting only: the policy API has
// Directly and Gracefully) keeps it until the cluster is targeted again. The binding lists a kept copy as Evicting and says why in
// its Evicting condition. With --failover, a member that stops answering is tainted NoExecute by the
// controller itself and evicted the same way.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  bindingEntries,
  bindingOf,
  bindingTargets,
  cluster,
  configMap,
  holders,
  policy,
  until,
  withFleet,
  type Fleet,
  type Obj,
} from './fleet.js';

const MEMBERS = ['m1', 'm2'];
const TAINT = { key: 'example.com/maintenance', effect: 'NoExecute' };

function taint(f: Fleet, name: string, taints: Obj[]): void {
  f.hub.edit('cluster.flotilla.io/v1alpha1', 'Cluster', undefined, name, 'kubectl', (o) => {
    (o.spec as Obj).taints = taints;
  });
}

function evictingCondition(b: Obj | undefined): Obj | undefined {
  const conditions = ((b?.status ?? {}) as Obj).conditions;
  return (Array.isArray(conditions) ? (conditions as Obj[]) : []).find((c) => c.type === 'Evicting');
}

interface Case {
  name: string;
  /** The clusters the policy places the template on. */
  targets: string[];
  /** The policy's failover.cluster.purgeMode; undefined: none, the controller's evictionPurgeMode decides. */
  purgeMode: 'Directly' | 'Gracefully' | undefined;
  /** Where the copies are once the eviction of m2 has played out (or while it is held). */
  holders: string[];
  /** The binding's spec.clusters then. */
  targeted: string[];
  /** m2's entry state and the Evicting condition's reason, while the copy is kept. */
  kept?: { reason: string };
  options?: Obj;
}

const CASES: Case[] = [
  {
    name: 'Directly: the copy goes at once',
    targets: MEMBERS,
    purgeMode: 'Directly',
    holders: ['m1'],
    targeted: ['m1'],
  },
  {
    name: 'Gracefully: the copy goes once the clusters still targeted report it healthy',
    targets: MEMBERS,
    purgeMode: 'Gracefully',
    holders: ['m1'],
    targeted: ['m1'],
  },
  {
    name: 'Gracefully with nowhere else to go: the copy is kept, the binding says NoOtherCluster',
    targets: ['m2'],
    purgeMode: 'Gracefully',
    holders: ['m2'],
    targeted: [],
    kept: { reason: 'NoOtherCluster' },
  },
  {
    name: 'Gracefully with nowhere else to go: the copy goes at the graceful eviction timeout',
    targets: ['m2'],
    purgeMode: 'Gracefully',
    holders: [],
    targeted: [],
    options: { gracefulEvictionTimeoutMs: 150 },
  },
  {
    name: 'no failover in the policy: the controller evictionPurgeMode Directly decides',
    targets: MEMBERS,
    purgeMode: undefined,
    holders: ['m1'],
    targeted: ['m1'],
    options: { evictionPurgeMode: 'Directly' },
  },
  {
    name: 'Never: the copy is kept while the cluster is tainted, the binding says PurgeModeNever',
    targets: MEMBERS,
    purgeMode: undefined,
    holders: MEMBERS,
    targeted: ['m1'],
    kept: { reason: 'PurgeModeNever' },
    options: { evictionPurgeMode: 'Never' },
  },
  {
    name: 'failover.cluster in the policy wins over the controller evictionPurgeMode Never',
    targets: MEMBERS,
    purgeMode: 'Directly',
    holders: ['m1'],
    targeted: ['m1'],
    options: { evictionPurgeMode: 'Never' },
  },
];

describe('eviction by a NoExecute taint', () => {
  for (const c of CASES)
    test(c.name, async () => {
      const spec = c.purgeMode ? { failover: { cluster: { purgeMode: c.purgeMode } } } : {};
      await withFleet(
        {
          members: MEMBERS,
          hub: [
            ...MEMBERS.map((m) => cluster(m)),
            policy('p', { names: ['cfg'], clusters: c.targets, spec }),
            configMap('cfg'),
          ],
          options: { gracefulEvictionTimeoutMs: 600_000, ...c.options },
        },
        async (f) => {
          await until(
            'first copies',
            () => holders(f, 'cfg'),
            (h) => h.join() === c.targets.join(),
          );
          await f.quiet();
          taint(f, 'm2', [TAINT]);
          await until(
            'targets after the taint',
            () => bindingTargets(bindingOf(f, 'cfg')),
            (t) => t.join() === c.targeted.join(),
          );
          if (c.kept) {
            const reason = await until(
              'the Evicting condition',
              () => evictingCondition(bindingOf(f, 'cfg'))?.reason,
              (r) => r === c.kept!.reason,
            );
            assert.equal(reason, c.kept.reason);
            assert.equal(bindingEntries(bindingOf(f, 'cfg')).get('m2')?.state, 'Evicting', 'm2 listed as Evicting');
            await f.quiet();
          }
          await until(
            'copies after the taint',
            () => holders(f, 'cfg'),
            (h) => h.join() === c.holders.join(),
          );
          if (!c.kept) assert.equal(evictingCondition(bindingOf(f, 'cfg')), undefined, 'no copy is kept');
        },
      );
    });

  test('Never: the taint lifted, the cluster is targeted again and nothing is evicting', async () => {
    const spec = {};
    await withFleet(
      {
        options: { evictionPurgeMode: 'Never' },
        members: MEMBERS,
        hub: [
          ...MEMBERS.map((m) => cluster(m)),
          policy('p', { names: ['cfg'], clusters: MEMBERS, spec }),
          configMap('cfg'),
        ],
      },
      async (f) => {
        await until(
          'first copies',
          () => holders(f, 'cfg'),
          (h) => h.length === 2,
        );
        await f.quiet();
        taint(f, 'm2', [TAINT]);
        await until(
          'kept',
          () => evictingCondition(bindingOf(f, 'cfg'))?.reason,
          (r) => r === 'PurgeModeNever',
        );
        taint(f, 'm2', []);
        await until(
          'targeted again',
          () => bindingTargets(bindingOf(f, 'cfg')),
          (t) => t.join() === 'm1,m2',
        );
        await until(
          'no Evicting condition',
          () => evictingCondition(bindingOf(f, 'cfg')),
          (e) => e === undefined,
        );
        assert.deepEqual(holders(f, 'cfg'), MEMBERS);
      },
    );
  });

  test('a policy that tolerates the taint keeps the template there', async () => {
    const spec = { failover: { cluster: { purgeMode: 'Directly' } } };
    const p = policy('p', { names: ['cfg'], clusters: MEMBERS, spec });
    ((p.spec as Obj).placement as Obj).clusterTolerations = [
      { key: TAINT.key, operator: 'Exists', effect: 'NoExecute' },
    ];
    await withFleet({ members: MEMBERS, hub: [...MEMBERS.map((m) => cluster(m)), p, configMap('cfg')] }, async (f) => {
      await until(
        'first copies',
        () => holders(f, 'cfg'),
        (h) => h.length === 2,
      );
      await f.quiet();
      taint(f, 'm2', [TAINT]);
      // A change after the taint: once it is on both, the taint has been taken into account.
      f.hub.edit('v1', 'ConfigMap', 'default', 'cfg', 'kubectl', (o) => (o.data = { k: 'v2' }));
      await until(
        'the change on m2',
        () => f.member('m2').get('v1', 'ConfigMap', 'default', 'cfg')?.data,
        (d) => (d as Obj | undefined)?.k === 'v2',
      );
      assert.deepEqual(bindingTargets(bindingOf(f, 'cfg')), MEMBERS);
    });
  });
});

describe('failover of an unreachable member', () => {
  test('with failover on, a member that stops answering is tainted NoExecute and evicted', async () => {
    const spec = { failover: { cluster: { purgeMode: 'Directly' } } };
    await withFleet(
      {
        members: MEMBERS,
        hub: [
          ...MEMBERS.map((m) => cluster(m)),
          policy('p', { names: ['cfg'], clusters: MEMBERS, spec }),
          configMap('cfg'),
        ],
        options: { failover: true, probeIntervalMs: 30, notReadyTaintAfterMs: 50, failoverEvictionTimeoutMs: 100 },
      },
      async (f) => {
        await until(
          'first copies',
          () => holders(f, 'cfg'),
          (h) => h.length === 2,
        );
        f.member('m2').hook = (r) => (r.path === '/readyz' || r.method !== 'GET' ? 'unreachable' : undefined);
        const taints = (c: Obj | undefined) => (((c?.spec ?? {}) as Obj).taints as Obj[] | undefined) ?? [];
        const onHub = await until(
          'the NoExecute taint on the hub Cluster',
          () => taints(f.hub.get('cluster.flotilla.io/v1alpha1', 'Cluster', undefined, 'm2')),
          (t) => t.some((x) => x.effect === 'NoExecute'),
        );
        assert.deepEqual(onHub.map((t) => `${String(t.key)}:${String(t.effect)}`).sort(), [
          'cluster.karmada.io/unreachable:NoExecute',
          'cluster.karmada.io/unreachable:NoSchedule',
        ]);
        await until(
          'targets without m2',
          () => bindingTargets(bindingOf(f, 'cfg')),
          (t) => t.join() === 'm1',
        );
        assert.deepEqual(
          taints(f.hub.get('cluster.flotilla.io/v1alpha1', 'Cluster', undefined, 'm1')),
          [],
          'm1 untouched',
        );
      },
    );
  });
});
