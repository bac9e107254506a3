// deploy/ as kubectl builds it: the manifests wire the webhook the way this package serves it.

import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

import { CONVERSION_SERVICE, customResourceDefinitions } from '../../api/crds/index.js';
import { WebhookHandler } from './handler.js';

type Obj = Record<string, unknown>;
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
const skip = kubectl.error ? 'kubectl is not installed, so `kubectl kustomize deploy/` cannot be checked' : false;

const get = (o: unknown, path: string): unknown => path.split('.').reduce<unknown>((cur, k) => (cur && typeof cur === 'object' ? (cur as Obj)[k] : undefined), o);

void describe('kubectl kustomize deploy/', { skip }, () => {
  let objects: Obj[] = [];
  const find = (kind: string, name?: string): Obj[] => objects.filter((o) => o.kind === kind && (name === undefined || get(o, 'metadata.name') === name));
  const one = (kind: string, name?: string): Obj => {
    const found = find(kind, name);
    assert.equal(found.length, 1, `${kind} ${name ?? ''}`);
    return found[0] as Obj;
  };

  before(() => {
    const r = spawnSync('kubectl', ['kustomize', `${ROOT}deploy`], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    objects = parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
  });

  void it('builds the CRDs, the namespace, RBAC, the webhook and the certificate Jobs', () => {
    assert.deepStrictEqual(find('CustomResourceDefinition').map((c) => get(c, 'metadata.name')).sort(), customResourceDefinitions().map((c) => c.metadata.name).sort());
    one('Namespace', 'flotilla-system');
    for (const kind of ['Deployment', 'Service', 'PodDisruptionBudget', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) one(kind);
    assert.equal(find('Job').length, 2);
  });

  void it('runs two webhook replicas, ready on /readyz over HTTPS, behind a PodDisruptionBudget', () => {
    const deployment = one('Deployment', 'flotilla-webhook');
    assert.equal(get(deployment, 'spec.replicas'), 2);
    const container = (get(deployment, 'spec.template.spec.containers') as Obj[])[0];
    assert.deepStrictEqual(get(container, 'readinessProbe.httpGet'), { path: '/readyz', port: 'https', scheme: 'HTTPS' });
    assert.deepStrictEqual(get(container, 'ports'), [{ name: 'https', containerPort: 8443 }]);
    const args = get(container, 'args') as string[];
    assert.equal(args[0], 'webhook');
    for (const flag of ['--tls-cert-file=', '--tls-private-key-file=', '--port=8443']) assert.ok(args.some((a) => a.startsWith(flag)), flag);
    assert.equal(get(one('PodDisruptionBudget'), 'spec.minAvailable'), 1);
    assert.deepStrictEqual(get(one('PodDisruptionBudget'), 'spec.selector.matchLabels'), get(deployment, 'spec.selector.matchLabels'));
  });

  void it('exposes the webhook on 443 at the Service the CRDs convert through', () => {
    const service = one('Service', CONVERSION_SERVICE.name);
    assert.equal(get(service, 'metadata.namespace'), CONVERSION_SERVICE.namespace);
    assert.deepStrictEqual(get(service, 'spec.ports'), [{ name: 'https', port: CONVERSION_SERVICE.port, targetPort: 'https' }]);
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
        for (const rule of hook.rules as Obj[]) {
          assert.deepStrictEqual(rule.operations, ['CREATE', 'UPDATE']);
          for (const g of rule.apiGroups as string[]) assert.ok(['policy.flotilla.io', 'cluster.flotilla.io'].includes(g), g);
          for (const r of rule.resources as string[]) assert.ok(!r.includes('*'), r);
        }
        if (hook.namespaceSelector !== undefined) {
          assert.deepStrictEqual(get(hook, 'namespaceSelector.matchExpressions'), [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['flotilla-system'] }]);
        }
      }
    }
  });

  void it('grants no wildcard permissions', () => {
    for (const role of [...find('ClusterRole'), ...find('Role')]) {
      for (const rule of get(role, 'rules') as Obj[]) {
        for (const field of ['apiGroups', 'resources', 'verbs']) assert.ok(!(rule[field] as string[]).includes('*'), `${String(get(role, 'metadata.name'))} ${field}`);
      }
    }
  });
});
