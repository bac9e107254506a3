// Flotilla's CRDs on a real apiserver: they install and become Established, objects round-trip in both
// served versions (the apiserver calls the conversion webhook, running in this process), the schema
// rejects malformed objects by itself and applies Karmada's defaults, and kubectl shows the printer columns.

import assert from 'node:assert/strict';
import { describe, it, before, after } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';

import { CONVERSION_ANNOTATION } from '../../api/conversion/index.js';
import { customResourceDefinitions } from '../../api/crds/index.js';
import { createCA, createServingCert } from '../../pkg/certs/index.js';
import { WebhookHandler, WebhookServer } from '../../pkg/webhook/index.js';
import { applyManifests, waitForCRDsEstablished } from '../envtest/index.js';
import { useEnvironment } from '../envtest/suite.js';
import { kubectl } from '../envtest/kubectl.js';

type Obj = Record<string, unknown>;
const GROUP = 'policy.flotilla.io';
const NS = 'crds-test';

/**
 * `kubectl apply --server-side` of a List. CRDs go through kubectl: client-node re-serializes built-in kinds
 * through its models, which drop `x-kubernetes-*` keys from schema properties.
 */
async function kubectlApply(kubeconfig: string, objects: unknown[]): Promise<void> {
  const r = await kubectl(
    kubeconfig,
    ['apply', '--server-side', '--field-manager=flotilla-test', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  );
  assert.equal(r.status, 0, r.stderr);
}

/** HTTP status and message of a client-node ApiException. */
function apiError(err: unknown): { code: number | undefined; message: string } {
  const e = err as { code?: unknown; body?: unknown };
  const body = typeof e.body === 'string' ? e.body : JSON.stringify(e.body ?? '');
  let message = body;
  try {
    const parsed = (JSON.parse(body) as { message?: unknown }).message;
    if (typeof parsed === 'string') message = parsed;
  } catch {
    // keep the raw body
  }
  return { code: typeof e.code === 'number' ? e.code : undefined, message };
}

void describe('the CRDs on a real apiserver', () => {
  const env = useEnvironment({ members: 0 });
  const abort = new AbortController();
  let stopped: Promise<void> | undefined;
  let dir: string;
  let handler: WebhookHandler;
  const api = () => env().hub.kubeConfig().makeApiClient(CustomObjectsApi);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'crds-it-'));
    const ca = createCA('crds-it-ca');
    const serving = createServingCert(ca, { commonName: 'webhook', ipAddresses: ['127.0.0.1'] });
    writeFileSync(join(dir, 'tls.crt'), serving.certPem);
    writeFileSync(join(dir, 'tls.key'), serving.keyPem);
    handler = new WebhookHandler();
    const server = new WebhookServer({
      handler,
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
    });
    const started = await server.start(abort.signal);
    stopped = started.stopped;
    // As envtest does for a bare apiserver: the conversion webhook is reached by URL, not through a Service.
    const crds = customResourceDefinitions().map((crd) => {
      const c = structuredClone(crd) as unknown as { spec: { conversion?: { webhook: { clientConfig: Obj } } } };
      if (c.spec.conversion)
        c.spec.conversion.webhook.clientConfig = {
          url: `https://127.0.0.1:${started.address.port}/convert`,
          caBundle: Buffer.from(ca.certPem).toString('base64'),
        };
      return c;
    });
    await kubectlApply(env().hub.kubeconfigPath, crds);
    await applyManifests(env().hub, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }]);
    await waitForCRDsEstablished(
      env().hub,
      customResourceDefinitions().map((c) => c.metadata.name),
      60_000,
    );
  });

  after(async () => {
    abort.abort();
    await stopped;
    rmSync(dir, { recursive: true, force: true });
  });

  void it('installs every CRD and serves both policy versions', async () => {
    // waitForCRDsEstablished above has checked Established and discovery for each served version.
    const list = (await api().listNamespacedCustomObject({
      group: GROUP,
      version: 'v1alpha1',
      namespace: NS,
      plural: 'overridepolicies',
    })) as { items: unknown[] };
    assert.deepStrictEqual(list.items, []);
  });

  void it('round-trips a v1alpha1 policy in the deprecated form through v1beta1 storage', async () => {
    const overriders = { plaintext: [{ path: '/spec/replicas', operator: 'replace', value: { nested: [1, 'two'] } }] };
    const body = {
      apiVersion: `${GROUP}/v1alpha1`,
      kind: 'OverridePolicy',
      metadata: { name: 'legacy', namespace: NS },
      spec: { targetCluster: { clusterNames: ['east'] }, overriders },
    };
    await api().createNamespacedCustomObject({
      group: GROUP,
      version: 'v1alpha1',
      namespace: NS,
      plural: 'overridepolicies',
      body,
    });

    const alpha = (await api().getNamespacedCustomObject({
      group: GROUP,
      version: 'v1alpha1',
      namespace: NS,
      plural: 'overridepolicies',
      name: 'legacy',
    })) as Obj;
    assert.deepStrictEqual(alpha.spec, body.spec);
    assert.equal((alpha.metadata as { annotations?: Obj }).annotations?.[CONVERSION_ANNOTATION], undefined);

    const beta = (await api().getNamespacedCustomObject({
      group: GROUP,
      version: 'v1beta1',
      namespace: NS,
      plural: 'overridepolicies',
      name: 'legacy',
    })) as Obj;
    assert.equal(beta.apiVersion, `${GROUP}/v1beta1`);
    assert.deepStrictEqual(beta.spec, { overrideRules: [{ targetCluster: { clusterNames: ['east'] }, overriders }] });
    assert.ok((beta.metadata as { annotations: Obj }).annotations[CONVERSION_ANNOTATION]);
    assert.match(
      handler.registry.render(),
      /flotilla_webhook_requests_total\{path="\/convert",outcome="success"\} [1-9]/,
    );
  });

  void it('round-trips a v1beta1 policy and a Cluster unchanged', async () => {
    const spec = {
      resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
      overrideRules: [
        {
          overriders: {
            imageOverrider: [
              { component: 'Registry', operator: 'replace', value: 'mirror.example.com', includeInitContainers: true },
            ],
          },
        },
      ],
    };
    await api().createClusterCustomObject({
      group: GROUP,
      version: 'v1beta1',
      plural: 'clusteroverridepolicies',
      body: { apiVersion: `${GROUP}/v1beta1`, kind: 'ClusterOverridePolicy', metadata: { name: 'mirror' }, spec },
    });
    const read = (await api().getClusterCustomObject({
      group: GROUP,
      version: 'v1beta1',
      plural: 'clusteroverridepolicies',
      name: 'mirror',
    })) as Obj;
    assert.deepStrictEqual(read.spec, spec);

    const cluster = {
      provider: 'aws',
      region: 'eu-west-1',
      zones: ['a', 'b'],
      syncMode: 'Push',
      taints: [{ key: 'dedicated', effect: 'NoSchedule' }],
    };
    await api().createClusterCustomObject({
      group: 'cluster.flotilla.io',
      version: 'v1alpha1',
      plural: 'clusters',
      body: { apiVersion: 'cluster.flotilla.io/v1alpha1', kind: 'Cluster', metadata: { name: 'east' }, spec: cluster },
    });
    assert.deepStrictEqual(
      (
        (await api().getClusterCustomObject({
          group: 'cluster.flotilla.io',
          version: 'v1alpha1',
          plural: 'clusters',
          name: 'east',
        })) as Obj
      ).spec,
      cluster,
    );
  });

  void it("fills Karmada's schema defaults on a PropagationPolicy", async () => {
    const body = {
      apiVersion: `${GROUP}/v1beta1`,
      kind: 'PropagationPolicy',
      metadata: { name: 'defaults', namespace: NS },
      spec: {
        resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment' }],
        placement: { replicaScheduling: {} },
        failover: { application: { decisionConditions: {} } },
      },
    };
    const created = (await api().createNamespacedCustomObject({
      group: GROUP,
      version: 'v1beta1',
      namespace: NS,
      plural: 'propagationpolicies',
      body,
    })) as { spec: Obj };
    assert.equal(created.spec.priority, 0);
    assert.equal(created.spec.preemption, 'Never');
    assert.equal(created.spec.conflictResolution, 'Abort');
    assert.equal(created.spec.schedulerName, 'default-scheduler');
    assert.deepStrictEqual(created.spec.placement, { replicaScheduling: { replicaSchedulingType: 'Divided' } });
    assert.deepStrictEqual(created.spec.failover, {
      application: { decisionConditions: { tolerationSeconds: 300 }, purgeMode: 'Gracefully' },
    });
  });

  const malformed: Array<{ name: string; plural: string; spec: Obj; message: RegExp }> = [
    {
      name: 'a PropagationPolicy selecting nothing',
      plural: 'propagationpolicies',
      spec: { resourceSelectors: [] },
      message:
        /spec\.resourceSelectors: Invalid value: 0: spec\.resourceSelectors in body should have at least 1 items/,
    },
    {
      name: 'a selector without a kind',
      plural: 'propagationpolicies',
      spec: { resourceSelectors: [{ apiVersion: 'v1' }] },
      message: /spec\.resourceSelectors\[0\]\.kind: Required value/,
    },
    {
      name: 'an unknown overrider operator',
      plural: 'overridepolicies',
      spec: { overrideRules: [{ overriders: { plaintext: [{ path: '/a', operator: 'upsert' }] } }] },
      message: /spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]\.operator: Unsupported value: "upsert"/,
    },
    {
      name: 'a rule without overriders',
      plural: 'overridepolicies',
      spec: { overrideRules: [{ targetCluster: {} }] },
      message: /spec\.overrideRules\[0\]\.overriders: Required value/,
    },
    {
      name: 'a zero static weight',
      plural: 'propagationpolicies',
      spec: {
        resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
        placement: {
          replicaScheduling: { weightPreference: { staticWeightList: [{ targetCluster: {}, weight: 0 }] } },
        },
      },
      message: /weight in body should be greater than or equal to 1/,
    },
  ];
  for (const m of malformed) {
    for (const version of ['v1alpha1', 'v1beta1']) {
      void it(`rejects ${m.name} in ${version} with the schema's field path`, async () => {
        const kind = m.plural === 'propagationpolicies' ? 'PropagationPolicy' : 'OverridePolicy';
        const body = {
          apiVersion: `${GROUP}/${version}`,
          kind,
          metadata: { name: 'bad', namespace: NS },
          spec: m.spec,
        };
        await assert.rejects(
          api().createNamespacedCustomObject({ group: GROUP, version, namespace: NS, plural: m.plural, body }),
          (err: unknown) => {
            const e = apiError(err);
            assert.equal(e.code, 422, e.message);
            assert.match(e.message, m.message);
            return true;
          },
        );
      });
    }
  }

  void it('shows the printer columns in kubectl', async () => {
    const r = await kubectl(env().hub.kubeconfigPath, ['get', 'propagationpolicies.policy.flotilla.io', '-n', NS]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^NAME\s+CONFLICT-RESOLUTION\s+PRIORITY\s+TEMPLATES\s+READY\s+AGE$/m);
    // No controller runs here: TEMPLATES and READY are empty until one writes the policy's status.
    assert.match(r.stdout, /^defaults\s+Abort\s+0\s+\S+$/m);
  });
});
