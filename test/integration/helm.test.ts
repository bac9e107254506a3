// The chart and deploy/ installed on a real apiserver, the way the README says: `helm install` in both
// certificate modes, `helm upgrade`, `helm uninstall`, and `kubectl apply -k deploy/`.
//
// No kubelet or kube-controller-manager runs (test/envtest), so no pod ever starts. The certgen Jobs are run
// by a stand-in (test/job-runner.ts): each Job's `flotilla certs …` command runs from this checkout with the
// Job's ServiceAccount token, and its status is written as the Job controller would. So the hooks run for
// real, in Helm's order, with the RBAC the chart grants them, and helm waits on them as in a cluster; no
// install here needs --no-hooks. No cert-manager runs either: in cert-manager mode the test installs a
// trimmed copy of cert-manager's CRDs (test/fixtures/cert-manager) and checks the objects and annotations
// the CA injector would act on. Last, a webhook from this checkout stands in for the webhook pods behind the
// installed Service, to show the installed configurations and certificate work end to end.

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';

import {
  CONVERTIBLE_CRD_NAMES,
  customResourceDefinitions,
  INJECT_CA_FROM_ANNOTATION,
  WEBHOOK_CERTIFICATE,
} from '../../api/crds/index.js';
import { waitForCRDsEstablished } from '../envtest/index.js';
import { freePort } from '../envtest/process.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { CHART, REPO, helm, helmSync } from '../helm-binary.js';
import { JobRunner } from '../job-runner.js';

type Obj = Record<string, unknown>;
const NS = 'flotilla-system';
const SECRET = 'flotilla-webhook-cert';
const STEP_TIMEOUT = { timeout: 240_000 };
const FLOTILLA_CRDS = customResourceDefinitions()
  .map((c) => c.metadata.name)
  .sort();

const get = (o: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((cur, k) => (cur && typeof cur === 'object' ? (cur as Obj)[k] : undefined), o);
const parseDocs = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((o) => o !== null && typeof o === 'object');

/** Helm keeps its repository config and caches out of the user's home while tests run. */
function helmHome(): { env: NodeJS.ProcessEnv; dispose: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'helm-home-'));
  return {
    env: {
      HELM_CACHE_HOME: join(dir, 'cache'),
      HELM_CONFIG_HOME: join(dir, 'config'),
      HELM_DATA_HOME: join(dir, 'data'),
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Shared steps for both suites: reading objects back, and what the certgen Jobs leave behind. */
function clusterChecks(kubeconfig: () => string) {
  const kc = (args: string[], input?: unknown) => kubectl(kubeconfig(), args, input);
  const getJson = async (args: string[]): Promise<Obj> => {
    const r = await kc([...args, '-o', 'json']);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as Obj;
  };
  const names = async (args: string[]): Promise<string[]> => {
    const r = await kc([...args, '-o', 'name']);
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.split('\n').filter(Boolean).sort();
  };
  /** Every object in `objects` exists on the server (kubectl get of the manifests themselves). */
  const assertAllExist = async (objects: Obj[]): Promise<void> => {
    const r = await kc(['get', '-f', '-', '-o', 'json'], { apiVersion: 'v1', kind: 'List', items: objects });
    assert.equal(r.status, 0, r.stderr);
    const found = (JSON.parse(r.stdout) as { items?: Obj[] }).items ?? [JSON.parse(r.stdout) as Obj];
    const key = (o: Obj) => `${String(o.kind)}/${String(get(o, 'metadata.name'))}`;
    assert.deepStrictEqual(found.map(key).sort(), objects.map(key).sort());
  };
  /** The Secret's ca.crt (base64) is the caBundle of every webhook and of each converting CRD. */
  const assertCABundlesFromSecret = async (): Promise<void> => {
    const ca = (get(await getJson(['get', 'secret', SECRET, '-n', NS]), 'data') as Obj | undefined)?.['ca.crt'];
    assert.equal(typeof ca, 'string');
    for (const kind of ['validatingwebhookconfiguration', 'mutatingwebhookconfiguration']) {
      for (const hook of get(await getJson(['get', kind, 'flotilla']), 'webhooks') as Obj[])
        assert.equal(get(hook, 'clientConfig.caBundle'), ca, `${kind} ${String(hook.name)}`);
    }
    for (const crd of CONVERTIBLE_CRD_NAMES)
      assert.equal(get(await getJson(['get', 'crd', crd]), 'spec.conversion.webhook.clientConfig.caBundle'), ca, crd);
  };
  return { kc, getJson, names, assertAllExist, assertCABundlesFromSecret };
}

void describe('the Helm chart on a real apiserver', () => {
  const env = useEnvironment({ members: 0 });
  const kubeconfig = () => env().hub.kubeconfigPath;
  const { kc, getJson, names, assertAllExist, assertCABundlesFromSecret } = clusterChecks(kubeconfig);
  const home = helmHome();
  let runner: JobRunner;
  const hub = (...args: string[]) => helm([...args, '--kubeconfig', kubeconfig()], home.env);
  /** The release's manifest as Helm stored it (hooks excluded). */
  const releaseObjects = async (): Promise<Obj[]> => {
    const r = await hub('get', 'manifest', 'flotilla', '--namespace', NS);
    assert.equal(r.status, 0, r.stderr);
    return parseDocs(r.stdout);
  };
  const runsOf = (job: string) => runner.runs.filter((r) => r.job === job);
  const leftInNamespace = () =>
    names([
      'get',
      'deployments,services,serviceaccounts,roles,rolebindings,jobs,poddisruptionbudgets,secrets,configmaps',
      '-n',
      NS,
    ]);
  const leftClusterScoped = () =>
    names([
      'get',
      'clusterroles,clusterrolebindings,validatingwebhookconfigurations,mutatingwebhookconfigurations,customresourcedefinitions',
      '-l',
      'app.kubernetes.io/part-of=flotilla',
    ]);
  let installed: Obj[] = [];

  before(() => {
    runner = new JobRunner({ kubeconfig: kubeconfig(), namespace: NS });
    runner.start();
  });
  after(async () => {
    await runner.stop();
    home.dispose();
  });

  void it(
    'installs with certgen: the create hook runs before the release, the patch hook after it, each as its ServiceAccount, and no hook is left',
    STEP_TIMEOUT,
    async () => {
      const r = await hub('install', 'flotilla', CHART, '--namespace', NS, '--create-namespace', '--timeout', '3m');
      assert.equal(r.status, 0, `${r.stderr}\nrunner: ${runner.error}\n${JSON.stringify(runner.runs, null, 1)}`);
      assert.match(
        r.stdout,
        /NOTES:\nFlotilla 0\.1\.0 is installed in namespace flotilla-system\.\n\nThe webhook's certificate is in Secret flotilla-webhook-cert/,
      );

      const [create, patch] = [runsOf('flotilla-certgen-create'), runsOf('flotilla-certgen-patch')];
      assert.equal(create.length, 1, JSON.stringify(runner.runs, null, 1));
      assert.equal(patch.length, 1, JSON.stringify(runner.runs, null, 1));
      for (const run of [...create, ...patch]) {
        assert.equal(run.exitCode, 0, run.output);
        assert.equal(run.serviceAccount, 'flotilla-certgen');
      }
      assert.match(
        create[0]?.output ?? '',
        /created Secret flotilla-system\/flotilla-webhook-cert for flotilla-webhook, flotilla-webhook\.flotilla-system, flotilla-webhook\.flotilla-system\.svc/,
      );
      // pre-install: nothing of the release yet; post-install: the release and the Secret are there.
      assert.ok(
        !create[0]?.existing.some((o) => o.includes('flotilla-webhook')),
        `create ran after the release: ${create[0]?.existing.join(' ')}`,
      );
      for (const o of [
        'deployment.apps/flotilla-webhook',
        'service/flotilla-webhook',
        'validatingwebhookconfiguration.admissionregistration.k8s.io/flotilla',
        `secret/${SECRET}`,
      ]) {
        assert.ok(patch[0]?.existing.includes(o), `${o} missing when patch ran: ${patch[0]?.existing.join(' ')}`);
      }
      assert.ok((create[0]?.startedAt ?? 0) < (patch[0]?.startedAt ?? 0));

      installed = await releaseObjects();
      await assertAllExist(installed);
      assert.deepStrictEqual(
        installed
          .map((o) => `${String(o.kind)}/${String(get(o, 'metadata.name'))}`)
          .filter((k) => k.startsWith('Deployment/'))
          .sort(),
        ['Deployment/flotilla-controller', 'Deployment/flotilla-webhook'],
      );
      await assertCABundlesFromSecret();

      // hook-succeeded: the Jobs and the certgen RBAC are gone.
      assert.deepStrictEqual(
        (await leftInNamespace()).filter((o) => o.includes('certgen')),
        [],
      );
      assert.deepStrictEqual(
        (await leftClusterScoped()).filter((o) => o.includes('certgen')),
        [],
      );
    },
  );

  void it(
    'accepts the objects of every optional value as they render (server-side dry run)',
    STEP_TIMEOUT,
    async () => {
      const r = helmSync([
        'template',
        'flotilla',
        CHART,
        '--namespace',
        NS,
        '--set',
        'controller.membersKubeconfig.secretName=members',
        '--set',
        `image.digest=sha256:${'0'.repeat(64)}`,
        '--set',
        'imagePullSecrets[0].name=regcred',
        '--set',
        'webhook.podDisruptionBudget.minAvailable=50%',
        '--set',
        'webhook.failurePolicy=Ignore',
        '--set',
        'controller.extraArgs[0]=--x=y',
        '--set-json',
        'webhook.namespaceSelector={"matchLabels":{"team":"a"}}',
        '--set-json',
        'webhook.affinity={"nodeAffinity":{}}',
        '--set-json',
        'controller.tolerations=[{"key":"k","operator":"Exists"}]',
        '--set-json',
        'webhook.nodeSelector={"kubernetes.io/os":"linux"}',
      ]);
      assert.equal(r.status, 0, r.stderr);
      const applied = await kc(
        ['apply', '--server-side', '--dry-run=server', '--field-manager=helm-test', '--force-conflicts', '-f', '-'],
        { apiVersion: 'v1', kind: 'List', items: parseDocs(r.stdout) },
      );
      assert.equal(applied.status, 0, applied.stderr);
    },
  );

  void it('upgrades with changed values, runs the hooks again and keeps the certificate', STEP_TIMEOUT, async () => {
    const before = await getJson(['get', 'secret', SECRET, '-n', NS]);
    const r = await hub(
      'upgrade',
      'flotilla',
      CHART,
      '--namespace',
      NS,
      '--timeout',
      '3m',
      '--set',
      'webhook.replicas=3',
      '--set',
      'webhook.timeoutSeconds=10',
      '--set',
      'controller.replicas=2',
      '--set',
      'controller.logLevel=debug',
    );
    assert.equal(r.status, 0, `${r.stderr}\nrunner: ${runner.error}`);

    const webhook = await getJson(['get', 'deployment', 'flotilla-webhook', '-n', NS]);
    const controller = await getJson(['get', 'deployment', 'flotilla-controller', '-n', NS]);
    assert.equal(get(webhook, 'spec.replicas'), 3);
    assert.equal(get(controller, 'spec.replicas'), 2);
    assert.ok(
      (get((get(controller, 'spec.template.spec.containers') as Obj[])[0], 'args') as string[]).includes(
        '--log-level=debug',
      ),
    );
    for (const kind of ['validatingwebhookconfiguration', 'mutatingwebhookconfiguration']) {
      for (const hook of get(await getJson(['get', kind, 'flotilla']), 'webhooks') as Obj[])
        assert.equal(hook.timeoutSeconds, 10);
    }

    const [create, patch] = [runsOf('flotilla-certgen-create'), runsOf('flotilla-certgen-patch')];
    assert.equal(create.length, 2);
    assert.equal(patch.length, 2);
    assert.match(
      create[1]?.output ?? '',
      /Secret flotilla-system\/flotilla-webhook-cert exists; keeping its certificate/,
    );
    assert.equal(patch[1]?.exitCode, 0, patch[1]?.output);
    assert.deepStrictEqual(get(await getJson(['get', 'secret', SECRET, '-n', NS]), 'data'), get(before, 'data'));
    await assertCABundlesFromSecret();
    const history = await hub('history', 'flotilla', '--namespace', NS, '-o', 'json');
    assert.deepStrictEqual(
      (JSON.parse(history.stdout) as Array<{ revision: number; status: string }>).map((h) => [h.revision, h.status]),
      [
        [1, 'superseded'],
        [2, 'deployed'],
      ],
    );
  });

  void it(
    'uninstalls to nothing but the CRDs and the Secret `certs create` wrote (neither is part of the release)',
    STEP_TIMEOUT,
    async () => {
      const r = await hub('uninstall', 'flotilla', '--namespace', NS, '--wait', '--timeout', '1m');
      assert.equal(r.status, 0, r.stderr);
      for (const o of installed) {
        const args = [
          'get',
          `${String(o.kind)}/${String(get(o, 'metadata.name'))}`,
          ...(get(o, 'metadata.namespace') ? ['-n', NS] : []),
        ];
        const left = await kc(args);
        assert.notEqual(left.status, 0, `${args.join(' ')} is still there`);
        assert.match(left.stderr, /NotFound|not found/);
      }
      assert.deepStrictEqual(await leftInNamespace(), [`secret/${SECRET}`]);
      assert.deepStrictEqual(
        await leftClusterScoped(),
        FLOTILLA_CRDS.map((n) => `customresourcedefinition.apiextensions.k8s.io/${n}`),
      );
      const deleted = await kc(['delete', 'secret', SECRET, '-n', NS]);
      assert.equal(deleted.status, 0, deleted.stderr);
    },
  );

  void it(
    "refuses cert-manager mode where cert-manager's CRDs are not installed, saying so, and leaves no release",
    STEP_TIMEOUT,
    async () => {
      const r = await hub('install', 'flotilla', CHART, '--namespace', NS, '--set', 'certificates.mode=cert-manager');
      assert.equal(r.status, 1);
      assert.match(
        r.stderr,
        /no matches for kind "Certificate" in version "cert-manager\.io\/v1"\s+ensure CRDs are installed first/,
      );
      const list = await hub('list', '--namespace', NS, '--all', '-q');
      assert.equal(list.stdout.trim(), '');
    },
  );

  const certManagerObjects = (...flags: string[]): Obj[] => {
    const r = helmSync([
      'template',
      'flotilla',
      CHART,
      '--namespace',
      NS,
      '--set',
      'certificates.mode=cert-manager',
      ...flags,
    ]);
    assert.equal(r.status, 0, r.stderr);
    return parseDocs(r.stdout).filter((o) => String(o.apiVersion).startsWith('cert-manager.io/'));
  };
  /** The cert-manager objects on the server, by kind/name, each with the spec it was given. */
  const certManagerOnServer = async (): Promise<Map<string, unknown>> => {
    const list = await getJson(['get', 'issuers.cert-manager.io,certificates.cert-manager.io', '-n', NS]);
    return new Map(
      ((list.items ?? []) as Obj[]).map((o) => [`${String(o.kind)}/${String(get(o, 'metadata.name'))}`, o.spec]),
    );
  };

  void it(
    'installs with cert-manager: the self-signed CA chain and the serving Certificate, annotations for the CA injector, no certgen',
    STEP_TIMEOUT,
    async () => {
      const fixtures = await kc(['apply', '--server-side', '-f', join(REPO, 'test/fixtures/cert-manager/crds.yaml')]);
      assert.equal(fixtures.status, 0, fixtures.stderr);
      await waitForCRDsEstablished(env().hub, ['certificates.cert-manager.io', 'issuers.cert-manager.io'], 60_000);
      const runsBefore = runner.runs.length;

      const r = await hub(
        'install',
        'flotilla',
        CHART,
        '--namespace',
        NS,
        '--set',
        'certificates.mode=cert-manager',
        '--timeout',
        '3m',
      );
      assert.equal(r.status, 0, r.stderr);
      assert.match(
        r.stdout,
        /cert-manager issues the webhook's certificate \(Certificate flotilla-webhook, Secret flotilla-webhook-cert\)/,
      );
      installed = await releaseObjects();
      await assertAllExist(installed);
      assert.equal(runner.runs.length, runsBefore, 'no Job ran');
      assert.deepStrictEqual(
        (await leftInNamespace()).filter((o) => o.includes('certgen') || o.startsWith('job')),
        [],
      );

      // Read back whole: a field the apiserver pruned (unknown to cert-manager's schema) would show here.
      const expected = new Map(
        certManagerObjects().map((o) => [`${String(o.kind)}/${String(get(o, 'metadata.name'))}`, o.spec]),
      );
      assert.deepStrictEqual([...expected.keys()].sort(), [
        'Certificate/flotilla-ca',
        'Certificate/flotilla-webhook',
        'Issuer/flotilla-ca',
        'Issuer/flotilla-selfsigned',
      ]);
      assert.deepStrictEqual(await certManagerOnServer(), expected);
      const serving = await getJson([
        'get',
        'certificates.cert-manager.io',
        WEBHOOK_CERTIFICATE.name,
        '-n',
        WEBHOOK_CERTIFICATE.namespace,
      ]);
      assert.equal(get(serving, 'spec.secretName'), SECRET);

      const injectFrom = `${WEBHOOK_CERTIFICATE.namespace}/${WEBHOOK_CERTIFICATE.name}`;
      for (const kind of ['validatingwebhookconfiguration', 'mutatingwebhookconfiguration']) {
        assert.equal(
          (get(await getJson(['get', kind, 'flotilla']), 'metadata.annotations') as Obj)[INJECT_CA_FROM_ANNOTATION],
          injectFrom,
          kind,
        );
      }
      for (const crd of CONVERTIBLE_CRD_NAMES) {
        assert.equal(
          (get(await getJson(['get', 'crd', crd]), 'metadata.annotations') as Obj)[INJECT_CA_FROM_ANNOTATION],
          injectFrom,
          crd,
        );
      }
    },
  );

  void it(
    "upgrades to a given issuer: the chart's CA chain goes, the serving Certificate names the issuer",
    STEP_TIMEOUT,
    async () => {
      const flags = [
        '--set',
        'certificates.certManager.issuerRef.name=corp-ca',
        '--set',
        'certificates.certManager.issuerRef.kind=ClusterIssuer',
      ];
      const r = await hub('upgrade', 'flotilla', CHART, '--namespace', NS, '--reuse-values', ...flags);
      assert.equal(r.status, 0, r.stderr);
      const expected = new Map(
        certManagerObjects(...flags).map((o) => [`${String(o.kind)}/${String(get(o, 'metadata.name'))}`, o.spec]),
      );
      assert.deepStrictEqual(await certManagerOnServer(), expected);
      assert.deepStrictEqual(get(expected.get('Certificate/flotilla-webhook'), 'issuerRef'), {
        name: 'corp-ca',
        kind: 'ClusterIssuer',
        group: 'cert-manager.io',
      });
      installed = await releaseObjects();
    },
  );

  void it('uninstalls cert-manager mode to nothing but the CRDs', STEP_TIMEOUT, async () => {
    const r = await hub('uninstall', 'flotilla', '--namespace', NS, '--wait', '--timeout', '1m');
    assert.equal(r.status, 0, r.stderr);
    assert.deepStrictEqual(await leftInNamespace(), []);
    assert.deepStrictEqual(await certManagerOnServer(), new Map());
    assert.deepStrictEqual(
      await leftClusterScoped(),
      FLOTILLA_CRDS.map((n) => `customresourcedefinition.apiextensions.k8s.io/${n}`),
    );
  });
});

void describe('kubectl apply -k deploy/ on a real apiserver', () => {
  // Aggregator routing: the apiserver reaches a Service through its endpoints instead of the cluster IP
  // (which nothing here routes), so the installed webhook configurations can reach a webhook run below.
  const env = useEnvironment({ members: 0, apiserverArgs: ['--enable-aggregator-routing=true'] });
  const kubeconfig = () => env().hub.kubeconfigPath;
  const { kc, getJson, assertAllExist, assertCABundlesFromSecret } = clusterChecks(kubeconfig);
  const DEPLOY = join(REPO, 'deploy');
  let runner: JobRunner;
  let webhook: ChildProcess | undefined;
  let controller: ChildProcess | undefined;
  let dir: string;

  before(() => {
    runner = new JobRunner({ kubeconfig: kubeconfig(), namespace: NS });
    dir = mkdtempSync(join(tmpdir(), 'deploy-it-'));
  });
  after(async () => {
    for (const child of [webhook, controller]) {
      if (!child || child.exitCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await runner.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  void it(
    'creates every object, and the certificate Jobs (run by the stand-in) fill in the CA bundles',
    STEP_TIMEOUT,
    async () => {
      const built = spawnSync('kubectl', ['kustomize', DEPLOY], { encoding: 'utf8' });
      assert.equal(built.status, 0, built.stderr);
      const r = await kc(['apply', '-k', DEPLOY]);
      assert.equal(r.status, 0, r.stderr);
      await assertAllExist(parseDocs(built.stdout));

      runner.start();
      const succeeded = await eventually(
        async () =>
          (
            await kc([
              'get',
              'jobs',
              '-n',
              NS,
              '-o',
              'jsonpath={range .items[*]}{.metadata.name}={.status.succeeded}{" "}{end}',
            ])
          ).stdout
            .trim()
            .split(' ')
            .sort(),
        (jobs) => jobs.join(' ') === 'flotilla-certgen-create=1 flotilla-certgen-patch=1',
        120_000,
        200,
      );
      assert.deepStrictEqual(
        succeeded,
        ['flotilla-certgen-create=1', 'flotilla-certgen-patch=1'],
        `runner: ${runner.error} ${JSON.stringify(runner.runs, null, 1)}`,
      );
      // Under kubectl both Jobs start at once: the patch Job fails until the Secret exists, and is retried.
      for (const run of runner.runs) assert.equal(run.serviceAccount, 'flotilla-certgen');
      assert.equal(runner.runs.filter((run) => run.exitCode === 0).length, 2, JSON.stringify(runner.runs, null, 1));
      await assertCABundlesFromSecret();
    },
  );

  // kubectl reports the PodDisruptionBudget "configured" on every apply (its selector's patch strategy is
  // replace, so the patch is never empty) though nothing changes; resourceVersions show what did.
  void it('re-applies without changing any object, keeping the CA bundles the Jobs set', STEP_TIMEOUT, async () => {
    const versions = async () => {
      const r = await kc([
        'get',
        '-k',
        DEPLOY,
        '-o',
        'jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion}{"\\n"}{end}',
      ]);
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.split('\n').filter(Boolean).sort();
    };
    const before = await versions();
    const r = await kc(['apply', '-k', DEPLOY]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepStrictEqual(await versions(), before);
    const diff = await kc(['diff', '-k', DEPLOY]);
    assert.equal(diff.status, 0, diff.stdout + diff.stderr);
    await assertCABundlesFromSecret();
  });

  const hostIP = Object.values(networkInterfaces())
    .flat()
    .find((a) => a?.family === 'IPv4' && !a.internal)?.address;
  void it(
    'serves admission and conversion through the installed Service and configurations, with the certificate the Jobs made',
    {
      ...STEP_TIMEOUT,
      skip: hostIP ? false : 'no non-loopback IPv4 address for an EndpointSlice (the API refuses loopback)',
    },
    async () => {
      // The pods' stand-in: `flotilla webhook` from this checkout with the Secret's certificate, behind the
      // Service through a hand-written EndpointSlice (no endpoint controller runs).
      const secret = get(await getJson(['get', 'secret', SECRET, '-n', NS]), 'data') as Record<string, string>;
      for (const f of ['tls.crt', 'tls.key'])
        writeFileSync(join(dir, f), Buffer.from(secret[f] ?? '', 'base64'), { mode: 0o600 });
      const port = await freePort();
      webhook = spawn(
        process.execPath,
        [
          join(REPO, 'dist/cmd/flotilla/main.js'),
          'webhook',
          `--tls-cert-file=${join(dir, 'tls.crt')}`,
          `--tls-private-key-file=${join(dir, 'tls.key')}`,
          `--port=${port}`,
          '--health-port=0',
          `--kubeconfig=${kubeconfig()}`,
        ],
        { stdio: 'ignore' },
      );
      // kube-apiserver 1.33 resolves webhook Services through v1 Endpoints (its aggregator proxy moved to
      // EndpointSlices, the webhook resolver had not); both are written, as the endpoint controllers would.
      const endpoints = await kc(['apply', '-f', '-'], {
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'v1',
            kind: 'Endpoints',
            metadata: { name: 'flotilla-webhook', namespace: NS },
            subsets: [{ addresses: [{ ip: hostIP }], ports: [{ name: 'https', port }] }],
          },
          {
            apiVersion: 'discovery.k8s.io/v1',
            kind: 'EndpointSlice',
            metadata: {
              name: 'flotilla-webhook-test',
              namespace: NS,
              labels: { 'kubernetes.io/service-name': 'flotilla-webhook' },
            },
            addressType: 'IPv4',
            endpoints: [{ addresses: [hostIP], conditions: { ready: true } }],
            ports: [{ name: 'https', port, protocol: 'TCP' }],
          },
        ],
      });
      assert.equal(endpoints.status, 0, endpoints.stderr);
      const created = await kc(['create', 'namespace', 'team-a']);
      assert.equal(created.status, 0, created.stderr);

      const bad = {
        apiVersion: 'policy.flotilla.io/v1alpha1',
        kind: 'PropagationPolicy',
        metadata: { name: 'bad', namespace: 'team-a' },
        spec: { resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'elsewhere' }] },
      };
      const denied = await eventually(
        () => kc(['create', '-f', '-'], bad),
        (r) => /denied the request/.test(r.stderr),
        60_000,
        250,
      );
      assert.match(
        denied.stderr,
        /admission webhook "policies\.validate\.flotilla\.io" denied the request: spec\.resourceSelectors\[0\]\.namespace: Invalid value: "elsewhere"/,
      );

      // Stored as v1beta1 and read back as v1alpha1: both ways through the conversion webhook.
      const legacy = {
        apiVersion: 'policy.flotilla.io/v1alpha1',
        kind: 'OverridePolicy',
        metadata: { name: 'legacy', namespace: 'team-a' },
        spec: {
          targetCluster: { clusterNames: ['east'] },
          overriders: { plaintext: [{ path: '/spec/replicas', operator: 'replace', value: 2 }] },
        },
      };
      const made = await kc(['create', '-f', '-'], legacy);
      assert.equal(made.status, 0, made.stderr);
      const beta = await getJson(['get', 'overridepolicies.v1beta1.policy.flotilla.io', 'legacy', '-n', 'team-a']);
      assert.deepStrictEqual(beta.spec, {
        overrideRules: [{ targetCluster: { clusterNames: ['east'] }, overriders: legacy.spec.overriders }],
      });
      const alpha = await getJson(['get', 'overridepolicies.v1alpha1.policy.flotilla.io', 'legacy', '-n', 'team-a']);
      assert.deepStrictEqual(alpha.spec, legacy.spec);
    },
  );

  void it(
    "runs the controller with the chart's arguments as its ServiceAccount: Lease, template finalizer and ResourceBinding are allowed",
    // The policy is written through the webhook the previous step runs behind the Service.
    { ...STEP_TIMEOUT, skip: hostIP ? false : 'needs the webhook of the previous step' },
    async () => {
      // The pod's stand-in: `flotilla controller` from this checkout, with only a token of ServiceAccount
      // flotilla-controller, and the arguments the installed Deployment gives it. No --members-kubeconfig
      // (the default values): the binding reports the target cluster as not reachable.
      const token = await kc(['create', 'token', 'flotilla-controller', '-n', NS, '--duration=10m']);
      assert.equal(token.status, 0, token.stderr);
      const admin = new KubeConfig();
      admin.loadFromFile(kubeconfig());
      const cluster = admin.getCurrentCluster();
      assert.ok(cluster);
      const saConfig = new KubeConfig();
      saConfig.loadFromOptions({
        clusters: [cluster],
        users: [{ name: 'sa', token: token.stdout.trim() }],
        contexts: [{ name: 'sa', cluster: cluster.name, user: 'sa' }],
        currentContext: 'sa',
      });
      const saPath = join(dir, 'controller.kubeconfig');
      writeFileSync(saPath, saConfig.exportConfig(), { mode: 0o600 });
      const deployment = parseDocs(spawnSync('kubectl', ['kustomize', DEPLOY], { encoding: 'utf8' }).stdout).find(
        (o) => o.kind === 'Deployment' && get(o, 'metadata.name') === 'flotilla-controller',
      );
      const args = (get(deployment, 'spec.template.spec.containers') as Array<{ args: string[] }>)[0]?.args ?? [];
      assert.equal(args[0], 'controller');
      const metricsPort = await freePort();
      const chartArgs = args.map((a) =>
        a.startsWith('--metrics-port=')
          ? `--metrics-port=${metricsPort}`
          : a.startsWith('--log-level=')
            ? '--log-level=debug'
            : a,
      );
      const made = await kc(['apply', '-f', '-'], {
        apiVersion: 'v1',
        kind: 'List',
        items: [
          // Its own namespace: team-a's OverridePolicy from the previous step would apply to its templates too.
          { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } },
          { apiVersion: 'cluster.flotilla.io/v1alpha1', kind: 'Cluster', metadata: { name: 'east' } },
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'settings', namespace: 'team-b' },
            data: { a: '1' },
          },
          {
            apiVersion: 'policy.flotilla.io/v1alpha1',
            kind: 'PropagationPolicy',
            metadata: { name: 'settings', namespace: 'team-b' },
            spec: {
              resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' }],
              placement: { clusterAffinity: { clusterNames: ['east'] } },
            },
          },
        ],
      });
      assert.equal(made.status, 0, made.stderr);
      let log = '';
      controller = spawn(
        process.execPath,
        [join(REPO, 'dist/cmd/flotilla/main.js'), ...chartArgs, `--kubeconfig=${saPath}`],
        {
          stdio: ['ignore', 'ignore', 'pipe'],
          env: {
            PATH: process.env.PATH ?? '',
            HOME: tmpdir(),
            POD_NAMESPACE: NS,
            POD_NAME: 'flotilla-controller-test',
          },
        },
      );
      controller.stderr?.on('data', (c: Buffer) => (log += c.toString()));
      const binding = await eventually(
        async () => (await kc(['get', 'resourcebindings', 'settings-configmap', '-n', 'team-b', '-o', 'json'])).stdout,
        (out) => out.includes('"Unreachable"'),
        60_000,
        250,
      );
      assert.match(binding, /no access to cluster east/, `${binding}\n${log}`);
      const template = await getJson(['get', 'configmap', 'settings', '-n', 'team-b']);
      assert.deepStrictEqual(get(template, 'metadata.finalizers'), ['flotilla.io/member-cleanup']);
      const lease = await getJson(['get', 'lease', 'flotilla-controller', '-n', NS]);
      assert.match(String(get(lease, 'spec.holderIdentity')), /^flotilla-controller-test-/);
      assert.doesNotMatch(log, /forbidden/i, 'no request was refused');
    },
  );
});
