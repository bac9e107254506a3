// Graceful eviction with nowhere else to go, push and pull: a template whose only cluster gets an
// untolerated NoExecute taint keeps its copy there (Karmada: the graceful eviction task waits for a new
// healthy placement, and with no cluster schedulable only its timeout ends it), and the binding says so:
// the task in spec.gracefulEvictionTasks, the cluster in status.clusters as Evicting with the time its
// copy is kept until, and an Evicting condition saying why. A controller restart keeps the task and its
// timeout (read back from the binding). At the timeout the copy goes; a taint lifted before it gives the
// cluster the template back with the same copy. member1 is a Push member (its
// Cluster names a Secret), member2 a Pull member served by `flotilla agent`; real apiservers, separate
// processes.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { getObject, prepareHub, spawnFlotilla, stopFlotilla, type FlotillaProcess, type Obj } from './controller-io.js';

const WAIT_MS = 45_000;
const TIMEOUT_S = 30;
const NS = 'shop';
const SECRETS_NS = 'flotilla-system';
const BINDINGS = `/apis/work.flotilla.io/v1alpha1/namespaces/${NS}/resourcebindings`;
const TAINT = { key: 'example.com/maintenance', effect: 'NoExecute' };
/** Template name → its only cluster. */
const ONLY = { 'on-push': 'member1', 'on-pull': 'member2' } as const;
type Name = keyof typeof ONLY;
const NAMES = Object.keys(ONLY) as Name[];

void describe('flotilla controller: graceful eviction with no other cluster (push and pull)', () => {
  const env = useEnvironment({ members: 2 });
  let hub: KubeClient;
  let members: KubeClient[];
  const procs: FlotillaProcess[] = [];
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean, ms = WAIT_MS) => eventually(probe, done, ms, 200);
  const logs = () => procs.map((p) => p.log().slice(-3000)).join('\n---\n');
  const member = (name: Name) => members[ONLY[name] === 'member1' ? 0 : 1]!;
  /** The copy's uid on its cluster (undefined: none). */
  const copy = async (name: Name) => {
    try {
      const o = await getObject(member(name), `/api/v1/namespaces/${NS}/configmaps/${name}`);
      return o ? String((o.metadata as Obj).uid) : undefined;
    } catch {
      return undefined;
    }
  };
  const binding = async (name: Name) => (await getObject(hub, `${BINDINGS}/${name}-configmap`)) ?? {};
  const spec = (b: Obj) => (b.spec as Obj | undefined) ?? {};
  const status = (b: Obj) => (b.status as Obj | undefined) ?? {};
  const tasks = (b: Obj) => (spec(b).gracefulEvictionTasks as Obj[] | undefined) ?? [];
  const entry = (b: Obj, cluster: string) =>
    ((status(b).clusters as Obj[] | undefined) ?? []).find((c) => c.name === cluster);
  const condition = (b: Obj, type: string) =>
    ((status(b).conditions as Obj[] | undefined) ?? []).find((c) => c.type === type);
  const taint = async (cluster: string, on: boolean) => {
    const r = await k([
      'patch',
      'clusters.cluster.flotilla.io',
      cluster,
      '--type',
      'merge',
      '-p',
      JSON.stringify({ spec: { taints: on ? [TAINT] : null } }),
    ]);
    assert.equal(r.status, 0, r.stderr);
  };

  before(async () => {
    const e = env();
    ({ hub, members } = await prepareHub(e, NS));
    const m1 = e.members[0]!;
    const applied = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SECRETS_NS } },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flotilla-cluster-lease' } },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'member1-credentials', namespace: SECRETS_NS },
          data: { kubeconfig: Buffer.from(readFileSync(m1.kubeconfigPath, 'utf8')).toString('base64') },
        },
        {
          apiVersion: 'cluster.flotilla.io/v1alpha1',
          kind: 'Cluster',
          metadata: { name: 'member1' },
          spec: { syncMode: 'Push', secretRef: { namespace: SECRETS_NS, name: 'member1-credentials' } },
        },
        {
          apiVersion: 'cluster.flotilla.io/v1alpha1',
          kind: 'Cluster',
          metadata: { name: 'member2' },
          spec: { syncMode: 'Pull' },
        },
        ...NAMES.flatMap((name) => [
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: { name } },
          {
            apiVersion: 'policy.flotilla.io/v1beta1',
            kind: 'PropagationPolicy',
            metadata: { name, namespace: NS },
            spec: {
              resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', name }],
              placement: { clusterAffinity: { clusterNames: [ONLY[name]] } },
              failover: { cluster: { purgeMode: 'Gracefully' } },
            },
          },
        ]),
      ],
    });
    assert.equal(applied.status, 0, applied.stderr);
    const log = (what: string) => join(e.dir, 'logs', `flotilla-${what}.log`);
    procs.push(
      startController(),
      spawnFlotilla(
        [
          'agent',
          '--cluster-name',
          'member2',
          '--hub-kubeconfig',
          e.hub.kubeconfigPath,
          '--kubeconfig',
          e.members[1]!.kubeconfigPath,
          '--namespace',
          SECRETS_NS,
          '--lease-duration',
          '4s',
          '--renew-interval',
          '1s',
        ],
        log('agent'),
      ),
    );
    for (const name of NAMES)
      assert.ok(
        await until(
          () => copy(name),
          (uid) => uid !== undefined,
        ),
        `${name} on ${ONLY[name]}\n${logs()}`,
      );
  });

  after(async () => {
    await Promise.all(procs.map(stopFlotilla));
  });

  /** `flotilla controller` for the hub (members from Cluster secretRefs), with the short graceful eviction timeout. */
  const startController = () =>
    spawnFlotilla(
      [
        'controller',
        '--kubeconfig',
        env().hub.kubeconfigPath,
        '--namespace',
        SECRETS_NS,
        '--probe-interval',
        '300ms',
        '--graceful-eviction-timeout',
        `${TIMEOUT_S}s`,
      ],
      join(env().dir, 'logs', `flotilla-controller-${procs.length}.log`),
    );

  /** Taints both clusters and checks each template's copy is kept, with the binding saying why and until when. */
  const evictAndCheckKept = async (): Promise<Map<Name, { uid: string; until: number }>> => {
    const uids = new Map<Name, string>();
    for (const name of NAMES) uids.set(name, (await copy(name))!);
    for (const c of ['member1', 'member2']) await taint(c, true);
    const out = new Map<Name, { uid: string; until: number }>();
    for (const name of NAMES) {
      const cluster = ONLY[name];
      const b = await until(
        () => binding(name),
        (x) => tasks(x).length === 1 && entry(x, cluster)?.state === 'Evicting' && !!condition(x, 'Evicting'),
      );
      assert.deepEqual(
        tasks(b).map((t) => [t.fromCluster, t.purgeMode, t.reason, t.producer]),
        [[cluster, 'Gracefully', 'TaintUntolerated', 'TaintManager']],
        `${name}: copy ${String(await copy(name))}, binding ${JSON.stringify(b)}\n${logs()}`,
      );
      assert.deepEqual(spec(b).clusters, [], name);
      const e = entry(b, cluster)!;
      const created = Date.parse(String(tasks(b)[0]!.creationTimestamp));
      const keptUntil = Date.parse(String(e.keptUntil));
      assert.equal(keptUntil - created, TIMEOUT_S * 1000, JSON.stringify(e));
      assert.match(String(e.message), /^evicted: untolerated taint example\.com\/maintenance:NoExecute; /);
      const c = condition(b, 'Evicting')!;
      assert.equal(c.status, 'True');
      assert.equal(c.reason, 'NoOtherCluster');
      assert.ok(String(c.message).startsWith(`${cluster}: ${String(e.message)}`), String(c.message));
      // The same sentence in an Event on the template.
      const said = `${cluster}: ${String(e.message)}`;
      const events = await until(
        async () =>
          (
            await hub.request<{ items: Obj[] }>({
              method: 'GET',
              path: `/api/v1/namespaces/${NS}/events`,
              query: { fieldSelector: `involvedObject.name=${name},reason=Evicting` },
            })
          ).body?.items ?? [],
        (l) => l.some((ev) => ev.message === said),
      );
      assert.ok(
        events.some((ev) => ev.message === said && ev.type === 'Normal'),
        JSON.stringify(events.map((ev) => ev.message)),
      );
      out.set(name, { uid: uids.get(name)!, until: keptUntil });
    }
    // The copies stay (checked again a little later: a removal is not instant).
    await new Promise((r) => setTimeout(r, 3_000));
    for (const name of NAMES) assert.equal(await copy(name), out.get(name)!.uid, `${name}\n${logs()}`);
    return out;
  };

  void it('keeps the copy while no other cluster can take it, across a controller restart, and removes it at the graceful eviction timeout', async () => {
    const kept = await evictAndCheckKept();
    // A restart keeps the tasks (they are in the bindings) and their timeouts.
    const before = new Map<Name, unknown>();
    for (const name of NAMES) before.set(name, tasks(await binding(name))[0]?.creationTimestamp);
    await stopFlotilla(procs[0]!);
    procs[0] = startController();
    const restarted = procs[0];
    assert.ok(
      (
        await eventually(
          () => restarted.log(),
          (l) => l.includes('caches synced'),
          WAIT_MS,
          200,
        )
      ).includes('caches synced'),
      restarted.log(),
    );
    await new Promise((r) => setTimeout(r, 3_000));
    for (const name of NAMES) {
      const b = await binding(name);
      assert.deepEqual(
        [tasks(b).map((t) => t.creationTimestamp), entry(b, ONLY[name])?.state, await copy(name)],
        [[before.get(name)], 'Evicting', kept.get(name)!.uid],
        `${name} after a restart\n${logs()}`,
      );
    }
    for (const name of NAMES) {
      const cluster = ONLY[name];
      assert.equal(
        await until(
          () => copy(name),
          (uid) => uid === undefined,
        ),
        undefined,
        `${name}\n${logs()}`,
      );
      // Not before the timeout (the task's creationTimestamp is to the second).
      assert.ok(Date.now() >= kept.get(name)!.until - 1_000, `${name} removed before ${kept.get(name)!.until}`);
      const b = await until(
        () => binding(name),
        (x) => tasks(x).length === 0 && entry(x, cluster) === undefined && !condition(x, 'Evicting'),
      );
      assert.deepEqual([tasks(b), entry(b, cluster), condition(b, 'Evicting')], [[], undefined, undefined], name);
    }
  });

  void it('gives the cluster the template back with the same copy when the taint goes before the timeout', async () => {
    for (const c of ['member1', 'member2']) await taint(c, false);
    for (const name of NAMES)
      assert.ok(
        await until(
          () => copy(name),
          (uid) => uid !== undefined,
        ),
        `${name}\n${logs()}`,
      );
    const kept = await evictAndCheckKept();
    for (const c of ['member1', 'member2']) await taint(c, false);
    for (const name of NAMES) {
      const cluster = ONLY[name];
      const b = await until(
        () => binding(name),
        (x) => tasks(x).length === 0 && entry(x, cluster)?.state === 'Applied',
      );
      assert.deepEqual(spec(b).clusters, [{ name: cluster }], name);
      assert.equal(condition(b, 'Evicting'), undefined, name);
      assert.equal(await copy(name), kept.get(name)!.uid, name);
    }
  });
});
