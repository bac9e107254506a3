// Karmada's binding shape and message formats (pure), for what the in-memory fleet does not reach: a
// cluster-scoped template's ClusterResourceBinding, preemption, dependencies and a failed placement.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import type { JsonObject } from '../kube/objects.js';
import {
  applyPolicyMessage,
  dependenciesMessage,
  overrideMessage,
  preemptMessage,
  scheduledMessage,
  syncWorkMessage,
} from './karmada-events.js';
import {
  karmadaBinding,
  karmadaBindingRef,
  karmadaBindingStatus,
  scheduleResult,
  type KarmadaInput,
} from './karmada-shape.js';

const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'system:Reader', uid: 'u-1' };

function input(o: Partial<KarmadaInput> & Pick<KarmadaInput, 'b'>): KarmadaInput {
  return {
    t: role,
    template: { apiVersion: role.apiVersion, kind: role.kind, metadata: { name: role.name } },
    policy: undefined,
    plan: undefined,
    reports: undefined,
    resource: 'clusterroles',
    since: () => '2026-01-01T00:00:00Z',
    ...o,
  };
}

describe("Karmada's binding", () => {
  test('a cluster-scoped template gets a ClusterResourceBinding named as Karmada names it, claimed by its ClusterPropagationPolicy', () => {
    const policy: JsonObject = {
      apiVersion: 'policy.karmada.io/v1alpha1',
      kind: 'ClusterPropagationPolicy',
      metadata: { name: 'roles', labels: { 'clusterpropagationpolicy.karmada.io/permanent-id': 'cpp-1' } },
      spec: { placement: { clusterAffinity: { clusterNames: ['m1', 'm2'] } } },
    };
    const i = input({
      policy,
      b: {
        policy: { kind: 'ClusterPropagationPolicy', name: 'roles' },
        conflictResolution: 'Abort',
        clusters: [
          { name: 'm2', state: 'Applied' },
          { name: 'm1', state: 'Applied' },
        ],
        errors: [],
      },
    });
    const ref = karmadaBindingRef(role);
    assert.deepEqual(ref, {
      apiVersion: 'work.karmada.io/v1alpha2',
      kind: 'ClusterResourceBinding',
      name: 'system.reader-clusterrole',
      path: '/apis/work.karmada.io/v1alpha2/clusterresourcebindings/system.reader-clusterrole',
    });
    const b = karmadaBinding(i);
    const meta = b.metadata as JsonObject;
    assert.equal(meta.namespace, undefined);
    assert.deepEqual(meta.labels, {
      'clusterresourcebinding.karmada.io/permanent-id': 'u-1',
      'flotilla.io/template-uid': 'u-1',
      'clusterpropagationpolicy.karmada.io/permanent-id': 'cpp-1',
    });
    assert.equal((meta.annotations as JsonObject)['clusterpropagationpolicy.karmada.io/name'], 'roles');
    assert.equal((meta.annotations as JsonObject)['flotilla.io/clusters'], 'm1,m2');
    const spec = b.spec as JsonObject;
    assert.deepEqual(spec.clusters, [{ name: 'm1' }, { name: 'm2' }]);
    assert.deepEqual(spec.placement, policy.spec && (policy.spec as JsonObject).placement);
    assert.equal(spec.replicas, undefined, 'a ClusterRole has no replicas');
    assert.equal(
      scheduledMessage(true, scheduleResult(i.b)),
      'Binding has been scheduled successfully. Result {m1:0, m2:0}',
    );
    assert.equal(syncWorkMessage(ref), 'Sync work of ClusterResourceBinding(system.reader-clusterrole) successful.');
    assert.equal(
      applyPolicyMessage({ kind: 'ClusterPropagationPolicy', name: 'roles' }),
      'Apply cluster policy(roles) succeed',
    );
  });

  test("a Job's replicas are its parallelism, at most its completions (Karmada's jobReplica)", () => {
    const job = { apiVersion: 'batch/v1', kind: 'Job', namespace: 'ns', name: 'pi', uid: 'u-2' };
    const replicasOf = (spec: JsonObject) =>
      (
        karmadaBinding(
          input({
            t: job,
            template: { apiVersion: job.apiVersion, kind: job.kind, metadata: { name: 'pi', namespace: 'ns' }, spec },
            resource: 'jobs',
            b: { clusters: [], errors: [] },
          }),
        ).spec as JsonObject
      ).replicas;
    assert.equal(replicasOf({ parallelism: 5, completions: 3 }), 3);
    assert.equal(replicasOf({ parallelism: 2, completions: 10 }), 2);
    assert.equal(replicasOf({ completions: 4 }), 1, "parallelism absent: the apiserver's default, 1");
  });

  test('a failed placement: Scheduled False with the reason NoClusterFit and the error', () => {
    const i = input({
      b: { policy: { kind: 'ClusterPropagationPolicy', name: 'roles' }, clusters: [], errors: ['no cluster fits'] },
    });
    const status = karmadaBindingStatus(i, [], 7).status as JsonObject;
    const conditions = status.conditions as JsonObject[];
    assert.deepEqual(
      conditions.map((c) => [c.type, c.status, c.reason, c.message]),
      [
        ['Scheduled', 'False', 'NoClusterFit', 'no cluster fits'],
        [
          'FullyApplied',
          'False',
          'FullyAppliedFailed',
          'Failed to apply all works, see status.aggregatedStatus for details',
        ],
      ],
    );
    assert.equal(status.schedulerObservedGeneration, undefined);
  });
});

describe("Karmada's messages", () => {
  test('preemption, overrides and dependencies read as Karmada writes them', () => {
    const pp = (name: string) => ({ kind: 'PropagationPolicy', namespace: 'ns', name });
    assert.equal(
      preemptMessage(pp('high'), pp('low')),
      'Propagation policy(ns/high) preempted propagation policy(ns/low) successfully',
    );
    assert.equal(
      preemptMessage(pp('high'), { kind: 'ClusterPropagationPolicy', name: 'all' }),
      'Propagation policy(ns/high) preempted cluster propagation policy(all) successfully',
    );
    assert.equal(
      preemptMessage({ kind: 'ClusterPropagationPolicy', name: 'b' }, { kind: 'ClusterPropagationPolicy', name: 'a' }),
      'Cluster propagation policy(b) preempted cluster propagation policy(a) successfully',
    );
    assert.equal(
      overrideMessage({ kind: 'ClusterOverridePolicy', name: 'co' }, 'm1'),
      'Apply cluster override policy(co) for cluster(m1) succeed.',
    );
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'ns' },
      spec: {
        template: {
          spec: {
            containers: [{ name: 'c', envFrom: [{ configMapRef: { name: 'cfg' } }] }],
            volumes: [{ name: 's', secret: { secretName: 'tls' } }],
          },
        },
      },
    };
    assert.equal(
      dependenciesMessage({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ns', name: 'web' }, deployment),
      'Get dependencies([{APIVersion:v1 Kind:ConfigMap Namespace:ns Name:cfg LabelSelector:<nil>} {APIVersion:v1 Kind:Secret Namespace:ns Name:tls LabelSelector:<nil>}]) succeed.',
    );
    assert.equal(
      dependenciesMessage({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'x' }, {}),
      undefined,
    );
  });
});
