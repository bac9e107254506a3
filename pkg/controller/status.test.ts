import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FakeApiserver, type Obj } from '../../test/fake-apiserver.js';
import { KubeClient } from '../kube/client.js';
import type { Logger } from '../runtime/log.js';
import type { ClusterFacts } from './cluster-facts.js';
import { EventRecorder } from './events.js';
import { policyKey } from './policy-status.js';
import {
  ClusterStatusReconciler,
  ClusterTaintReconciler,
  PolicyStatusReconciler,
  transitionTime,
  type Condition,
} from './status.js';

const quiet: Logger = { error() {}, warn() {}, info() {}, debug() {} };
const cluster = (name: string): Obj => ({
  apiVersion: 'cluster.flotilla.io/v1alpha1',
  kind: 'Cluster',
  metadata: { name },
});

function clusterSetup(condition: () => Condition | undefined, facts: () => ClusterFacts | undefined = () => undefined) {
  const server = new FakeApiserver();
  server.put(cluster('m1'));
  const r = new ClusterStatusReconciler(new KubeClient(server, { concurrency: 2 }), {
    cluster: (n) => server.get('cluster.flotilla.io/v1alpha1', 'Cluster', undefined, n),
    condition,
    facts,
    logger: quiet,
  });
  return { server, r };
}

describe('ClusterStatusReconciler', () => {
  it("writes the Ready condition the registry gives to the Cluster's status subresource, as flotilla-controller", async () => {
    const { server, r } = clusterSetup(() => ({
      status: 'True',
      reason: 'MemberReady',
      message: 'https://m1/readyz answered ok',
    }));
    await r.reconcile('m1');
    const patch = server.sent('PATCH')[0];
    assert.equal(patch?.path, '/apis/cluster.flotilla.io/v1alpha1/clusters/m1/status');
    assert.equal(patch?.query.get('fieldManager'), 'flotilla-controller');
    const conditions = (server.get('cluster.flotilla.io/v1alpha1', 'Cluster', undefined, 'm1')?.status as Obj)
      .conditions as Obj[];
    assert.deepEqual(
      [conditions[0]?.type, conditions[0]?.status, conditions[0]?.reason],
      ['Ready', 'True', 'MemberReady'],
    );
  });

  it('writes what was read from the member beside the condition, and again when it changes', async () => {
    let facts: ClusterFacts = {
      kubernetesVersion: 'v1.31.0',
      resourceSummary: { allocatable: { cpu: '4', pods: '110' }, allocated: { pods: '0' }, allocating: { pods: '0' } },
    };
    const { server, r } = clusterSetup(
      () => ({ status: 'True', reason: 'MemberReady', message: 'ok' }),
      () => facts,
    );
    await r.reconcile('m1');
    await r.reconcile('m1');
    facts = { ...facts, kubernetesVersion: 'v1.32.0' };
    await r.reconcile('m1');
    assert.equal(server.sent('PATCH').length, 2);
    const status = server.get('cluster.flotilla.io/v1alpha1', 'Cluster', undefined, 'm1')?.status as Obj;
    assert.equal(status.kubernetesVersion, 'v1.32.0');
    assert.deepEqual((status.resourceSummary as Obj).allocatable, { cpu: '4', pods: '110' });
    assert.equal((status.conditions as Obj[]).length, 1);
  });

  it('sends nothing when the condition has not changed since it was written', async () => {
    const { server, r } = clusterSetup(() => ({ status: 'False', reason: 'MemberNotReady', message: 'down' }));
    await r.reconcile('m1');
    await r.reconcile('m1');
    assert.equal(server.sent('PATCH').length, 1);
  });

  it('throws when the hub refuses the write, so the queue retries it, and writes it on the retry', async () => {
    const { server, r } = clusterSetup(() => ({ status: 'True', reason: 'MemberReady', message: 'ok' }));
    server.hook = (req) =>
      req.method === 'PATCH' ? { status: 500, body: { kind: 'Status', message: 'etcd is busy' } } : undefined;
    await assert.rejects(r.reconcile('m1'), /HTTP 500/);
    server.hook = undefined;
    await r.reconcile('m1');
    assert.equal(server.sent('PATCH').length, 2);
    assert.ok(server.get('cluster.flotilla.io/v1alpha1', 'Cluster', undefined, 'm1')?.status);
  });

  it('records ClusterNotReady and ClusterReady on the Cluster when the status changes, with the condition message', async () => {
    const server = new FakeApiserver();
    server.put({
      ...cluster('m1'),
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'MemberReady', message: 'ok' }] },
    });
    const client = new KubeClient(server, { concurrency: 2 });
    const events = new EventRecorder(client, { component: 'flotilla-controller', instance: 'pod-1' });
    let c: Condition = { status: 'True', reason: 'MemberReady', message: 'https://m1/readyz answered ok' };
    const r = new ClusterStatusReconciler(client, {
      cluster: (n) => server.get('cluster.flotilla.io/v1alpha1', 'Cluster', undefined, n),
      condition: () => c,
      facts: () => undefined,
      events,
      logger: quiet,
    });
    const sentEvents = async () => {
      await events.flush();
      return server
        .sent('POST', '/events')
        .map((q) => q.body as Obj)
        .map((e) => [e.type, e.reason, e.message, (e.involvedObject as Obj).kind, (e.involvedObject as Obj).uid]);
    };
    await r.reconcile('m1');
    assert.deepEqual(await sentEvents(), [], 'True as the Cluster already said: no event');
    const hung = 'https://m1/readyz: no answer within 2s (probe timeout)';
    c = { status: 'False', reason: 'MemberNotReady', message: hung };
    await r.reconcile('m1');
    c = { status: 'False', reason: 'MemberNotReady', message: 'https://m1: connect ECONNREFUSED 10.0.0.1:6443' };
    await r.reconcile('m1');
    c = { status: 'True', reason: 'MemberReady', message: 'https://m1/readyz answered ok' };
    await r.reconcile('m1');
    const uid = (server.get('cluster.flotilla.io/v1alpha1', 'Cluster', undefined, 'm1')?.metadata as Obj).uid;
    assert.ok(uid);
    assert.deepEqual(await sentEvents(), [
      ['Warning', 'ClusterNotReady', hung, 'Cluster', uid],
      ['Normal', 'ClusterReady', 'https://m1/readyz answered ok', 'Cluster', uid],
    ]);
    const conditions = (server.get('cluster.flotilla.io/v1alpha1', 'Cluster', undefined, 'm1')?.status as Obj)
      .conditions as Obj[];
    assert.equal(conditions[0]?.message, 'https://m1/readyz answered ok');
  });

  it('writes nothing for a Cluster the hub does not have, or before anything is known', async () => {
    const { server, r } = clusterSetup(() => undefined);
    await r.reconcile('m1');
    await r.reconcile('gone');
    assert.equal(server.sent('PATCH').length, 0);
  });
});

describe('PolicyStatusReconciler', () => {
  const ref = { kind: 'PropagationPolicy', namespace: 'shop', name: 'web' };
  const policy: Obj = {
    apiVersion: 'policy.flotilla.io/v1beta1',
    kind: 'PropagationPolicy',
    metadata: { name: 'web', namespace: 'shop', generation: 4 },
    spec: {},
  };

  it("writes the book's counts and Ready condition with the observed generation", async () => {
    const server = new FakeApiserver();
    server.put(policy);
    const r = new PolicyStatusReconciler(new KubeClient(server, { concurrency: 2 }), {
      policy: () => server.get('policy.flotilla.io/v1beta1', 'PropagationPolicy', 'shop', 'web'),
      plural: () => 'propagationpolicies',
      intervalMs: 1_000,
      logger: quiet,
    });
    r.book.record('t1', 'Deployment shop/web', { policy: ref, overrides: [], errors: [] });
    await r.reconcile(policyKey(ref));
    const status = server.get('policy.flotilla.io/v1beta1', 'PropagationPolicy', 'shop', 'web')?.status as Obj;
    assert.equal(status.templates, 1);
    assert.equal(status.observedGeneration, 4);
    assert.deepEqual(((status.conditions as Obj[])[0] as Obj).reason, 'Claimed');
    await r.reconcile(policyKey(ref));
    assert.equal(server.sent('PATCH').length, 1, 'an unchanged status is not written again');
  });

  it('counts that keep changing are written once they settle, or after 10 s of changes, not once per interval', async () => {
    const server = new FakeApiserver();
    server.put(policy);
    let now = 0;
    const r = new PolicyStatusReconciler(new KubeClient(server, { concurrency: 2 }), {
      policy: () => server.get('policy.flotilla.io/v1beta1', 'PropagationPolicy', 'shop', 'web'),
      plural: () => 'propagationpolicies',
      intervalMs: 1_000,
      logger: quiet,
      now: () => now,
    });
    const key = policyKey(ref);
    // A template claimed every 500 ms; the queue runs the key an interval after each change.
    for (let i = 0; i < 30; i++) {
      now = i * 500;
      r.book.record(`t${i}`, `Deployment shop/t${i}`, { policy: ref, overrides: [], errors: [] });
      r.flush();
      if (i % 2 === 1) await r.reconcile(key);
    }
    const counts = () => server.sent('PATCH').map((q) => ((q.body as Obj).status as Obj).templates as number);
    assert.deepEqual(counts(), [22], 'one write, once the counts have changed for 10 s (22 templates then)');
    now += 1_000;
    await r.reconcile(key);
    assert.deepEqual(counts(), [22, 30], 'and one once the counts settled');
  });
});

describe('transitionTime()', () => {
  const now = () => new Date('2026-11-25T10:00:00.123Z');
  it('keeps the time of a condition whose status stays, and takes now when it changes', () => {
    const o = {
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
    };
    assert.equal(transitionTime(o, 'Ready', 'True', now), '2026-01-01T00:00:00Z');
    assert.equal(transitionTime(o, 'Ready', 'False', now), '2026-11-25T10:00:00Z');
  });
});

describe('ClusterTaintReconciler', () => {
  it('puts the health taints beside the ones people wrote, and on a conflict reads the Cluster again and retries', async () => {
    const server = new FakeApiserver();
    server.put({ ...cluster('m1'), spec: { taints: [{ key: 'team', effect: 'NoSchedule' }] } });
    let conflicts = 1;
    server.hook = (req) =>
      req.method === 'PATCH' && conflicts-- > 0
        ? { status: 409, body: { kind: 'Status', reason: 'Conflict' } }
        : undefined;
    const r = new ClusterTaintReconciler(new KubeClient(server, { concurrency: 2 }), {
      cluster: (n) => server.get('cluster.flotilla.io/v1alpha1', 'Cluster', undefined, n),
      taints: () => [
        { key: 'cluster.karmada.io/unreachable', effect: 'NoSchedule', timeAdded: '2026-11-25T10:00:00Z' },
      ],
      logger: quiet,
    });
    await r.reconcile('m1');
    assert.equal(server.sent('PATCH').length, 2);
    assert.equal(server.sent('GET', '/clusters/m1').length, 1);
    const spec = server.get('cluster.flotilla.io/v1alpha1', 'Cluster', undefined, 'm1')?.spec as Obj;
    assert.deepEqual(spec.taints, [
      { key: 'team', effect: 'NoSchedule' },
      { key: 'cluster.karmada.io/unreachable', effect: 'NoSchedule', timeAdded: '2026-11-25T10:00:00Z' },
    ]);
    await r.reconcile('m1');
    assert.equal(server.sent('PATCH').length, 2, 'unchanged: no request');
  });
});
