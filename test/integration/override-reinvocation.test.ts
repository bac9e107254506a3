// Admission-time overrides behind a real apiserver with another mutating webhook, as in any cluster with a
// sidecar injector: `flotilla webhook --override` registered as the chart registers it (reinvocationPolicy
// IfNeeded), then a second webhook served by this test over TLS, called after Flotilla's (its
// configuration's name sorts after), also IfNeeded, that changes every object it sees (adds a container
// once and counts its calls in an annotation). So every admission reinvokes Flotilla with an object
// another webhook changed, and every call is a new request with a new uid. The rule appends an argument
// on CREATE and UPDATE: it must be in the stored object once after `kubectl create`, after `kubectl patch`
// of an unrelated field, and after `kubectl apply` of a new image.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { after, before, describe, it } from 'node:test';

import { customResourceDefinitions } from '../../api/crds/index.js';
import { waitForCRDsEstablished } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { freePort } from '../envtest/process.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { chartOverrideHook } from '../helm-binary.js';
import { stopFlotilla } from './controller-io.js';
import { spawnWebhook, waitWebhookReady, webhookCerts, type WebhookCerts, type WebhookProcess } from './webhook-io.js';

type Obj = Record<string, unknown>;
const NS = 'shop';
const WAIT_MS = 40_000;
const ARG = '--zone=eu-west-1';

/** The other webhook: adds a `proxy` container when there is none, and counts its calls in an annotation. */
function injector(cert: { certPem: string; keyPem: string }): { server: Server; calls: () => number } {
  let calls = 0;
  const server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const review = JSON.parse(body) as { request: { uid: string; object: Obj } };
      const o = review.request.object;
      const meta = o.metadata as Obj;
      const containers = ((o.spec as Obj).template as { spec: { containers: Obj[] } }).spec.containers;
      calls++;
      const patch: Obj[] = [];
      if (!containers.some((c) => c.name === 'proxy'))
        patch.push({
          op: 'add',
          path: '/spec/template/spec/containers/-',
          value: { name: 'proxy', image: 'registry.k8s.io/pause:3.9' },
        });
      patch.push(
        meta.annotations
          ? { op: 'add', path: '/metadata/annotations/example.com~1injector-calls', value: String(calls) }
          : { op: 'add', path: '/metadata/annotations', value: { 'example.com/injector-calls': String(calls) } },
      );
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: {
            uid: review.request.uid,
            allowed: true,
            patchType: 'JSONPatch',
            patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
          },
        }),
      );
    });
  });
  return { server, calls: () => calls };
}

void describe('/override with another mutating webhook after it (reinvocation) and UPDATEs', () => {
  const env = useEnvironment({ members: 0 });
  let certs: WebhookCerts;
  let webhook: WebhookProcess | undefined;
  let other: ReturnType<typeof injector> | undefined;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);

  const get = async (name: string): Promise<Obj> => {
    const r = await k(['get', 'deployment', name, '-n', NS, '-o', 'json']);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as Obj;
  };
  const containers = (d: Obj): Obj[] => ((d.spec as Obj).template as { spec: { containers: Obj[] } }).spec.containers;
  const argsOf = (d: Obj, name: string): unknown => containers(d).find((c) => c.name === name)?.args;
  /** How many times the apiserver called Flotilla's webhook (apiserver_admission_webhook_request_total). */
  const flotillaCalls = async (): Promise<number> => {
    const r = await k(['get', '--raw', '/metrics']);
    let n = 0;
    for (const m of r.stdout.matchAll(
      /^apiserver_admission_webhook_request_total\{[^}]*name="override\.flotilla\.io"[^}]*\} (\d+)/gm,
    ))
      n += Number(m[1]);
    return n;
  };

  before(async () => {
    certs = webhookCerts('override-reinvoke-it', 'webhooks');
    const caBundle = Buffer.from(certs.caPem).toString('base64');

    const crds = customResourceDefinitions();
    const installed = await k(['apply', '--server-side', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [...crds, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }],
    });
    assert.equal(installed.status, 0, installed.stderr);
    await waitForCRDsEstablished(
      env().hub,
      crds.map((c) => String((c.metadata as Obj).name)),
      60_000,
    );
    const objects = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'cluster.flotilla.io/v1alpha1',
          kind: 'Cluster',
          metadata: { name: 'eu-1' },
          spec: { region: 'eu-west-1' },
        },
        {
          apiVersion: 'policy.flotilla.io/v1beta1',
          kind: 'ClusterOverridePolicy',
          metadata: { name: 'zone-arg' },
          spec: {
            resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment' }],
            overrideRules: [
              {
                targetOperations: ['CREATE', 'UPDATE'],
                overriders: {
                  argsOverrider: [
                    { containerName: 'pause', operator: 'add', value: ['--zone=${cluster.region}'] },
                    { containerName: 'app', operator: 'add', value: ['--zone=${cluster.region}'] },
                  ],
                },
              },
            ],
          },
        },
      ],
    });
    assert.equal(objects.status, 0, objects.stderr);

    webhook = await spawnWebhook({
      certs,
      kubeconfig: env().hub.kubeconfigPath,
      args: ['--override', '--cluster-name', 'eu-1'],
    });
    await waitWebhookReady(webhook, certs.caPem, WAIT_MS);

    other = injector(certs.serving);
    const otherPort = await freePort();
    await new Promise<void>((resolve) => other?.server.listen(otherPort, '127.0.0.1', resolve));

    // Flotilla's webhook as the chart renders it; the injector's configuration sorts after it.
    const hook = chartOverrideHook('eu-1', `https://127.0.0.1:${webhook.port}/override`, caBundle);
    assert.equal(hook.reinvocationPolicy, 'IfNeeded');
    const registered = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'MutatingWebhookConfiguration',
          metadata: { name: 'a-flotilla-override' },
          webhooks: [hook],
        },
        {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'MutatingWebhookConfiguration',
          metadata: { name: 'z-injector' },
          webhooks: [
            {
              name: 'injector.example.com',
              admissionReviewVersions: ['v1'],
              clientConfig: { url: `https://127.0.0.1:${otherPort}/mutate`, caBundle },
              rules: [
                {
                  apiGroups: ['apps'],
                  apiVersions: ['v1'],
                  operations: ['CREATE', 'UPDATE'],
                  resources: ['deployments'],
                },
              ],
              reinvocationPolicy: 'IfNeeded',
              failurePolicy: 'Fail',
              sideEffects: 'None',
              timeoutSeconds: 10,
            },
          ],
        },
      ],
    });
    assert.equal(registered.status, 0, registered.stderr);

    // The apiserver picks up webhook configurations asynchronously: wait until a dry run shows both.
    const reached = await eventually(
      () => k(['create', 'deployment', 'probe', '-n', NS, '--image=nginx', '--dry-run=server', '-o', 'json']),
      (r) => r.status === 0 && r.stdout.includes('--zone=eu-west-1') && r.stdout.includes('"proxy"'),
      WAIT_MS,
      200,
    );
    assert.equal(reached.status, 0, `${reached.stderr}\n${webhook.log()}`);
    assert.match(reached.stdout, /"proxy"/);
  });

  after(async () => {
    if (webhook) await stopFlotilla(webhook);
    await new Promise((resolve) => (other ? other.server.close(resolve) : resolve(undefined)));
    rmSync(certs.dir, { recursive: true, force: true });
  });

  void it('kubectl create deployment: the argument is stored once although Flotilla was called again', async () => {
    const callsBefore = await flotillaCalls();
    const r = await k(['create', 'deployment', 'web', '-n', NS, '--image=registry.k8s.io/pause:3.9']);
    assert.equal(r.status, 0, r.stderr);
    const d = await get('web');
    assert.deepEqual(argsOf(d, 'pause'), [ARG]);
    assert.deepEqual(
      containers(d).map((c) => c.name),
      ['pause', 'proxy'],
    );
    // Reinvoked: the apiserver called Flotilla's webhook again after the injector changed the object.
    assert.ok((await flotillaCalls()) - callsBefore >= 2, 'the apiserver did not reinvoke override.flotilla.io');
  });

  void it('kubectl patch of an unrelated field, twice: the argument is still there once', async () => {
    for (const replicas of [2, 3]) {
      const r = await k([
        'patch',
        'deployment',
        'web',
        '-n',
        NS,
        '--type=merge',
        '-p',
        `{"spec":{"replicas":${replicas}}}`,
      ]);
      assert.equal(r.status, 0, r.stderr);
      const d = await get('web');
      assert.equal((d.spec as Obj).replicas, replicas);
      assert.deepEqual(argsOf(d, 'pause'), [ARG], `after the patch to ${replicas} replicas`);
    }
  });

  void it('kubectl apply of a new image: the argument is still there once', async () => {
    const manifest = (image: string) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'api', namespace: NS },
      spec: {
        selector: { matchLabels: { app: 'api' } },
        template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'app', image }] } },
      },
    });
    const created = await k(['apply', '-f', '-'], manifest('registry.k8s.io/pause:3.9'));
    assert.equal(created.status, 0, created.stderr);
    assert.deepEqual(argsOf(await get('api'), 'app'), [ARG]);
    const applied = await k(['apply', '-f', '-'], manifest('registry.k8s.io/pause:3.10'));
    assert.equal(applied.status, 0, applied.stderr);
    const d = await get('api');
    assert.equal(containers(d).find((c) => c.name === 'app')?.image, 'registry.k8s.io/pause:3.10');
    assert.deepEqual(argsOf(d, 'app'), [ARG]);
  });
});
