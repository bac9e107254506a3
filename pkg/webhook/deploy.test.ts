// deploy/ as kubectl builds it (the chart rendered with default values, see hack/update-deploy): the
// manifests wire the webhook the way this package serves it, and the controller the way the chart assumes.

import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

import { CONVERTIBLE_CRD_NAMES, CONVERSION_SERVICE, customResourceDefinitions } from '../../api/crds/index.js';
import { WebhookHandler } from './handler.js';

type Obj = Record<string, unknown>;
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
const skip = kubectl.error ? 'kubectl is not installed, so `kubectl kustomize deploy/` cannot be checked' : false;

const get = (o: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((cur, k) => (cur && typeof cur === 'object' ? (cur as Obj)[k] : undefined), o);
const flag = (args: string[], name: string): string | undefined =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

void describe('kubectl kustomize deploy/', { skip }, () => {
  let objects: Obj[] = [];
  const find = (kind: string, name?: string): Obj[] =>
    objects.filter((o) => o.kind === kind && (name === undefined || get(o, 'metadata.name') === name));
  const one = (kind: string, name?: string): Obj => {
    const found = find(kind, name);
    assert.equal(found.length, 1, `${kind} ${name ?? ''}`);
    return found[0] as Obj;
  };
  const container = (deployment: string): Obj =>
    (get(one('Deployment', deployment), 'spec.template.spec.containers') as Obj[])[0] as Obj;

  before(() => {
    const r = spawnSync('kubectl', ['kustomize', `${ROOT}deploy`], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    objects = parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
  });

  void it('builds the CRDs, the namespace, RBAC, the webhook, the controller and the certificate Jobs', () => {
    assert.deepStrictEqual(
      find('CustomResourceDefinition')
        .map((c) => get(c, 'metadata.name'))
        .sort(),
      customResourceDefinitions()
        .map((c) => c.metadata.name)
        .sort(),
    );
    one('Namespace', 'flotilla-system');
    for (const name of ['flotilla-webhook', 'flotilla-controller']) one('Deployment', name);
    for (const name of ['flotilla-webhook', 'flotilla-controller-metrics']) one('Service', name);
    for (const kind of ['PodDisruptionBudget', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'])
      one(kind);
    assert.deepStrictEqual(
      find('Job')
        .map((j) => get(j, 'metadata.name'))
        .sort(),
      ['flotilla-certgen-create', 'flotilla-certgen-patch'],
    );
    assert.deepStrictEqual(
      find('ServiceAccount')
        .map((s) => get(s, 'metadata.name'))
        .sort(),
      ['flotilla-certgen', 'flotilla-controller', 'flotilla-webhook'],
    );
  });

  void it('puts every namespaced object in flotilla-system, the namespace the CRDs convert through', () => {
    const clusterScoped = [
      'Namespace',
      'CustomResourceDefinition',
      'ClusterRole',
      'ClusterRoleBinding',
      'ValidatingWebhookConfiguration',
      'MutatingWebhookConfiguration',
    ];
    for (const o of objects) {
      const ns = get(o, 'metadata.namespace');
      if (clusterScoped.includes(o.kind as string))
        assert.equal(ns, undefined, `${String(o.kind)} ${String(get(o, 'metadata.name'))}`);
      else assert.equal(ns, CONVERSION_SERVICE.namespace, `${String(o.kind)} ${String(get(o, 'metadata.name'))}`);
    }
  });

  void it('runs two webhook replicas, probed over plain HTTP on the health port, behind a PodDisruptionBudget', () => {
    const deployment = one('Deployment', 'flotilla-webhook');
    assert.equal(get(deployment, 'spec.replicas'), 2);
    const c = container('flotilla-webhook');
    // Probes go to the plain-HTTP listener (--health-port), which answers without queueing behind reviews.
    assert.deepStrictEqual(get(c, 'readinessProbe.httpGet'), { path: '/readyz', port: 'health' });
    assert.deepStrictEqual(get(c, 'livenessProbe.httpGet'), { path: '/healthz', port: 'health' });
    assert.equal(get(c, 'livenessProbe.timeoutSeconds'), 5);
    assert.deepStrictEqual(get(c, 'ports'), [
      { name: 'https', containerPort: 8443 },
      { name: 'health', containerPort: 8081 },
    ]);
    const args = get(c, 'args') as string[];
    assert.equal(args[0], 'webhook');
    for (const f of ['--tls-cert-file=', '--tls-private-key-file=', '--port=8443', '--health-port=8081'])
      assert.ok(
        args.some((a) => a.startsWith(f)),
        f,
      );
    assert.equal(get(one('PodDisruptionBudget'), 'spec.minAvailable'), 1);
    assert.deepStrictEqual(
      get(one('PodDisruptionBudget'), 'spec.selector.matchLabels'),
      get(deployment, 'spec.selector.matchLabels'),
    );
  });

  void it('runs every container as the image user, read-only, without privileges, from the released image', () => {
    const pods = [...find('Deployment'), ...find('Job')].map((w) => get(w, 'spec.template.spec') as Obj);
    assert.equal(pods.length, 4);
    for (const pod of pods) {
      assert.equal(get(pod, 'securityContext.runAsNonRoot'), true);
      assert.equal(get(pod, 'securityContext.runAsUser'), 65532);
      for (const c of pod.containers as Obj[]) {
        assert.equal(c.image, 'ghcr.io/flotilla/flotilla:0.1.0', String(c.name));
        assert.deepStrictEqual(
          c.securityContext,
          { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
          String(c.name),
        );
      }
    }
  });

  void it('exposes the webhook on 443 at the Service the CRDs convert through, selecting the webhook pods', () => {
    const service = one('Service', CONVERSION_SERVICE.name);
    assert.equal(get(service, 'metadata.namespace'), CONVERSION_SERVICE.namespace);
    assert.deepStrictEqual(get(service, 'spec.ports'), [
      { name: 'https', port: CONVERSION_SERVICE.port, targetPort: 'https' },
    ]);
    const podLabels = get(one('Deployment', 'flotilla-webhook'), 'spec.template.metadata.labels') as Obj;
    for (const [k, v] of Object.entries(get(service, 'spec.selector') as Obj)) assert.equal(podLabels[k], v, k);
  });

  void it('registers admission webhooks that fail closed, have no side effects and stay on the policy resources', () => {
    const routes = new WebhookHandler();
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      for (const hook of get(one(kind, 'flotilla'), 'webhooks') as Obj[]) {
        assert.equal(hook.failurePolicy, 'Fail');
        assert.equal(hook.sideEffects, 'None');
        assert.equal(hook.timeoutSeconds, 5);
        assert.deepStrictEqual(hook.admissionReviewVersions, ['v1', 'v1beta1']);
        const path = get(hook, 'clientConfig.service.path') as string;
        assert.ok(routes.routeOf(path), `${path} is served`);
        assert.equal(get(hook, 'clientConfig.service.name'), CONVERSION_SERVICE.name);
        assert.equal(get(hook, 'clientConfig.service.namespace'), CONVERSION_SERVICE.namespace);
        for (const rule of hook.rules as Obj[]) {
          assert.deepStrictEqual(rule.operations, ['CREATE', 'UPDATE']);
          for (const g of rule.apiGroups as string[])
            assert.ok(['policy.flotilla.io', 'cluster.flotilla.io'].includes(g), g);
          for (const r of rule.resources as string[]) assert.ok(!r.includes('*'), r);
        }
        if (hook.namespaceSelector !== undefined) {
          assert.deepStrictEqual(get(hook, 'namespaceSelector.matchExpressions'), [
            { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['flotilla-system'] },
          ]);
        }
      }
      // certgen mode: `certs patch` fills in the CA, so nothing asks cert-manager to.
      assert.equal(get(one(kind, 'flotilla'), 'metadata.annotations'), undefined);
    }
  });

  void it('runs `certs create` before and `certs patch` after the release under Helm, on the Secret the webhook mounts', () => {
    const create = one('Job', 'flotilla-certgen-create');
    const patch = one('Job', 'flotilla-certgen-patch');
    assert.equal((get(create, 'metadata.annotations') as Obj)['helm.sh/hook'], 'pre-install,pre-upgrade');
    assert.equal((get(patch, 'metadata.annotations') as Obj)['helm.sh/hook'], 'post-install,post-upgrade');
    const args = (job: Obj): string[] =>
      get((get(job, 'spec.template.spec.containers') as Obj[])[0], 'args') as string[];
    assert.deepStrictEqual(args(create).slice(0, 2), ['certs', 'create']);
    assert.deepStrictEqual(args(patch).slice(0, 2), ['certs', 'patch']);
    const mounted = (get(one('Deployment', 'flotilla-webhook'), 'spec.template.spec.volumes') as Obj[]).find(
      (v) => v.name === 'tls',
    );
    assert.equal(get(mounted, 'secret.secretName'), flag(args(create), 'secret'));
    assert.equal(flag(args(patch), 'secret'), flag(args(create), 'secret'));
    assert.equal(flag(args(create), 'service'), CONVERSION_SERVICE.name);
    assert.deepStrictEqual(flag(args(patch), 'crds')?.split(','), [...CONVERTIBLE_CRD_NAMES]);
    for (const job of [create, patch]) {
      assert.equal(get(job, 'spec.template.spec.serviceAccountName'), 'flotilla-certgen');
      assert.deepStrictEqual(
        (get(job, 'metadata.annotations') as Obj)['helm.sh/hook-delete-policy'],
        'before-hook-creation,hook-succeeded',
      );
    }
  });

  void it('makes the certgen RBAC a hook of both phases that Helm creates before the Jobs and lets it touch only its objects', () => {
    const rbac = objects.filter((o) => get(o, 'metadata.name') === 'flotilla-certgen');
    assert.deepStrictEqual(rbac.map((o) => o.kind).sort(), [
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
      'ServiceAccount',
    ]);
    const jobWeight = Number(
      (get(one('Job', 'flotilla-certgen-create'), 'metadata.annotations') as Obj)['helm.sh/hook-weight'],
    );
    for (const o of rbac) {
      const a = get(o, 'metadata.annotations') as Obj;
      assert.equal(a['helm.sh/hook'], 'pre-install,pre-upgrade,post-install,post-upgrade', String(o.kind));
      assert.ok(
        Number(a['helm.sh/hook-weight']) < jobWeight,
        `${String(o.kind)} weight ${String(a['helm.sh/hook-weight'])} < ${jobWeight}`,
      );
    }
    const crdRule = (get(one('ClusterRole', 'flotilla-certgen'), 'rules') as Obj[]).find((r) =>
      (r.resources as string[]).includes('customresourcedefinitions'),
    );
    assert.deepStrictEqual(crdRule?.resourceNames, [...CONVERTIBLE_CRD_NAMES]);
    assert.deepStrictEqual(crdRule?.verbs, ['get', 'patch']);
  });

  void it('runs one leader-elected controller with its flags, probes and a metrics Service on the same port', () => {
    const deployment = one('Deployment', 'flotilla-controller');
    assert.equal(get(deployment, 'spec.replicas'), 1);
    assert.equal(get(deployment, 'spec.template.spec.serviceAccountName'), 'flotilla-controller');
    const c = container('flotilla-controller');
    const args = get(c, 'args') as string[];
    assert.equal(args[0], 'controller');
    assert.equal(flag(args, 'leader-elect'), 'true');
    assert.equal(flag(args, 'log-level'), 'info');
    assert.equal(flag(args, 'metrics-port'), '8080');
    assert.equal(flag(args, 'unhealthy-cluster-threshold'), '0.55');
    assert.equal(flag(args, 'members-kubeconfig'), undefined, 'no members kubeconfig Secret by default');
    assert.deepStrictEqual(get(c, 'ports'), [{ name: 'http-metrics', containerPort: 8080 }]);
    assert.deepStrictEqual(get(c, 'readinessProbe.httpGet'), { path: '/readyz', port: 'http-metrics' });
    assert.deepStrictEqual(get(c, 'livenessProbe.httpGet'), { path: '/healthz', port: 'http-metrics' });
    const service = one('Service', 'flotilla-controller-metrics');
    assert.deepStrictEqual(get(service, 'spec.ports'), [
      { name: 'http-metrics', port: 8080, targetPort: 'http-metrics' },
    ]);
    const podLabels = get(deployment, 'spec.template.metadata.labels') as Obj;
    for (const [k, v] of Object.entries(get(service, 'spec.selector') as Obj)) assert.equal(podLabels[k], v, k);
    assert.notDeepStrictEqual(get(service, 'spec.selector'), get(one('Service', 'flotilla-webhook'), 'spec.selector'));
  });

  void it('lets the controller write ResourceBindings and status, read policies, read templates and patch them (its finalizer), and hold only its own Lease', () => {
    const rules = get(one('ClusterRole', 'flotilla-controller'), 'rules') as Obj[];
    const verbsOn = (group: string, resource: string): string[] =>
      rules
        .filter((r) => (r.apiGroups as string[]).includes(group) && (r.resources as string[]).includes(resource))
        .flatMap((r) => r.verbs as string[]);
    assert.deepStrictEqual(verbsOn('work.flotilla.io', 'resourcebindings').sort(), [
      'create',
      'delete',
      'get',
      'list',
      'patch',
      'update',
      'watch',
    ]);
    for (const status of ['resourcebindings/status'])
      assert.deepStrictEqual(verbsOn('work.flotilla.io', status).sort(), ['get', 'patch', 'update']);
    for (const plural of [
      'propagationpolicies',
      'clusterpropagationpolicies',
      'overridepolicies',
      'clusteroverridepolicies',
    ]) {
      assert.deepStrictEqual(verbsOn('policy.flotilla.io', plural).sort(), ['get', 'list', 'watch'], plural);
      assert.deepStrictEqual(
        verbsOn('policy.flotilla.io', `${plural}/status`).sort(),
        ['get', 'patch', 'update'],
        `${plural}/status`,
      );
    }
    // patch: the health taints (cluster.karmada.io/not-ready, /unreachable) in spec.taints.
    assert.deepStrictEqual(verbsOn('cluster.flotilla.io', 'clusters').sort(), ['get', 'list', 'patch', 'watch']);
    // patch: the cleanup finalizer on templates the controller propagated.
    assert.deepStrictEqual(verbsOn('apps', 'deployments').sort(), ['get', 'list', 'patch', 'watch']);
    assert.deepStrictEqual(verbsOn('', 'secrets'), [], 'no Secret anywhere on the hub through the ClusterRole');

    const lease = get(one('Role', 'flotilla-controller-leader-election'), 'rules') as Obj[];
    assert.deepStrictEqual(lease, [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['flotilla-controller'],
        verbs: ['get', 'update'],
      },
    ]);
    const secrets = one('Role', 'flotilla-controller-cluster-secrets');
    assert.equal(get(secrets, 'metadata.namespace'), 'flotilla-system');
    assert.deepStrictEqual(get(secrets, 'rules'), [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
    ]);
    for (const binding of [...find('RoleBinding'), ...find('ClusterRoleBinding')].filter((b) =>
      String(get(b, 'metadata.name')).startsWith('flotilla-controller'),
    )) {
      assert.deepStrictEqual(get(binding, 'subjects'), [
        { kind: 'ServiceAccount', name: 'flotilla-controller', namespace: 'flotilla-system' },
      ]);
    }
  });

  void it('grants no wildcard permissions', () => {
    for (const role of [...find('ClusterRole'), ...find('Role')]) {
      for (const rule of get(role, 'rules') as Obj[]) {
        for (const field of ['apiGroups', 'resources', 'verbs'])
          assert.ok(!(rule[field] as string[]).includes('*'), `${String(get(role, 'metadata.name'))} ${field}`);
      }
    }
  });
});
