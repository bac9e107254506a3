// The apiserver itself calls the webhook: a real hub sends /validate, /mutate and /convert to the webhook
// server running in this process. Installed the way deploy/ does it — `flotilla certs create` makes the
// serving certificate and Secret, deploy/webhook/webhookconfigurations.yaml registers the webhooks, and
// `flotilla certs patch` fills in the CA bundle — except that a bare apiserver reaches the webhook by URL
// instead of through the Service.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';

import { CONVERSION_ANNOTATION } from '../../api/conversion/index.js';
import { PERMANENT_ID_LABEL } from '../../api/defaulting/index.js';
import { customResourceDefinitions, karmadaCustomResourceDefinitions } from '../../api/crds/index.js';
import type { CommandIO } from '../../pkg/cli/command.js';
import { run as flotilla } from '../../pkg/cli/index.js';
import { describeKubeError, httpStatus } from '../../pkg/kube/client-errors.js';
import { clusterLister, PollingInventory, WebhookHandler, WebhookServer } from '../../pkg/webhook/index.js';
import { applyManifests, waitForCRDsEstablished } from '../envtest/index.js';
import { useEnvironment } from '../envtest/suite.js';
import { kubectl } from '../envtest/kubectl.js';
import { eventually } from '../eventually.js';

type Obj = Record<string, unknown>;
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const GROUP = 'policy.flotilla.io';
const SYSTEM_NS = 'flotilla-system';
const NS = 'webhook-it';

function cliIO(): CommandIO & { err: () => string } {
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return {
    stdout: new PassThrough(),
    stderr,
    stdin: new PassThrough(),
    env: {},
    signal: new AbortController().signal,
    err: () => err,
  };
}

const policy = (kind: string, name: string, spec: Obj, version = 'v1alpha1'): Obj => ({
  apiVersion: `${GROUP}/${version}`,
  kind,
  metadata: kind.startsWith('Cluster') ? { name } : { name, namespace: NS },
  spec,
});

void describe('the apiserver calling the webhook', () => {
  const env = useEnvironment({ members: 0 });
  const abort = new AbortController();
  let stopped: Promise<void> | undefined;
  let dir: string;
  let handler: WebhookHandler;
  let inventory: PollingInventory;
  const kubeconfig = () => env().hub.kubeconfigPath;
  const api = () => env().hub.kubeConfig().makeApiClient(CustomObjectsApi);
  /** Requests the webhook answered on a path, any outcome. */
  const calls = (path: string): number =>
    [
      ...handler.registry
        .render()
        .matchAll(new RegExp(`^flotilla_webhook_requests_total\\{path="${path}",outcome="[a-z_]+"\\} (\\d+)$`, 'gm')),
    ].reduce((n, m) => n + Number(m[1]), 0);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'webhook-it-'));
    await applyManifests(
      env().hub,
      [SYSTEM_NS, NS].map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
    );

    const create = cliIO();
    const created = await flotilla(
      [
        'certs',
        'create',
        '--service',
        'flotilla-webhook',
        '--namespace',
        SYSTEM_NS,
        '--secret',
        'flotilla-webhook-cert',
        '--hosts',
        '127.0.0.1',
        '--cert-dir',
        dir,
        '--kubeconfig',
        kubeconfig(),
      ],
      create,
    );
    assert.equal(created, 0, create.err());

    // The Cluster list as `flotilla webhook` reads it: both groups (the hub serves Karmada's API here).
    const clusters = env().hub.kubeConfig().makeApiClient(CustomObjectsApi);
    inventory = new PollingInventory({
      intervalMs: 200,
      list: clusterLister(clusters, { status: httpStatus, describe: describeKubeError }),
    });
    handler = new WebhookHandler({ inventory });
    const server = new WebhookServer({
      handler,
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
    });
    const started = await server.start(abort.signal);
    stopped = started.stopped;
    const url = (path: string) => `https://127.0.0.1:${started.address.port}${path}`;

    // The CRDs and webhook configurations as deploy/ ships them with its Karmada API component (this hub
    // serves Karmada's groups), pointed at this process.
    const crds = customResourceDefinitions().map((crd) => {
      const c = structuredClone(crd) as unknown as { spec: { conversion?: { webhook: { clientConfig: Obj } } } };
      if (c.spec.conversion) c.spec.conversion.webhook.clientConfig = { url: url('/convert') };
      return c;
    });
    const configs = ['validatingwebhookconfiguration-flotilla.yaml', 'mutatingwebhookconfiguration-flotilla.yaml']
      .flatMap((f) => parseAllDocuments(readFileSync(join(ROOT, 'deploy/karmada-api/patches', f), 'utf8')))
      .map((d) => d.toJS() as { webhooks: Array<{ clientConfig: { service?: { path: string }; url?: string } }> });
    for (const c of configs)
      for (const w of c.webhooks) w.clientConfig = { url: url(w.clientConfig.service?.path ?? '') };
    const applied = await kubectl(kubeconfig(), ['apply', '--server-side', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [...crds, ...karmadaCustomResourceDefinitions(), ...configs],
    });
    assert.equal(applied.status, 0, applied.stderr);

    const patch = cliIO();
    const patched = await flotilla(
      [
        'certs',
        'patch',
        '--secret',
        'flotilla-webhook-cert',
        '--namespace',
        SYSTEM_NS,
        '--validating',
        'flotilla',
        '--mutating',
        'flotilla',
        '--kubeconfig',
        kubeconfig(),
      ],
      patch,
    );
    assert.equal(patched, 0, patch.err());
    await waitForCRDsEstablished(
      env().hub,
      [...customResourceDefinitions(), ...karmadaCustomResourceDefinitions()].map((c) => c.metadata.name),
      60_000,
    );
    await inventory.start(abort.signal);

    // The apiserver picks up webhook configuration changes asynchronously: wait until a dry run reaches us.
    const probe = policy('ClusterOverridePolicy', 'probe', { overrideRules: [] });
    const reached = await eventually(
      () => kubectl(kubeconfig(), ['create', '--dry-run=server', '-f', '-'], probe),
      (r) => r.status === 0 && calls('/validate') > 0,
      60_000,
      100,
    );
    assert.ok(reached.status === 0 && calls('/validate') > 0, `the webhook was never called: ${reached.stderr}`);
  });

  after(async () => {
    abort.abort();
    await stopped;
    rmSync(dir, { recursive: true, force: true });
  });

  void it("denies an invalid policy, and kubectl's message carries the field path", async () => {
    const bad = policy('PropagationPolicy', 'wrong-namespace', {
      resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'elsewhere' }],
    });
    const r = await kubectl(kubeconfig(), ['apply', '-f', '-'], bad);
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /admission webhook "policies\.validate\.flotilla\.io" denied the request: spec\.resourceSelectors\[0\]\.namespace: Invalid value: "elsewhere"/,
    );
  });

  void it('denies an invalid Cluster with the field path', async () => {
    const r = await kubectl(kubeconfig(), ['apply', '-f', '-'], {
      apiVersion: 'cluster.flotilla.io/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'proxied' },
      spec: { proxyURL: 'ftp://proxy.example.com' },
    });
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /admission webhook "clusters\.validate\.flotilla\.io" denied the request: spec\.proxyURL: Invalid value: "ftp:\/\/proxy\.example\.com"/,
    );
  });

  void it('stores the defaults of the mutating webhook, and keeps the permanent id across updates', async () => {
    const spec = {
      resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
      placement: { spreadConstraints: [{}], replicaScheduling: { replicaSchedulingType: 'Divided' } },
    };
    await api().createNamespacedCustomObject({
      group: GROUP,
      version: 'v1alpha1',
      namespace: NS,
      plural: 'propagationpolicies',
      body: policy('PropagationPolicy', 'web', spec),
    });
    const stored = (await api().getNamespacedCustomObject({
      group: GROUP,
      version: 'v1beta1',
      namespace: NS,
      plural: 'propagationpolicies',
      name: 'web',
    })) as { metadata: { labels: Record<string, string>; resourceVersion: string }; spec: Obj };
    const id = stored.metadata.labels[PERMANENT_ID_LABEL];
    assert.match(id ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepStrictEqual(stored.spec.resourceSelectors, [
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: NS },
    ]);
    assert.deepStrictEqual(stored.spec.placement, {
      spreadConstraints: [{ spreadByField: 'cluster', minGroups: 1 }],
      replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' },
    });

    // A replace from a manifest that does not know the id keeps it.
    const replacement = {
      ...policy('PropagationPolicy', 'web', { ...spec, priority: 5 }),
      metadata: { name: 'web', namespace: NS, resourceVersion: stored.metadata.resourceVersion },
    };
    await api().replaceNamespacedCustomObject({
      group: GROUP,
      version: 'v1alpha1',
      namespace: NS,
      plural: 'propagationpolicies',
      name: 'web',
      body: replacement,
    });
    const updated = (await api().getNamespacedCustomObject({
      group: GROUP,
      version: 'v1alpha1',
      namespace: NS,
      plural: 'propagationpolicies',
      name: 'web',
    })) as { metadata: { labels: Record<string, string> }; spec: Obj };
    assert.equal(updated.metadata.labels[PERMANENT_ID_LABEL], id);
    assert.equal(updated.spec.priority, 5);
  });

  void it("gives policy.karmada.io policies their id under Karmada's label keys, one per kind", async () => {
    const made = await kubectl(kubeconfig(), ['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'policy.karmada.io/v1alpha1',
          kind: 'PropagationPolicy',
          metadata: { name: 'karmada-pp', namespace: NS },
          spec: { resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }] },
        },
        {
          apiVersion: 'policy.karmada.io/v1alpha1',
          kind: 'ClusterPropagationPolicy',
          metadata: { name: 'karmada-cpp' },
          spec: { resourceSelectors: [{ apiVersion: 'v1', kind: 'Namespace', name: 'web' }] },
        },
      ],
    });
    assert.equal(made.status, 0, made.stderr);
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const labels = async (path: string) => {
      const r = await kubectl(kubeconfig(), ['get', '--raw', path]);
      assert.equal(r.status, 0, r.stderr);
      return (JSON.parse(r.stdout) as { metadata: { labels?: Record<string, string> } }).metadata.labels ?? {};
    };
    const pp = await labels(`/apis/policy.karmada.io/v1alpha1/namespaces/${NS}/propagationpolicies/karmada-pp`);
    assert.match(pp['propagationpolicy.karmada.io/permanent-id'] ?? '', uuid);
    assert.equal(pp[PERMANENT_ID_LABEL], undefined);
    const cpp = await labels('/apis/policy.karmada.io/v1alpha1/clusterpropagationpolicies/karmada-cpp');
    assert.match(cpp['clusterpropagationpolicy.karmada.io/permanent-id'] ?? '', uuid);
    assert.equal(cpp[PERMANENT_ID_LABEL], undefined);
  });

  void it('converts on read in the other version', async () => {
    const before = calls('/convert');
    const overriders = { plaintext: [{ path: '/spec/replicas', operator: 'replace', value: 2 }] };
    const created = await kubectl(
      kubeconfig(),
      ['create', '-f', '-'],
      policy('OverridePolicy', 'legacy', { targetCluster: { clusterNames: ['east'] }, overriders }),
    );
    assert.equal(created.status, 0, created.stderr);

    const beta = await kubectl(kubeconfig(), [
      'get',
      `overridepolicies.v1beta1.${GROUP}`,
      'legacy',
      '-n',
      NS,
      '-o',
      'json',
    ]);
    assert.equal(beta.status, 0, beta.stderr);
    const b = JSON.parse(beta.stdout) as { apiVersion: string; metadata: { annotations: Obj }; spec: Obj };
    assert.equal(b.apiVersion, `${GROUP}/v1beta1`);
    assert.deepStrictEqual(b.spec, { overrideRules: [{ targetCluster: { clusterNames: ['east'] }, overriders }] });
    assert.ok(b.metadata.annotations[CONVERSION_ANNOTATION]);

    const alpha = await kubectl(kubeconfig(), [
      'get',
      `overridepolicies.v1alpha1.${GROUP}`,
      'legacy',
      '-n',
      NS,
      '-o',
      'json',
    ]);
    const a = JSON.parse(alpha.stdout) as { apiVersion: string; metadata: { annotations?: Obj }; spec: Obj };
    assert.equal(a.apiVersion, `${GROUP}/v1alpha1`);
    assert.deepStrictEqual(a.spec, { targetCluster: { clusterNames: ['east'] }, overriders });
    assert.equal(a.metadata.annotations?.[CONVERSION_ANNOTATION], undefined);
    assert.ok(calls('/convert') > before, 'the apiserver called /convert');
  });

  void it('passes on warnings, including one about a cluster the hub does not have', async () => {
    const made = await kubectl(kubeconfig(), ['apply', '-f', '-'], {
      apiVersion: 'cluster.flotilla.io/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'east' },
      spec: { region: 'eu' },
    });
    assert.equal(made.status, 0, made.stderr);
    await eventually(() => inventory.clusters()?.some((c) => c.metadata?.name === 'east') ?? false, Boolean, 30_000);
    const replicas = (n: number) => ({
      overriders: { plaintext: [{ path: '/spec/replicas', operator: 'replace', value: n }] },
    });
    const op = policy('OverridePolicy', 'noisy', {
      overrideRules: [replicas(1), { targetCluster: { clusterNames: ['east', 'wset'] }, ...replicas(2) }, replicas(3)],
    });
    const r = await kubectl(kubeconfig(), ['apply', '-f', '-'], op);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^Warning: .*spec\.overrideRules\[2\].*spec\.overrideRules\[0\]/m);
    assert.match(r.stderr, /^Warning: .*spec\.overrideRules\[1\]\.targetCluster\.clusterNames\[1\].*"wset"/m);
    assert.doesNotMatch(r.stderr, /"east"/);
  });

  void it('knows the cluster.karmada.io Clusters too: no warning for a policy naming one', async () => {
    const made = await kubectl(kubeconfig(), ['apply', '-f', '-'], {
      apiVersion: 'cluster.karmada.io/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'm1' },
      spec: { syncMode: 'Push', apiEndpoint: 'https://m1.example.com:6443' },
    });
    assert.equal(made.status, 0, made.stderr);
    await eventually(() => inventory.clusters()?.some((c) => c.metadata?.name === 'm1') ?? false, Boolean, 30_000);
    const op = policy('OverridePolicy', 'karmada-clusters', {
      overrideRules: [
        {
          targetCluster: { clusterNames: ['m1', 'm9'] },
          overriders: { plaintext: [{ path: '/spec/replicas', operator: 'replace', value: 1 }] },
        },
      ],
    });
    const r = await kubectl(kubeconfig(), ['apply', '-f', '-'], op);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^Warning: .*clusterNames\[1\].*"m9" is not among the known clusters \(.*\bm1\b.*\)/m);
    assert.doesNotMatch(r.stderr, /"m1"/);
  });

  // The apiserver's order: mutating admission, then the CRD schema, then validating admission. So the
  // mutating webhook does see malformed objects (defaulting tolerates any shape); the validating one does not.
  void it('lets the schema reject a malformed object before the validating webhook sees it', async () => {
    const before = calls('/validate');
    const r = await kubectl(
      kubeconfig(),
      ['create', '-f', '-'],
      policy('OverridePolicy', 'malformed', {
        overrideRules: [{ overriders: { plaintext: [{ path: '/a', operator: 'upsert' }] } }],
      }),
    );
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]\.operator: Unsupported value: "upsert"/,
    );
    assert.doesNotMatch(r.stderr, /admission webhook/);
    assert.equal(calls('/validate'), before);
  });

  void it('put the CA bundle where `certs patch` was told to', async () => {
    const r = await kubectl(kubeconfig(), [
      'get',
      'validatingwebhookconfiguration/flotilla',
      'mutatingwebhookconfiguration/flotilla',
      `crd/overridepolicies.${GROUP}`,
      '-o',
      'json',
    ]);
    const items = (JSON.parse(r.stdout) as { items: Obj[] }).items;
    const ca = readFileSync(join(dir, 'ca.crt')).toString('base64');
    for (const hook of [
      ...((items[0]?.webhooks ?? []) as Array<{ clientConfig: Obj }>),
      ...((items[1]?.webhooks ?? []) as Array<{ clientConfig: Obj }>),
    ])
      assert.equal(hook.clientConfig.caBundle, ca);
    assert.equal(
      (items[2] as { spec: { conversion: { webhook: { clientConfig: Obj } } } }).spec.conversion.webhook.clientConfig
        .caBundle,
      ca,
    );
  });
});
