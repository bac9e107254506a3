// `flotilla status` against real apiservers: a hub with Flotilla's CRDs and two members, the controller
// propagating a Deployment (an image override on member1) and a ConfigMap that member2 already holds,
// written there by kubectl (a Conflict naming that writer). The status commands read the hub with the
// hub's kubeconfig, as a user would, through the CLI entry.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';

import { run } from '../../pkg/cli/index.js';
import type { KubeClient } from '../../pkg/kube/client.js';
import type { ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { applyObject, capturingIO, getObject, prepareHub, startController, type Obj } from './controller-io.js';

const WAIT_MS = 60_000;
const POLICY = 'policy.flotilla.io/v1beta1';
const BINDING = (name: string) => `/apis/work.flotilla.io/v1alpha1/namespaces/shop/resourcebindings/${name}`;

/** Runs `flotilla ARGS…` in this process; resolves to its exit status and what it printed. */
async function flotilla(
  args: readonly string[],
  signal = new AbortController().signal,
  onOutput?: (stdout: string) => void,
): Promise<{ status: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => {
    out += c.toString();
    onOutput?.(out);
  });
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const status = await run(args, { stdout, stderr, stdin: new PassThrough(), env: {}, signal });
  return { status, stdout: out, stderr: err };
}

void describe('flotilla status: the fleet read from the hub', () => {
  const env = useEnvironment({ members: 2 });
  let hub: KubeClient;
  const stop = new AbortController();
  let controller: Promise<number>;
  let log: ReturnType<typeof capturingIO>;
  let kubeconfig: string;
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean) => eventually(probe, done, WAIT_MS, 200);
  const entry = (b: Obj | undefined, name: string) =>
    (((b?.status as Obj | undefined)?.clusters as Obj[] | undefined) ?? []).find((c) => c.name === name);

  before(async () => {
    const e = env();
    ({ hub } = await prepareHub(e, 'shop'));
    kubeconfig = e.hub.kubeconfigPath;
    const member2 = e.members[1] as ClusterHandle;
    const created = await kubectl(member2.kubeconfigPath, [
      'create',
      'configmap',
      'settings',
      '-n',
      'shop',
      '--from-literal=mode=local',
    ]);
    assert.equal(created.status, 0, created.stderr);
    for (const name of ['member1', 'member2'])
      await applyObject(hub, `/apis/cluster.flotilla.io/v1alpha1/clusters/${name}`, {
        apiVersion: 'cluster.flotilla.io/v1alpha1',
        kind: 'Cluster',
        metadata: { name, labels: { env: 'prod' } },
        spec: { region: name === 'member1' ? 'eu' : 'us' },
      });
    await applyObject(hub, '/apis/apps/v1/namespaces/shop/deployments/web', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'registry.example/shop/web:1.0' }] },
        },
      },
    });
    await applyObject(hub, '/api/v1/namespaces/shop/configmaps/settings', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'shop' },
      data: { mode: 'hub' },
    });
    await applyObject(hub, `/apis/${POLICY}/namespaces/shop/propagationpolicies/web`, {
      apiVersion: POLICY,
      kind: 'PropagationPolicy',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        resourceSelectors: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' },
        ],
        placement: { clusterAffinity: { clusterNames: ['member1', 'member2'] } },
      },
    });
    await applyObject(hub, `/apis/${POLICY}/namespaces/shop/overridepolicies/web`, {
      apiVersion: POLICY,
      kind: 'OverridePolicy',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
        overrideRules: [
          {
            targetCluster: { clusterNames: ['member1'] },
            overriders: { imageOverrider: [{ component: 'Tag', operator: 'replace', value: '1.1' }] },
          },
        ],
      },
    });
    log = capturingIO(stop.signal);
    controller = startController(e.hub, e.membersKubeconfigPath, log);
    await until(
      () => getObject(hub, BINDING('web-deployment')),
      (b) => entry(b, 'member1')?.state === 'Applied' && entry(b, 'member2')?.state === 'Applied',
    );
    await until(
      () => getObject(hub, BINDING('settings-configmap')),
      (b) => entry(b, 'member2')?.state === 'Conflict',
    );
  });

  after(async () => {
    stop.abort();
    assert.equal(await controller, 0, log.err());
  });

  void it('status templates: the placement matrix, a Conflict naming the writer kubectl used', async () => {
    const r = await flotilla(['status', 'templates', '--kubeconfig', kubeconfig]);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^NAMESPACE\s+KIND\s+NAME\s+POLICY\s+APPLIED\s+READY\s+MEMBER1\s+MEMBER2\s+NOTES$/);
    const row = (kind: string) => (lines.find((l) => l.split(/\s+/)[1] === kind) ?? '').split(/\s{3,}/);
    assert.deepEqual(row('Deployment').slice(0, 4), ['shop', 'Deployment', 'web', 'web']);
    assert.deepEqual(row('Deployment').slice(6, 8), ['Applied:2', 'Applied:2']);
    const settings = row('ConfigMap');
    assert.deepEqual(settings.slice(0, 8), [
      'shop',
      'ConfigMap',
      'settings',
      'web',
      '1/2',
      '1/2',
      'Applied',
      'Conflict',
    ]);
    assert.match(settings[8] ?? '', /^member2: Conflict with kubectl-create$/);

    const conflicts = await flotilla([
      'status',
      'templates',
      '--kubeconfig',
      kubeconfig,
      '--state',
      'Conflict',
      '-o',
      'json',
    ]);
    assert.equal(conflicts.status, 0, conflicts.stderr);
    const m = JSON.parse(conflicts.stdout) as {
      clusters: string[];
      total: number;
      rows: Array<{ template: Obj; cells: Obj[] }>;
    };
    assert.deepEqual(m.clusters, ['member1', 'member2']);
    assert.equal(m.total, 2);
    assert.deepEqual(
      m.rows.map((x) => x.template.name),
      ['settings'],
    );
    const cell = m.rows[0]?.cells.find((c) => c.cluster === 'member2');
    assert.deepEqual([cell?.state, cell?.conflictWith, cell?.reportedBy], ['Conflict', 'kubectl-create', 'binding']);
  });

  void it('status template: the policy, each cluster, the override as a diff with its rule, and Events', async () => {
    const r = await flotilla(['status', 'template', 'web', '-n', 'shop', '--kubeconfig', kubeconfig]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Template: {4}Deployment shop\/web \(apps\/v1\)$/m);
    assert.match(r.stdout, /^Policy: {6}PropagationPolicy shop\/web$/m);
    assert.match(r.stdout, /^Overrides: {3}OverridePolicy shop\/web$/m);
    assert.match(r.stdout, /^ {2}member1\s+yes\s+Applied\b/m);
    assert.match(r.stdout, /^ {2}member2\s+yes\s+Applied\b/m);
    assert.match(
      r.stdout,
      /^ {2}\/spec\/template\/spec\/containers\/0\/image: "registry\.example\/shop\/web:1\.0" -> "registry\.example\/shop\/web:1\.1" {3}# OverridePolicy shop\/web spec\.overrideRules\[0\]\.overriders\.imageOverrider\[0\]$/m,
    );
    assert.match(r.stdout, /Copy on member2 \(against the template\):\n {2}no field changed\n/);

    const conflict = await flotilla([
      'status',
      'template',
      'configmap/settings',
      '--kubeconfig',
      kubeconfig,
      '-o',
      'json',
    ]);
    assert.equal(conflict.status, 0, conflict.stderr);
    const d = JSON.parse(conflict.stdout) as {
      clusters: Array<{ cluster: string; chosen: boolean; cell?: Obj }>;
      events: Obj[];
    };
    const m2 = d.clusters.find((c) => c.cluster === 'member2');
    assert.deepEqual([m2?.chosen, m2?.cell?.state, m2?.cell?.conflictWith], [true, 'Conflict', 'kubectl-create']);
    assert.ok(
      d.events.some((e) => e.reason === 'Conflict' && String(e.message).includes('member2')),
      JSON.stringify(d.events),
    );

    const missing = await flotilla(['status', 'template', 'nope', '--kubeconfig', kubeconfig]);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /no template named "nope" has a ResourceBinding on the hub/);
    assert.doesNotMatch(missing.stderr, /\n\s+at /, 'no stack trace');
  });

  void it('status clusters and policies: both Clusters ready, the policy counts its templates', async () => {
    const clusters = await until(
      () => flotilla(['status', 'clusters', '--kubeconfig', kubeconfig, '-o', 'json']),
      (r) => (JSON.parse(r.stdout) as { clusters: Obj[] }).clusters.every((c) => c.ready === 'True'),
    );
    const list = (JSON.parse(clusters.stdout) as { clusters: Obj[] }).clusters;
    assert.deepEqual(
      list.map((c) => [c.name, c.syncMode, c.ready, c.region]),
      [
        ['member1', 'Push', 'True', 'eu'],
        ['member2', 'Push', 'True', 'us'],
      ],
    );
    const table = await flotilla(['status', 'clusters', '--kubeconfig', kubeconfig]);
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /^NAME\s+VERSION\s+MODE\s+READY\s+LEASE\s+TAINTS\s+CPU\s+MEMORY\s+PODS\s+APIS\s+AGE$/m);
    assert.match(table.stdout, /^member1\s+v1\.\d+\.\d+\S*\s+Push\s+True\s+-\s+<none>\s/m);

    const policies = await until(
      () => flotilla(['status', 'policies', '--kubeconfig', kubeconfig, '-o', 'yaml']),
      (r) => /templates: 2/.test(r.stdout),
    );
    assert.match(policies.stdout, /kind: PropagationPolicy\n {2}namespace: shop\n {2}name: web\n/);
  });

  void it('status templates --watch prints again when the hub changes, and stops when interrupted', async () => {
    const watching = new AbortController();
    let seen = '';
    const done = flotilla(
      ['status', 'templates', '--kubeconfig', kubeconfig, '--cluster', 'member1', '-w'],
      watching.signal,
      (o) => {
        seen = o;
      },
    );
    await until(
      () => Promise.resolve(seen),
      (s) => s.includes('settings'),
    );
    await applyObject(hub, '/api/v1/namespaces/shop/configmaps/extra', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'extra', namespace: 'shop' },
      data: { a: 'b' },
    });
    await applyObject(hub, `/apis/${POLICY}/namespaces/shop/propagationpolicies/extra`, {
      apiVersion: POLICY,
      kind: 'PropagationPolicy',
      metadata: { name: 'extra', namespace: 'shop' },
      spec: {
        resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'extra' }],
        placement: { clusterAffinity: { clusterNames: ['member1'] } },
      },
    });
    await until(
      () => Promise.resolve(seen),
      (s) => /^shop\s+ConfigMap\s+extra\s+extra\s+1\/1\s+1\/1\s+Applied\s/m.test(s),
    );
    const tables = seen.split('\n\n').filter((t) => t.startsWith('NAMESPACE'));
    assert.ok(tables.length >= 2, seen);
    watching.abort();
    const r = await done;
    assert.equal(r.status, 0, r.stderr);
  });
});
