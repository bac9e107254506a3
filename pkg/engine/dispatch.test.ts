// The dispatch settings (suspension, conflictResolution, preserveResourcesOnDeletion, failover): read from
// a policy's spec with Karmada's defaults, and carried on the engine's answer for a template from the policy
// that claims it — whichever group and version that policy is in.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  cluster,
  clusterPropagationPolicy,
  configMap,
  deployment,
  propagationPolicy,
  selectDeployment,
  type Obj,
} from '../../test/builders.js';
import { DEFAULT_DISPATCH, dispatchOf, isSuspended, type Dispatch } from './dispatch.js';
import { EngineState, templateKey } from './state.js';

describe('dispatchOf: what a policy says about dispatching', () => {
  const cases: Array<[string, Obj, Dispatch]> = [
    ['nothing: Abort, nothing suspended, nothing preserved, no failover', {}, { ...DEFAULT_DISPATCH }],
    [
      'dispatching: true suspends every cluster, whatever clusters are named',
      { suspension: { dispatching: true, dispatchingOnClusters: { clusterNames: ['m1'] } } },
      { ...DEFAULT_DISPATCH, suspended: 'all' },
    ],
    [
      'dispatchingOnClusters: the named clusters, sorted, once each, strings only',
      { suspension: { dispatching: false, dispatchingOnClusters: { clusterNames: ['m3', 'm1', 'm3', 7] } } },
      { ...DEFAULT_DISPATCH, suspended: ['m1', 'm3'] },
    ],
    ['an empty suspension suspends nothing', { suspension: {} }, { ...DEFAULT_DISPATCH }],
    [
      'Overwrite and preserveResourcesOnDeletion',
      { conflictResolution: 'Overwrite', preserveResourcesOnDeletion: true },
      { ...DEFAULT_DISPATCH, conflictResolution: 'Overwrite', preserveResourcesOnDeletion: true },
    ],
    [
      'anything but Overwrite is Abort; only true preserves',
      { conflictResolution: 'overwrite', preserveResourcesOnDeletion: 'true' },
      { ...DEFAULT_DISPATCH },
    ],
    [
      "failover.cluster without a purgeMode: Gracefully (Karmada's default)",
      { failover: { cluster: {} } },
      { ...DEFAULT_DISPATCH, clusterPurgeMode: 'Gracefully' },
    ],
    [
      'failover.cluster.purgeMode Directly',
      { failover: { cluster: { purgeMode: 'Directly' } } },
      { ...DEFAULT_DISPATCH, clusterPurgeMode: 'Directly' },
    ],
    [
      'failover.cluster.statePreservation: the rules with both fields set',
      {
        failover: {
          cluster: {
            purgeMode: 'Directly',
            statePreservation: {
              rules: [{ aliasLabelName: 'test-alias', jsonPath: '{.replicas}' }, { jsonPath: '{.x}' }],
            },
          },
        },
      },
      {
        ...DEFAULT_DISPATCH,
        clusterPurgeMode: 'Directly',
        clusterStatePreservation: [{ aliasLabelName: 'test-alias', jsonPath: '{.replicas}' }],
      },
    ],
    [
      "failover.application alone: no cluster purge mode (the controller's default applies); Karmada's defaults",
      { failover: { application: {} } },
      {
        ...DEFAULT_DISPATCH,
        application: { tolerationMs: 300_000, purgeMode: 'Gracefully', gracePeriodMs: 600_000, rules: [] },
      },
    ],
    [
      'failover.application as the policy says, without rules missing a label or a path',
      {
        failover: {
          application: {
            decisionConditions: { tolerationSeconds: 0 },
            purgeMode: 'Never',
            gracePeriodSeconds: 30,
            statePreservation: { rules: [{ aliasLabelName: 'a', jsonPath: '{.x}' }, { aliasLabelName: 'b' }, 'junk'] },
          },
        },
      },
      {
        ...DEFAULT_DISPATCH,
        application: {
          tolerationMs: 0,
          purgeMode: 'Never',
          gracePeriodMs: 30_000,
          rules: [{ aliasLabelName: 'a', jsonPath: '{.x}' }],
        },
      },
    ],
  ];
  for (const [name, spec, want] of cases) it(name, () => assert.deepEqual(dispatchOf(spec), want));

  it('isSuspended: every cluster, or the named ones', () => {
    assert.equal(isSuspended({ suspended: 'all' }, 'any'), true);
    assert.equal(isSuspended({ suspended: ['m1'] }, 'm1'), true);
    assert.equal(isSuspended({ suspended: ['m1'] }, 'm2'), false);
  });
});

const WEB = templateKey({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' });
const SETTINGS: Obj = {
  suspension: { dispatchingOnClusters: { clusterNames: ['m2'] } },
  conflictResolution: 'Overwrite',
  preserveResourcesOnDeletion: true,
  failover: { cluster: { purgeMode: 'Directly' } },
};
const WANT: Dispatch = {
  suspended: ['m2'],
  conflictResolution: 'Overwrite',
  preserveResourcesOnDeletion: true,
  clusterPurgeMode: 'Directly',
};

function dispatchOfWeb(objects: Obj[]): Dispatch | undefined {
  const s = new EngineState();
  for (const o of [deployment(), cluster('m1'), cluster('m2'), ...objects]) s.upsert(o);
  return s.renderTemplate(WEB)?.dispatch;
}

describe("renderTemplate carries the claiming policy's dispatch settings", () => {
  const pp = (apiVersion: string, extra: Obj = SETTINGS) => ({
    ...propagationPolicy('pp', 'default', [selectDeployment()], undefined, extra),
    apiVersion,
  });

  for (const apiVersion of ['policy.flotilla.io/v1alpha1', 'policy.flotilla.io/v1beta1', 'policy.karmada.io/v1alpha1'])
    it(`from a ${apiVersion} PropagationPolicy`, () => assert.deepEqual(dispatchOfWeb([pp(apiVersion)]), WANT));

  it('from a ClusterPropagationPolicy, and the defaults from a policy that says nothing', () => {
    assert.deepEqual(dispatchOfWeb([clusterPropagationPolicy('cpp', [selectDeployment()], undefined, SETTINGS)]), WANT);
    assert.deepEqual(dispatchOfWeb([pp('policy.flotilla.io/v1alpha1', {})]), { ...DEFAULT_DISPATCH });
  });

  it('from the policy that claims the template, not another that matches it', () => {
    const low = propagationPolicy('low', 'default', [selectDeployment()], undefined, { ...SETTINGS, priority: 1 });
    const high = propagationPolicy('high', 'default', [selectDeployment()], undefined, { priority: 5 });
    assert.deepEqual(dispatchOfWeb([low, high]), { ...DEFAULT_DISPATCH });
    // An edit of the claiming policy's settings is in the next answer.
    const s = new EngineState();
    for (const o of [deployment(), cluster('m1'), cluster('m2'), high]) s.upsert(o);
    assert.equal(s.renderTemplate(WEB)?.policy?.name, 'high');
    s.upsert(propagationPolicy('high', 'default', [selectDeployment()], undefined, { ...SETTINGS, priority: 5 }));
    assert.deepEqual(s.renderTemplate(WEB)?.dispatch, WANT);
  });

  it('none for a template nothing claims or requires', () => {
    assert.equal(dispatchOfWeb([]), undefined);
  });

  it("a dependency no policy claims: the settings of the first workload's policy that requires it", () => {
    const s = new EngineState();
    const web = deployment('web', 'default', {
      containers: [{ name: 'web', image: 'nginx', envFrom: [{ configMapRef: { name: 'cfg' } }] }],
    });
    for (const o of [
      web,
      configMap('cfg'),
      cluster('m1'),
      cluster('m2'),
      propagationPolicy('pp', 'default', [selectDeployment('web')], undefined, { ...SETTINGS, propagateDeps: true }),
    ])
      s.upsert(o);
    const r = s.renderTemplate(templateKey({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cfg' }));
    assert.equal(r?.policy, undefined);
    assert.equal(r?.requiredBy?.length, 1);
    assert.deepEqual(r?.dispatch, WANT);
  });
});
