// workload-status.ts: the status kube's Deployment and Job controllers write on a member where no pod is
// ever scheduled, written once per generation (Deployments) or once (Jobs), never ready or available.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { deploymentStatus, jobStatus } from './workload-status.js';

const meta = (generation?: number) => ({ name: 'web', namespace: 'ns', ...(generation ? { generation } : {}) });

void describe('karmada-e2e workload status stand-in', () => {
  void it('a Deployment: its replicas created, updated and unavailable for the generation observed; none ready', () => {
    assert.deepEqual(deploymentStatus({ metadata: meta(2), spec: { replicas: 3 } }), {
      observedGeneration: 2,
      replicas: 3,
      updatedReplicas: 3,
      unavailableReplicas: 3,
    });
    // spec.replicas defaults to 1; zero counts are left out.
    assert.deepEqual(deploymentStatus({ metadata: meta(1), spec: {} }), {
      observedGeneration: 1,
      replicas: 1,
      updatedReplicas: 1,
      unavailableReplicas: 1,
    });
    assert.deepEqual(deploymentStatus({ metadata: meta(4), spec: { replicas: 0 } }), { observedGeneration: 4 });
  });

  void it('a Deployment whose status says its generation and replicas is not written again', () => {
    const status = { observedGeneration: 2, replicas: 3, updatedReplicas: 3, unavailableReplicas: 3 };
    assert.equal(deploymentStatus({ metadata: meta(2), spec: { replicas: 3 }, status }), undefined);
    // A scale or a new generation is written.
    assert.equal(deploymentStatus({ metadata: meta(2), spec: { replicas: 5 }, status })?.replicas, 5);
    assert.equal(deploymentStatus({ metadata: meta(3), spec: { replicas: 3 }, status })?.observedGeneration, 3);
  });

  void it('a Job starts once, its parallelism active and none ready; a suspended Job does not start', () => {
    const now = new Date('2026-01-02T03:04:05.678Z');
    assert.deepEqual(jobStatus({ metadata: meta(1), spec: {} }, now), {
      startTime: '2026-01-02T03:04:05Z',
      active: 1,
      ready: 0,
    });
    assert.equal(jobStatus({ metadata: meta(1), spec: { parallelism: 3 } }, now)?.active, 3);
    assert.equal(
      jobStatus({ metadata: meta(1), spec: {}, status: { startTime: '2026-01-01T00:00:00Z' } }, now),
      undefined,
    );
    assert.equal(jobStatus({ metadata: meta(1), spec: { suspend: true } }, now), undefined);
  });
});
