// A Karmada user's hub: Flotilla's policy and work CRDs beside Karmada's CRDs, and no cluster.flotilla.io
// Cluster CRD (the README's "Karmada's files on a Flotilla hub": deleted so the plain `kubectl get clusters`
// lists Karmada's Clusters). Every member is registered the Karmada way only (a cluster.karmada.io Cluster,
// apiEndpoint and a Secret with token and caBundle); the controller runs without --members-kubeconfig.
// What the user types, `kubectl get pp,op,clusters,rb -A`, shows their policies, their Clusters READY, and
// Karmada's ResourceBinding with every cluster. Real apiservers: a hub and two members.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { customResourceDefinitions, karmadaCustomResourceDefinitions } from '../../api/crds/index.js';
import { run } from '../../pkg/cli/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { capturingIO, installCRDs, type Obj } from './controller-io.js';

const WAIT_MS = 60_000;
const TOKEN = 'karmada-user-hub-token-0123456789';
const tokenDir = mkdtempSync(join(tmpdir(), 'karmada-user-hub-'));
writeFileSync(join(tokenDir, 'tokens.csv'), `${TOKEN},karmada-agent,uid-karmada,system:masters\n`);

const DEPLOYMENT: Obj = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'docker.io/library/nginx:1.27' }] },
    },
  },
};

const POLICIES: Obj[] = [
  {
    apiVersion: 'policy.karmada.io/v1alpha1',
    kind: 'PropagationPolicy',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
      placement: { clusterAffinity: { clusterNames: ['member1', 'member2'] } },
    },
  },
  {
    apiVersion: 'policy.karmada.io/v1alpha1',
    kind: 'OverridePolicy',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
      overrideRules: [{ overriders: { labelsOverrider: [{ operator: 'add', value: { team: 'shop' } }] } }],
    },
  },
];

void describe("a Karmada user's hub without Flotilla's Cluster CRD", () => {
  const env = useEnvironment({ members: 2, apiserverArgs: [`--token-auth-file=${join(tokenDir, 'tokens.csv')}`] });
  const stop = new AbortController();
  let controller: Promise<number>;
  let out: ReturnType<typeof capturingIO>;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);

  before(async () => {
    const e = env();
    const crds = [
      ...customResourceDefinitions().filter((c) => c.metadata.name !== 'clusters.cluster.flotilla.io'),
      ...karmadaCustomResourceDefinitions(),
    ];
    await installCRDs(e.hub, crds);
    const items: Obj[] = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'karmada-cluster' } },
    ];
    for (const [i, m] of e.members.entries()) {
      const name = `member${i + 1}`;
      const ca = readFileSync(join(e.dir, name, 'pki', 'ca.crt'), 'utf8');
      items.push(
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace: 'karmada-cluster' },
          data: { token: Buffer.from(TOKEN).toString('base64'), caBundle: Buffer.from(ca).toString('base64') },
        },
        {
          apiVersion: 'cluster.karmada.io/v1alpha1',
          kind: 'Cluster',
          metadata: { name },
          spec: { syncMode: 'Push', apiEndpoint: m.server, secretRef: { namespace: 'karmada-cluster', name } },
        },
      );
    }
    const applied = await k(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items });
    assert.equal(applied.status, 0, applied.stderr);
    out = capturingIO(stop.signal);
    controller = run(
      ['controller', '--kubeconfig', e.hub.kubeconfigPath, '--metrics-port', '0', '--namespace', 'flotilla-system'],
      out,
    );
  });

  after(async () => {
    stop.abort();
    assert.equal(await controller, 0, out.err());
  });

  void it('kubectl get pp,op,clusters,rb -A: the policies, both Clusters READY, the binding on both clusters', async () => {
    const applied = await k(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: [DEPLOYMENT, ...POLICIES] });
    assert.equal(applied.status, 0, applied.stderr);
    const table = await eventually(
      () => k(['get', 'pp,op,clusters,rb', '-A']),
      (r) => r.status === 0 && /web-deployment\s+True\s+True\s+member1,member2\s/.test(r.stdout),
      WAIT_MS,
      500,
    );
    assert.equal(table.status, 0, table.stderr);
    const text = table.stdout;
    assert.match(text, /^shop\s+propagationpolicy\.policy\.karmada\.io\/web\s/m, text);
    assert.match(text, /^shop\s+overridepolicy\.policy\.karmada\.io\/web\s/m, text);
    // The plain plural reaches Karmada's group: the only Cluster CRD the hub serves. READY from Ready.
    for (const name of ['member1', 'member2'])
      assert.match(
        text,
        new RegExp(`^\\s*cluster\\.cluster\\.karmada\\.io/${name}\\s+\\S+\\s+Push\\s+True\\s`, 'm'),
        text,
      );
    assert.match(
      text,
      /^shop\s+resourcebinding\.work\.karmada\.io\/web-deployment\s+True\s+True\s+member1,member2\s/m,
      `${text}\n${out.err()}`,
    );
    // And the copies are there, with the override.
    for (const m of env().members) {
      const copy = await kubectl(m.kubeconfigPath, ['get', 'deployment', 'web', '-n', 'shop', '-o', 'json']);
      assert.equal(copy.status, 0, copy.stderr);
      assert.equal((((JSON.parse(copy.stdout) as Obj).metadata as Obj).labels as Obj).team, 'shop');
    }
  });
});
