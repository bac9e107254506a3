// The chart as helm renders and lints it, without a cluster: what each value changes, what it refuses,
// and that deploy/ is the chart's default rendering. test/integration/helm.test.ts installs it for real.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';

import {
  CONVERTIBLE_CRD_NAMES,
  customResourceDefinitions,
  INJECT_CA_FROM_ANNOTATION,
  WEBHOOK_CERTIFICATE,
} from '../../api/crds/index.js';
import { AGENT_MODE, CHART, REPO, helmSync } from '../helm-binary.js';
import { executionSpace } from '../../pkg/controller/index.js';

type Obj = Record<string, unknown>;
const NS = 'flotilla-system';

const get = (o: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((cur, k) => (cur && typeof cur === 'object' ? (cur as Obj)[k] : undefined), o);

/** `helm template` of the chart into a namespace with extra flags; fails the test when helm does. */
function renderIn(namespace: string, ...flags: string[]): Obj[] {
  const r = helmSync(['template', 'flotilla', CHART, '--namespace', namespace, ...flags]);
  assert.equal(r.status, 0, r.stderr);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj)
    .filter((o) => o !== null);
}
/** `helm template` of the chart into flotilla-system with extra flags; fails the test when helm does. */
const render = (...flags: string[]): Obj[] => renderIn(NS, ...flags);
const named = (objects: Obj[], kind: string, name: string): Obj => {
  const found = objects.filter((o) => o.kind === kind && get(o, 'metadata.name') === name);
  assert.equal(found.length, 1, `${kind} ${name}`);
  return found[0] as Obj;
};
const kinds = (objects: Obj[]): string[] =>
  objects.map((o) => `${String(o.kind)}/${String(get(o, 'metadata.name'))}`).sort();
const container = (objects: Obj[], deployment: string): Obj =>
  (get(named(objects, 'Deployment', deployment), 'spec.template.spec.containers') as Obj[])[0] as Obj;
const args = (objects: Obj[], deployment: string): string[] => get(container(objects, deployment), 'args') as string[];

void describe('the chart', () => {
  void it("has package.json's version as its version and appVersion", () => {
    const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { version: string; appVersion: string };
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
    assert.equal(chart.version, pkg.version);
    assert.equal(chart.appVersion, pkg.version);
  });

  for (const flags of [
    [],
    ['--set', 'certificates.mode=cert-manager'],
    ['--set', 'controller.enabled=false'],
    ['--set', 'controller.pullAgents={member2}'],
    AGENT_MODE,
  ]) {
    void it(`passes helm lint and helm lint --strict ${flags.join(' ') || 'with default values'}`, () => {
      for (const strict of [[], ['--strict']]) {
        const r = helmSync(['lint', CHART, ...strict, ...flags]);
        assert.equal(r.status, 0, r.stdout + r.stderr);
        assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
        assert.doesNotMatch(r.stdout, /\[(WARNING|ERROR)\]/);
      }
    });
  }

  void it('refuses to install into any namespace but flotilla-system, saying why', () => {
    for (const ns of ['default', 'flotilla']) {
      const r = helmSync(['template', 'flotilla', CHART, '--namespace', ns]);
      assert.equal(r.status, 1);
      assert.match(
        r.stderr,
        new RegExp(
          `flotilla must be installed in namespace flotilla-system, not "${ns}": the CRDs' conversion webhook calls Service flotilla-webhook in flotilla-system`,
        ),
      );
    }
  });

  const refusals: Array<{ name: string; flags: string[]; message: RegExp }> = [
    {
      name: 'an unknown certificate mode',
      flags: ['--set', 'certificates.mode=vault'],
      message: /at '\/certificates\/mode': value must be one of 'certgen', 'cert-manager'/,
    },
    {
      name: 'a misspelt key',
      flags: ['--set', 'webhook.replica=3'],
      message: /at '\/webhook': additional properties 'replica' not allowed/,
    },
    {
      name: 'negative replicas',
      flags: ['--set', 'controller.replicas=-1'],
      message: /at '\/controller\/replicas': minimum: got -1, want 0/,
    },
    {
      name: 'an unknown failure policy',
      flags: ['--set', 'webhook.failurePolicy=Retry'],
      message: /at '\/webhook\/failurePolicy': value must be one of 'Fail', 'Ignore'/,
    },
    {
      name: 'a webhook timeout over the apiserver limit',
      flags: ['--set', 'webhook.timeoutSeconds=31'],
      message: /at '\/webhook\/timeoutSeconds': maximum: got 31, want 30/,
    },
    {
      name: 'an unknown log level',
      flags: ['--set', 'controller.logLevel=loud'],
      message: /at '\/controller\/logLevel': value must be one of 'error', 'warn', 'info', 'debug'/,
    },
    {
      name: 'an unhealthy-cluster threshold above 1',
      flags: ['--set-json', 'controller.failover.unhealthyClusterThreshold=1.5'],
      message: /at '\/controller\/failover\/unhealthyClusterThreshold': maximum: got 1\.5, want 1/,
    },
    {
      name: 'an unhealthy-cluster threshold that is not a fraction',
      flags: ['--set', 'controller.failover.unhealthyClusterThreshold=most'],
      message: /at '\/controller\/failover\/unhealthyClusterThreshold': 'most' does not match pattern/,
    },
    {
      name: 'a webhook health port out of range',
      flags: ['--set', 'webhook.healthPort=0'],
      message: /at '\/webhook\/healthPort': minimum: got 0, want 1/,
    },
    {
      name: 'a malformed cert-manager duration',
      flags: ['--set', 'certificates.certManager.duration=90d'],
      message: /at '\/certificates\/certManager\/duration'/,
    },
    {
      name: 'an agent cluster name that is not a DNS subdomain',
      flags: [...AGENT_MODE, '--set', 'agent.clusterName=Member_2'],
      message: /at '\/agent\/clusterName': 'Member_2' does not match pattern/,
    },
    {
      name: 'a pull agent name that is not a DNS subdomain',
      flags: ['--set', 'controller.pullAgents={member/2}'],
      message: /at '\/controller\/pullAgents\/0': 'member\/2' does not match pattern/,
    },
    {
      name: 'a hub setting in agent mode',
      flags: [...AGENT_MODE, '--set', 'karmadaAPI.enabled=true'],
      message:
        /karmadaAPI\.enabled is a hub setting and agent\.enabled renders the agent only: install the hub's parts as another release/,
    },
    {
      name: 'pull agents in agent mode',
      flags: [...AGENT_MODE, '--set', 'controller.pullAgents={member3}'],
      message: /controller\.pullAgents is a hub setting and agent\.enabled renders the agent only/,
    },
    {
      name: 'a wildcard in the template resources the controller may read',
      flags: ['--set-json', 'controller.rbac.templateResources=[{"apiGroups":["apps"],"resources":["*"]}]'],
      message:
        /controller\.rbac\.templateResources\[0\]: \{"apiGroups":\["apps"\],"resources":\["\*"\]\}: no wildcards/,
    },
  ];
  for (const r of refusals) {
    void it(`refuses ${r.name} with a message naming the value`, () => {
      const result = helmSync(['template', 'flotilla', CHART, '--namespace', NS, ...r.flags]);
      assert.equal(result.status, 1);
      assert.match(result.stderr, r.message);
    });
  }

  void it('renders in cert-manager mode a self-signed CA chain and the serving Certificate the CRDs name, and no certgen', () => {
    const objects = render('--set', 'certificates.mode=cert-manager');
    assert.ok(
      !objects.some((o) => o.kind === 'Job' || get(o, 'metadata.name') === 'flotilla-certgen'),
      'no certgen Jobs or RBAC',
    );
    assert.deepStrictEqual(get(named(objects, 'Issuer', 'flotilla-selfsigned'), 'spec'), { selfSigned: {} });
    const ca = named(objects, 'Certificate', 'flotilla-ca');
    assert.equal(get(ca, 'spec.isCA'), true);
    assert.equal(get(ca, 'spec.secretName'), 'flotilla-ca');
    assert.deepStrictEqual(get(ca, 'spec.issuerRef'), {
      name: 'flotilla-selfsigned',
      kind: 'Issuer',
      group: 'cert-manager.io',
    });
    assert.deepStrictEqual(get(named(objects, 'Issuer', 'flotilla-ca'), 'spec'), { ca: { secretName: 'flotilla-ca' } });

    const serving = named(objects, 'Certificate', WEBHOOK_CERTIFICATE.name);
    assert.equal(get(serving, 'metadata.namespace'), WEBHOOK_CERTIFICATE.namespace);
    assert.deepStrictEqual(get(serving, 'spec.issuerRef'), {
      name: 'flotilla-ca',
      kind: 'Issuer',
      group: 'cert-manager.io',
    });
    assert.deepStrictEqual(get(serving, 'spec.dnsNames'), [
      'flotilla-webhook',
      'flotilla-webhook.flotilla-system',
      'flotilla-webhook.flotilla-system.svc',
      'flotilla-webhook.flotilla-system.svc.cluster.local',
    ]);
    const mounted = (get(named(objects, 'Deployment', 'flotilla-webhook'), 'spec.template.spec.volumes') as Obj[]).find(
      (v) => v.name === 'tls',
    );
    assert.equal(get(serving, 'spec.secretName'), get(mounted, 'secret.secretName'));

    const injectFrom = `${WEBHOOK_CERTIFICATE.namespace}/${WEBHOOK_CERTIFICATE.name}`;
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      assert.deepStrictEqual(get(named(objects, kind, 'flotilla'), 'metadata.annotations'), {
        [INJECT_CA_FROM_ANNOTATION]: injectFrom,
      });
    }
    // crds/ is not templated: the CRDs carry the same annotation statically.
    for (const name of CONVERTIBLE_CRD_NAMES)
      assert.equal(
        customResourceDefinitions().find((c) => c.metadata.name === name)?.metadata.annotations?.[
          INJECT_CA_FROM_ANNOTATION
        ],
        injectFrom,
      );
  });

  void it('signs with a given issuer instead of creating a CA when certManager.issuerRef.name is set', () => {
    const objects = render(
      '--set',
      'certificates.mode=cert-manager',
      '--set',
      'certificates.certManager.issuerRef.name=corp-ca',
      '--set',
      'certificates.certManager.issuerRef.kind=ClusterIssuer',
    );
    assert.equal(objects.filter((o) => o.kind === 'Issuer').length, 0);
    assert.deepStrictEqual(
      objects.filter((o) => o.kind === 'Certificate').map((o) => get(o, 'metadata.name')),
      [WEBHOOK_CERTIFICATE.name],
    );
    assert.deepStrictEqual(get(named(objects, 'Certificate', WEBHOOK_CERTIFICATE.name), 'spec.issuerRef'), {
      name: 'corp-ca',
      kind: 'ClusterIssuer',
      group: 'cert-manager.io',
    });
  });

  void it('carries the webhook values into both webhook configurations', () => {
    const objects = render(
      '--set',
      'webhook.failurePolicy=Ignore',
      '--set',
      'webhook.timeoutSeconds=12',
      '--set-json',
      'webhook.namespaceSelector={"matchLabels":{"flotilla.io/policies":"enabled"}}',
    );
    let checked = 0;
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      for (const hook of get(named(objects, kind, 'flotilla'), 'webhooks') as Obj[]) {
        assert.equal(hook.failurePolicy, 'Ignore');
        assert.equal(hook.timeoutSeconds, 12);
        if (hook.name !== 'clusters.validate.flotilla.io')
          assert.deepStrictEqual(hook.namespaceSelector, { matchLabels: { 'flotilla.io/policies': 'enabled' } });
        else assert.equal(hook.namespaceSelector, undefined, 'Clusters are cluster-scoped');
        checked++;
      }
    }
    assert.equal(checked, 3);
  });

  void it('leaves out the install namespace by default, and an explicit empty-match selector sends every namespace', () => {
    const selectors = (objects: Obj[]) =>
      ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].flatMap((kind) =>
        (get(named(objects, kind, 'flotilla'), 'webhooks') as Obj[])
          .filter((h) => h.name !== 'clusters.validate.flotilla.io')
          .map((h) => h.namespaceSelector),
      );
    assert.deepStrictEqual(
      selectors(render()),
      Array(2).fill({ matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [NS] }] }),
    );
    assert.deepStrictEqual(
      selectors(render('--set-json', 'webhook.namespaceSelector={"matchLabels":{}}')),
      Array(2).fill({ matchLabels: {} }),
    );
  });

  void it("installs Karmada's API groups and sends them to the webhook only when karmadaAPI.enabled", () => {
    const crds = (objects: Obj[]) =>
      objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => get(o, 'metadata.name'));
    assert.deepStrictEqual(crds(render()), []);
    const objects = render('--set', 'karmadaAPI.enabled=true');
    assert.deepStrictEqual(crds(objects), [
      'propagationpolicies.policy.karmada.io',
      'clusterpropagationpolicies.policy.karmada.io',
      'overridepolicies.policy.karmada.io',
      'clusteroverridepolicies.policy.karmada.io',
      'clusters.cluster.karmada.io',
      'resourcebindings.work.karmada.io',
      'clusterresourcebindings.work.karmada.io',
      'works.work.karmada.io',
    ]);
    // The controller writes Karmada's bindings and Works (and their execution spaces) only then.
    const workRules = (o: Obj[]) =>
      (get(named(o, 'ClusterRole', 'flotilla-controller'), 'rules') as Obj[]).filter((r) =>
        (r.apiGroups as string[]).includes('work.karmada.io'),
      );
    assert.deepStrictEqual(workRules(render()), []);
    assert.deepStrictEqual(
      workRules(objects).flatMap((r) => r.resources as string[]),
      [
        'resourcebindings',
        'clusterresourcebindings',
        'works',
        'resourcebindings/status',
        'clusterresourcebindings/status',
        'works/status',
      ],
    );
    const groups = (kind: string) =>
      (get(named(objects, kind, 'flotilla'), 'webhooks') as Obj[]).flatMap((h) =>
        (h.rules as Obj[]).flatMap((r) => r.apiGroups as string[]),
      );
    assert.ok(groups('ValidatingWebhookConfiguration').includes('policy.karmada.io'));
    assert.ok(groups('ValidatingWebhookConfiguration').includes('cluster.karmada.io'));
    assert.ok(groups('MutatingWebhookConfiguration').includes('policy.karmada.io'));
    const plain = render();
    const plainGroups = (get(named(plain, 'ValidatingWebhookConfiguration', 'flotilla'), 'webhooks') as Obj[]).flatMap(
      (h) => (h.rules as Obj[]).flatMap((r) => r.apiGroups as string[]),
    );
    assert.ok(!plainGroups.includes('policy.karmada.io'));
  });

  void it('lets the webhook list cluster.karmada.io Clusters with karmadaAPI.enabled (its known clusters), and with the override route', () => {
    const clusterGroups = (objects: Obj[]) =>
      (get(named(objects, 'ClusterRole', 'flotilla-webhook'), 'rules') as Obj[])
        .filter((r) => (r.resources as string[]).includes('clusters'))
        .flatMap((r) => {
          assert.deepStrictEqual(r.verbs, ['get', 'list', 'watch']);
          return r.apiGroups as string[];
        })
        .sort();
    assert.deepStrictEqual(clusterGroups(render()), ['cluster.flotilla.io']);
    assert.deepStrictEqual(clusterGroups(render('--set', 'karmadaAPI.enabled=true')), [
      'cluster.flotilla.io',
      'cluster.karmada.io',
    ]);
    assert.deepStrictEqual(
      clusterGroups(render('--set', 'webhook.override.enabled=true', '--set', 'webhook.override.clusterName=eu-1')),
      ['cluster.flotilla.io', 'cluster.karmada.io'],
    );
  });

  void it('adds the override webhook only when enabled: IfNeeded, no side effects, Ignore, never kube-system or the install namespace', () => {
    const hooks = (objects: Obj[]) =>
      (get(named(objects, 'MutatingWebhookConfiguration', 'flotilla'), 'webhooks') as Obj[]).map((h) => h.name);
    assert.deepStrictEqual(hooks(render()), ['policies.mutate.flotilla.io']);
    assert.ok(!args(render(), 'flotilla-webhook').includes('--override'));

    const objects = render(
      '--set',
      'webhook.override.enabled=true',
      '--set',
      'webhook.override.clusterName=eu-1',
      '--set-json',
      'webhook.override.clusterLabels={"env":"prod","tier":"a"}',
      '--set',
      'webhook.override.region=eu-west-1',
      '--set-json',
      'webhook.override.namespaceSelector={"matchLabels":{"team":"x"},"matchExpressions":[{"key":"skip","operator":"DoesNotExist"}]}',
    );
    const hook = (get(named(objects, 'MutatingWebhookConfiguration', 'flotilla'), 'webhooks') as Obj[]).find(
      (h) => h.name === 'override.flotilla.io',
    ) as Obj;
    assert.equal(get(hook, 'clientConfig.service.path'), '/override');
    assert.equal(hook.reinvocationPolicy, 'IfNeeded');
    assert.equal(hook.sideEffects, 'None');
    assert.equal(hook.failurePolicy, 'Ignore');
    assert.deepStrictEqual(hook.namespaceSelector, {
      matchExpressions: [
        { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', NS] },
        { key: 'skip', operator: 'DoesNotExist' },
      ],
      matchLabels: { team: 'x' },
    });
    assert.ok((hook.rules as Obj[]).some((r) => (r.resources as string[]).includes('deployments')));
    assert.deepStrictEqual(args(objects, 'flotilla-webhook').slice(4), [
      '--health-port=8081',
      '--override',
      '--cluster-name=eu-1',
      '--cluster-labels=env=prod,tier=a',
      '--cluster-region=eu-west-1',
    ]);
    const rules = get(named(objects, 'ClusterRole', 'flotilla-webhook'), 'rules') as Obj[];
    assert.ok(rules.some((r) => (r.resources as string[]).includes('clusteroverridepolicies')));
    for (const gatekeeper of ['assign', 'assignmetadata', 'modifyset', 'assignimage'])
      assert.ok(
        rules.some((r) => (r.resources as string[]).includes(gatekeeper)),
        gatekeeper,
      );

    const missing = helmSync([
      'template',
      'flotilla',
      CHART,
      '--namespace',
      NS,
      '--set',
      'webhook.override.enabled=true',
    ]);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /webhook\.override\.clusterName is required when webhook\.override\.enabled is true/);
  });

  void it('shards the members over the replicas with controller.sharding, with the Lease rights it needs', () => {
    const objects = render('--set', 'controller.replicas=3', '--set', 'controller.sharding=true');
    const a = args(objects, 'flotilla-controller');
    assert.ok(a.includes('--sharding=true'), a.join(' '));
    assert.ok(a.includes('--lease-name=flotilla-controller'));
    assert.ok(!a.some((x) => x.startsWith('--leader-elect')), a.join(' '));
    const role = named(objects, 'Role', 'flotilla-controller-leader-election');
    assert.ok(
      (role.rules as Array<{ resources: string[]; verbs: string[]; resourceNames?: string[] }>).some(
        (r) =>
          r.resources.includes('leases') && !r.resourceNames && r.verbs.includes('watch') && r.verbs.includes('update'),
      ),
      JSON.stringify(role.rules),
    );
    // Off: leader election as before, and no rights on other Leases.
    const plain = named(render(), 'Role', 'flotilla-controller-leader-election');
    assert.ok(
      !(plain.rules as Array<{ resources: string[]; verbs: string[]; resourceNames?: string[] }>).some(
        (r) => r.resources.includes('leases') && !r.resourceNames && r.verbs.includes('update'),
      ),
    );
  });

  void it('carries replicas, log level, leader election, the members kubeconfig and extra flags into the controller', () => {
    const objects = render(
      '--set',
      'controller.replicas=3',
      '--set',
      'controller.logLevel=debug',
      '--set',
      'controller.leaderElection.enabled=false',
      '--set',
      'controller.membersKubeconfig.secretName=members',
      '--set',
      'controller.metricsPort=9090',
      '--set',
      'controller.extraArgs[0]=--resync=10m',
      '--set',
      'controller.failover.enabled=true',
      '--set',
      'controller.failover.evictionTimeout=90s',
      '--set',
      'controller.failover.purgeMode=Directly',
      '--set',
      'controller.failover.unhealthyClusterThreshold=0.7',
    );
    const deployment = named(objects, 'Deployment', 'flotilla-controller');
    assert.equal(get(deployment, 'spec.replicas'), 3);
    assert.deepStrictEqual(args(objects, 'flotilla-controller'), [
      'controller',
      '--leader-elect=false',
      '--log-level=debug',
      '--metrics-port=9090',
      '--members-kubeconfig=/etc/flotilla/members/kubeconfig',
      '--cluster-status-interval=30s',
      '--not-ready-taint-after=30s',
      '--failover=true',
      '--failover-eviction-timeout=90s',
      '--eviction-purge-mode=Directly',
      '--graceful-eviction-timeout=10m',
      '--unhealthy-cluster-threshold=0.7',
      '--lease-namespace=flotilla-cluster-lease',
      '--propagate-namespaces=auto',
      '--skipped-propagating-namespaces=kube-.*',
      '--resync=10m',
    ]);
    assert.deepStrictEqual(get(deployment, 'spec.template.spec.volumes'), [
      { name: 'members-kubeconfig', secret: { secretName: 'members' } },
    ]);
    assert.deepStrictEqual(get(named(objects, 'Service', 'flotilla-controller-metrics'), 'spec.ports'), [
      { name: 'http-metrics', port: 9090, targetPort: 'http-metrics' },
    ]);
    assert.ok(
      !objects.some((o) => get(o, 'metadata.name') === 'flotilla-controller-leader-election'),
      'no Lease Role without leader election',
    );
  });

  void it('leaves out every controller object when controller.enabled is false, and the webhook is whole', () => {
    const all = kinds(render());
    const without = kinds(render('--set', 'controller.enabled=false'));
    assert.deepStrictEqual(
      all.filter((k) => !k.includes('/flotilla-controller')),
      without,
    );
    assert.ok(all.length - without.length >= 8, `${all.length} vs ${without.length}`);
  });

  void it('grants the controller Secrets only in the namespaces listed', () => {
    const objects = render('--set-json', 'controller.rbac.clusterSecretNamespaces=["flotilla-system","member-creds"]');
    const roles = objects.filter(
      (o) => o.kind === 'Role' && get(o, 'metadata.name') === 'flotilla-controller-cluster-secrets',
    );
    assert.deepStrictEqual(
      roles.map((r) => get(r, 'metadata.namespace')),
      ['flotilla-system', 'member-creds'],
    );
    assert.equal(
      render('--set-json', 'controller.rbac.clusterSecretNamespaces=[]').filter(
        (o) => get(o, 'metadata.name') === 'flotilla-controller-cluster-secrets',
      ).length,
      0,
    );
  });

  void it('renders no agent objects, lease namespace or lease Roles with default values', () => {
    const all = kinds(render());
    assert.deepStrictEqual(
      all.filter((k) => k.includes('flotilla-agent') || k.includes('lease') || k.startsWith('Namespace/')),
      [],
    );
  });

  void it('renders in agent mode only the agent: its flags, the hub kubeconfig Secret read-only, the pod conventions of the controller', () => {
    const objects = renderIn(
      'flotilla-agent',
      ...AGENT_MODE,
      '--set',
      'agent.hubKubeconfigSecret.key=hub.yaml',
      '--set',
      'agent.hubNamespace=fleet-system',
      '--set',
      'agent.leaseNamespace=fleet-leases',
      '--set',
      'agent.concurrency=4',
      '--set',
      'agent.logLevel=debug',
      '--set',
      'agent.metricsPort=9090',
      '--set',
      'agent.clusterStatusInterval=1m',
      '--set',
      'agent.extraArgs[0]=--resync=5m',
      '--set',
      'imagePullSecrets[0].name=regcred',
    );
    // Any namespace: agent mode runs no webhook, so the flotilla-system rule does not apply.
    assert.deepStrictEqual(kinds(objects), [
      'ClusterRole/flotilla-agent',
      'ClusterRoleBinding/flotilla-agent',
      'Deployment/flotilla-agent',
      'Service/flotilla-agent-metrics',
      'ServiceAccount/flotilla-agent',
    ]);
    for (const o of objects.filter((o) => o.kind !== 'ClusterRole' && o.kind !== 'ClusterRoleBinding'))
      assert.equal(get(o, 'metadata.namespace'), 'flotilla-agent');

    const deployment = named(objects, 'Deployment', 'flotilla-agent');
    assert.equal(get(deployment, 'spec.replicas'), 1);
    assert.deepStrictEqual(get(deployment, 'spec.strategy'), { type: 'Recreate' });
    assert.equal(get(deployment, 'spec.template.spec.serviceAccountName'), 'flotilla-agent');
    assert.deepStrictEqual(get(deployment, 'spec.template.spec.imagePullSecrets'), [{ name: 'regcred' }]);
    assert.deepStrictEqual(args(objects, 'flotilla-agent'), [
      'agent',
      '--cluster-name=member2',
      '--hub-kubeconfig=/etc/flotilla/hub/hub.yaml',
      '--namespace=fleet-system',
      '--lease-namespace=fleet-leases',
      '--concurrency=4',
      '--log-level=debug',
      '--metrics-port=9090',
      '--cluster-status-interval=1m',
      '--resync=5m',
    ]);
    const agent = container(objects, 'flotilla-agent');
    // The image's node with the chart's V8 flags (agent.nodeFlags), then the program the launcher runs.
    assert.deepStrictEqual(agent.command, [
      '/nodejs/bin/node',
      '--max-semi-space-size=1',
      '--lite-mode',
      '/app/dist/cmd/flotilla/main.js',
    ]);
    assert.equal(agent.image, 'ghcr.io/flotilla/flotilla:0.1.0');
    assert.deepStrictEqual(agent.volumeMounts, [
      { name: 'hub-kubeconfig', mountPath: '/etc/flotilla/hub', readOnly: true },
    ]);
    assert.deepStrictEqual(get(deployment, 'spec.template.spec.volumes'), [
      { name: 'hub-kubeconfig', secret: { secretName: 'flotilla-hub' } },
    ]);
    assert.deepStrictEqual(agent.ports, [{ name: 'http-metrics', containerPort: 9090 }]);
    assert.deepStrictEqual(get(named(objects, 'Service', 'flotilla-agent-metrics'), 'spec.ports'), [
      { name: 'http-metrics', port: 9090, targetPort: 'http-metrics' },
    ]);

    // Security context, probes and pod identity as the controller's.
    const hub = render();
    const controller = container(hub, 'flotilla-controller');
    for (const field of ['securityContext', 'readinessProbe', 'livenessProbe', 'env'])
      assert.deepStrictEqual(agent[field], controller[field], field);
    assert.deepStrictEqual(
      get(deployment, 'spec.template.spec.securityContext'),
      get(named(hub, 'Deployment', 'flotilla-controller'), 'spec.template.spec.securityContext'),
    );

    // Everything in the member by default, as Karmada's agent; bound to the agent's ServiceAccount.
    assert.deepStrictEqual(get(named(objects, 'ClusterRole', 'flotilla-agent'), 'rules'), [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    ]);
    assert.deepStrictEqual(get(named(objects, 'ClusterRoleBinding', 'flotilla-agent'), 'subjects'), [
      { kind: 'ServiceAccount', name: 'flotilla-agent', namespace: 'flotilla-agent' },
    ]);
  });

  void it('narrows the agent ClusterRole to agent.rbac.rules and leaves out the hub parts whatever their values say', () => {
    const rules = [
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
      { apiGroups: [''], resources: ['nodes', 'pods'], verbs: ['get', 'list', 'watch'] },
    ];
    const objects = render(
      ...AGENT_MODE,
      '--set-json',
      `agent.rbac.rules=${JSON.stringify(rules)}`,
      '--set',
      'certificates.mode=cert-manager',
      '--set',
      'controller.membersKubeconfig.secretName=members',
    );
    assert.deepStrictEqual(get(named(objects, 'ClusterRole', 'flotilla-agent'), 'rules'), rules);
    assert.deepStrictEqual(
      objects.map((o) => get(o, 'metadata.name')).filter((n) => !String(n).startsWith('flotilla-agent')),
      [],
    );
  });

  void it('refuses agent mode without a cluster name or a hub kubeconfig Secret, saying which value', () => {
    const template = (...flags: string[]) => helmSync(['template', 'flotilla', CHART, '--namespace', NS, ...flags]);
    const noName = template('--set', 'agent.enabled=true', '--set', 'agent.hubKubeconfigSecret.name=flotilla-hub');
    assert.equal(noName.status, 1);
    assert.match(noName.stderr, /agent\.clusterName is required when agent\.enabled is true/);
    const noSecret = template('--set', 'agent.enabled=true', '--set', 'agent.clusterName=member2');
    assert.equal(noSecret.status, 1);
    assert.match(noSecret.stderr, /agent\.hubKubeconfigSecret\.name is required when agent\.enabled is true/);
  });

  void it('gives each pull agent a ServiceAccount, read rights, its own Cluster and Lease only, and the controller read on Leases', () => {
    const objects = render('--set', 'controller.pullAgents={member2,member3}');
    const before = kinds(render());
    const added = kinds(objects).filter((k) => !before.includes(k));
    assert.deepStrictEqual(added, [
      'ClusterRole/flotilla-agent-member2',
      'ClusterRole/flotilla-agent-member3',
      'ClusterRoleBinding/flotilla-agent-member2',
      'ClusterRoleBinding/flotilla-agent-member3',
      'Namespace/flotilla-cluster-lease',
      'Namespace/flotilla-es-member2',
      'Namespace/flotilla-es-member3',
      'Role/flotilla-agent-member2',
      'Role/flotilla-agent-member2-works',
      'Role/flotilla-agent-member3',
      'Role/flotilla-agent-member3-works',
      'Role/flotilla-controller-cluster-leases',
      'RoleBinding/flotilla-agent-member2',
      'RoleBinding/flotilla-agent-member2-works',
      'RoleBinding/flotilla-agent-member3',
      'RoleBinding/flotilla-agent-member3-works',
      'RoleBinding/flotilla-controller-cluster-leases',
      'ServiceAccount/flotilla-agent-member2',
      'ServiceAccount/flotilla-agent-member3',
    ]);
    const account = named(objects, 'ServiceAccount', 'flotilla-agent-member2');
    assert.equal(get(account, 'metadata.namespace'), NS);
    assert.equal(account.automountServiceAccountToken, false);
    const subject = [{ kind: 'ServiceAccount', name: 'flotilla-agent-member2', namespace: NS }];

    const rules = get(named(objects, 'ClusterRole', 'flotilla-agent-member2'), 'rules') as Obj[];
    const rule = (resource: string, group?: string) => {
      const found = rules.filter(
        (r) =>
          (r.resources as string[]).includes(resource) &&
          (group === undefined || (r.apiGroups as string[]).includes(group)),
      );
      assert.equal(found.length, 1, resource);
      return found[0] as Obj;
    };
    for (const policy of [
      'propagationpolicies',
      'clusterpropagationpolicies',
      'overridepolicies',
      'clusteroverridepolicies',
    ])
      assert.deepStrictEqual(rule(policy), {
        apiGroups: ['policy.flotilla.io', 'policy.karmada.io'],
        resources: ['propagationpolicies', 'clusterpropagationpolicies', 'overridepolicies', 'clusteroverridepolicies'],
        verbs: ['get', 'list', 'watch'],
      });
    // No binding is read or written by an agent: its Works are, in its own namespace only.
    assert.ok(!rules.some((r) => (r.apiGroups as string[]).includes('work.flotilla.io')), JSON.stringify(rules));
    const works = named(objects, 'Role', 'flotilla-agent-member2-works');
    assert.equal(get(works, 'metadata.namespace'), 'flotilla-es-member2');
    assert.deepStrictEqual(works.rules, [
      { apiGroups: ['work.flotilla.io'], resources: ['works'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['work.flotilla.io'], resources: ['works/status'], verbs: ['get', 'patch'] },
    ]);
    const worksBinding = named(objects, 'RoleBinding', 'flotilla-agent-member2-works');
    assert.equal(get(worksBinding, 'metadata.namespace'), 'flotilla-es-member2');
    assert.deepStrictEqual(get(worksBinding, 'roleRef.name'), 'flotilla-agent-member2-works');
    // A cluster name that is no namespace name: the chart hashes it as the controller does.
    const dotted = render('--set', 'controller.pullAgents={eu.member4}');
    assert.equal(
      get(named(dotted, 'Role', 'flotilla-agent-eu.member4-works'), 'metadata.namespace'),
      executionSpace('eu.member4'),
    );
    // The controller writes Works, and creates the namespaces when missing.
    const controllerRules = get(named(objects, 'ClusterRole', 'flotilla-controller'), 'rules') as Obj[];
    assert.ok(
      controllerRules.some(
        (r) => (r.resources as string[]).includes('works') && (r.verbs as string[]).includes('deletecollection'),
      ),
    );
    assert.ok(
      controllerRules.some(
        (r) => (r.resources as string[]).includes('namespaces') && (r.verbs as string[]).includes('create'),
      ),
    );
    assert.ok(
      !(get(named(render(), 'ClusterRole', 'flotilla-controller'), 'rules') as Obj[]).some(
        (r) => (r.resources as string[]).includes('namespaces') && (r.verbs as string[]).includes('create'),
      ),
      'namespaces are created only with pull agents',
    );
    assert.deepStrictEqual(rule('clusters'), {
      apiGroups: ['cluster.flotilla.io', 'cluster.karmada.io'],
      resources: ['clusters'],
      resourceNames: ['member2'],
      verbs: ['get', 'list', 'watch'],
    });
    assert.deepStrictEqual(rule('clusters/status'), {
      apiGroups: ['cluster.flotilla.io', 'cluster.karmada.io'],
      resources: ['clusters/status'],
      resourceNames: ['member2'],
      verbs: ['get', 'patch', 'update'],
    });
    assert.deepStrictEqual(rule('selfsubjectaccessreviews').verbs, ['create']);
    assert.deepStrictEqual(rule('deployments', 'apps'), {
      apiGroups: ['apps'],
      resources: ['deployments', 'statefulsets', 'daemonsets'],
      verbs: ['get', 'list', 'watch'],
    });
    // Only Clusters and their status are named; nothing is written but status; no Secrets, no status of templates.
    assert.deepStrictEqual(
      rules.filter((r) => r.resourceNames).map((r) => r.resources),
      [['clusters'], ['clusters/status']],
    );
    for (const r of rules) {
      if ((r.resources as string[]).some((x) => x.endsWith('/status'))) continue;
      assert.ok(
        (r.verbs as string[]).every((v) => ['get', 'list', 'watch'].includes(v)) ||
          (r.resources as string[])[0] === 'selfsubjectaccessreviews',
        JSON.stringify(r),
      );
      assert.ok(!(r.resources as string[]).includes('secrets'), JSON.stringify(r));
    }
    assert.deepStrictEqual(
      (get(named(objects, 'ClusterRole', 'flotilla-agent-member3'), 'rules') as Obj[])
        .filter((r) => r.resourceNames)
        .map((r) => r.resourceNames),
      [['member3'], ['member3']],
    );
    assert.deepStrictEqual(get(named(objects, 'ClusterRoleBinding', 'flotilla-agent-member2'), 'subjects'), subject);

    const lease = named(objects, 'Role', 'flotilla-agent-member2');
    assert.equal(get(lease, 'metadata.namespace'), 'flotilla-cluster-lease');
    assert.deepStrictEqual(lease.rules, [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['member2'],
        verbs: ['get', 'update', 'patch'],
      },
    ]);
    const binding = named(objects, 'RoleBinding', 'flotilla-agent-member2');
    assert.equal(get(binding, 'metadata.namespace'), 'flotilla-cluster-lease');
    assert.deepStrictEqual(binding.subjects, subject);

    const controllerLeases = named(objects, 'Role', 'flotilla-controller-cluster-leases');
    assert.equal(get(controllerLeases, 'metadata.namespace'), 'flotilla-cluster-lease');
    assert.deepStrictEqual(controllerLeases.rules, [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch'] },
    ]);
    assert.deepStrictEqual(get(named(objects, 'RoleBinding', 'flotilla-controller-cluster-leases'), 'subjects'), [
      { kind: 'ServiceAccount', name: 'flotilla-controller', namespace: NS },
    ]);
    // The controller reads the agents' Leases where they renew them.
    assert.ok(args(objects, 'flotilla-controller').includes('--lease-namespace=flotilla-cluster-lease'));
  });

  void it("puts pull agents' Leases in controller.leaseNamespace, creating no Namespace when it is the install one, and keeps their RBAC without the controller", () => {
    const same = render('--set', 'controller.pullAgents={member2}', '--set', `controller.leaseNamespace=${NS}`);
    assert.deepStrictEqual(kinds(same.filter((o) => o.kind === 'Namespace')), ['Namespace/flotilla-es-member2']);
    assert.equal(get(named(same, 'Role', 'flotilla-agent-member2'), 'metadata.namespace'), NS);
    assert.equal(get(named(same, 'Role', 'flotilla-controller-cluster-leases'), 'metadata.namespace'), NS);

    const outside = render('--set', 'controller.pullAgents={member2}', '--set', 'controller.enabled=false');
    assert.deepStrictEqual(
      kinds(outside).filter((k) => k.includes('agent') || k.includes('lease') || k.includes('-es-')),
      [
        'ClusterRole/flotilla-agent-member2',
        'ClusterRoleBinding/flotilla-agent-member2',
        'Namespace/flotilla-cluster-lease',
        'Namespace/flotilla-es-member2',
        'Role/flotilla-agent-member2',
        'Role/flotilla-agent-member2-works',
        'RoleBinding/flotilla-agent-member2',
        'RoleBinding/flotilla-agent-member2-works',
        'ServiceAccount/flotilla-agent-member2',
      ],
    );

    const wildcard = helmSync([
      'template',
      'flotilla',
      CHART,
      '--namespace',
      NS,
      '--set',
      'controller.enabled=false',
      '--set',
      'controller.pullAgents={member2}',
      '--set-json',
      'controller.rbac.templateResources=[{"apiGroups":["*"],"resources":["pods"]}]',
    ]);
    assert.equal(wildcard.status, 1);
    assert.match(wildcard.stderr, /controller\.rbac\.templateResources\[0\]: .*: no wildcards/);
  });

  void it('pins the image by digest, sets the pull policy and pull secrets on every pod, and drops the PDB when told', () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const objects = render(
      '--set',
      `image.digest=${digest}`,
      '--set',
      'image.pullPolicy=Always',
      '--set',
      'imagePullSecrets[0].name=regcred',
      '--set',
      'webhook.podDisruptionBudget.enabled=false',
    );
    const pods = objects
      .filter((o) => o.kind === 'Deployment' || o.kind === 'Job')
      .map((o) => get(o, 'spec.template.spec') as Obj);
    assert.equal(pods.length, 4);
    for (const pod of pods) {
      assert.deepStrictEqual(pod.imagePullSecrets, [{ name: 'regcred' }]);
      for (const c of pod.containers as Obj[]) {
        assert.equal(c.image, `ghcr.io/flotilla/flotilla@${digest}`);
        assert.equal(c.imagePullPolicy, 'Always');
      }
    }
    assert.equal(objects.filter((o) => o.kind === 'PodDisruptionBudget').length, 0);
  });
});

void describe('hack/verify-deploy', () => {
  const verify = (dir?: string) =>
    spawnSync('bash', [join(REPO, 'hack/verify-deploy'), '--no-build', ...(dir ? [dir] : [])], { encoding: 'utf8' });
  const withCopy = (edit: (dir: string) => void) => {
    const dir = mkdtempSync(join(tmpdir(), 'deploy-'));
    try {
      cpSync(join(REPO, 'deploy'), dir, { recursive: true, filter: (src) => !src.includes('/deploy/helm') });
      edit(dir);
      return verify(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  void it('passes on the checked-in deploy/', () => {
    const r = verify();
    assert.equal(r.status, 0, r.stderr);
  });

  void it('fails with a diff naming the file when a generated manifest was edited by hand', () => {
    const r = withCopy((dir) => {
      const file = join(dir, 'webhook/deployment.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace('replicas: 2', 'replicas: 5'));
    });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /is out of date with deploy\/helm\/flotilla; run hack\/update-deploy/);
    assert.match(r.stderr, /webhook\/deployment\.yaml/);
    assert.match(r.stderr, /^-\s+replicas: 5$/m);
    assert.match(r.stderr, /^\+\s+replicas: 2$/m);
  });

  void it('fails on a manifest the chart does not render, and leaves the hand-written namespace alone', () => {
    const r = withCopy((dir) => {
      writeFileSync(join(dir, 'webhook/extra.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n');
      writeFileSync(join(dir, 'namespace.yaml'), `${readFileSync(join(dir, 'namespace.yaml'), 'utf8')}  # edited\n`);
    });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /webhook\/extra\.yaml/);
    assert.doesNotMatch(r.stderr, /namespace\.yaml/);
  });
});

void describe('deploy/karmada-api (kustomize Component)', () => {
  /** Each object as JSON with its keys sorted, so key order does not count but list order does. */
  const canonical = (o: unknown): unknown =>
    Array.isArray(o)
      ? o.map(canonical)
      : o && typeof o === 'object'
        ? Object.fromEntries(
            Object.keys(o)
              .sort()
              .map((k) => [k, canonical((o as Obj)[k])]),
          )
        : o;
  const objects = (yaml: string) =>
    parseAllDocuments(yaml)
      .map((d) => d.toJS() as Obj | null)
      .filter((o): o is Obj => o !== null)
      .map((o) => JSON.stringify(canonical(o)))
      .sort();

  void it("makes deploy/ the chart's karmadaAPI.enabled=true rendering (kubectl kustomize)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'karmada-component-'));
    try {
      // kustomize loads nothing outside its root: deploy/ is linked in.
      symlinkSync(join(REPO, 'deploy'), join(dir, 'deploy'));
      writeFileSync(
        join(dir, 'kustomization.yaml'),
        'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deploy]\ncomponents: [deploy/karmada-api]\n',
      );
      const built = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      assert.equal(built.status, 0, built.stderr);
      const rendered = helmSync([
        'template',
        'flotilla',
        CHART,
        '--namespace',
        NS,
        '--include-crds',
        '--set',
        'karmadaAPI.enabled=true',
      ]);
      assert.equal(rendered.status, 0, rendered.stderr);
      const namespace = readFileSync(join(REPO, 'deploy/namespace.yaml'), 'utf8');
      const got = objects(built.stdout);
      const want = objects(`${rendered.stdout}\n---\n${namespace}`);
      assert.ok(
        got.some((o) => o.includes('"name":"propagationpolicies.policy.karmada.io"')),
        "Karmada's CRDs are in the build",
      );
      assert.deepEqual(got, want);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
