// A controller restart changes nothing on the members, and a controller cut off from every member at once
// evicts nothing. A hub with three push members: templates placed by capacity (dynamicWeight
// AvailableReplicas over the Nodes the members report: 3 replicas fit on either member alone, so a
// placement without one member's capacity would move them all to the other), spread over two clusters, a failover template
// whose third member is down and already evicted (NoExecute), and a Deployment that takes its ConfigMap
// with it (propagateDeps). The controller is a separate process, stopped and started RESTARTS times
// (default 3); no object on the members changes uid or resourceVersion. Then every member's apiserver is
// stopped at once, for longer than the eviction timeout: no member is tainted NoExecute, and the members
// coming back keep their objects as they were. Real apiservers throughout.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { getObject, prepareHub, spawnFlotilla, stopFlotilla, type FlotillaProcess, type Obj } from './controller-io.js';

const WAIT_MS = 60_000;
const NS = 'shop';
const CLUSTERS = ['member1', 'member2', 'member3'];
const RESTARTS = Number(process.env.FLOTILLA_RESTARTS ?? '3');
/** After `caches synced`: long enough for every probe and the first read of the members' facts (2 s interval). */
const SETTLE_MS = 8_000;

const deployment = (name: string, replicas: number, extra: Obj = {}): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: NS },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        containers: [{ name, image: 'nginx:1.25', resources: { requests: { cpu: '1', memory: '128Mi' } } }],
        ...extra,
      },
    },
  },
});
const policy = (name: string, spec: Obj): Obj => ({
  apiVersion: 'policy.flotilla.io/v1beta1',
  kind: 'PropagationPolicy',
  metadata: { name, namespace: NS },
  spec: { resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name }], ...spec },
});
const node = (name: string, cpu: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  status: {
    capacity: { cpu, memory: '16Gi', pods: '110' },
    allocatable: { cpu, memory: '16Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready' }],
  },
});

void describe('flotilla controller: restarts and a partition from every member change nothing on the members', () => {
  const env = useEnvironment({ members: 3 });
  let hub: KubeClient;
  let members: KubeClient[];
  let controller: FlotillaProcess;
  let starts = 0;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean, ms = WAIT_MS) => eventually(probe, done, ms, 200);
  const safely = async <T>(f: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await f();
    } catch {
      return undefined;
    }
  };
  const replicas = (name: string, on: KubeClient[] = members) =>
    Promise.all(
      on.map((m) =>
        safely(async () => {
          const d = await getObject(m, `/apis/apps/v1/namespaces/${NS}/deployments/${name}`);
          return (d?.spec as Obj | undefined)?.replicas as number | undefined;
        }),
      ),
    );
  const taints = async (cluster: string) =>
    (
      ((await getObject(hub, `/apis/cluster.flotilla.io/v1alpha1/clusters/${cluster}`))?.spec as Obj | undefined)
        ?.taints as Obj[] | undefined
    )?.map((t) => `${String(t.key)}:${String(t.effect)}`) ?? [];
  /** Every Deployment and ConfigMap in NS on a member (but the namespace's root CA): name → uid/resourceVersion. */
  const objectsOn = async (m: KubeClient): Promise<Map<string, string>> => {
    const out = new Map<string, string>();
    for (const path of [`/apis/apps/v1/namespaces/${NS}/deployments`, `/api/v1/namespaces/${NS}/configmaps`]) {
      const r = await m.requestOk<{ items: Obj[] }>({ method: 'GET', path });
      for (const o of r.body?.items ?? []) {
        const meta = o.metadata as Obj;
        if (meta.name === 'kube-root-ca.crt') continue;
        out.set(`${path.split('/').pop()}/${String(meta.name)}`, `${String(meta.uid)}/${String(meta.resourceVersion)}`);
      }
    }
    return out;
  };
  const snapshot = async (on: number[]) => {
    const out = new Map<string, string>();
    for (const i of on) for (const [key, v] of await objectsOn(members[i]!)) out.set(`member${i + 1} ${key}`, v);
    return out;
  };
  const changed = (a: Map<string, string>, b: Map<string, string>) =>
    [...new Set([...a.keys(), ...b.keys()])].filter((key) => a.get(key) !== b.get(key)).sort();
  const startController = () => {
    const e = env();
    controller = spawnFlotilla(
      [
        'controller',
        '--kubeconfig',
        e.hub.kubeconfigPath,
        '--members-kubeconfig',
        e.membersKubeconfigPath,
        '--namespace',
        'flotilla-system',
        '--probe-interval',
        '500ms',
        '--probe-timeout',
        '1s',
        '--cluster-status-interval',
        '2s',
        '--not-ready-taint-after',
        '1s',
        '--failover',
        'true',
        '--failover-eviction-timeout',
        '10s',
        '--eviction-purge-mode',
        'Directly',
      ],
      join(e.dir, 'logs', `flotilla-controller-${starts++}.log`),
    );
    return controller;
  };
  const stopController = () => stopFlotilla(controller);
  /** Waits until the member objects stay the same for `quietMs`; returns them. */
  const quiet = async (on: number[], quietMs = 4_000) => {
    let last = await snapshot(on);
    let since = Date.now();
    const deadline = Date.now() + WAIT_MS;
    while (Date.now() - since < quietMs && Date.now() < deadline) {
      await sleep(500);
      const now = await snapshot(on);
      if (changed(last, now).length > 0) since = Date.now();
      last = now;
    }
    return last;
  };

  before(async () => {
    const e = env();
    ({ hub, members } = await prepareHub(e, NS));
    for (const [i, cpu] of [
      [0, '8'],
      [1, '4'],
      [2, '4'],
    ] as const) {
      const n = node(`node-${i + 1}`, cpu);
      const created = await members[i]!.request({ method: 'POST', path: '/api/v1/nodes', body: n });
      assert.ok(created.status < 300, JSON.stringify(created.body));
      const status = await members[i]!.request({
        method: 'PATCH',
        path: `/api/v1/nodes/${String((n.metadata as Obj).name)}/status`,
        contentType: 'application/merge-patch+json',
        body: { status: n.status },
      });
      assert.ok(status.status < 300, JSON.stringify(status.body));
    }
    const applied = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        ...CLUSTERS.map((name) => ({
          apiVersion: 'cluster.flotilla.io/v1alpha1',
          kind: 'Cluster',
          metadata: { name },
        })),
        deployment('capacity', 3),
        policy('capacity', {
          placement: {
            clusterAffinity: { clusterNames: ['member1', 'member2'] },
            replicaScheduling: {
              replicaSchedulingType: 'Divided',
              replicaDivisionPreference: 'Weighted',
              weightPreference: { dynamicWeight: 'AvailableReplicas' },
            },
          },
        }),
        deployment('spread', 1),
        policy('spread', {
          placement: {
            clusterAffinity: { clusterNames: ['member1', 'member2'] },
            spreadConstraints: [{ spreadByField: 'cluster', maxGroups: 2, minGroups: 2 }],
            replicaScheduling: { replicaSchedulingType: 'Duplicated' },
          },
        }),
        deployment('failover', 6),
        policy('failover', {
          placement: {
            clusterAffinity: { clusterNames: CLUSTERS },
            replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' },
          },
          failover: { cluster: { purgeMode: 'Directly' } },
        }),
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app-config', namespace: NS }, data: { a: '1' } },
        deployment('app', 1, { volumes: [{ name: 'config', configMap: { name: 'app-config' } }] }),
        policy('app', {
          propagateDeps: true,
          placement: {
            clusterAffinity: { clusterNames: ['member1', 'member2'] },
            replicaScheduling: { replicaSchedulingType: 'Duplicated' },
          },
        }),
      ],
    });
    assert.equal(applied.status, 0, applied.stderr);
    startController();
    assert.deepEqual(
      await until(
        () => replicas('capacity'),
        (r) => r.join() === '2,1,',
      ),
      [2, 1, undefined],
      controller.log(),
    );
    assert.deepEqual(
      await until(
        () => replicas('failover'),
        (r) => r.join() === '2,2,2',
      ),
      [2, 2, 2],
    );
    // member3 goes down: it is tainted NoExecute and the failover template's replicas move to the others.
    await env().stopCluster('member3');
    assert.deepEqual(
      await until(
        () => taints('member3'),
        (t) => t.includes('cluster.karmada.io/unreachable:NoExecute'),
      ),
      ['cluster.karmada.io/unreachable:NoSchedule', 'cluster.karmada.io/unreachable:NoExecute'],
    );
    const up = members.slice(0, 2);
    assert.deepEqual(
      await until(
        () => replicas('failover', up),
        (r) => r.join() === '3,3',
      ),
      [3, 3],
    );
    for (const name of ['spread', 'app'])
      assert.deepEqual(
        await until(
          () => replicas(name, up),
          (r) => r.join() === '1,1',
        ),
        [1, 1],
      );
    const configs = await until(
      () => snapshot([0, 1]),
      (s) => s.has('member1 configmaps/app-config') && s.has('member2 configmaps/app-config'),
    );
    assert.ok(configs.has('member2 configmaps/app-config'), [...configs.keys()].join());
  });

  after(async () => {
    await stopController();
  });

  const DEPENDENCY = 'configmaps/app-config';
  let dependencyChanges: string[] = [];

  void it(`restarting the controller ${RESTARTS} times changes no workload on the members (uid, resourceVersion)`, async () => {
    const before = await quiet([0, 1]);
    assert.equal(before.size, 10, [...before.keys()].join());
    const changes: string[] = [];
    let last = before;
    for (let i = 0; i < RESTARTS; i++) {
      await stopController();
      const p = startController();
      await until(
        () => Promise.resolve(p.log().includes('caches synced')),
        (x) => x,
      );
      await sleep(SETTLE_MS);
      const now = await snapshot([0, 1]);
      for (const key of changed(last, now)) changes.push(`restart ${i + 1}: ${key}`);
      last = now;
      // Still evicted from member3: its NoExecute taint stays on the hub while it is down.
      if (!(await taints('member3')).includes('cluster.karmada.io/unreachable:NoExecute'))
        changes.push(`restart ${i + 1}: member3 lost its NoExecute taint`);
    }
    process.stderr.write(
      `member objects changed over ${RESTARTS} restarts: ${changes.filter((c) => !c.endsWith('taint')).length}\n`,
    );
    dependencyChanges = changes.filter((c) => c.endsWith(DEPENDENCY));
    assert.deepEqual(
      changes.filter((c) => !c.endsWith(DEPENDENCY)),
      [],
      controller.log().slice(-4000),
    );
  });

  // The dependency ConfigMap reaches the members only through propagateDeps: reconciled before the
  // workload that requires it was listed, it counted as required by none and was removed and re-created.
  void it('restarting the controller changes no dependency copy either (propagateDeps)', () => {
    assert.deepEqual(dependencyChanges, []);
  });

  void it('every member unreachable at once (longer than the eviction timeout): no NoExecute taint, nothing moved', async () => {
    const before = await quiet([0, 1]);
    const bindingClusters = async (name: string) =>
      JSON.stringify(
        (
          (await getObject(hub, `/apis/work.flotilla.io/v1alpha1/namespaces/${NS}/resourcebindings/${name}-deployment`))
            ?.spec as Obj | undefined
        )?.clusters,
      );
    const placed = await Promise.all(['capacity', 'spread', 'failover', 'app'].map(bindingClusters));
    // Every taint the hub shows on member1 and member2 from now until they are back and settled.
    const seen = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const c of ['member1', 'member2']) for (const t of await taints(c)) seen.add(`${c} ${t}`);
        await sleep(250);
      }
    })();
    await Promise.all([env().stopCluster('member1'), env().stopCluster('member2')]);
    // Twice the eviction timeout (10 s), well past the NoSchedule delay (1 s).
    await sleep(20_000);
    assert.deepEqual(await Promise.all(['capacity', 'spread', 'failover', 'app'].map(bindingClusters)), placed);
    // They come back, one a little after the other: the first back ends the disruption, and the other's
    // not-ready time counts from then (not from when it went down), so it is not evicted on the spot.
    await Promise.all([env().startCluster('member1'), sleep(1_000).then(() => env().startCluster('member2'))]);
    await until(
      async () => [...(await taints('member1')), ...(await taints('member2'))],
      (t) => t.length === 0,
    );
    await sleep(SETTLE_MS);
    sampling = false;
    await sampler;
    assert.deepEqual(
      [...seen].filter((t) => t.endsWith(':NoExecute')),
      [],
      controller.log().slice(-4000),
    );
    assert.deepEqual(changed(before, await snapshot([0, 1])), [], controller.log().slice(-4000));
  });
});
