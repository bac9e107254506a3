// The dispatch settings on their way from the engine to a pull cluster: the plan takes them from the
// engine's answer, the binding's spec carries them (suspension in the policy's shape, as Karmada's
// ResourceBinding does), each Work carries its cluster's part, and the agent reads them from its Work alone.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { cluster, deployment, propagationPolicy, selectDeployment, type Obj } from '../../test/builders.js';
import { DEFAULT_DISPATCH, type Dispatch } from '../engine/dispatch.js';
import { EngineState, templateKey } from '../engine/state.js';
import { bindingObject } from './binding.js';
import { plan, stepFor } from './plan.js';
import { workDispatch, workSpec } from './work.js';

const T = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web', uid: 'uid-1' };
const KEY = templateKey(T);

/** web claimed for m1..m3 by a policy with `settings`: the plan, and the binding's spec written from it. */
function decided(settings: Obj): { spec: Obj; dispatch: Dispatch | undefined; steps: string[] } {
  const s = new EngineState();
  for (const o of [
    deployment(),
    cluster('m1'),
    cluster('m2'),
    cluster('m3'),
    propagationPolicy('pp', 'default', [selectDeployment()], undefined, settings),
  ])
    s.upsert(o);
  const result = s.renderTemplate(KEY)!;
  const p = plan(T, deployment(), result, result.dispatch ?? DEFAULT_DISPATCH, 1);
  const binding = bindingObject({
    template: T,
    controllerNamespace: 'flotilla-system',
    ...(p.policy ? { policy: p.policy } : {}),
    conflictResolution: p.conflictResolution,
    suspended: p.suspended,
    ...(p.preserveOnDeletion ? { preserveResourcesOnDeletion: true } : {}),
    clusters: [...p.clusters.values()],
    errors: p.errors,
  });
  return {
    spec: binding.spec as Obj,
    dispatch: result.dispatch,
    steps: ['m1', 'm2', 'm3'].map((m) => `${m}:${stepFor(p, m).action}`),
  };
}

describe('dispatch settings: engine -> plan -> binding -> Work -> agent', () => {
  const cases: Array<{ name: string; settings: Obj; suspension?: Obj; steps: string[]; works: Dispatch[] }> = [
    {
      name: 'a policy that says nothing: Abort, nothing suspended or preserved; no suspension in the binding',
      settings: {},
      steps: ['m1:apply', 'm2:apply', 'm3:apply'],
      works: [DEFAULT_DISPATCH, DEFAULT_DISPATCH, DEFAULT_DISPATCH],
    },
    {
      name: 'dispatchingOnClusters: only the named clusters are held, and only their Works say so',
      settings: {
        suspension: { dispatchingOnClusters: { clusterNames: ['m3', 'm2'] } },
        conflictResolution: 'Overwrite',
        preserveResourcesOnDeletion: true,
      },
      suspension: { dispatchingOnClusters: { clusterNames: ['m2', 'm3'] } },
      steps: ['m1:apply', 'm2:suspended', 'm3:suspended'],
      works: [
        { ...DEFAULT_DISPATCH, conflictResolution: 'Overwrite', preserveResourcesOnDeletion: true },
        { suspended: 'all', conflictResolution: 'Overwrite', preserveResourcesOnDeletion: true },
        { suspended: 'all', conflictResolution: 'Overwrite', preserveResourcesOnDeletion: true },
      ],
    },
    {
      name: 'dispatching: true: every cluster is held, and every Work says so',
      settings: { suspension: { dispatching: true } },
      suspension: { dispatching: true },
      steps: ['m1:suspended', 'm2:suspended', 'm3:suspended'],
      works: [
        { ...DEFAULT_DISPATCH, suspended: 'all' },
        { ...DEFAULT_DISPATCH, suspended: 'all' },
        { ...DEFAULT_DISPATCH, suspended: 'all' },
      ],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const d = decided(c.settings);
      assert.ok(d.dispatch, 'the engine answers with the settings of the claiming policy');
      assert.deepEqual(d.steps, c.steps);
      assert.deepEqual(d.spec.suspension, c.suspension);
      assert.deepEqual(
        ['m1', 'm2', 'm3'].map((m) => workDispatch(workSpec(d.spec, m))),
        c.works,
      );
    });

  it('no Work: the defaults', () => {
    assert.deepEqual(workDispatch(undefined), DEFAULT_DISPATCH);
  });
});
