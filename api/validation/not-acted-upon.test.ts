import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { validateObject } from './index.js';

const pp = (spec: Record<string, unknown>) => ({
  apiVersion: 'policy.karmada.io/v1alpha1',
  kind: 'PropagationPolicy',
  metadata: { name: 'p', namespace: 'shop' },
  spec: { resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }], ...spec },
});
const cluster = (spec: Record<string, unknown>) => ({
  apiVersion: 'cluster.karmada.io/v1alpha1',
  kind: 'Cluster',
  metadata: { name: 'm1' },
  spec,
});

const CASES: Array<[string, Record<string, unknown>, RegExp]> = [
  ['association', { association: true }, /^spec\.association is accepted but not acted upon: /],
  [
    'schedulePriority',
    { schedulePriority: { priorityClassSource: 'KubePriorityClass', priorityClassName: 'high' } },
    /^spec\.schedulePriority is accepted but not acted upon/,
  ],
  [
    'activationPreference',
    { activationPreference: 'Lazy' },
    /^spec\.activationPreference is accepted but not acted upon/,
  ],
  ['dependentOverrides', { dependentOverrides: ['op'] }, /^spec\.dependentOverrides is accepted but not acted upon/],
  [
    'workloadAffinity',
    { placement: { workloadAffinity: { affinity: { groupByLabelKey: 'app' } } } },
    /^spec\.placement\.workloadAffinity is accepted but not acted upon/,
  ],
];

describe('Karmada fields accepted but not acted upon', () => {
  for (const [field, spec, warning] of CASES) {
    it(`warns about ${field} on a PropagationPolicy, and still admits it`, () => {
      const r = validateObject(pp(spec));
      assert.deepEqual(r.errors, []);
      assert.ok(
        r.warnings.some((w) => warning.test(w)),
        r.warnings.join('\n'),
      );
    });
  }

  it('says nothing about suspension, preserveResourcesOnDeletion, propagateDeps, failover and tolerationSeconds, which are acted upon', () => {
    const r = validateObject(
      pp({
        suspension: { dispatchingOnClusters: { clusterNames: ['m1'] } },
        preserveResourcesOnDeletion: true,
        propagateDeps: true,
        failover: { application: { decisionConditions: { tolerationSeconds: 60 }, purgeMode: 'Directly' } },
        placement: {
          clusterTolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }],
        },
      }),
    );
    assert.deepEqual(r.errors, []);
    assert.deepEqual(
      r.warnings.filter((w) => w.includes('not acted upon')),
      [],
    );
  });

  it('says nothing about fields left unset or at the value that asks for nothing', () => {
    const r = validateObject(
      pp({ propagateDeps: false, preserveResourcesOnDeletion: false, dependentOverrides: [], preemption: 'Never' }),
    );
    assert.deepEqual(
      r.warnings.filter((w) => w.includes('not acted upon')),
      [],
    );
  });

  it('warns about a proxy and an impersonator on a Cluster, and not about Pull (flotilla agent acts on it)', () => {
    const r = validateObject(
      cluster({
        syncMode: 'Pull',
        proxyURL: 'http://proxy.example:3128',
        impersonatorSecretRef: { namespace: 'ns', name: 's' },
      }),
    );
    assert.deepEqual(r.errors, []);
    assert.deepEqual(
      r.warnings.map((w) => w.split(' is accepted')[0]),
      ['spec.proxyURL', 'spec.impersonatorSecretRef'],
    );
    assert.deepEqual(validateObject(cluster({ syncMode: 'Push' })).warnings, []);
    assert.deepEqual(validateObject(cluster({ syncMode: 'Pull' })).warnings, []);
  });
});
