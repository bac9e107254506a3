// Overrides at admission time, as a platform team runs them: `flotilla webhook --override` as its own
// process, registered with the override.flotilla.io webhook the chart renders (webhook.override.enabled),
// called by a real apiserver over TLS. The cluster's Cluster object gives its labels and region; the
// policies and a Gatekeeper Assign are created with kubectl and picked up by the webhook's watches; the
// objects are created the way users and tools create them (kubectl create deployment, kubectl set image,
// --dry-run=server). Then the webhook is stopped: with failurePolicy Ignore objects are admitted
// unmodified and the apiserver counts it; with Fail the refusal names Flotilla's webhook.

import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

import { customResourceDefinitions } from '../../api/crds/index.js';
import { waitForCRDsEstablished } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { chartOverrideHook } from '../helm-binary.js';
import { stopFlotilla } from './controller-io.js';
import { spawnWebhook, waitWebhookReady, webhookCerts, type WebhookCerts, type WebhookProcess } from './webhook-io.js';

type Obj = Record<string, unknown>;
const NS = 'shop';
const WAIT_MS = 40_000;

/** Gatekeeper's own mutation CRDs (v3.23.0's chart, unchanged: test/fixtures/gatekeeper/README.md). */
const GATEKEEPER_CRDS = ['assign', 'assignmetadata', 'modifyset', 'assignimage'].map(
  (n) =>
    parseAllDocuments(
      readFileSync(
        fileURLToPath(new URL(`../../../test/fixtures/gatekeeper/${n}-customresourcedefinition.yaml`, import.meta.url)),
        'utf8',
      ),
    )
      .map((d) => d.toJS() as Obj)
      .find((o) => o.kind === 'CustomResourceDefinition') as Obj,
);
const IMAGES_NS = 'images';

void describe('the apiserver calling /override on flotilla webhook --override', () => {
  const env = useEnvironment({ members: 0 });
  let certs: WebhookCerts;
  let webhook: WebhookProcess | undefined;
  const kubeconfig = () => env().hub.kubeconfigPath;
  const k = (args: string[], stdin?: unknown) => kubectl(kubeconfig(), args, stdin);

  const deployment = async (name: string): Promise<Obj | undefined> => {
    const r = await k(['get', 'deployment', name, '-n', NS, '-o', 'json']);
    return r.status === 0 ? (JSON.parse(r.stdout) as Obj) : undefined;
  };
  const containers = (d: Obj | undefined) =>
    ((d?.spec as Obj | undefined)?.template as { spec: { containers: Obj[] } } | undefined)?.spec.containers ?? [];
  const failOpen = async () => {
    const r = await k(['get', '--raw', '/metrics']);
    const m = /^apiserver_admission_webhook_fail_open_count\{[^}]*name="override\.flotilla\.io"[^}]*\} (\d+)/m.exec(
      r.stdout,
    );
    return m ? Number(m[1]) : 0;
  };

  before(async () => {
    certs = webhookCerts('override-it');

    const crds = [...customResourceDefinitions(), ...GATEKEEPER_CRDS];
    const installed = await k(['apply', '--server-side', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        ...crds,
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: IMAGES_NS } },
      ],
    });
    assert.equal(installed.status, 0, installed.stderr);
    await waitForCRDsEstablished(
      env().hub,
      crds.map((c) => String((c.metadata as Obj).name)),
      60_000,
    );

    // This cluster, as its Cluster object says: the webhook is only told its name.
    const objects = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'cluster.flotilla.io/v1alpha1',
          kind: 'Cluster',
          metadata: { name: 'eu-1', labels: { env: 'prod' } },
          spec: { region: 'eu-west-1' },
        },
        {
          apiVersion: 'policy.flotilla.io/v1beta1',
          kind: 'ClusterOverridePolicy',
          metadata: { name: 'registry' },
          spec: {
            resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment' }],
            overrideRules: [
              {
                // On CREATE only (no targetOperations): a later `kubectl set image` is left alone.
                targetCluster: { labelSelector: { matchLabels: { env: 'prod' } } },
                overriders: {
                  imageOverrider: [
                    { component: 'Registry', operator: 'replace', value: 'mirror.${cluster.region}.example.com' },
                  ],
                },
              },
              {
                targetOperations: ['CREATE', 'UPDATE'],
                overriders: {
                  annotationsOverrider: [{ operator: 'add', value: { 'example.com/cluster': '${cluster.name}' } }],
                },
              },
            ],
          },
        },
        {
          // Gatekeeper's documented pathTests use: set runAsNonRoot only where nobody has said otherwise.
          apiVersion: 'mutations.gatekeeper.sh/v1',
          kind: 'Assign',
          metadata: { name: 'run-as-non-root' },
          spec: {
            applyTo: [{ groups: ['apps'], versions: ['v1'], kinds: ['Deployment'] }],
            match: { scope: 'Namespaced', kinds: [{ apiGroups: ['apps'], kinds: ['Deployment'] }] },
            location: 'spec.template.spec.containers[name:*].securityContext.runAsNonRoot',
            parameters: {
              pathTests: [
                {
                  subPath: 'spec.template.spec.containers[name:*].securityContext.runAsNonRoot',
                  condition: 'MustNotExist',
                },
              ],
              assign: { value: true },
            },
          },
        },
      ],
    });
    assert.equal(objects.status, 0, objects.stderr);

    webhook = await spawnWebhook({ certs, kubeconfig: kubeconfig(), args: ['--override', '--cluster-name', 'eu-1'] });
    await waitWebhookReady(webhook, certs.caPem, WAIT_MS);

    // The chart's override webhook (webhook.override.enabled), pointed at this process by URL.
    const hook = chartOverrideHook(
      'eu-1',
      `https://127.0.0.1:${webhook.port}/override`,
      Buffer.from(certs.caPem).toString('base64'),
    );
    const registered = await k(['apply', '-f', '-'], {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'flotilla-override-it' },
      webhooks: [hook],
    });
    assert.equal(registered.status, 0, registered.stderr);

    // The apiserver picks up webhook configurations asynchronously: wait until a dry run comes back changed.
    const reached = await eventually(
      () => k(['create', 'deployment', 'probe', '-n', NS, '--image=nginx', '--dry-run=server', '-o', 'json']),
      (r) => r.status === 0 && r.stdout.includes('mirror.eu-west-1.example.com'),
      WAIT_MS,
      200,
    );
    assert.match(reached.stdout, /mirror\.eu-west-1\.example\.com/, `${reached.stderr}\n${webhook?.log()}`);
  });

  after(async () => {
    if (webhook) await stopFlotilla(webhook);
    rmSync(certs.dir, { recursive: true, force: true });
  });

  void it("kubectl create deployment gets the cluster's override, then the Gatekeeper mutator", async () => {
    const r = await k(['create', 'deployment', 'web', '-n', NS, '--image=registry.k8s.io/pause:3.9']);
    assert.equal(r.status, 0, r.stderr);
    const d = await deployment('web');
    assert.equal(containers(d)[0]?.image, 'mirror.eu-west-1.example.com/pause:3.9');
    assert.deepEqual(containers(d)[0]?.securityContext, { runAsNonRoot: true });
    assert.equal(((d?.metadata as Obj).annotations as Obj)['example.com/cluster'], 'eu-1');
  });

  void it('acts on UPDATE only where a rule says so: kubectl set image keeps the new image', async () => {
    const created = await k(['create', 'deployment', 'api', '-n', NS, '--image=registry.k8s.io/pause:3.9']);
    assert.equal(created.status, 0, created.stderr);
    const set = await k(['set', 'image', 'deployment/api', '-n', NS, 'pause=registry.k8s.io/pause:3.10']);
    assert.equal(set.status, 0, set.stderr);
    const removed = await k(['annotate', 'deployment/api', '-n', NS, 'example.com/cluster-']);
    assert.equal(removed.status, 0, removed.stderr);
    const d = await deployment('api');
    // The CREATE-only registry rule did not touch the update; the CREATE+UPDATE rule put its annotation back.
    assert.equal(containers(d)[0]?.image, 'registry.k8s.io/pause:3.10');
    assert.equal(((d?.metadata as Obj).annotations as Obj)['example.com/cluster'], 'eu-1');
  });

  void it('--dry-run=server returns the mutated object and creates nothing', async () => {
    const r = await k([
      'create',
      'deployment',
      'dry',
      '-n',
      NS,
      '--image=nginx:1.27',
      '--dry-run=server',
      '-o',
      'json',
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(containers(JSON.parse(r.stdout) as Obj)[0]?.image, 'mirror.eu-west-1.example.com/nginx:1.27');
    assert.equal(await deployment('dry'), undefined);
  });

  void it("a Gatekeeper Assign's MustNotExist pathTest keeps what the object says", async () => {
    const r = await k(['apply', '-f', '-'], {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'root', namespace: NS },
      spec: {
        selector: { matchLabels: { app: 'root' } },
        template: {
          metadata: { labels: { app: 'root' } },
          spec: {
            containers: [
              { name: 'legacy', image: 'busybox', securityContext: { runAsNonRoot: false } },
              { name: 'new', image: 'busybox' },
            ],
          },
        },
      },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(
      containers(await deployment('root')).map((c) => c.securityContext),
      [{ runAsNonRoot: false }, { runAsNonRoot: true }],
    );
  });

  void it('a policy change is picked up by the watches without a restart', async () => {
    const r = await k(['apply', '-f', '-'], {
      apiVersion: 'policy.flotilla.io/v1beta1',
      kind: 'OverridePolicy',
      metadata: { name: 'team', namespace: NS },
      spec: { overrideRules: [{ overriders: { labelsOverrider: [{ operator: 'add', value: { team: 'shop' } }] } }] },
    });
    assert.equal(r.status, 0, r.stderr);
    const labelled = await eventually(
      () => k(['create', 'configmap', `c${Date.now()}`, '-n', NS, '--dry-run=server', '-o', 'json']),
      (x) => x.status === 0 && x.stdout.includes('"team": "shop"'),
      WAIT_MS,
      200,
    );
    assert.match(labelled.stdout, /"team": "shop"/);
  });

  void it("Gatekeeper's AssignImage and ModifySet apply; assignIf is pruned by the CRD; a refused mutator is a warning", async () => {
    const applyTo = [{ groups: ['apps'], versions: ['v1'], kinds: ['Deployment'] }];
    const match = { namespaces: [IMAGES_NS] };
    // kubectl refuses assignIf unless told not to validate (it is not in the CRD): then the apiserver prunes it.
    const mutators = await k(['apply', '--validate=false', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'mutations.gatekeeper.sh/v1alpha1',
          kind: 'AssignImage',
          metadata: { name: 'gk-mirror' },
          spec: {
            applyTo,
            match,
            location: 'spec.template.spec.containers[name:*].image',
            parameters: { assignDomain: 'gk.example.com' },
          },
        },
        {
          apiVersion: 'mutations.gatekeeper.sh/v1',
          kind: 'ModifySet',
          metadata: { name: 'log-json' },
          spec: {
            applyTo,
            match,
            location: 'spec.template.spec.containers[name:*].args',
            parameters: { operation: 'merge', values: { fromList: ['--log-json'] } },
          },
        },
        {
          apiVersion: 'mutations.gatekeeper.sh/v1',
          kind: 'Assign',
          metadata: { name: 'with-assign-if' },
          spec: {
            applyTo,
            match,
            location: 'spec.minReadySeconds',
            parameters: { assign: { value: 5 }, assignIf: { in: [30] } },
          },
        },
        {
          // Gatekeeper refuses Assign to metadata: Flotilla does too, and says so on the objects it selects.
          apiVersion: 'mutations.gatekeeper.sh/v1',
          kind: 'Assign',
          metadata: { name: 'label-via-assign' },
          spec: { applyTo, match, location: 'metadata.labels.team', parameters: { assign: { value: 'a' } } },
        },
      ],
    });
    assert.equal(mutators.status, 0, mutators.stderr);
    const stored = await k(['get', 'assign', 'with-assign-if', '-o', 'json']);
    assert.equal(stored.status, 0, stored.stderr);
    assert.equal(((JSON.parse(stored.stdout) as Obj).spec as { parameters: Obj }).parameters.assignIf, undefined);

    // The webhook's watches pick the mutators up: wait until a dry run shows them.
    const probe = await eventually(
      () => k(['create', 'deployment', 'probe', '-n', IMAGES_NS, '--image=nginx', '--dry-run=server', '-o', 'json']),
      (r) => r.status === 0 && r.stdout.includes('gk.example.com') && r.stdout.includes('--log-json'),
      WAIT_MS,
      200,
    );
    assert.match(probe.stdout, /gk\.example\.com/, `${probe.stderr}\n${webhook?.log()}`);

    const r = await k(['create', 'deployment', 'img', '-n', IMAGES_NS, '--image=registry.k8s.io/pause:3.9']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stderr,
      /Warning: Flotilla: Gatekeeper Assign\/label-via-assign is not applied: .*can't change metadata/,
    );
    const got = await k(['get', 'deployment', 'img', '-n', IMAGES_NS, '-o', 'json']);
    const d = JSON.parse(got.stdout) as Obj;
    // The override rule's registry first, then Gatekeeper's AssignImage over it.
    assert.equal(containers(d)[0]?.image, 'gk.example.com/pause:3.9');
    assert.deepEqual(containers(d)[0]?.args, ['--log-json']);
    // assignIf never reached the webhook: the value is set, as Gatekeeper sets it.
    assert.equal((d.spec as Obj).minReadySeconds, 5);
    assert.equal(((d.metadata as Obj).labels as Obj).team, undefined);
    assert.match(webhook?.log() ?? '', /mutator not applied.*label-via-assign|label-via-assign.*mutator not applied/);
  });

  void it('stopped: with failurePolicy Ignore objects are admitted unmodified and counted; with Fail the refusal names Flotilla', async () => {
    webhook?.child.kill('SIGKILL');
    await webhook?.exited;
    const before = await failOpen();
    const r = await k(['create', 'deployment', 'while-down', '-n', NS, '--image=nginx:1.27']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(containers(await deployment('while-down'))[0]?.image, 'nginx:1.27');
    assert.ok((await failOpen()) > before, 'apiserver_admission_webhook_fail_open_count did not count it');

    const fail = await k([
      'patch',
      'mutatingwebhookconfiguration',
      'flotilla-override-it',
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Fail"}]',
    ]);
    assert.equal(fail.status, 0, fail.stderr);
    const refused = await eventually(
      () => k(['create', 'deployment', `refused${Date.now()}`, '-n', NS, '--image=nginx', '--dry-run=server']),
      (x) => x.status !== 0,
      WAIT_MS,
      200,
    );
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, /failed calling webhook "override\.flotilla\.io"/);
  });
});
