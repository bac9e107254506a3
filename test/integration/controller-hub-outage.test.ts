// No eviction caused by the control plane's own outage, and none of a pull cluster whose agent has not
// joined yet. A hub, member1 pushed by the controller, member2 in Pull mode (spec.syncMode: Pull) whose
// `flotilla agent` is a separate process, restarted whenever it exits (as its pod would be). The controller
// runs with --failover and a short eviction timeout (3 s; NoSchedule after 1 s).
//   - member2 registered before its agent ever ran: NoSchedule at most, never NoExecute; its Ready
//     condition says it waits for its agent (AgentNotJoined); its Work stays. The agent starts: Ready.
//   - the hub apiserver stopped for OUTAGE_MS (default 20 s, FLOTILLA_HUB_OUTAGE_MS; far past the
//     eviction timeout and the agent's 4 s Lease, so the agent exits and restarts meanwhile), then started
//     again: member2 is never tainted NoExecute and keeps every object it had (same uids).
// Real apiservers; the outage is the hub's apiserver process stopped and started on the same port.

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
const OUTAGE_MS = Number(process.env.FLOTILLA_HUB_OUTAGE_MS ?? '20000');
const CLUSTERS = '/apis/cluster.flotilla.io/v1alpha1/clusters';
const SOLO = Array.from({ length: 10 }, (_, i) => `solo-${i}`);

void describe('flotilla controller --failover: no eviction from a hub outage, none before a pull agent joins', () => {
  const env = useEnvironment({ members: 2 });
  let hub: KubeClient;
  let members: KubeClient[];
  let controller: FlotillaProcess;
  let agent: FlotillaProcess | undefined;
  let agentStarts = 0;
  let keepAgent = false;
  let agentLoop: Promise<void> | undefined;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean, ms = WAIT_MS) => eventually(probe, done, ms, 200);
  const safely = async <T>(f: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await f();
    } catch {
      return undefined;
    }
  };
  const cluster = async (name: string) => safely(() => getObject(hub, `${CLUSTERS}/${name}`));
  const taints = async (name: string) =>
    (((await cluster(name))?.spec as Obj | undefined)?.taints as Obj[] | undefined)?.map(
      (t) => `${String(t.key)}:${String(t.effect)}`,
    ) ?? [];
  const ready = async (name: string) =>
    (((await cluster(name))?.status as Obj | undefined)?.conditions as Obj[] | undefined)?.find(
      (c) => c.type === 'Ready',
    );
  const binding = (name: string) =>
    getObject(hub, `/apis/work.flotilla.io/v1alpha1/namespaces/${NS}/resourcebindings/${name}`);
  /** The member2 objects the hub placed there, name → uid. */
  const onMember2 = async (): Promise<Map<string, string>> => {
    const out = new Map<string, string>();
    for (const path of [`/apis/apps/v1/namespaces/${NS}/deployments`, `/api/v1/namespaces/${NS}/configmaps`]) {
      const r = await members[1]!.requestOk<{ items: Obj[] }>({
        method: 'GET',
        path,
        query: { labelSelector: 'flotilla.io/template-uid' },
      });
      for (const o of r.body?.items ?? []) out.set(String((o.metadata as Obj).name), String((o.metadata as Obj).uid));
    }
    return out;
  };
  /** The agent for member2, started again 1 s after each exit (a pod's restart) until told to stop. */
  const superviseAgent = () => {
    const e = env();
    keepAgent = true;
    agentLoop = (async () => {
      while (keepAgent) {
        agent = spawnFlotilla(
          [
            'agent',
            '--cluster-name',
            'member2',
            '--hub-kubeconfig',
            e.hub.kubeconfigPath,
            '--kubeconfig',
            e.members[1]!.kubeconfigPath,
            '--namespace',
            'flotilla-system',
            '--lease-duration',
            '4s',
            '--renew-interval',
            '1s',
            '--cluster-status-interval',
            '2s',
          ],
          join(e.dir, 'logs', `flotilla-agent-${agentStarts++}.log`),
        );
        await agent.exited;
        if (keepAgent) await sleep(1_000);
      }
    })();
  };

  before(async () => {
    const e = env();
    ({ hub, members } = await prepareHub(e, NS));
    const placed = (name: string, kind: string, clusterNames: string[], extra: Obj = {}) => ({
      apiVersion: 'policy.flotilla.io/v1beta1',
      kind: 'PropagationPolicy',
      metadata: { name, namespace: NS },
      spec: {
        resourceSelectors: [{ apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1', kind, ...extra }],
        placement: {
          clusterAffinity: { clusterNames },
          // Placed on member2 however late the first plan comes: the NoSchedule taint of a pull cluster
          // whose agent has not joined (after 1 s here) keeps new placements off, and what is under test
          // is that a placed copy stays.
          clusterTolerations: [{ key: 'cluster.karmada.io/unreachable', operator: 'Exists', effect: 'NoSchedule' }],
          replicaScheduling: { replicaSchedulingType: 'Duplicated' },
        },
        failover: { cluster: { purgeMode: 'Directly' } },
      },
    });
    const applied = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flotilla-system' } },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flotilla-cluster-lease' } },
        { apiVersion: 'cluster.flotilla.io/v1alpha1', kind: 'Cluster', metadata: { name: 'member1' } },
        {
          apiVersion: 'cluster.flotilla.io/v1alpha1',
          kind: 'Cluster',
          metadata: { name: 'member2' },
          spec: { syncMode: 'Pull' },
        },
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'web', namespace: NS },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'web' } },
            template: {
              metadata: { labels: { app: 'web' } },
              spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] },
            },
          },
        },
        placed('web', 'Deployment', ['member1', 'member2'], { name: 'web' }),
        ...SOLO.map((name) => ({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace: NS, labels: { solo: 'yes' } },
          data: { name },
        })),
        placed('solo', 'ConfigMap', ['member2'], { labelSelector: { matchLabels: { solo: 'yes' } } }),
      ],
    });
    assert.equal(applied.status, 0, applied.stderr);
    controller = spawnFlotilla(
      [
        'controller',
        '--kubeconfig',
        e.hub.kubeconfigPath,
        // member1 only: member2 is reached through its agent.
        '--members-kubeconfig',
        e.members[0]!.kubeconfigPath,
        '--namespace',
        'flotilla-system',
        '--probe-interval',
        '500ms',
        '--probe-timeout',
        '1s',
        '--not-ready-taint-after',
        '1s',
        '--failover',
        'true',
        '--failover-eviction-timeout',
        '3s',
        '--eviction-purge-mode',
        'Directly',
      ],
      join(e.dir, 'logs', 'flotilla-controller.log'),
    );
  });

  after(async () => {
    keepAgent = false;
    for (const p of [agent, controller]) if (p) await stopFlotilla(p);
    await agentLoop;
  });

  void it('a pull cluster whose agent never joined waits for it: no NoExecute, its Work kept; Ready once the agent starts', async () => {
    const waiting = await until(
      () => ready('member2'),
      (c) => c?.reason === 'AgentNotJoined',
    );
    assert.equal(waiting?.status, 'False', controller.log().slice(-3000));
    assert.equal(waiting?.reason, 'AgentNotJoined', controller.log().slice(-3000));
    assert.match(String(waiting?.message), /waiting for its agent/);
    // Three times the eviction timeout: NoSchedule (new placements keep off), never NoExecute.
    const seen = new Set<string>();
    const deadline = Date.now() + 9_000;
    while (Date.now() < deadline) {
      for (const t of await taints('member2')) seen.add(t);
      await sleep(250);
    }
    assert.deepEqual([...seen], ['cluster.karmada.io/unreachable:NoSchedule'], controller.log().slice(-3000));
    // Still placed there: the binding and member2's Work say so.
    const clusters = ((await binding('web-deployment'))?.spec as Obj | undefined)?.clusters as Obj[] | undefined;
    assert.deepEqual(
      clusters?.map((c) => c.name),
      ['member1', 'member2'],
    );
    assert.ok(
      await getObject(hub, `/apis/work.flotilla.io/v1alpha1/namespaces/flotilla-es-member2/works/${NS}.web-deployment`),
    );

    superviseAgent();
    const joined = await until(
      () => ready('member2'),
      (c) => c?.status === 'True',
    );
    assert.equal(joined?.reason, 'AgentLeaseRenewed', agent?.log().slice(-3000));
    assert.deepEqual(
      await until(
        () => taints('member2'),
        (t) => t.length === 0,
      ),
      [],
    );
    const copies = await until(onMember2, (m) => m.size === SOLO.length + 1);
    assert.equal(copies.size, SOLO.length + 1, agent?.log().slice(-3000));
  });

  void it(`a hub outage of ${OUTAGE_MS / 1000} s evicts nothing: no NoExecute taint, member2 keeps every object`, async () => {
    if (!keepAgent) superviseAgent();
    await until(
      () => ready('member2'),
      (c) => c?.status === 'True',
    );
    const before = await until(onMember2, (m) => m.size === SOLO.length + 1);
    assert.equal(before.size, SOLO.length + 1);
    // member2's objects and the hub's taints on it, from now until the end.
    const seen = new Set<string>();
    const removed = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const t of await taints('member2')) seen.add(t);
        const now = await safely(onMember2);
        if (now) for (const [name, uid] of before) if (now.get(name) !== uid) removed.add(name);
        await sleep(250);
      }
    })();
    const started = agentStarts;
    await env().stopCluster('hub');
    await sleep(OUTAGE_MS);
    await env().startCluster('hub');
    // The agent lost its Lease meanwhile and was started again; it renews once it holds the Lease again.
    const back = await until(
      () => ready('member2'),
      (c) => c?.status === 'True' && c.reason === 'AgentLeaseRenewed',
    );
    assert.equal(back?.status, 'True', controller.log().slice(-3000));
    // Settle: past a watch's longest retry backoff (30 s), the controller's window on the Leases after the
    // hub came back (twice 4 s) and the eviction timeout, so what was decided during the outage has landed.
    await sleep(45_000);
    sampling = false;
    await sampler;
    const evictions = [...seen].filter((t) => t.endsWith(':NoExecute'));
    process.stderr.write(
      `hub outage ${OUTAGE_MS / 1000} s: agent starts ${agentStarts - started}, NoExecute taints on member2 ${evictions.length}, member2 objects removed or replaced ${removed.size} of ${before.size}\n`,
    );
    assert.deepEqual(evictions, [], controller.log().slice(-4000));
    assert.deepEqual([...removed].sort(), [], controller.log().slice(-4000));
    assert.deepEqual(await onMember2(), before);
  });
});
