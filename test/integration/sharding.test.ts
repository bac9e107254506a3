// Sharded push with processes: `flotilla controller --sharding true` replicas, each a separate process,
// divide four members among themselves on real apiservers. Each member is worked on by exactly one
// replica; each replica writes its own members' binding entries; a replica killed with SIGKILL loses its
// members to the other only once its Lease has expired (the fence: nothing applied to a member by two
// replicas at once); a replica joining takes its members after the handoff; a deleted template is removed
// from every member before its finalizer goes.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import {
  applyObject,
  getObject,
  prepareHub,
  spawnFlotilla as spawnProcess,
  stopFlotilla,
  type FlotillaProcess,
  type Obj,
} from './controller-io.js';

const WAIT_MS = 60_000;
const NS = 'shop';
const MEMBERS = ['member1', 'member2', 'member3', 'member4'];
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/flotilla-system/leases';

const configMap = (i: number, value = 'v1'): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `cm-${i}`, namespace: NS },
  data: { value },
});

type Proc = FlotillaProcess;

/** The JSON log lines of a replica with this message. */
function lines(log: string, msg: string): Obj[] {
  return log
    .split('\n')
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l) as Obj);
}

void describe('flotilla controller --sharding: replicas divide the members', () => {
  const env = useEnvironment({ members: 4 });
  let hub: KubeClient;
  let members: KubeClient[];
  const procs: Proc[] = [];
  let a: Proc;
  let b: Proc;
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean, ms = WAIT_MS) => eventually(probe, done, ms, 200);

  const start = (name: string): Proc => {
    const e = env();
    const p = spawnProcess(
      [
        'controller',
        '--kubeconfig',
        e.hub.kubeconfigPath,
        '--members-kubeconfig',
        e.membersKubeconfigPath,
        '--namespace',
        'flotilla-system',
        '--sharding',
        'true',
        '--probe-interval',
        '300ms',
      ],
      join(e.dir, 'logs', `flotilla-${name}.log`),
      { POD_NAME: name },
    );
    procs.push(p);
    return p;
  };
  /** What a replica last said it works on. */
  const division = (p: Proc) => lines(p.log(), 'members divided among the replicas').at(-1);
  const valueOn = async (m: KubeClient, name: string) => {
    const o = await getObject(m, `/api/v1/namespaces/${NS}/configmaps/${name}`);
    return (o?.data as Obj | undefined)?.value;
  };
  const everywhere = (name: string, value: string) =>
    until(
      () => Promise.all(members.map((m) => valueOn(m, name))),
      (vs) => vs.every((v) => v === value),
    );

  before(async () => {
    const e = env();
    ({ hub, members } = await prepareHub(e, NS));
    const applied = await kubectl(e.hub.kubeconfigPath, ['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flotilla-system' } },
        ...Array.from({ length: 20 }, (_, i) => configMap(i)),
        {
          apiVersion: 'policy.flotilla.io/v1beta1',
          kind: 'PropagationPolicy',
          metadata: { name: 'all', namespace: NS },
          spec: {
            resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
            placement: { clusterAffinity: { clusterNames: MEMBERS } },
          },
        },
      ],
    });
    assert.equal(applied.status, 0, applied.stderr);
    a = start('replica-a');
    b = start('replica-b');
  });

  after(async () => {
    await Promise.all(procs.map(stopFlotilla));
  });

  void it('delivers everywhere, each member worked on by exactly one replica, one of them the coordinator', async () => {
    await everywhere('cm-19', 'v1');
    const [da, db] = await until(
      () => Promise.resolve([division(a), division(b)]),
      ([x, y]) =>
        x !== undefined &&
        y !== undefined &&
        (x.owned as string[]).length + (y.owned as string[]).length === MEMBERS.length,
    );
    const owned = [...(da!.owned as string[]), ...(db!.owned as string[])].sort();
    assert.deepEqual(owned, MEMBERS, `${JSON.stringify(da)} ${JSON.stringify(db)}`);
    assert.equal([da!.coordinator, db!.coordinator].filter(Boolean).length, 1);
    // Each entry of the binding's status is written by the replica working on that member.
    // The coordinator's summary counts the other replica's entries once they are written.
    const appliedOf = (x: Obj | undefined) =>
      (((x?.status as Obj | undefined)?.conditions as Obj[] | undefined) ?? []).find((c) => c.type === 'Applied');
    const binding = await until(
      () => getObject(hub, `/apis/work.flotilla.io/v1alpha1/namespaces/${NS}/resourcebindings/cm-0-configmap`),
      (x) =>
        ((x?.status as Obj | undefined)?.clusters as Obj[] | undefined)?.filter((c) => c.state === 'Applied').length ===
          MEMBERS.length && appliedOf(x)?.status === 'True',
    );
    const managers = ((binding?.metadata as Obj).managedFields as Obj[]).map((f) => String(f.manager));
    for (const p of [da, db])
      if ((p!.owned as string[]).length > 0)
        assert.ok(managers.includes(`flotilla-controller.shard.${String(p!.replica)}`), managers.join(', '));
    assert.equal(appliedOf(binding)?.status, 'True', JSON.stringify(binding?.status));
  });

  void it("takes a killed replica's members over only after its Lease expired, and keeps delivering", async () => {
    const victim = (division(a)!.owned as string[]).length > 0 ? a : b;
    const survivor = victim === a ? b : a;
    const victimName = String(division(victim)!.replica);
    const victimMembers = division(victim)!.owned as string[];
    victim.child.kill('SIGKILL');
    await victim.exited;
    const lease = await getObject(hub, `${LEASES}/${victimName}`);
    const spec = lease?.spec as Obj;
    const expires = Date.parse(String(spec.renewTime)) + Number(spec.leaseDurationSeconds) * 1000;
    const killedAt = Date.now();
    await applyObject(hub, `/api/v1/namespaces/${NS}/configmaps/cm-3`, configMap(3, 'v2'));
    await everywhere('cm-3', 'v2');
    const took = lines(survivor.log(), 'members divided among the replicas').find(
      (l) => Date.parse(String(l.time)) >= killedAt && (l.owned as string[]).length === MEMBERS.length,
    );
    assert.ok(took, survivor.log().slice(-3000));
    // The fence: nothing of the victim's members was applied by the survivor before the Lease expired.
    assert.ok(
      Date.parse(String(took.time)) >= expires,
      `took over at ${String(took.time)}, Lease expired at ${new Date(expires).toISOString()}`,
    );
    const early = lines(survivor.log(), 'applied').filter(
      (l) =>
        victimMembers.includes(String(l.cluster)) &&
        Date.parse(String(l.time)) < expires &&
        Date.parse(String(l.time)) >= killedAt,
    );
    assert.deepEqual(early, []);
    if (victim === a) a = start('replica-c');
    else b = start('replica-c');
  });

  void it('gives a joining replica its members after the handoff, and deletes a template from every member', async () => {
    const joined = procs.at(-1)!;
    const d = await until(
      () => Promise.resolve(division(joined)),
      (x) => x !== undefined && (x.owned as string[]).length > 0,
    );
    assert.ok(d);
    await applyObject(hub, `/api/v1/namespaces/${NS}/configmaps/cm-4`, configMap(4, 'v3'));
    await everywhere('cm-4', 'v3');
    const del = await kubectl(env().hub.kubeconfigPath, ['delete', 'configmap', '-n', NS, 'cm-5', '--wait=false']);
    assert.equal(del.status, 0, del.stderr);
    await until(
      () => Promise.all(members.map((m) => getObject(m, `/api/v1/namespaces/${NS}/configmaps/cm-5`))),
      (xs) => xs.every((x) => x === undefined),
    );
    await until(
      () => getObject(hub, `/api/v1/namespaces/${NS}/configmaps/cm-5`),
      (x) => x === undefined,
    );
  });
});
