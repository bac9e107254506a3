// A template deleted after its policy: what was propagated stays on the members while no policy claims
// it (Karmada's rule), but deleting the template must still remove its copies and release its finalizer,
// whether the policy went while the controller ran or while it was down. Real apiservers, a hub and one
// member; the controller runs in this process through the CLI entry.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { capturingIO, getObject, type Obj, prepareHub, startController } from './controller-io.js';

const WAIT_MS = 60_000;
const NS = 'release';

const policy = (name: string, apiVersion: string, kind: string): Obj => ({
  apiVersion: 'policy.flotilla.io/v1beta1',
  kind: 'PropagationPolicy',
  metadata: { name, namespace: NS },
  spec: {
    resourceSelectors: [{ apiVersion, kind, name }],
    placement: { clusterAffinity: { clusterNames: ['member1'] } },
  },
});
const role = (name: string): Obj => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name, namespace: NS },
  rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
});
const configMap = (name: string): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: NS },
  data: { a: '1' },
});
const rolePath = (name: string) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/${name}`;
const cmPath = (name: string) => `/api/v1/namespaces/${NS}/configmaps/${name}`;
const bindingPath = (name: string, kind: string) =>
  `/apis/work.flotilla.io/v1alpha1/namespaces/${NS}/resourcebindings/${name}-${kind}`;

void describe('flotilla controller: a template deleted after its policy', () => {
  const env = useEnvironment({ members: 1 });
  let hub: KubeClient;
  let member: KubeClient;
  let stop = new AbortController();
  let out = capturingIO(stop.signal);
  let controller: Promise<number> | undefined;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);
  const exists = async (c: KubeClient, path: string) => (await getObject(c, path)) !== undefined;
  const claimed = async (name: string, kind: string) => {
    const b = await getObject(hub, bindingPath(name, kind));
    const conditions = ((b?.status as Obj | undefined)?.conditions as Obj[] | undefined) ?? [];
    return conditions.find((c) => c.type === 'Claimed')?.status;
  };
  const start = () => {
    stop = new AbortController();
    out = capturingIO(stop.signal);
    controller = startController(env().hub, env().membersKubeconfigPath, out);
  };
  const stopController = async () => {
    stop.abort();
    assert.equal(await controller, 0, out.err());
    controller = undefined;
  };
  /** Deletes the template on the hub and waits for it to be gone there and on the member. */
  const deleteAndWait = async (resource: string, name: string, path: string) => {
    const deleted = await k(['delete', resource, name, '-n', NS, '--wait=false']);
    assert.equal(deleted.status, 0, deleted.stderr);
    const gone = await eventually(
      async () => ({ hub: await exists(hub, path), member: await exists(member, path) }),
      (s) => !s.hub && !s.member,
      WAIT_MS,
      200,
    );
    const left = gone.hub ? JSON.stringify((await getObject(hub, path))?.metadata) : '';
    assert.deepEqual(gone, { hub: false, member: false }, `still there: ${left}\n${out.err()}`);
  };

  before(async () => {
    const e = env();
    const c = await prepareHub(e, NS);
    hub = c.hub;
    member = c.members[0] as KubeClient;
    start();
  });

  after(async () => {
    if (controller) await stopController();
  });

  void it('removes the copy and releases the template when the policy went first (the kind no longer selected)', async () => {
    const applied = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [role('reader'), policy('reader', 'rbac.authorization.k8s.io/v1', 'Role')],
    });
    assert.equal(applied.status, 0, applied.stderr);
    assert.ok(await eventually(() => exists(member, rolePath('reader')), Boolean, WAIT_MS, 200), out.err());

    const unclaimed = await k(['delete', 'propagationpolicies.policy.flotilla.io', 'reader', '-n', NS]);
    assert.equal(unclaimed.status, 0, unclaimed.stderr);
    assert.equal(
      await eventually(
        () => claimed('reader', 'role'),
        (s) => s === 'False',
        WAIT_MS,
        200,
      ),
      'False',
    );
    // Karmada's rule: the copy stays while no policy claims the template.
    assert.ok(await exists(member, rolePath('reader')));

    await deleteAndWait('role', 'reader', rolePath('reader'));
  });

  void it('does the same when the policy went while the controller was down', async () => {
    const applied = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [configMap('kept'), policy('kept', 'v1', 'ConfigMap')],
    });
    assert.equal(applied.status, 0, applied.stderr);
    assert.ok(await eventually(() => exists(member, cmPath('kept')), Boolean, WAIT_MS, 200), out.err());

    await stopController();
    const unclaimed = await k(['delete', 'propagationpolicies.policy.flotilla.io', 'kept', '-n', NS]);
    assert.equal(unclaimed.status, 0, unclaimed.stderr);
    start();
    assert.ok(
      await eventually(() => out.err().includes('caches synced'), Boolean, WAIT_MS, 100),
      `the controller did not sync: ${out.err()}`,
    );

    await deleteAndWait('configmap', 'kept', cmPath('kept'));
  });
});
