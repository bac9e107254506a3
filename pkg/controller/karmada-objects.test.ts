// Karmada's objects on a hub that serves work.karmada.io, on the controller run against in-memory
// apiservers (core-tests/fleet.ts with Karmada's work kinds added to the hub): the ResourceBinding, a Work
// per cluster in karmada-es-<cluster>, and Karmada's Events, with Karmada's names, reasons and messages.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { karmadaWorkName } from '../../api/work/karmada/names.js';
import { FakeApiserver, type FakeKind } from '../../test/fake-apiserver.js';
import {
  cluster,
  configMap,
  Fleet,
  HUB_KINDS,
  policy,
  until,
  type FleetOptions,
  type Obj,
} from './core-tests/fleet.js';

const KARMADA_KINDS: FakeKind[] = [
  {
    group: 'work.karmada.io',
    version: 'v1alpha2',
    kind: 'ResourceBinding',
    resource: 'resourcebindings',
    namespaced: true,
  },
  {
    group: 'work.karmada.io',
    version: 'v1alpha2',
    kind: 'ClusterResourceBinding',
    resource: 'clusterresourcebindings',
    namespaced: false,
  },
  { group: 'work.karmada.io', version: 'v1alpha1', kind: 'Work', resource: 'works', namespaced: true },
];

/** A fleet whose hub serves Karmada's work objects, its controller reading Karmada's groups. */
class KarmadaFleet extends Fleet {
  override readonly hub = new FakeApiserver({
    server: 'https://hub.test:6443',
    kinds: [...HUB_KINDS, ...KARMADA_KINDS],
  });
}

async function withKarmadaFleet(o: FleetOptions, body: (f: Fleet) => Promise<void>): Promise<void> {
  const f = new KarmadaFleet(o.members);
  for (const obj of o.hub ?? []) f.hub.put(obj, 'kubectl');
  f.start({ karmadaGroups: 'auto', ...o.options });
  try {
    await body(f);
  } finally {
    await f.close();
  }
}

const MEMBERS = ['m1', 'm2'];
const WORK_NAME = karmadaWorkName('ConfigMap', 'cfg', 'default');

const rb = (f: Fleet) => f.hub.get('work.karmada.io/v1alpha2', 'ResourceBinding', 'default', 'cfg-configmap');
const work = (f: Fleet, c: string) => f.hub.get('work.karmada.io/v1alpha1', 'Work', `karmada-es-${c}`, WORK_NAME);
const conditions = (o: Obj | undefined): Obj[] => {
  const c = ((o?.status ?? {}) as Obj).conditions;
  return Array.isArray(c) ? (c as Obj[]) : [];
};
const condition = (o: Obj | undefined, type: string) => conditions(o).find((c) => c.type === type);
/** `reason: message` of the Events about the object named `name`. */
const eventsAbout = (f: Fleet, name: string): string[] =>
  f.hub
    .objects('v1', 'Event')
    .filter((e) => (e.involvedObject as Obj).name === name)
    .map((e) => `${String(e.reason)}: ${String(e.message)}`)
    .sort();

describe("Karmada's objects", () => {
  test('a claimed ConfigMap gets a ResourceBinding with both clusters, a Work on each, and Karmada’s Events', async () => {
    await withKarmadaFleet(
      {
        members: MEMBERS,
        hub: [...MEMBERS.map((m) => cluster(m)), policy('p', { names: ['cfg'], clusters: MEMBERS }), configMap('cfg')],
      },
      async (f) => {
        await until(
          'the binding fully applied',
          () => condition(rb(f), 'FullyApplied')?.status,
          (s) => s === 'True',
        );
        const binding = rb(f)!;
        const spec = binding.spec as Obj;
        const template = f.hub.get('v1', 'ConfigMap', 'default', 'cfg')!;
        const uid = (template.metadata as Obj).uid;
        assert.deepEqual(spec.clusters, [{ name: 'm1' }, { name: 'm2' }]);
        assert.deepEqual(spec.resource, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'cfg',
          uid,
          namespace: 'default',
        });
        assert.equal(spec.conflictResolution, 'Abort');
        assert.equal(spec.preserveResourcesOnDeletion, false);
        assert.equal(spec.schedulerName, 'default-scheduler');
        const meta = binding.metadata as Obj;
        assert.equal((meta.labels as Obj)['resourcebinding.karmada.io/permanent-id'], uid);
        assert.equal((meta.annotations as Obj)['propagationpolicy.karmada.io/name'], 'p');
        assert.equal((meta.annotations as Obj)['flotilla.io/clusters'], 'm1,m2');
        assert.equal(condition(binding, 'Scheduled')?.reason, 'Success');
        assert.equal(condition(binding, 'Scheduled')?.message, 'Binding has been scheduled successfully.');
        const aggregated = (binding.status as Obj).aggregatedStatus as Obj[];
        assert.deepEqual(
          aggregated.map((a) => [a.clusterName, a.applied, a.health]),
          [
            ['m1', true, 'Healthy'],
            ['m2', true, 'Healthy'],
          ],
        );
        for (const m of MEMBERS) {
          const w = work(f, m);
          assert.ok(w, `a Work in karmada-es-${m}`);
          const manifests = ((w.spec as Obj).workload as Obj).manifests as Obj[];
          assert.equal(manifests.length, 1);
          assert.equal(manifests[0]?.kind, 'ConfigMap');
          const annotations = (manifests[0]?.metadata as Obj).annotations as Obj;
          assert.equal(annotations['resourcebinding.karmada.io/name'], 'cfg-configmap');
          assert.equal(condition(w, 'Applied')?.reason, 'AppliedSuccessful');
          assert.equal(condition(w, 'Dispatching')?.message, 'Work is being dispatched to member clusters.');
        }
        await until(
          'the Events',
          () => eventsAbout(f, 'cfg-configmap').length,
          (n) => n >= 3,
        );
        await f.quiet();
        assert.deepEqual(eventsAbout(f, 'cfg'), [
          'ApplyPolicySucceed: Apply policy(default/p) succeed',
          'ScheduleBindingSucceed: Binding has been scheduled successfully. Result: {m1:0, m2:0}',
          'SyncSucceed: Successfully applied resource(default/cfg) to cluster m1',
          'SyncSucceed: Successfully applied resource(default/cfg) to cluster m2',
          'SyncWorkSucceed: Sync work of ResourceBinding(default/cfg-configmap) successful.',
        ]);
        assert.deepEqual(eventsAbout(f, 'cfg-configmap'), [
          'AggregateStatusSucceed: Update ResourceBinding(default/cfg-configmap) with AggregatedStatus successfully.',
          'ScheduleBindingSucceed: Binding has been scheduled successfully. Result: {m1:0, m2:0}',
          'SyncWorkSucceed: Sync work of ResourceBinding(default/cfg-configmap) successful.',
        ]);
        const onWork = eventsAbout(f, WORK_NAME);
        for (const m of MEMBERS) {
          assert.ok(
            onWork.includes(`SyncSucceed: Sync work(karmada-es-${m}/${WORK_NAME}) to cluster(${m}) successful.`),
          );
        }
        assert.equal(
          onWork.filter((e) => e === 'WorkDispatching: Work is being dispatched to member clusters.').length,
          2,
          'WorkDispatching on each Work',
        );
      },
    );
  });

  test('a suspended policy: the Work says suspendDispatching and its Dispatching condition is False', async () => {
    await withKarmadaFleet(
      {
        members: MEMBERS,
        hub: [
          ...MEMBERS.map((m) => cluster(m)),
          policy('p', {
            names: ['cfg'],
            clusters: MEMBERS,
            spec: { suspension: { dispatchingOnClusters: { clusterNames: ['m2'] } } },
          }),
          configMap('cfg'),
        ],
      },
      async (f) => {
        await until(
          "m2's Work suspended",
          () => condition(work(f, 'm2'), 'Dispatching')?.status,
          (s) => s === 'False',
        );
        assert.equal((work(f, 'm2')!.spec as Obj).suspendDispatching, true);
        assert.equal((work(f, 'm1')?.spec as Obj | undefined)?.suspendDispatching, undefined);
        assert.deepEqual((rb(f)!.spec as Obj).suspension, { dispatchingOnClusters: { clusterNames: ['m2'] } });
        await f.quiet();
        assert.ok(eventsAbout(f, WORK_NAME).includes('WorkDispatching: Work dispatching is in a suspended state.'));
      },
    );
  });

  test('the template leaving a cluster deletes its Work; deleting the template deletes the binding and every Work', async () => {
    await withKarmadaFleet(
      {
        members: MEMBERS,
        hub: [...MEMBERS.map((m) => cluster(m)), policy('p', { names: ['cfg'], clusters: MEMBERS }), configMap('cfg')],
      },
      async (f) => {
        await until(
          'both Works',
          () => MEMBERS.filter((m) => work(f, m)).length,
          (n) => n === 2,
        );
        f.hub.edit('policy.flotilla.io/v1beta1', 'PropagationPolicy', 'default', 'p', 'kubectl', (o) => {
          (o.spec as Obj).placement = { clusterAffinity: { clusterNames: ['m1'] } };
        });
        await until(
          'm2’s Work gone',
          () => work(f, 'm2'),
          (w) => w === undefined,
        );
        assert.deepEqual((rb(f)!.spec as Obj).clusters, [{ name: 'm1' }]);
        f.hub.delete('v1', 'ConfigMap', 'default', 'cfg');
        await until(
          'the binding gone',
          () => rb(f),
          (b) => b === undefined,
        );
        await until(
          'every Work gone',
          () => work(f, 'm1'),
          (w) => w === undefined,
        );
      },
    );
  });

  test('nothing of Karmada’s is written when the hub does not serve work.karmada.io', async () => {
    const f = new Fleet(MEMBERS);
    for (const obj of [
      ...MEMBERS.map((m) => cluster(m)),
      policy('p', { names: ['cfg'], clusters: MEMBERS }),
      configMap('cfg'),
    ])
      f.hub.put(obj, 'kubectl');
    f.start({ karmadaGroups: 'auto' });
    try {
      await until(
        'the Flotilla binding',
        () => f.hub.objects('work.flotilla.io/v1alpha1', 'ResourceBinding').length,
        (n) => n === 1,
      );
      await f.quiet();
      assert.deepEqual(
        f.hub.requests.filter((r) => r.path.includes('work.karmada.io') && r.method !== 'GET').map((r) => r.path),
        [],
      );
    } finally {
      await f.close();
    }
  });
});
