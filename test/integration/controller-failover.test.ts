// Cluster failover on a hub with three members: a member whose apiserver stops is tainted from its
// health (NoSchedule, then NoExecute with --failover), its replicas move to the others, the binding lists
// the eviction task with its purge mode, and when it comes back the taints go, the replicas are divided
// over all three again, and each member holds exactly one copy (nothing duplicated, nothing orphaned).
// Real apiservers; the outage is the member's apiserver process stopped and started on the same port.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import {
  capturingIO,
  clusterTaints,
  getObject,
  prepareHub,
  reportDeploymentStatus,
  type Obj,
  startController,
} from './controller-io.js';

const WAIT_MS = 45_000;
const NS = 'shop';
const CLUSTERS = ['member1', 'member2', 'member3'];

const deployment = (name: string): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: NS },
  spec: {
    replicas: 6,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: 'nginx:1.25' }] } },
  },
});
const policy = (name: string, purgeMode: string | undefined): Obj => ({
  apiVersion: 'policy.flotilla.io/v1beta1',
  kind: 'PropagationPolicy',
  metadata: { name, namespace: NS },
  spec: {
    resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name }],
    placement: {
      clusterAffinity: { clusterNames: CLUSTERS },
      replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' },
    },
    // Never is not a value the CRD takes for cluster failover (Karmada v1.18): it comes from the flag.
    ...(purgeMode ? { failover: { cluster: { purgeMode } } } : {}),
  },
});

void describe('flotilla controller: cluster failover', () => {
  const env = useEnvironment({ members: 3 });
  let hub: KubeClient;
  let members: KubeClient[];
  const stop = new AbortController();
  let controller: Promise<number>;
  let out: ReturnType<typeof capturingIO>;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean) => eventually(probe, done, WAIT_MS, 200);
  /** Replicas of the Deployment on each member (undefined: no copy, or the member does not answer). */
  const replicas = (name: string, on: KubeClient[] = members) =>
    Promise.all(
      on.map(async (m) => {
        try {
          return ((await getObject(m, `/apis/apps/v1/namespaces/${NS}/deployments/${name}`))?.spec as Obj | undefined)
            ?.replicas as number | undefined;
        } catch {
          return undefined;
        }
      }),
    );
  const binding = (name: string) =>
    getObject(hub, `/apis/work.flotilla.io/v1alpha1/namespaces/${NS}/resourcebindings/${name}-deployment`);
  const taints = async (cluster: string) =>
    (await clusterTaints(hub, cluster)).map((t) => `${String(t.key)}:${String(t.effect)}`);

  before(async () => {
    const e = env();
    ({ hub, members } = await prepareHub(e, NS));
    const applied = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        ...CLUSTERS.map((name) => ({
          apiVersion: 'cluster.flotilla.io/v1alpha1',
          kind: 'Cluster',
          metadata: { name },
        })),
        deployment('direct'),
        policy('direct', 'Directly'),
        deployment('graceful'),
        policy('graceful', 'Gracefully'),
        deployment('never'),
        policy('never', undefined),
      ],
    });
    assert.equal(applied.status, 0, applied.stderr);
    out = capturingIO(stop.signal);
    controller = startController(e.hub, e.membersKubeconfigPath, out, [
      '--probe-interval',
      '300ms',
      '--probe-timeout',
      '1s',
      '--not-ready-taint-after',
      '1s',
      '--failover',
      'true',
      '--failover-eviction-timeout',
      '2s',
      '--graceful-eviction-timeout',
      '15s',
      '--eviction-purge-mode',
      'Never',
    ]);
    for (const name of ['direct', 'graceful', 'never'])
      assert.deepEqual(
        await until(
          () => replicas(name),
          (r) => r.join() === '2,2,2',
        ),
        [2, 2, 2],
        out.err(),
      );
  });

  after(async () => {
    stop.abort();
    assert.equal(await controller, 0, out.err());
  });

  void it('a stopped member is tainted, its replicas move to the others, and the binding lists the eviction with its purge mode', async () => {
    const started = Date.now();
    await env().stopCluster('member3');
    assert.deepEqual(
      await until(
        () => taints('member3'),
        (t) => t.length === 2,
      ),
      ['cluster.karmada.io/unreachable:NoSchedule', 'cluster.karmada.io/unreachable:NoExecute'],
      out.err(),
    );
    // Only the members that answer are read: a request to the stopped one waits out its retries.
    const up = members.slice(0, 2);
    for (const name of ['direct', 'graceful', 'never'])
      assert.deepEqual(
        await until(
          () => replicas(name, up),
          (x) => x.join() === '3,3',
        ),
        [3, 3],
        out.err(),
      );
    const moved = Date.now() - started;
    const tasks = async (name: string) =>
      (((await binding(name))?.spec as Obj | undefined)?.gracefulEvictionTasks as Obj[] | undefined) ?? [];
    const graceful = await until(
      () => tasks('graceful'),
      (t) => t.length === 1,
    );
    assert.deepEqual(
      graceful.map((t) => [t.fromCluster, t.purgeMode, t.reason, t.producer]),
      [['member3', 'Gracefully', 'TaintUntolerated', 'TaintManager']],
    );
    // While its copy is kept, member3 stays in the binding's status: Evicting, until when, and why.
    const evicting = async (name: string) => {
      const status = ((await binding(name))?.status as Obj | undefined) ?? {};
      const entry = ((status.clusters as Obj[] | undefined) ?? []).find((c) => c.name === 'member3');
      const condition = ((status.conditions as Obj[] | undefined) ?? []).find((c) => c.type === 'Evicting');
      return { entry, condition };
    };
    const kept = await until(
      () => evicting('graceful'),
      (e) => e.entry?.state === 'Evicting',
    );
    const created = Date.parse(String(graceful[0]!.creationTimestamp));
    assert.equal(Date.parse(String(kept.entry?.keptUntil)) - created, 15_000, JSON.stringify(kept.entry));
    assert.equal(
      kept.entry?.message,
      `evicted: untolerated taint cluster.karmada.io/unreachable:NoExecute; the copy is kept until ${String(kept.entry?.keptUntil)}, or until member1, member2 report the template healthy (purgeMode Gracefully)`,
    );
    assert.deepEqual(
      [kept.condition?.status, kept.condition?.reason, kept.condition?.message],
      ['True', 'WaitingForHealthyPlacement', `member3: ${String(kept.entry?.message)}`],
    );
    const never = await until(
      () => evicting('never'),
      (e) => e.entry?.state === 'Evicting',
    );
    assert.deepEqual(
      [never.entry?.keptUntil, never.condition?.reason],
      [undefined, 'PurgeModeNever'],
      JSON.stringify(never),
    );
    assert.deepEqual(await evicting('direct'), { entry: undefined, condition: undefined }, 'Directly keeps nothing');
    // The binding says why member3 is not chosen any more.
    const notChosen = async () =>
      (((await binding('direct'))?.status as Obj | undefined)?.notChosen as Obj[] | undefined) ?? [];
    const why = await until(notChosen, (n) => n.some((x) => x.name === 'member3'));
    assert.match(
      String(why.find((x) => x.name === 'member3')?.reason),
      /^evicted: untolerated taint cluster\.karmada\.io\/unreachable:NoExecute$/,
    );
    const direct = await until(
      () => tasks('direct'),
      (t) => t.length === 1,
    );
    assert.deepEqual(
      direct.map((t) => [t.fromCluster, t.purgeMode]),
      [['member3', 'Directly']],
    );
    // No kubelet makes the new copies healthy here, so the tasks end by their timeout (15 s).
    assert.deepEqual(
      await until(
        () => tasks('graceful'),
        (t) => t.length === 0,
      ),
      [],
    );
    // Never: the task, and the copy on member3, stay until member3 takes the template again.
    assert.deepEqual(
      (await tasks('never')).map((t) => [t.fromCluster, t.purgeMode]),
      [['member3', 'Never']],
    );
    assert.ok(moved < WAIT_MS, `moved after ${moved} ms`);
  });

  void it('the member coming back loses its taints and gets its share again: one copy per member, nothing orphaned', async () => {
    await env().startCluster('member3');
    assert.deepEqual(
      await until(
        () => taints('member3'),
        (t) => t.length === 0,
      ),
      [],
      out.err(),
    );
    for (const name of ['direct', 'graceful', 'never'])
      assert.deepEqual(
        await until(
          () => replicas(name),
          (r) => r.join() === '2,2,2',
        ),
        [2, 2, 2],
        out.err(),
      );
    for (const m of members) {
      const list = await m.request<{ items: Obj[] }>({
        method: 'GET',
        path: `/apis/apps/v1/namespaces/${NS}/deployments`,
      });
      assert.deepEqual(list.body?.items.map((d) => (d.metadata as Obj).name).sort(), ['direct', 'graceful', 'never']);
    }
    // The bindings follow the members' reports on the new plan: waited for, as above.
    // A missing binding or spec is not an answer: the wait is for a spec without tasks.
    for (const name of ['direct', 'never']) {
      const spec = await until(
        async () => (await binding(name))?.spec as Obj | undefined,
        (s) => s !== undefined && s.gracefulEvictionTasks === undefined,
      );
      assert.ok(spec, `the binding of ${name}`);
      assert.equal(spec.gracefulEvictionTasks, undefined);
    }
  });

  void it('application failover: a copy unhealthy past tolerationSeconds moves to another cluster, keeping the state the policy names', async () => {
    const flaky: Obj = {
      apiVersion: 'policy.flotilla.io/v1beta1',
      kind: 'PropagationPolicy',
      metadata: { name: 'flaky', namespace: NS },
      spec: {
        propagateDeps: true,
        resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'flaky' }],
        placement: {
          clusterAffinity: { clusterNames: CLUSTERS },
          spreadConstraints: [{ spreadByField: 'cluster', maxGroups: 2, minGroups: 2 }],
          replicaScheduling: { replicaSchedulingType: 'Duplicated' },
        },
        failover: {
          application: {
            decisionConditions: { tolerationSeconds: 5 },
            purgeMode: 'Directly',
            statePreservation: {
              rules: [{ aliasLabelName: 'failover.example.com/replicas', jsonPath: '{.replicas}' }],
            },
          },
        },
      },
    };
    const d = { ...deployment('flaky'), spec: { ...(deployment('flaky').spec as Obj), replicas: 1 } };
    const applied = await k(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: [flaky, d] });
    assert.equal(applied.status, 0, applied.stderr);
    const path = `/apis/apps/v1/namespaces/${NS}/deployments/flaky`;
    const report = (m: KubeClient, ready: number) => reportDeploymentStatus(m, path, 1, ready);
    const [m1, m2, m3] = members as [KubeClient, KubeClient, KubeClient];
    assert.deepEqual(
      await until(
        () => replicas('flaky'),
        (r) => r.join() === '1,1,',
      ),
      [1, 1, undefined],
      out.err(),
    );
    await report(m1, 1); // healthy
    await report(m2, 0); // never gets ready
    // After 5 s member2's copy is evicted (Directly: removed) and member3 takes its place.
    const moved = await until(
      () => replicas('flaky'),
      (r) => r[2] === 1,
    );
    assert.deepEqual([moved[0], moved[2]], [1, 1], out.err());
    // While the new placement is not yet healthy, the task stays, and member3's copy carries the state.
    // The binding is written once the members have reported on the new plan (or after a wait), so it may
    // lag member3's copy: the task is waited for.
    const tasks = async () =>
      (((await binding('flaky'))?.spec as Obj | undefined)?.gracefulEvictionTasks as Obj[] | undefined) ?? [];
    assert.deepEqual(
      (await until(tasks, (t) => t.length > 0)).map((t) => [t.fromCluster, t.purgeMode, t.reason, t.producer]),
      [['member2', 'Directly', 'ApplicationFailure', 'ApplicationFailover']],
    );
    const onM3 = await getObject(m3, path);
    assert.equal(((onM3?.metadata as Obj).labels as Obj)['failover.example.com/replicas'], '1');
    const labelsOnM1 = ((await getObject(m1, path))?.metadata as Obj).labels as Obj;
    assert.equal(
      labelsOnM1['failover.example.com/replicas'],
      undefined,
      'member1 was there before: no preserved state',
    );
    // Once member3 reports healthy, the Directly task ends: every scheduled cluster is healthy.
    await report(m3, 1);
    const ended = await until(tasks, (t) => t.length === 0);
    const status = JSON.stringify((await binding('flaky'))?.status);
    assert.deepEqual(ended, [], `the task ends once the new placement is healthy; the binding's status: ${status}`);
    assert.deepEqual(
      await until(
        () => replicas('flaky'),
        (r) => r.join() === '1,,1',
      ),
      [1, undefined, 1],
      out.err(),
    );
  });
});
