// Pull mode with processes: `flotilla controller` on the hub and `flotilla agent` for member2 (a Cluster
// with spec.syncMode Pull and no credential on the hub), each a separate process, on real apiservers.
// member1 is a Push member reached through its Cluster's secretRef. The agent places nothing itself:
// it follows its Work, the hub's binding cut down to member2 (divided replicas), renders its own cluster's
// copy with the override rules, reports in the Work's status under its own field manager (the controller
// lists it in the binding), and renews its Lease, from
// which the controller sets member2's Ready condition. Faults: the agent killed mid-propagation and
// restarted (converges: no duplicate, no orphan, a template deleted meanwhile is removed before its
// finalizer goes), the agent's Lease lapsing, the hub unreachable from the agent (member2 keeps what it
// has; catch-up on return), and a Cluster switched Push -> Pull -> Push.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { parse, parseAllDocuments, stringify } from 'yaml';

import type { KubeClient } from '../../pkg/kube/client.js';
import { agentNodeFlags } from '../node-launch.js';
import { CHART, helmSync } from '../helm-binary.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import {
  applyObject,
  getObject,
  prepareHub,
  spawnFlotilla as spawnProcess,
  type FlotillaProcess,
  type Obj,
} from './controller-io.js';

const WAIT_MS = 45_000;
const NS = 'shop';
const SECRETS_NS = 'flotilla-system';
const BINDINGS = `/apis/work.flotilla.io/v1alpha1/namespaces/${NS}/resourcebindings`;
const CLUSTERS = '/apis/cluster.flotilla.io/v1alpha1/clusters';
const works = (cluster: string) => `/apis/work.flotilla.io/v1alpha1/namespaces/flotilla-es-${cluster}/works`;

const cluster = (name: string, mode: 'Push' | 'Pull'): Obj => ({
  apiVersion: 'cluster.flotilla.io/v1alpha1',
  kind: 'Cluster',
  metadata: { name, labels: { tier: name === 'member2' ? 'edge' : 'core' } },
  spec:
    mode === 'Pull'
      ? { syncMode: 'Pull' }
      : { syncMode: 'Push', secretRef: { namespace: SECRETS_NS, name: `${name}-credentials` } },
});
const secret = (name: string, kubeconfig: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: `${name}-credentials`, namespace: SECRETS_NS },
  data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
});
const deployment = (image: string): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: NS },
  spec: {
    replicas: 4,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image }] } },
  },
});
const configMap = (name: string): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: NS, labels: { batch: 'yes' } },
  data: { name },
});

type Proc = FlotillaProcess;

void describe('flotilla agent: pull mode, with processes', () => {
  const env = useEnvironment({ members: 2 });
  let hub: KubeClient;
  let members: KubeClient[];
  const procs: Proc[] = [];
  let controller: Proc;
  let agent: Proc | undefined;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean, ms = WAIT_MS) => eventually(probe, done, ms, 200);

  // The agent as the chart runs it: node with agent.nodeFlags.
  const spawnFlotilla = (args: string[]): Proc => {
    const log = join(env().dir, 'logs', `flotilla-${args[0]}-${procs.length}.log`);
    const p = spawnProcess(args, log, {}, args[0] === 'agent' ? agentNodeFlags() : []);
    procs.push(p);
    return p;
  };
  /** Per pull cluster: a hub kubeconfig for its agent's ServiceAccount, whose RBAC is the chart's (controller.pullAgents). */
  const hubKubeconfigs = new Map<string, string>();
  const startAgent = (cluster = 'member2'): Proc => {
    const e = env();
    const m = e.members.find((x) => x.name === cluster)!;
    return spawnFlotilla([
      'agent',
      '--cluster-name',
      cluster,
      '--hub-kubeconfig',
      hubKubeconfigs.get(cluster)!,
      '--kubeconfig',
      m.kubeconfigPath,
      '--namespace',
      'flotilla-system',
      '--lease-duration',
      '4s',
      '--renew-interval',
      '1s',
      '--cluster-status-interval',
      '2s',
    ]);
  };
  const stopProc = async (p: Proc | undefined, signal: NodeJS.Signals = 'SIGTERM') => {
    if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
    p.child.kill(signal);
    await p.exited;
  };
  const memberObject = async (m: KubeClient, path: string) => {
    try {
      return await getObject(m, path);
    } catch {
      return undefined;
    }
  };
  const webOn = (i: number) => memberObject(members[i]!, `/apis/apps/v1/namespaces/${NS}/deployments/web`);
  const imageOf = (d: Obj | undefined) =>
    ((((d?.spec as Obj | undefined)?.template as Obj | undefined)?.spec as Obj | undefined)?.containers as Obj[])?.[0]
      ?.image;
  const replicasOf = (d: Obj | undefined) => (d?.spec as Obj | undefined)?.replicas;
  const entries = async (name: string) => {
    const b = await getObject(hub, `${BINDINGS}/${name}`);
    return ((b?.status as Obj | undefined)?.clusters as Obj[] | undefined) ?? [];
  };
  const readyCondition = async (name: string) =>
    (((await getObject(hub, `${CLUSTERS}/${name}`))?.status as Obj | undefined)?.conditions as Obj[] | undefined)?.find(
      (c) => c.type === 'Ready',
    );
  /** The batch ConfigMaps on a member carrying the controller's labels, by name. */
  const batchOn = async (i: number) => {
    const r = await members[i]!.request<{ items: Obj[] }>({
      method: 'GET',
      path: `/api/v1/namespaces/${NS}/configmaps`,
      query: { labelSelector: 'batch=yes,flotilla.io/template-uid' },
    });
    return (r.body?.items ?? []).map((o) => (o.metadata as Obj).name as string).sort();
  };

  before(async () => {
    const e = env();
    ({ hub, members } = await prepareHub(e, NS));
    const applied = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SECRETS_NS } },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flotilla-cluster-lease' } },
        secret('member1', readFileSync(e.members[0]!.kubeconfigPath, 'utf8')),
        cluster('member1', 'Push'),
        cluster('member2', 'Pull'),
        deployment('nginx:1.25'),
        {
          apiVersion: 'policy.flotilla.io/v1beta1',
          kind: 'PropagationPolicy',
          metadata: { name: 'web', namespace: NS },
          spec: {
            resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
            placement: {
              clusterAffinity: { clusterNames: ['member1', 'member2'] },
              replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' },
            },
          },
        },
        {
          apiVersion: 'policy.flotilla.io/v1beta1',
          kind: 'OverridePolicy',
          metadata: { name: 'edge-registry', namespace: NS },
          spec: {
            resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment' }],
            overrideRules: [
              {
                targetCluster: { labelSelector: { matchLabels: { tier: 'edge' } } },
                overriders: { imageOverrider: [{ component: 'Registry', operator: 'replace', value: 'edge.example' }] },
              },
            ],
          },
        },
      ],
    });
    assert.equal(applied.status, 0, applied.stderr);
    // The agents' hub identities, as the chart grants them: a ServiceAccount each, read-only on templates
    // and policies, its own Cluster, its Works' status in its namespace, its Lease. Installed from `helm template`, tokens from
    // the TokenRequest API, kubeconfigs as an operator would hand them to the member.
    const rendered = helmSync([
      'template',
      'flotilla',
      CHART,
      '--namespace',
      'flotilla-system',
      '--set',
      'controller.pullAgents={member1,member2}',
    ]);
    assert.equal(rendered.status, 0, rendered.stderr);
    const docs = parseAllDocuments(rendered.stdout)
      .map((d) => d.toJSON() as Obj | null)
      .filter(
        (o): o is Obj => o !== null && /^flotilla-(agent|es)-/.test(String((o.metadata as Obj | undefined)?.name)),
      )
      // Namespaces first: the Roles go in them.
      .sort((a, b) => Number(b.kind === 'Namespace') - Number(a.kind === 'Namespace'));
    assert.ok(docs.length >= 7, rendered.stdout.slice(0, 500));
    const rbac = await k(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: docs });
    assert.equal(rbac.status, 0, rbac.stderr);
    const hubConfig = parse(readFileSync(e.hub.kubeconfigPath, 'utf8')) as {
      clusters: Array<{ cluster: Obj }>;
    };
    for (const name of ['member1', 'member2']) {
      const token = await k(['create', 'token', `flotilla-agent-${name}`, '-n', 'flotilla-system', '--duration', '2h']);
      assert.equal(token.status, 0, token.stderr);
      const file = join(e.dir, `${name}-hub.kubeconfig`);
      writeFileSync(
        file,
        stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'hub', cluster: hubConfig.clusters[0]!.cluster }],
          users: [{ name: `flotilla-agent-${name}`, user: { token: token.stdout.trim() } }],
          contexts: [{ name: 'hub', context: { cluster: 'hub', user: `flotilla-agent-${name}` } }],
          'current-context': 'hub',
        }),
      );
      hubKubeconfigs.set(name, file);
    }
    controller = spawnFlotilla([
      'controller',
      '--kubeconfig',
      e.hub.kubeconfigPath,
      '--namespace',
      'flotilla-system',
      '--probe-interval',
      '300ms',
    ]);
    agent = startAgent();
  });

  after(async () => {
    await Promise.all(procs.map((p) => stopProc(p)));
  });

  void it('delivers the hub-placed share with the edge override, and the binding lists the agent entry', async () => {
    const two = await until(
      async () => [await webOn(0), await webOn(1)],
      ([a, b]) => replicasOf(a) === 2 && replicasOf(b) === 2 && imageOf(b) === 'edge.example/nginx:1.25',
    );
    assert.equal(imageOf(two[0]), 'nginx:1.25', controller.log());
    assert.equal(imageOf(two[1]), 'edge.example/nginx:1.25', agent?.log());
    // member2's entry is the agent's: written under its own field manager, next to the controller's member1.
    // The summary counts the agent's entry once written (a burst of entries is one summary write).
    const appliedOf = (x: Obj | undefined) =>
      (((x?.status as Obj | undefined)?.conditions as Obj[] | undefined) ?? []).find((c) => c.type === 'Applied');
    const stateOf = (x: Obj | undefined, name: string) =>
      (((x?.status as Obj | undefined)?.clusters as Obj[] | undefined) ?? []).find((c) => c.name === name)?.state;
    const b = await until(
      () => getObject(hub, `${BINDINGS}/web-deployment`),
      (x) =>
        stateOf(x, 'member1') === 'Applied' && stateOf(x, 'member2') === 'Applied' && appliedOf(x)?.status === 'True',
    );
    assert.equal(stateOf(b, 'member2'), 'Applied', JSON.stringify(b?.status));
    // What the agent reported is in its Work, in member2's namespace on the hub, under its own field
    // manager; the agent writes nothing in the binding.
    const work = await getObject(hub, `${works('member2')}/${NS}.web-deployment`);
    assert.equal((work?.status as Obj | undefined)?.state, 'Applied', JSON.stringify(work));
    assert.deepEqual((work?.spec as Obj).clusters, [{ name: 'member2', replicas: 2 }]);
    const managers = (m: Obj | undefined) =>
      ((m?.metadata as Obj).managedFields as Obj[]).map((f) => [f.manager, f.subresource ?? '']);
    assert.ok(
      managers(work).some(([m, s]) => m === 'flotilla-agent.member2' && s === 'status'),
      JSON.stringify(managers(work)),
    );
    assert.ok(!managers(b).some(([m]) => String(m).startsWith('flotilla-agent.')), JSON.stringify(managers(b)));
    // kubectl: the Work's STATE and HEALTH on member2, the binding's APPLIED counting both clusters.
    const listed = await k(['get', 'works', '-n', 'flotilla-es-member2', '--no-headers']);
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(
      listed.stdout.trim(),
      new RegExp(`^${NS}\\.web-deployment\\s+Deployment\\s+${NS}\\s+web\\s+Applied\\s+(Healthy|Progressing)\\s+\\S+$`),
      'NAME KIND TEMPLATE-NAMESPACE TEMPLATE STATE HEALTH AGE',
    );
    const rb = await k(['get', 'resourcebindings', '-n', NS, 'web-deployment', '--no-headers']);
    assert.equal(rb.status, 0, rb.stderr);
    assert.match(
      rb.stdout.trim(),
      /^web-deployment\s+Deployment\s+\S+\s+2\/2\s+\d\/2\s+\S+$/,
      'NAME KIND POLICY APPLIED READY AGE',
    );
    // member1 is pushed: no Work for it.
    const none = await hub.request({ method: 'GET', path: `${works('member1')}/${NS}.web-deployment` });
    assert.equal(none.status, 404);
    // The binding's spec is the hub's decision, with member2's replicas.
    assert.deepEqual((b?.spec as Obj).clusters, [
      { name: 'member1', replicas: 2 },
      { name: 'member2', replicas: 2 },
    ]);
    assert.equal(appliedOf(b)?.status, 'True', JSON.stringify(b?.status));
    // The chart's RBAC for the agent is enough: nothing it asked of the hub was refused.
    assert.doesNotMatch(agent?.log() ?? '', /forbidden|HTTP 403/i);
  });

  void it("sets member2's Ready condition from the agent's Lease, and the agent writes what it reads of member2", async () => {
    const ready = await until(
      () => readyCondition('member2'),
      (c) => c?.status === 'True',
    );
    assert.equal(ready?.reason, 'AgentLeaseRenewed');
    const status = await until(
      async () => (await getObject(hub, `${CLUSTERS}/member2`))?.status as Obj | undefined,
      (s) => typeof s?.kubernetesVersion === 'string',
    );
    assert.match(String(status?.kubernetesVersion), /^v1\./);
    // The hub holds no credential of member2: nothing on the hub names its apiserver.
    const secrets = await k(['get', 'secrets', '-A', '-o', 'json']);
    assert.ok(!secrets.stdout.includes(env().members[1]!.server), 'a hub Secret names member2');
  });

  void it('follows template edits and puts drift on member2 back', async () => {
    await applyObject(hub, `/apis/apps/v1/namespaces/${NS}/deployments/web`, deployment('nginx:1.27'));
    await until(
      () => webOn(1),
      (d) => imageOf(d) === 'edge.example/nginx:1.27',
    );
    const m2 = members[1]!;
    const r = await m2.request({
      method: 'PATCH',
      path: `/apis/apps/v1/namespaces/${NS}/deployments/web`,
      contentType: 'application/merge-patch+json',
      body: { spec: { replicas: 9 } },
    });
    assert.equal(r.status, 200);
    await until(
      () => webOn(1),
      (d) => replicasOf(d) === 2,
    );
  });

  void it('converges after the agent is killed mid-propagation: every copy once, a template deleted meanwhile removed', async (t) => {
    const names = Array.from({ length: 200 }, (_, i) => `batch-${String(i).padStart(3, '0')}`);
    const created = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        ...names.map(configMap),
        {
          apiVersion: 'policy.flotilla.io/v1beta1',
          kind: 'PropagationPolicy',
          metadata: { name: 'batch', namespace: NS },
          spec: {
            resourceSelectors: [
              { apiVersion: 'v1', kind: 'ConfigMap', labelSelector: { matchLabels: { batch: 'yes' } } },
            ],
            placement: { clusterAffinity: { clusterNames: ['member2'] } },
          },
        },
      ],
    });
    assert.equal(created.status, 0, created.stderr);
    // Killed as soon as the first copies land (SIGKILL: no release of the Lease, no last writes).
    await until(
      () => batchOn(1),
      (l) => l.length > 0,
    );
    await stopProc(agent, 'SIGKILL');
    const partial = await batchOn(1);
    t.diagnostic(`copies on member2 when the agent was killed: ${partial.length} of ${names.length}`);
    // Meanwhile: five templates deleted on the hub, one of them with a copy on member2. Their finalizers
    // wait for the agent where it said it holds a copy; a copy it had not reported yet is an orphan its
    // restart finds.
    const gone = [...new Set([partial[0]!, ...names])].slice(0, 5);
    const del = await k(['delete', 'configmap', '-n', NS, '--wait=false', ...gone]);
    assert.equal(del.status, 0, del.stderr);
    agent = startAgent();
    const want = names.filter((n) => !gone.includes(n));
    const final = await until(
      () => batchOn(1),
      (l) => JSON.stringify(l) === JSON.stringify(want),
    );
    assert.deepEqual(final, want, `partial before the kill: ${partial.length}; ${agent.log().slice(-2000)}`);
    // The deleted templates are gone from the hub too: their finalizers were released after the agent's removal.
    const left = await until(
      async () => {
        const r = await hub.request<{ items: Obj[] }>({
          method: 'GET',
          path: `/api/v1/namespaces/${NS}/configmaps`,
          query: { labelSelector: 'batch=yes' },
        });
        return r.body?.items.length ?? -1;
      },
      (n) => n === want.length,
    );
    assert.equal(left, want.length, controller.log().slice(-2000));
    // member1 was never targeted: nothing there.
    assert.deepEqual(await batchOn(0), []);
    const e = await until(
      () => entries(`${want[0]!}-configmap`),
      (l) => l.some((x) => x.name === 'member2' && x.state === 'Applied'),
    );
    assert.equal(e.length, 1);
  });

  void it("marks member2 not ready when its agent's Lease lapses, and ready again when an agent holds it", async () => {
    await stopProc(agent, 'SIGKILL');
    const lapsed = await until(
      () => readyCondition('member2'),
      (c) => c?.status === 'False',
    );
    assert.equal(lapsed?.reason, 'AgentLeaseExpired');
    // member2 keeps serving what it has.
    assert.equal(replicasOf(await webOn(1)), 2);
    agent = startAgent();
    await until(
      () => readyCondition('member2'),
      (c) => c?.status === 'True',
    );
  });

  void it('keeps member2 as it is while the hub is unreachable, and catches up when it returns', async (t) => {
    const e = env();
    await e.stopCluster('hub');
    // The agent cannot renew its Lease: it stops and exits, as a pod would restart; member2 is untouched.
    const code = await Promise.race([agent!.exited, new Promise((r) => setTimeout(() => r('still running'), 15_000))]);
    t.diagnostic(
      `the agent, hub unreachable for 15 s: ${code === 'still running' ? 'still running' : `exited ${String(code)}`}`,
    );
    assert.equal(replicasOf(await webOn(1)), 2);
    assert.deepEqual((await batchOn(1)).length, 195);
    await e.startCluster('hub');
    if (code !== 'still running') agent = startAgent(); // the restart a pod gets
    await applyObject(hub, `/apis/apps/v1/namespaces/${NS}/deployments/web`, deployment('nginx:1.28'));
    await until(
      () => webOn(1),
      (d) => imageOf(d) === 'edge.example/nginx:1.28',
      60_000,
    );
  });

  void it('hands a cluster between the controller and an agent: Push -> Pull -> Push, one copy throughout', async () => {
    const e = env();
    // member1 goes Pull: the controller drops its connection, the agent of member1 takes over the copy.
    const pull = await k(['apply', '-f', '-'], {
      ...cluster('member1', 'Pull'),
      spec: { syncMode: 'Pull', secretRef: { namespace: SECRETS_NS, name: 'member1-credentials' } },
    });
    assert.equal(pull.status, 0, pull.stderr);
    const agent1 = startAgent('member1');
    await applyObject(hub, `/apis/apps/v1/namespaces/${NS}/deployments/web`, deployment('nginx:1.29'));
    await until(
      () => webOn(0),
      (d) => imageOf(d) === 'nginx:1.29',
    );
    const w = await until(
      async () => memberObject(hub, `${works('member1')}/${NS}.web-deployment`),
      (x) =>
        (x?.status as Obj | undefined)?.state === 'Applied' &&
        ((x?.metadata as Obj).managedFields as Obj[]).some(
          (f) => f.manager === 'flotilla-agent.member1' && f.subresource === 'status',
        ),
    );
    assert.ok(w);
    assert.match(agent1.log(), /holding the Lease/);
    // Back to Push: the agent stands down, the controller delivers again.
    const push = await k(['apply', '-f', '-'], cluster('member1', 'Push'));
    assert.equal(push.status, 0, push.stderr);
    await until(
      () => Promise.resolve(agent1.log()),
      (l) => l.includes('not in Pull mode'),
    );
    // member1's Works go with its pull mode.
    await until(
      async () => (await hub.request<{ items: Obj[] }>({ method: 'GET', path: works('member1') })).body?.items.length,
      (n) => n === 0,
    );
    await applyObject(hub, `/apis/apps/v1/namespaces/${NS}/deployments/web`, deployment('nginx:1.30'));
    await until(
      () => webOn(0),
      (d) => imageOf(d) === 'nginx:1.30',
    );
    const list = await members[0]!.request<{ items: Obj[] }>({
      method: 'GET',
      path: `/apis/apps/v1/namespaces/${NS}/deployments`,
    });
    assert.equal(list.body?.items.length, 1);
    await stopProc(agent1);
    void e;
  });
});
