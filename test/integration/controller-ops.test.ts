// `flotilla controller` as an operator runs it: separate processes (the built CLI), leader election on a
// Lease, a member apiserver that goes away and comes back, a controller killed with SIGKILL mid-run.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { customResourceDefinitions } from '../../api/crds/index.js';
import { KubeClient } from '../../pkg/kube/client.js';
import { waitForCRDsEstablished, type ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { stopFlotilla } from './controller-io.js';

type Obj = Record<string, unknown>;
const MAIN = fileURLToPath(new URL('../../cmd/flotilla/main.js', import.meta.url));
const WAIT_MS = 40_000;
const POLICY = 'policy.flotilla.io/v1beta1';
const LEASE = '/apis/coordination.k8s.io/v1/namespaces/flotilla-system/leases/flotilla-controller';

const configMap = (name: string, value: string): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ops' },
  data: { value },
});

interface Proc {
  child: ChildProcess;
  log: () => string;
  exited: Promise<number | null>;
}

void describe('flotilla controller processes: leader election, outages, restarts', () => {
  const env = useEnvironment({ members: 2 });
  let hub: KubeClient;
  let m1: KubeClient;
  let m2: KubeClient;
  const procs: Proc[] = [];

  const start = (name: string): Proc => {
    const e = env();
    const child = spawn(
      process.execPath,
      [
        MAIN,
        'controller',
        '--kubeconfig',
        e.hub.kubeconfigPath,
        '--members-kubeconfig',
        e.membersKubeconfigPath,
        '--metrics-port',
        '0',
        '--namespace',
        'flotilla-system',
        '--leader-elect',
        'true',
        '--log-level',
        'debug',
      ],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', POD_NAME: name },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let log = '';
    child.stderr?.on('data', (c: Buffer) => (log += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const p = { child, log: () => log, exited };
    procs.push(p);
    return p;
  };
  const get = async (c: KubeClient, path: string): Promise<Obj | undefined> => {
    const r = await c.request<Obj>({ method: 'GET', path }).catch(() => ({ status: 0, body: undefined }));
    return r.status === 200 ? r.body : undefined;
  };
  const apply = async (path: string, body: Obj) => {
    const r = await hub.request({
      method: 'PATCH',
      path,
      query: { fieldManager: 'platform-team', force: 'true' },
      contentType: 'application/apply-patch+yaml',
      body,
    });
    assert.ok(r.status < 300, `apply ${path}: HTTP ${r.status}`);
  };
  const CM = (name: string) => `/api/v1/namespaces/ops/configmaps/${name}`;
  const value = async (c: KubeClient, name: string) => ((await get(c, CM(name)))?.data as Obj | undefined)?.value;
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean, ms = WAIT_MS) => eventually(probe, done, ms, 200);
  const holder = async () => ((await get(hub, LEASE))?.spec as Obj | undefined)?.holderIdentity;

  before(async () => {
    const e = env();
    hub = new KubeClient(e.hub.kubeConfig(), { concurrency: 4 });
    m1 = new KubeClient((e.members[0] as ClusterHandle).kubeConfig(), { concurrency: 4 });
    m2 = new KubeClient((e.members[1] as ClusterHandle).kubeConfig(), { concurrency: 4 });
    const crds = customResourceDefinitions();
    const installed = await kubectl(e.hub.kubeconfigPath, ['apply', '--server-side', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        ...crds,
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flotilla-system' } },
      ],
    });
    assert.equal(installed.status, 0, installed.stderr);
    await waitForCRDsEstablished(
      e.hub,
      crds.map((c) => c.metadata.name),
    );
    await apply(`/apis/policy.flotilla.io/v1beta1/namespaces/ops/propagationpolicies/all`, {
      apiVersion: POLICY,
      kind: 'PropagationPolicy',
      metadata: { name: 'all', namespace: 'ops' },
      spec: {
        resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
        placement: { clusterAffinity: { clusterNames: ['member1', 'member2'] } },
      },
    });
    for (let i = 0; i < 20; i++) await apply(CM(`c${i}`), configMap(`c${i}`, 'v1'));
  });

  after(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
  });

  void it('runs one leader among two replicas; the other takes over within the lease time when the leader stops', async () => {
    const a = start('replica-a');
    const first = await until(holder, (h) => typeof h === 'string' && h.startsWith('replica-a'));
    assert.ok(
      typeof first === 'string' && first.startsWith('replica-a'),
      `replica-a holds the Lease (holder: ${String(first)})`,
    );
    const b = start('replica-b');
    assert.equal(
      await until(
        () => value(m2, 'c19'),
        (v) => v === 'v1',
      ),
      'v1',
      'the leader propagates',
    );
    // b stays a standby while a renews.
    await new Promise((r) => setTimeout(r, 4_000));
    assert.ok(String(await holder()).startsWith('replica-a'));
    assert.doesNotMatch(b.log(), /leading: controller starting/);
    // SIGTERM: a finishes, releases the Lease, and exits 0; b takes over at its next try, not after the lease expires.
    const stoppedAt = Date.now();
    assert.equal(await stopFlotilla(a), 0, a.log());
    const next = await until(holder, (h) => typeof h === 'string' && h.startsWith('replica-b'));
    assert.ok(
      typeof next === 'string' && next.startsWith('replica-b'),
      `replica-b took over (holder: ${String(next)})`,
    );
    assert.ok(Date.now() - stoppedAt < 15_000, `took over in ${Date.now() - stoppedAt} ms`);
    await apply(CM('c0'), configMap('c0', 'after-takeover'));
    assert.equal(
      await until(
        () => value(m1, 'c0'),
        (v) => v === 'after-takeover',
      ),
      'after-takeover',
      'the new leader works',
    );
  });

  void it('converges on the member that answers while the other is down, and on both once it is back', async () => {
    const e = env();
    await e.stopCluster('member2');
    await apply(CM('c1'), configMap('c1', 'during-outage'));
    assert.equal(
      await until(
        () => value(m1, 'c1'),
        (v) => v === 'during-outage',
      ),
      'during-outage',
    );
    const binding = await until(
      () => get(hub, '/apis/work.flotilla.io/v1alpha1/namespaces/ops/resourcebindings/c1-configmap'),
      (b) =>
        ((b?.status as Obj | undefined)?.clusters as Obj[] | undefined)?.some(
          (c) => c.name === 'member2' && c.state === 'Unreachable',
        ) === true,
    );
    assert.ok(
      ((binding?.status as Obj).clusters as Obj[]).some((c) => c.name === 'member2' && c.state === 'Unreachable'),
      JSON.stringify(binding?.status),
    );
    await e.startCluster('member2');
    assert.equal(
      await until(
        () => value(m2, 'c1'),
        (v) => v === 'during-outage',
      ),
      'during-outage',
      'member2 catches up without a restart',
    );
  });

  void it('converges after a SIGKILL mid-run, with no duplicates and no orphans', async () => {
    const leader = procs.find((p) => p.child.exitCode === null && p.child.signalCode === null);
    assert.ok(leader, 'a controller is running');
    for (let i = 0; i < 20; i++) await apply(CM(`c${i}`), configMap(`c${i}`, 'v2'));
    leader.child.kill('SIGKILL');
    await leader.exited;
    await hub.request({ method: 'DELETE', path: CM('c19') });
    start('replica-c');
    for (const c of [m1, m2]) {
      const values = await until(
        async () => Promise.all(Array.from({ length: 19 }, (_, i) => value(c, `c${i}`))),
        (vs) => vs.every((v) => v === 'v2'),
        60_000,
      );
      assert.ok(
        values.every((v) => v === 'v2'),
        JSON.stringify(values),
      );
      assert.equal(
        await until(
          () => get(c, CM('c19')),
          (o) => o === undefined,
          60_000,
        ),
        undefined,
        'the deleted template is gone from the member',
      );
      const list = await c.request<{ items: Obj[] }>({
        method: 'GET',
        path: '/api/v1/namespaces/ops/configmaps',
        query: { labelSelector: 'flotilla.io/template-uid' },
      });
      assert.equal(list.body?.items.length, 19, 'one object per template, no duplicates or orphans');
    }
  });
});
