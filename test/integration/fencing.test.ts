// Fencing with processes on real apiservers: a Lease holder whose hub connection hangs (a loopback proxy
// that stops forwarding, so requests get neither an answer nor an error) must stop writing to the members
// before its Lease can be taken, and must not fight the next holder. For each kind of holder — the pull
// agent, the `--leader-elect` controller, a `--sharding` replica — the test freezes the holder's hub link,
// changes the template on the hub, lets a second holder take over, and watches the member's copy: every
// write of the old (stale) value after the old holder's deadline is a write by the old holder.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { KubeConfig } from '@kubernetes/client-node';
import { parse, stringify } from 'yaml';

import type { KubeClient } from '../../pkg/kube/client.js';
import { Watcher, type WatchEvent } from '../../pkg/kube/watch.js';
import { kubectl } from '../envtest/kubectl.js';
import type { Environment } from '../envtest/index.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { PausableProxy } from '../pausable-proxy.js';
import {
  applyObject,
  getObject,
  prepareHub,
  spawnFlotilla as spawnProcess,
  type FlotillaProcess,
  type Obj,
} from './controller-io.js';

const WAIT_MS = 90_000;
/** How long the member's copy is watched after the new holder's first write. */
const OBSERVE_MS = 15_000;
const NS = 'shop';
const CM = 'settings';
const CM_PATH = `/api/v1/namespaces/${NS}/configmaps/${CM}`;

const configMap = (value: string): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: CM, namespace: NS },
  data: { value },
});
const policy: Obj = {
  apiVersion: 'policy.flotilla.io/v1beta1',
  kind: 'PropagationPolicy',
  metadata: { name: CM, namespace: NS },
  spec: {
    resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', name: CM }],
    placement: { clusterAffinity: { clusterNames: ['member1'] } },
  },
};

/** A copy of the hub's kubeconfig that reaches it through `proxy`. */
function proxiedKubeconfig(e: Environment, proxy: PausableProxy, file: string): string {
  const config = parse(readFileSync(e.hub.kubeconfigPath, 'utf8')) as { clusters: Array<{ cluster: Obj }> };
  for (const c of config.clusters) c.cluster.server = proxy.url;
  const path = join(e.dir, file);
  writeFileSync(path, stringify(config));
  return path;
}

/** The JSON log lines of a process with this message. */
function lines(log: string, msg: string): Obj[] {
  return log
    .split('\n')
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l) as Obj);
}

interface Write {
  at: number;
  value: unknown;
  resourceVersion: unknown;
}

/** Every write to the member's copy, as its watch delivers them, until `signal` aborts. */
function recordWrites(e: Environment, signal: AbortSignal): Write[] {
  const writes: Write[] = [];
  const kc = new KubeConfig();
  kc.loadFromFile(e.members[0]!.kubeconfigPath);
  const watcher = new Watcher(kc);
  const onEvent = (ev: WatchEvent) => {
    if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') return;
    const meta = ev.object.metadata as Obj;
    writes.push({
      at: Date.now(),
      value: (ev.object.data as Obj | undefined)?.value,
      resourceVersion: meta.resourceVersion,
    });
  };
  void (async () => {
    while (!signal.aborted) {
      await watcher
        .watch(
          {
            path: `/api/v1/namespaces/${NS}/configmaps`,
            query: { watch: '1', fieldSelector: `metadata.name=${CM}`, resourceVersion: '0' },
            idleTimeoutMs: 600_000,
            signal,
          },
          onEvent,
        )
        .catch(() => undefined);
    }
    watcher.close();
  })();
  return writes;
}

/** Of the writes seen, those of the stale value after `deadline`, and after the new holder's first write. */
function staleWrites(
  writes: readonly Write[],
  deadline: number,
): { afterDeadline: number; afterTakeover: number; took: number } {
  const took = writes.findIndex((w) => w.value === 'v2');
  return {
    afterDeadline: writes.filter((w) => w.value === 'v1' && w.at > deadline).length,
    afterTakeover: took < 0 ? 0 : writes.slice(took).filter((w) => w.value === 'v1').length,
    took: took < 0 ? NaN : writes[took]!.at,
  };
}

/**
 * The scenario every kind of holder goes through: `old` holds its Lease behind `proxy`; the link freezes;
 * the template changes to v2 on the hub; `takeOver` brings (or already has) a second holder, which applies
 * v2 once the Lease expired. The member's copy is watched from before the freeze to OBSERVE_MS after v2
 * first lands there.
 */
async function partition(o: {
  e: Environment;
  hub: KubeClient;
  member: KubeClient;
  proxy: PausableProxy;
  old: FlotillaProcess;
  /** The old holder's Lease, read on the hub once its link is frozen. */
  leasePath: string;
  takeOver: () => void;
}): Promise<{ writes: Write[]; deadline: number; afterDeadline: number; afterTakeover: number; took: number }> {
  const valueOn = async () => ((await getObject(o.member, CM_PATH))?.data as Obj | undefined)?.value;
  assert.equal(await eventually(valueOn, (v) => v === 'v1', WAIT_MS, 200), 'v1', o.old.log().slice(-3000));
  const stop = new AbortController();
  const writes = recordWrites(o.e, stop.signal);
  try {
    await eventually(
      () => writes.length,
      (n) => n > 0,
      WAIT_MS,
      100,
    );
    o.proxy.freeze();
    // The last renewal that reached the hub: the old holder's deadline is at most a Lease duration after it.
    const spec = (await getObject(o.hub, o.leasePath))?.spec as Obj;
    const deadline = Date.parse(String(spec.renewTime)) + Number(spec.leaseDurationSeconds) * 1000;
    await applyObject(o.hub, CM_PATH, configMap('v2'));
    o.takeOver();
    assert.equal(await eventually(valueOn, (v) => v === 'v2', WAIT_MS, 200), 'v2', 'the new holder never wrote v2');
    const { took } = staleWrites(writes, deadline);
    await new Promise((r) => setTimeout(r, Math.max(0, took + OBSERVE_MS - Date.now())));
    return { writes, deadline, ...staleWrites(writes, deadline) };
  } finally {
    stop.abort();
  }
}

function assertFenced(r: Awaited<ReturnType<typeof partition>>, old: FlotillaProcess, lostMessage: string): void {
  const summary = `writes of the stale copy: ${r.afterDeadline} after the old holder's deadline, ${r.afterTakeover} after the new holder's first write; ${r.writes.length} writes seen`;
  // Reported for the record (the figures the fencing is measured by).
  process.stderr.write(`# ${summary}\n`);
  assert.equal(r.afterTakeover, 0, `${summary}\n${old.log().slice(-2000)}`);
  assert.equal(r.afterDeadline, 0, summary);
  // The old holder said why it stopped, before its Lease could be taken.
  const lost = lines(old.log(), lostMessage)[0];
  assert.ok(lost, old.log().slice(-3000));
  process.stderr.write(
    `# the old holder stopped ${r.deadline - Date.parse(String(lost.time))} ms before its deadline\n`,
  );
  assert.ok(
    Date.parse(String(lost.time)) < r.deadline,
    `stopped at ${String(lost.time)}, deadline ${new Date(r.deadline).toISOString()}`,
  );
}

function processes(env: () => Environment) {
  const procs: FlotillaProcess[] = [];
  const proxies: PausableProxy[] = [];
  after(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    await Promise.all(proxies.map((p) => p.close()));
  });
  return {
    spawn(args: string[], name: string, extraEnv: Record<string, string> = {}): FlotillaProcess {
      const p = spawnProcess(args, join(env().dir, 'logs', `flotilla-${name}.log`), extraEnv);
      procs.push(p);
      return p;
    },
    async proxy(): Promise<PausableProxy> {
      const p = await PausableProxy.start(env().hub.server);
      proxies.push(p);
      return p;
    },
  };
}

async function setUp(e: Environment, extra: Obj[] = []): Promise<{ hub: KubeClient; member: KubeClient }> {
  const { hub, members } = await prepareHub(e, NS);
  const applied = await kubectl(e.hub.kubeconfigPath, ['apply', '-f', '-'], {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flotilla-system' } },
      ...extra,
      configMap('v1'),
      policy,
    ],
  });
  assert.equal(applied.status, 0, applied.stderr);
  return { hub, member: members[0]! };
}

void describe('fencing: a pull agent whose hub link hangs', () => {
  const env = useEnvironment({ members: 1 });
  const run = processes(env);
  const agent = (hubKubeconfig: string, name: string) =>
    run.spawn(
      [
        'agent',
        '--cluster-name',
        'member1',
        '--hub-kubeconfig',
        hubKubeconfig,
        '--kubeconfig',
        env().members[0]!.kubeconfigPath,
        '--namespace',
        'flotilla-system',
        '--lease-duration',
        '4s',
        '--renew-interval',
        '1s',
      ],
      name,
    );

  void it('stops writing to its cluster before its Lease can be taken; the next agent is not undone', async () => {
    const e = env();
    const { hub, member } = await setUp(e, [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flotilla-cluster-lease' } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flotilla-es-member1' } },
      {
        apiVersion: 'cluster.flotilla.io/v1alpha1',
        kind: 'Cluster',
        metadata: { name: 'member1' },
        spec: { syncMode: 'Pull' },
      },
    ]);
    run.spawn(['controller', '--kubeconfig', e.hub.kubeconfigPath, '--namespace', 'flotilla-system'], 'controller');
    const proxy = await run.proxy();
    const old = agent(proxiedKubeconfig(e, proxy, 'agent-a.kubeconfig'), 'agent-a');
    const r = await partition({
      e,
      hub,
      member,
      proxy,
      old,
      leasePath: '/apis/coordination.k8s.io/v1/namespaces/flotilla-cluster-lease/leases/member1',
      takeOver: () => agent(e.hub.kubeconfigPath, 'agent-b'),
    });
    assertFenced(r, old, 'lost the Lease; stopping');
  });
});

void describe('fencing: a --leader-elect controller whose hub link hangs', () => {
  const env = useEnvironment({ members: 1 });
  const run = processes(env);
  const controller = (hubKubeconfig: string, name: string) =>
    run.spawn(
      [
        'controller',
        '--kubeconfig',
        hubKubeconfig,
        '--members-kubeconfig',
        env().membersKubeconfigPath,
        '--namespace',
        'flotilla-system',
        '--leader-elect',
        'true',
      ],
      name,
      { POD_NAME: name },
    );

  void it('stops writing to the members before its Lease can be taken; the next leader is not undone', async () => {
    const e = env();
    const { hub, member } = await setUp(e);
    const proxy = await run.proxy();
    const old = controller(proxiedKubeconfig(e, proxy, 'leader-a.kubeconfig'), 'leader-a');
    const r = await partition({
      e,
      hub,
      member,
      proxy,
      old,
      leasePath: '/apis/coordination.k8s.io/v1/namespaces/flotilla-system/leases/flotilla-controller',
      takeOver: () => controller(e.hub.kubeconfigPath, 'leader-b'),
    });
    assertFenced(r, old, 'lost the Lease; stopping');
  });
});

void describe('fencing: a --sharding replica whose hub link hangs', () => {
  const env = useEnvironment({ members: 1 });
  const run = processes(env);
  const replica = (hubKubeconfig: string, name: string) =>
    run.spawn(
      [
        'controller',
        '--kubeconfig',
        hubKubeconfig,
        '--members-kubeconfig',
        env().membersKubeconfigPath,
        '--namespace',
        'flotilla-system',
        '--sharding',
        'true',
      ],
      name,
      { POD_NAME: name },
    );
  const division = (p: FlotillaProcess) => lines(p.log(), 'members divided among the replicas').at(-1);

  void it('stops writing to its members before its Lease can be taken; the replica that takes them is not undone', async () => {
    const e = env();
    const { hub, member } = await setUp(e);
    const proxies = [await run.proxy(), await run.proxy()];
    const replicas = proxies.map((p, i) => replica(proxiedKubeconfig(e, p, `replica-${i}.kubeconfig`), `replica-${i}`));
    // Both replicas count each other; the one that works on member1 is the one partitioned.
    const owners = await eventually(
      () => replicas.map((p) => division(p)),
      (ds) =>
        ds.every((d) => d !== undefined) && ds.filter((d) => (d?.owned as string[]).includes('member1')).length === 1,
      WAIT_MS,
      200,
    );
    const i = owners.findIndex((d) => (d?.owned as string[] | undefined)?.includes('member1'));
    assert.ok(i >= 0, JSON.stringify(owners));
    const old = replicas[i]!;
    const r = await partition({
      e,
      hub,
      member,
      proxy: proxies[i]!,
      old,
      leasePath: `/apis/coordination.k8s.io/v1/namespaces/flotilla-system/leases/${String(owners[i]!.replica)}`,
      takeOver: () => undefined,
    });
    assertFenced(r, old, 'cannot renew the replica Lease; stopping before it expires');
  });
});
