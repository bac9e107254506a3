// Karmada's API groups on a Flotilla hub (the chart's karmadaAPI.enabled): unchanged Karmada files —
// policy.karmada.io policies and cluster.karmada.io Clusters — applied with kubectl propagate exactly as
// their policy.flotilla.io equivalents, in one pool with Flotilla's own policies. Real apiservers, a hub
// and two members; the controller runs in this process through the CLI entry. member1 comes from a
// kubeconfig; member2 only from its cluster.karmada.io Cluster and a Secret in Karmada's form (a bearer
// token and the CA bundle, with the Cluster's apiEndpoint), as a Karmada user registers a cluster.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { customResourceDefinitions, karmadaCustomResourceDefinitions } from '../../api/crds/index.js';
import { KubeClient } from '../../pkg/kube/client.js';
import type { ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { capturingIO, getObject, installCRDs, type Obj, startController } from './controller-io.js';

const WAIT_MS = 30_000;

const deployment = (name: string): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'shop', labels: { app: 'web' } },
  spec: {
    replicas: 5,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'web', image: 'docker.io/library/nginx:1.27' }] },
    },
  },
});

/** The same policies in either group: Divided replicas by static weight, an override by cluster label. */
const policies = (group: 'policy.karmada.io' | 'policy.flotilla.io', target: string): Obj[] => {
  // Flotilla's group in its storage version (no conversion webhook runs in this test); the same shape.
  const apiVersion = group === 'policy.karmada.io' ? 'policy.karmada.io/v1alpha1' : 'policy.flotilla.io/v1beta1';
  return [
    {
      apiVersion,
      kind: 'PropagationPolicy',
      metadata: {
        name: target,
        namespace: 'shop',
        // Karmada's webhook sets it; none runs here.
        ...(group === 'policy.karmada.io' ? { labels: { 'propagationpolicy.karmada.io/permanent-id': 'pid-1' } } : {}),
      },
      spec: {
        resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: target }],
        placement: {
          clusterAffinity: { labelSelector: { matchLabels: { fleet: 'shop' } } },
          replicaScheduling: {
            replicaSchedulingType: 'Divided',
            replicaDivisionPreference: 'Weighted',
            weightPreference: {
              staticWeightList: [
                { targetCluster: { clusterNames: ['member1'] }, weight: 3 },
                { targetCluster: { clusterNames: ['member2'] }, weight: 2 },
              ],
            },
          },
        },
      },
    },
    {
      apiVersion,
      kind: 'OverridePolicy',
      metadata: { name: target, namespace: 'shop' },
      spec: {
        resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: target }],
        overrideRules: [
          {
            targetCluster: { labelSelector: { matchLabels: { region: 'eu' } } },
            overriders: {
              imageOverrider: [{ component: 'Registry', operator: 'replace', value: 'mirror.eu.example.com' }],
              labelsOverrider: [{ operator: 'add', value: { region: 'eu' } }],
            },
          },
        ],
      },
    },
  ];
};

/** What rendering decides on a member copy: spec and labels, without the template's name and the claim's labels. */
function rendered(o: Obj | undefined, name: string): unknown {
  if (!o) return undefined;
  const labels = { ...((o.metadata as Obj).labels as Record<string, string>) };
  for (const k of Object.keys(labels))
    if (k.startsWith('flotilla.io/') || k.startsWith('propagationpolicy.karmada.io/')) delete labels[k];
  return JSON.parse(JSON.stringify({ labels, spec: o.spec }).replaceAll(name, 'NAME')) as unknown;
}

/** A static bearer token the apiservers accept (system:masters), for the Karmada-form Secret. */
const TOKEN = 'karmada-form-token-0123456789';
const tokenDir = mkdtempSync(join(tmpdir(), 'karmada-token-'));
writeFileSync(join(tokenDir, 'tokens.csv'), `${TOKEN},karmada-agent,uid-karmada,system:masters\n`);

void describe('flotilla controller: Karmada policy and Cluster files on a Flotilla hub', () => {
  const env = useEnvironment({ members: 2, apiserverArgs: [`--token-auth-file=${join(tokenDir, 'tokens.csv')}`] });
  let members: KubeClient[];
  const stop = new AbortController();
  let controller: Promise<number>;
  let out: ReturnType<typeof capturingIO>;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);
  const DEPLOY = (name: string) => `/apis/apps/v1/namespaces/shop/deployments/${name}`;

  before(async () => {
    const e = env();
    members = e.members.map((m) => new KubeClient(m.kubeConfig(), { concurrency: 4 }));
    const crds = [...customResourceDefinitions(), ...karmadaCustomResourceDefinitions()];
    await installCRDs(e.hub, crds);
    // Karmada's Cluster objects give the members their labels; member2's also its credentials.
    const member2 = e.members[1];
    assert.ok(member2);
    const ca = readFileSync(join(e.dir, 'member2', 'pki', 'ca.crt'), 'utf8');
    const clusters = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flotilla-system' } },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'member2', namespace: 'flotilla-system' },
          data: { token: Buffer.from(TOKEN).toString('base64'), caBundle: Buffer.from(ca).toString('base64') },
        },
        {
          apiVersion: 'cluster.karmada.io/v1alpha1',
          kind: 'Cluster',
          metadata: { name: 'member1', labels: { fleet: 'shop', region: 'eu' } },
          spec: { syncMode: 'Push' },
        },
        {
          apiVersion: 'cluster.karmada.io/v1alpha1',
          kind: 'Cluster',
          metadata: { name: 'member2', labels: { fleet: 'shop', region: 'us' } },
          spec: {
            syncMode: 'Push',
            apiEndpoint: member2.server,
            secretRef: { namespace: 'flotilla-system', name: 'member2' },
          },
        },
      ],
    });
    assert.equal(clusters.status, 0, clusters.stderr);
    out = capturingIO(stop.signal);
    controller = startController(e.hub, (e.members[0] as ClusterHandle).kubeconfigPath, out);
  });

  after(async () => {
    stop.abort();
    assert.equal(await controller, 0, out.err());
  });

  void it('kubectl apply of unchanged Karmada policies propagates exactly as the policy.flotilla.io equivalents', async () => {
    const applied = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        deployment('karmada-web'),
        deployment('flotilla-web'),
        ...policies('policy.karmada.io', 'karmada-web'),
        ...policies('policy.flotilla.io', 'flotilla-web'),
      ],
    });
    assert.equal(applied.status, 0, applied.stderr);
    const copies = async () =>
      Promise.all(members.flatMap((m) => [getObject(m, DEPLOY('karmada-web')), getObject(m, DEPLOY('flotilla-web'))]));
    const all = await eventually(copies, (c) => c.every((o) => o !== undefined), WAIT_MS, 200);
    assert.ok(
      all.every((o) => o !== undefined),
      out.err(),
    );
    const [k1, f1, k2, f2] = all;
    assert.deepEqual(rendered(k1, 'karmada-web'), rendered(f1, 'flotilla-web'));
    assert.deepEqual(rendered(k2, 'karmada-web'), rendered(f2, 'flotilla-web'));
    // And it is what the policies say: 5 replicas divided 3:2, the eu cluster's registry and label.
    assert.equal((k1?.spec as Obj).replicas, 3);
    assert.equal((k2?.spec as Obj).replicas, 2);
    assert.equal(((k1?.metadata as Obj).labels as Obj).region, 'eu');
    assert.match(JSON.stringify(k1?.spec), /mirror\.eu\.example\.com\/library\/nginx:1\.27/);
    assert.match(JSON.stringify(k2?.spec), /"docker\.io\/library\/nginx:1\.27"/);
    // The Karmada claim is named on its copies as Karmada names it; the Flotilla claim's copies carry none of it.
    for (const c of [k1, k2]) {
      const meta = c?.metadata as Obj;
      assert.equal((meta.labels as Obj)['propagationpolicy.karmada.io/permanent-id'], 'pid-1');
      assert.equal((meta.annotations as Obj)['propagationpolicy.karmada.io/name'], 'karmada-web');
      assert.equal((meta.annotations as Obj)['propagationpolicy.karmada.io/namespace'], 'shop');
      assert.equal((meta.labels as Obj)['flotilla.io/template-name'], 'karmada-web');
    }
    for (const c of [f1, f2]) {
      const meta = c?.metadata as Obj;
      const keys = [...Object.keys(meta.labels as Obj), ...Object.keys((meta.annotations as Obj | undefined) ?? {})];
      assert.deepEqual(
        keys.filter((key) => key.includes('karmada.io/')),
        [],
      );
    }
  });

  void it("writes Karmada's ResourceBinding with every cluster, a Work per cluster and Karmada's Events; kubectl get rb -A lists every cluster", async () => {
    const binding = await eventually(
      () => k(['get', 'rb', 'karmada-web-deployment', '-n', 'shop', '-o', 'json']),
      (r) => r.status === 0 && r.stdout.includes('"FullyApplied"'),
      WAIT_MS,
      200,
    );
    assert.equal(binding.status, 0, `${binding.stderr}\n${out.err()}`);
    const rb = JSON.parse(binding.stdout) as Obj;
    assert.equal(rb.apiVersion, 'work.karmada.io/v1alpha2');
    const spec = rb.spec as Obj;
    assert.deepEqual(spec.clusters, [
      { name: 'member1', replicas: 3 },
      { name: 'member2', replicas: 2 },
    ]);
    assert.equal(spec.replicas, 5);
    assert.equal(((rb.metadata as Obj).labels as Obj)['propagationpolicy.karmada.io/permanent-id'], 'pid-1');
    const conditions = (rb.status as Obj).conditions as Obj[];
    assert.deepEqual(
      conditions.map((c) => [c.type, c.status, c.reason]),
      [
        ['Scheduled', 'True', 'Success'],
        ['FullyApplied', 'True', 'FullyAppliedSuccess'],
      ],
    );
    // A Work per cluster, in its execution space, under Karmada's name, holding that cluster's rendered copy.
    const works = await k(['get', 'works.work.karmada.io', '-A', '-o', 'json']);
    assert.equal(works.status, 0, works.stderr);
    const mine = ((JSON.parse(works.stdout) as Obj).items as Obj[]).filter((w) =>
      ((w.metadata as Obj).name as string).startsWith('karmada-web-'),
    );
    assert.deepEqual(mine.map((w) => (w.metadata as Obj).namespace).sort(), [
      'karmada-es-member1',
      'karmada-es-member2',
    ]);
    for (const w of mine) {
      const manifest = (((w.spec as Obj).workload as Obj).manifests as Obj[])[0] as Obj;
      const replicas = (manifest.spec as Obj).replicas;
      assert.equal(replicas, (w.metadata as Obj).namespace === 'karmada-es-member1' ? 3 : 2);
      const applied = ((w.status as Obj).conditions as Obj[]).find((c) => c.type === 'Applied');
      assert.equal(applied?.status, 'True');
    }
    // Karmada's Events, with Karmada's messages, on the template and the binding.
    const reasons = async (name: string) => {
      const r = await k([
        'get',
        'events',
        '-n',
        'shop',
        '--field-selector',
        `involvedObject.name=${name}`,
        '-o',
        'json',
      ]);
      return ((JSON.parse(r.stdout) as Obj).items as Obj[]).map((e) => `${String(e.reason)}: ${String(e.message)}`);
    };
    const onTemplate = await eventually(
      () => reasons('karmada-web'),
      (es) => es.some((e) => e.startsWith('SyncWorkSucceed')),
      WAIT_MS,
      200,
    );
    for (const e of [
      'ApplyPolicySucceed: Apply policy(shop/karmada-web) succeed',
      'GetReplicasSucceed: Get replicas of resource template successfully.',
      'ScheduleBindingSucceed: Binding has been scheduled successfully. Result: {member1:3, member2:2}',
      'ApplyOverridePolicySucceed: Apply override policy(shop/karmada-web) for cluster(member1) succeed.',
      'SyncWorkSucceed: Sync work of ResourceBinding(shop/karmada-web-deployment) successful.',
      'SyncSucceed: Successfully applied resource(shop/karmada-web) to cluster member2',
    ])
      assert.ok(onTemplate.includes(e), `${e} among ${JSON.stringify(onTemplate)}`);
    const onBinding = await reasons('karmada-web-deployment');
    assert.ok(
      onBinding.some((e) => e.startsWith('ScheduleBindingSucceed:')),
      JSON.stringify(onBinding),
    );
    assert.ok(
      onBinding.some((e) => e.startsWith('AggregateStatusSucceed:')),
      JSON.stringify(onBinding),
    );
    // kubectl get rb -A: Karmada's binding (rb is Karmada's short name here), every cluster in CLUSTERS.
    const table = await k(['get', 'rb', '-A']);
    assert.equal(table.status, 0, table.stderr);
    const header = table.stdout.split('\n')[0] ?? '';
    assert.match(header, /SCHEDULED\s+FULLYAPPLIED\s+CLUSTERS\s+AGE/);
    const row = table.stdout.split('\n').find((l) => l.includes('karmada-web-deployment')) ?? '';
    assert.match(row, /True\s+True\s+member1,member2\s/);
  });

  void it('writes the Karmada policy status and the Karmada Clusters Ready condition in their own group', async () => {
    const policy = await eventually(
      () => k(['get', 'propagationpolicies.policy.karmada.io', 'karmada-web', '-n', 'shop', '-o', 'json']),
      (r) => r.status === 0 && r.stdout.includes('"templates": 1'),
      WAIT_MS,
      200,
    );
    assert.match(policy.stdout, /"templates": 1/);
    for (const name of ['member1', 'member2']) {
      // member2 is reached only through its Karmada-form Secret: Ready says that worked.
      const cluster = await eventually(
        () =>
          k([
            'get',
            'clusters.cluster.karmada.io',
            name,
            '-o',
            'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
          ]),
        (r) => r.status === 0 && r.stdout === 'True',
        WAIT_MS,
        200,
      );
      assert.equal(cluster.stdout, 'True', `${name}: ${cluster.stderr}`);
    }
  });

  void it("a deleted PropagationPolicy's and ClusterPropagationPolicy's claim leaves the template and its ResourceBinding, which stays; the same claim again is written again", async () => {
    const pp: Obj = {
      apiVersion: 'policy.karmada.io/v1alpha1',
      kind: 'PropagationPolicy',
      metadata: {
        name: 'claim-pp',
        namespace: 'shop',
        labels: { 'propagationpolicy.karmada.io/permanent-id': 'pid-2' },
      },
      spec: {
        resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'claim-pp' }],
        placement: { clusterAffinity: { clusterNames: ['member1'] } },
      },
    };
    const cpp: Obj = {
      apiVersion: 'policy.karmada.io/v1alpha1',
      kind: 'ClusterPropagationPolicy',
      metadata: { name: 'claim-cpp', labels: { 'clusterpropagationpolicy.karmada.io/permanent-id': 'cpid-1' } },
      spec: {
        resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'claim-cpp' }],
        placement: { clusterAffinity: { clusterNames: ['member1'] } },
      },
    };
    const hub = new KubeClient(env().hub.kubeConfig(), { concurrency: 4 });
    const applied = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [deployment('claim-pp'), deployment('claim-cpp'), pp, cpp],
    });
    assert.equal(applied.status, 0, applied.stderr);
    /** The claim keys on the template's or its binding's labels and annotations. */
    const claimOf = async (path: string): Promise<Record<string, unknown> | undefined> => {
      const o = await getObject(hub, path);
      if (!o) return undefined;
      const meta = o.metadata as Obj;
      const all = { ...((meta.labels as Obj | undefined) ?? {}), ...((meta.annotations as Obj | undefined) ?? {}) };
      return Object.fromEntries(Object.entries(all).filter(([key]) => /propagationpolicy\.karmada\.io\//.test(key)));
    };
    const RB = (name: string) => `/apis/work.karmada.io/v1alpha2/namespaces/shop/resourcebindings/${name}-deployment`;
    const claimedPP = {
      'propagationpolicy.karmada.io/permanent-id': 'pid-2',
      'propagationpolicy.karmada.io/name': 'claim-pp',
      'propagationpolicy.karmada.io/namespace': 'shop',
    };
    const claimedCPP = {
      'clusterpropagationpolicy.karmada.io/permanent-id': 'cpid-1',
      'clusterpropagationpolicy.karmada.io/name': 'claim-cpp',
    };
    for (const [name, claim] of [
      ['claim-pp', claimedPP],
      ['claim-cpp', claimedCPP],
    ] as const) {
      const rb = await eventually(
        () => claimOf(RB(name)),
        (c) => c !== undefined && Object.keys(c).length > 0,
        WAIT_MS,
        200,
      );
      assert.deepEqual(rb, claim, `${name}'s binding claimed\n${out.err()}`);
    }
    const deleted = await k(['delete', 'propagationpolicies.policy.karmada.io', 'claim-pp', '-n', 'shop']);
    assert.equal(deleted.status, 0, deleted.stderr);
    const deletedC = await k(['delete', 'clusterpropagationpolicies.policy.karmada.io', 'claim-cpp']);
    assert.equal(deletedC.status, 0, deletedC.stderr);
    for (const name of ['claim-pp', 'claim-cpp']) {
      const template = await eventually(
        () => claimOf(DEPLOY(name)),
        (c) => c !== undefined && Object.keys(c).length === 0,
        WAIT_MS,
        200,
      );
      assert.deepEqual(template, {}, `${name}: the template's claim is removed`);
      const rb = await eventually(
        () => claimOf(RB(name)),
        (c) => c !== undefined && Object.keys(c).length === 0,
        WAIT_MS,
        200,
      );
      assert.deepEqual(rb, {}, `${name}: the binding's claim is removed\n${out.err()}`);
      // The binding stays, as Karmada keeps it: its clusters and the member's copy too.
      const binding = await k([
        'get',
        'rb',
        `${name}-deployment`,
        '-n',
        'shop',
        '-o',
        'jsonpath={.spec.clusters[*].name}',
      ]);
      assert.equal(binding.stdout, 'member1', binding.stderr);
      assert.ok(await getObject(members[0] as KubeClient, DEPLOY(name)), `${name} stays on member1`);
    }
    // The same PropagationPolicy again (same name and permanent id): the binding names it again.
    const again = await k(['apply', '-f', '-'], pp);
    assert.equal(again.status, 0, again.stderr);
    const reclaimed = await eventually(
      () => claimOf(RB('claim-pp')),
      (c) => c !== undefined && Object.keys(c).length > 0,
      WAIT_MS,
      200,
    );
    assert.deepEqual(reclaimed, claimedPP, out.err());
  });

  void it('one pool: a Flotilla policy of the same kind and name is used instead, and the Karmada one again when it goes', async () => {
    const flotillaSameName: Obj = {
      apiVersion: 'policy.flotilla.io/v1beta1',
      kind: 'OverridePolicy',
      metadata: { name: 'karmada-web', namespace: 'shop' },
      spec: {
        resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'karmada-web' }],
        overrideRules: [{ overriders: { labelsOverrider: [{ operator: 'add', value: { pool: 'flotilla' } }] } }],
      },
    };
    const r = await k(['apply', '-f', '-'], flotillaSameName);
    assert.equal(r.status, 0, r.stderr);
    const labels = async () =>
      ((await getObject(members[0] as KubeClient, DEPLOY('karmada-web')))?.metadata as Obj).labels as Obj;
    const shadowed = await eventually(labels, (l) => l.pool === 'flotilla' && l.region === undefined, WAIT_MS, 200);
    assert.equal(shadowed.pool, 'flotilla');
    assert.equal(shadowed.region, undefined);
    const d = await k(['delete', 'overridepolicies.policy.flotilla.io', 'karmada-web', '-n', 'shop']);
    assert.equal(d.status, 0, d.stderr);
    const back = await eventually(labels, (l) => l.region === 'eu' && l.pool === undefined, WAIT_MS, 200);
    assert.equal(back.region, 'eu');
  });

  void it("divides a Job as Karmada's interpreter does: parallelism by the weights, completions by each member's parallelism", async () => {
    const [policy] = policies('policy.karmada.io', 'pi');
    const spec = (policy as Obj).spec as Obj;
    spec.resourceSelectors = [{ apiVersion: 'batch/v1', kind: 'Job', name: 'pi' }];
    const job: Obj = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'pi', namespace: 'shop' },
      spec: {
        parallelism: 5,
        completions: 10,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'docker.io/library/perl:5' }] } },
      },
    };
    const r = await k(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: [policy, job] });
    assert.equal(r.status, 0, r.stderr);
    const JOB = '/apis/batch/v1/namespaces/shop/jobs/pi';
    const copies = await eventually(
      () => Promise.all(members.map((m) => getObject(m, JOB))),
      (c) => c.every((o) => o !== undefined),
      WAIT_MS,
      200,
    );
    // 5 parallel pods by weights 3:2; 10 completions by the parallelism each member got, 3:2.
    assert.deepEqual(
      copies.map((o) => [(o?.spec as Obj | undefined)?.parallelism, (o?.spec as Obj | undefined)?.completions]),
      [
        [3, 6],
        [2, 4],
      ],
      out.err(),
    );
    const binding = await k(['get', 'rb', 'pi-job', '-n', 'shop', '-o', 'jsonpath={.spec.replicas} {.spec.clusters}']);
    assert.equal(binding.status, 0, binding.stderr);
    assert.equal(binding.stdout, '5 [{"name":"member1","replicas":3},{"name":"member2","replicas":2}]');
  });
});
