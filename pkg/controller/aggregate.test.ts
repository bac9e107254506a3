// aggregateStatus(): the template's status from its members' copies.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregateStatus, aggregates, type MemberObservation } from './aggregate.js';

const member = (
  cluster: string,
  generation: number,
  status: Record<string, unknown> | undefined,
): MemberObservation => ({
  cluster,
  object: { generation, ...(status ? { status } : {}) },
});

describe('aggregateStatus', () => {
  it('sums Deployment counts and says observedGeneration only when every member observed its copy', () => {
    const rolled = { observedGeneration: 3, replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2 };
    const both = aggregateStatus('Deployment', 7, [
      member('m1', 3, rolled),
      member('m2', 1, { ...rolled, observedGeneration: 1 }),
    ]);
    assert.deepEqual(both, {
      replicas: 4,
      readyReplicas: 4,
      availableReplicas: 4,
      updatedReplicas: 4,
      unavailableReplicas: 0,
      observedGeneration: 7,
    });
    const lagging = aggregateStatus('Deployment', 7, [
      member('m1', 3, rolled),
      member('m2', 2, { ...rolled, observedGeneration: 1 }),
    ]);
    assert.equal(lagging?.observedGeneration, undefined);
    const missing = aggregateStatus('Deployment', 7, [member('m1', 3, rolled), { cluster: 'm2', object: undefined }]);
    assert.equal(missing?.observedGeneration, undefined);
    assert.equal(missing?.replicas, 2);
    assert.equal(aggregateStatus('Deployment', 7, [])?.observedGeneration, undefined);
  });

  it('sums DaemonSet and StatefulSet counts by their own field names', () => {
    const ds = aggregateStatus('DaemonSet', 1, [
      member('m1', 1, { observedGeneration: 1, desiredNumberScheduled: 3, numberReady: 3 }),
      member('m2', 1, { observedGeneration: 1, desiredNumberScheduled: 2, numberReady: 1, numberUnavailable: 1 }),
    ]);
    assert.equal(ds?.desiredNumberScheduled, 5);
    assert.equal(ds?.numberReady, 4);
    assert.equal(ds?.numberUnavailable, 1);
    assert.equal(aggregateStatus('StatefulSet', 2, [member('m1', 1, { currentReplicas: 2 })])?.currentReplicas, 2);
  });

  it('Jobs: counts and the earliest start, no conditions', () => {
    assert.deepEqual(
      aggregateStatus('Job', 1, [
        member('m1', 1, {
          active: 1,
          succeeded: 2,
          startTime: '2026-11-25T10:00:00Z',
          conditions: [{ type: 'Complete', status: 'True' }],
        }),
        member('m2', 1, { failed: 1, startTime: '2026-11-25T09:00:00Z' }),
      ]),
      { active: 1, succeeded: 2, failed: 1, startTime: '2026-11-25T09:00:00Z' },
    );
  });

  it('Services gather every ingress; PVCs and Pods take a phase that is good only when every copy is', () => {
    assert.deepEqual(
      aggregateStatus('Service', 1, [
        member('m1', 1, { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } }),
        member('m2', 1, { loadBalancer: { ingress: [{ hostname: 'lb.example' }] } }),
      ]),
      { loadBalancer: { ingress: [{ ip: '10.0.0.1' }, { hostname: 'lb.example' }] } },
    );
    assert.deepEqual(aggregateStatus('Service', 1, [member('m1', 1, {})]), { loadBalancer: {} });
    assert.deepEqual(
      aggregateStatus('PersistentVolumeClaim', 1, [
        member('m1', 1, { phase: 'Bound' }),
        member('m2', 1, { phase: 'Bound' }),
      ]),
      { phase: 'Bound' },
    );
    assert.deepEqual(
      aggregateStatus('PersistentVolumeClaim', 1, [
        member('m1', 1, { phase: 'Bound' }),
        member('m2', 1, { phase: 'Pending' }),
      ]),
      { phase: 'Pending' },
    );
    assert.deepEqual(
      aggregateStatus('Pod', 1, [member('m1', 1, { phase: 'Running' }), member('m2', 1, { phase: 'Failed' })]),
      { phase: 'Failed' },
    );
    assert.deepEqual(aggregateStatus('Pod', 1, [member('m1', 1, { phase: 'Succeeded' })]), { phase: 'Succeeded' });
  });

  it('aggregates only the kinds it knows, in their groups', () => {
    assert.equal(aggregates('apps/v1', 'Deployment'), true);
    assert.equal(aggregates('batch/v1', 'Job'), true);
    assert.equal(aggregates('v1', 'Service'), true);
    assert.equal(aggregates('v1', 'ConfigMap'), false);
    assert.equal(aggregates('example.com/v1', 'Deployment'), false);
    assert.equal(aggregateStatus('ConfigMap', 1, [member('m1', 1, {})]), undefined);
  });
});
