// Karmada's namespace controller on a Flotilla hub that serves Karmada's API (--propagate-namespaces auto):
// real apiservers, a hub and two members from a kubeconfig, the controller in this process through the
// CLI entry. Hub namespaces reach every member, with the ClusterOverridePolicies that select them (one
// written after the namespace was propagated, as Karmada's e2e spec writes it); the reserved, skipped and
// labelled ones do not; a namespace gone from the hub is deleted from the members.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { customResourceDefinitions, karmadaCustomResourceDefinitions } from '../../api/crds/index.js';
import { KubeClient } from '../../pkg/kube/client.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { capturingIO, getObject, installCRDs, type Obj, startController } from './controller-io.js';

const WAIT_MS = 30_000;
const UID_LABEL = 'namespace.flotilla.io/hub-uid';

const ns = (name: string, labels: Record<string, string> = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels },
});

interface Meta {
  labels?: Record<string, string>;
  uid?: string;
  deletionTimestamp?: string;
}
const meta = (o: Obj | undefined): Meta => (o?.metadata as Meta | undefined) ?? {};

void describe('flotilla controller: hub namespaces on every member (Karmada namespace controller)', () => {
  const env = useEnvironment({ members: 2 });
  let hub: KubeClient;
  let members: KubeClient[];
  const stop = new AbortController();
  let controller: Promise<number>;
  let out: ReturnType<typeof capturingIO>;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);
  const onMembers = (name: string) => Promise.all(members.map((m) => getObject(m, `/api/v1/namespaces/${name}`)));

  before(async () => {
    const e = env();
    hub = new KubeClient(e.hub.kubeConfig(), { concurrency: 4 });
    members = e.members.map((m) => new KubeClient(m.kubeConfig(), { concurrency: 4 }));
    await installCRDs(e.hub, [...customResourceDefinitions(), ...karmadaCustomResourceDefinitions()]);
    const applied = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        ns('flotilla-system'),
        ns('team-a', { team: 'a' }),
        ns('opted-out', { 'namespace.karmada.io/skip-auto-propagation': 'true' }),
        ns('kube-extra'),
        ns('karmada-cluster'),
        ...['member1', 'member2'].map((name) => ({
          apiVersion: 'cluster.karmada.io/v1alpha1',
          kind: 'Cluster',
          metadata: { name, labels: { region: name === 'member1' ? 'eu' : 'us' } },
          spec: { syncMode: 'Push' },
        })),
      ],
    });
    assert.equal(applied.status, 0, applied.stderr);
    out = capturingIO(stop.signal);
    controller = startController(e.hub, e.membersKubeconfigPath, out);
  });

  after(async () => {
    stop.abort();
    assert.equal(await controller, 0, out.err());
  });

  void it('creates each hub namespace on every member, except the reserved, skipped and labelled ones', async () => {
    const copies = await eventually(
      () => onMembers('team-a'),
      (c) => c.every((o) => o !== undefined),
      WAIT_MS,
      200,
    );
    assert.ok(
      copies.every((o) => o !== undefined),
      out.err(),
    );
    const hubUid = meta(await getObject(hub, '/api/v1/namespaces/team-a')).uid;
    for (const c of copies) {
      assert.equal(meta(c).labels?.team, 'a');
      assert.equal(meta(c).labels?.[UID_LABEL], hubUid);
    }
    // A namespace created afterwards follows; by then the others would have been written too.
    assert.equal((await k(['create', 'namespace', 'team-b'])).status, 0);
    const b = await eventually(
      () => onMembers('team-b'),
      (c) => c.every((o) => o !== undefined),
      WAIT_MS,
      200,
    );
    assert.ok(
      b.every((o) => o !== undefined),
      out.err(),
    );
    for (const name of ['opted-out', 'kube-extra', 'karmada-cluster', 'flotilla-system'])
      assert.deepEqual(await onMembers(name), [undefined, undefined], name);
  });

  void it('applies a ClusterOverridePolicy written after the namespace reached the members', async () => {
    await eventually(
      () => onMembers('team-a'),
      (c) => c.every((o) => o !== undefined),
      WAIT_MS,
      200,
    );
    const cop = await k(['apply', '-f', '-'], {
      apiVersion: 'policy.karmada.io/v1alpha1',
      kind: 'ClusterOverridePolicy',
      metadata: { name: 'team-a-eu' },
      spec: {
        resourceSelectors: [{ apiVersion: 'v1', kind: 'Namespace', name: 'team-a' }],
        overrideRules: [
          {
            targetCluster: { labelSelector: { matchLabels: { region: 'eu' } } },
            overriders: { labelsOverrider: [{ operator: 'add', value: { residency: 'eu' } }] },
          },
        ],
      },
    });
    assert.equal(cop.status, 0, cop.stderr);
    const copies = await eventually(
      () => onMembers('team-a'),
      (c) => meta(c[0]).labels?.residency === 'eu',
      WAIT_MS,
      200,
    );
    assert.equal(meta(copies[0]).labels?.residency, 'eu', out.err());
    assert.equal(meta(copies[1]).labels?.residency, undefined);
  });

  void it('deletes the copies once the namespace is gone from the hub', async () => {
    await eventually(
      () => onMembers('team-b'),
      (c) => c.every((o) => o !== undefined),
      WAIT_MS,
      200,
    );
    assert.equal((await k(['delete', 'namespace', 'team-b', '--wait=false'])).status, 0);
    // No namespace controller runs on these apiservers: the hub's is finalized by hand, as it would be.
    const finalized = await hub.request({
      method: 'PUT',
      path: '/api/v1/namespaces/team-b/finalize',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' }, spec: { finalizers: [] } },
    });
    assert.equal(finalized.status, 200, JSON.stringify(finalized.body));
    const copies = await eventually(
      () => onMembers('team-b'),
      (c) => c.every((o) => o === undefined || meta(o).deletionTimestamp !== undefined),
      WAIT_MS,
      200,
    );
    for (const c of copies) assert.ok(c === undefined || meta(c).deletionTimestamp !== undefined, out.err());
  });
});
