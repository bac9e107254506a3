import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  cluster,
  deployment,
  overridePolicy,
  propagationPolicy,
  selectDeployment,
  type Obj,
} from '../../test/builders.js';
import { EngineState, templateKey } from '../engine/state.js';
import { appliedHash } from '../kube/ownership.js';
import { TEMPLATE_UID_LABEL } from './ownership.js';
import { bindingObject } from './binding.js';
import { bindingClusters, plan, stepFor } from './plan.js';

const KEY = templateKey({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' });
const T = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web', uid: 'uid-1' };

/** The plan of web, with `spec` added to the claiming policy's spec: its settings come from the engine's answer. */
function planFor(objects: Obj[], spec: Obj = {}, version = 1) {
  const s = new EngineState();
  for (const o of objects)
    s.upsert(o.kind === 'PropagationPolicy' ? { ...o, spec: { ...(o.spec as Obj), ...spec } } : o);
  const result = s.renderTemplate(KEY);
  assert.ok(result?.dispatch);
  return plan(T, deployment(), result, result.dispatch, version);
}

describe('plan()', () => {
  it("gives each targeted member the rendered object, stamped with the template's labels", () => {
    const p = planFor([
      deployment(),
      propagationPolicy('pp', 'default', [selectDeployment()], { clusterAffinity: { clusterNames: ['m1'] } }),
      cluster('m1'),
      cluster('m2'),
    ]);
    const step = stepFor(p, 'm1');
    assert.equal(step.action, 'apply');
    assert.equal(
      step.action === 'apply' ? ((step.object.metadata as Obj).labels as Obj)[TEMPLATE_UID_LABEL] : undefined,
      'uid-1',
    );
    assert.deepEqual(stepFor(p, 'm2'), { action: 'remove' }, 'a member the policy does not target loses the object');
    assert.deepEqual(
      [...p.clusters.values()].map((c) => [c.name, c.state]),
      [['m1', 'Pending']],
    );
    assert.deepEqual(p.policy, { kind: 'PropagationPolicy', namespace: 'default', name: 'pp' });
    // A cluster entry equal to another plan's is that plan's object, not a copy per template.
    const again = planFor([
      deployment(),
      propagationPolicy('pp', 'default', [selectDeployment()], { clusterAffinity: { clusterNames: ['m1'] } }),
      cluster('m1'),
    ]);
    assert.equal(again.clusters.get('m1'), p.clusters.get('m1'));
  });

  it('gives members with equal copies one shared object, and a member an override changes an object of its own', () => {
    const op = overridePolicy('op', 'default', [
      {
        targetCluster: { clusterNames: ['m2'] },
        overriders: { plaintext: [{ path: '/spec/paused', operator: 'add', value: true }] },
      },
    ]);
    const p = planFor([
      deployment(),
      propagationPolicy('pp', 'default', [selectDeployment()], {
        clusterAffinity: { clusterNames: ['m1', 'm2', 'm3'] },
      }),
      op,
      cluster('m1'),
      cluster('m2'),
      cluster('m3'),
    ]);
    const object = (c: string) => {
      const s = stepFor(p, c);
      assert.equal(s.action, 'apply');
      return s.action === 'apply' ? s.object : {};
    };
    assert.equal(object('m1'), object('m3'), 'one object for m1 and m3');
    assert.notEqual(object('m1'), object('m2'));
    assert.equal((object('m2').spec as Obj).paused, true);
    assert.equal((object('m1').spec as Obj).paused, undefined);
    assert.equal(((object('m2').metadata as Obj).labels as Obj)[TEMPLATE_UID_LABEL], 'uid-1');
    // Each copy's applied hash is computed once, here, for every member's apply to stamp.
    const hash = (c: string) => {
      const s = stepFor(p, c);
      return s.action === 'apply' ? s.hash : undefined;
    };
    for (const c of ['m1', 'm2', 'm3']) assert.equal(hash(c), appliedHash(object(c)), c);
    assert.equal(hash('m1'), hash('m3'));
    assert.equal(stepFor(p, 'm1'), stepFor(p, 'm3'), 'one step for m1 and m3');
    assert.notEqual(hash('m1'), hash('m2'));
  });

  it('keeps what a member has when its render fails there, and says why', () => {
    const op = overridePolicy('op', 'default', [
      {
        targetCluster: { clusterNames: ['m2'] },
        overriders: { plaintext: [{ path: '/spec/paused', operator: 'replace', value: true }] },
      },
    ]);
    const p = planFor([
      deployment(),
      propagationPolicy('pp', 'default', [selectDeployment()]),
      op,
      cluster('m1'),
      cluster('m2'),
    ]);
    assert.equal(stepFor(p, 'm2').action, 'keep');
    assert.equal(p.clusters.get('m2')?.state, 'Failed');
    assert.match(p.overrideFailed[0] ?? '', /^m2: /);
  });

  it("reads conflictResolution from the claiming policy's spec, Abort unless it says Overwrite", () => {
    const objects = [deployment(), propagationPolicy('pp', 'default', [selectDeployment()]), cluster('m1')];
    assert.equal(planFor(objects).conflictResolution, 'Abort');
    assert.equal(planFor(objects, { conflictResolution: 'Overwrite' }).conflictResolution, 'Overwrite');
  });
});

describe('bindingClusters()', () => {
  const objects = [
    deployment(),
    propagationPolicy('pp', 'default', [selectDeployment()]),
    cluster('m1'),
    cluster('m2'),
  ];

  it("shows each member's report for the current plan, Pending for a member that has not reported", () => {
    const p = planFor(objects, {}, 7);
    const reports = new Map([
      ['m1', { version: 7, status: { name: 'm1', state: 'Applied' as const, observedGeneration: 3 } }],
    ]);
    const got = bindingClusters(p, reports, () => undefined);
    assert.deepEqual(
      got.map((c) => [c.name, c.state, c.observedGeneration]),
      [
        ['m1', 'Applied', 3],
        ['m2', 'Pending', undefined],
      ],
    );
  });

  it('does not show a report made for an older plan as the current state', () => {
    const p = planFor(objects, {}, 8);
    const reports = new Map([['m1', { version: 7, status: { name: 'm1', state: 'Applied' as const } }]]);
    assert.equal(bindingClusters(p, reports, () => undefined)[0]?.state, 'Pending');
  });

  it('says Unreachable, with the reason, for a targeted cluster the controller has no access to', () => {
    const p = planFor(objects);
    const got = bindingClusters(p, new Map(), (c) => (c === 'm2' ? 'its Secret ns/m2 does not exist' : undefined));
    assert.deepEqual(
      [got[1]?.state, got[1]?.message],
      ['Unreachable', 'no access to cluster m2: its Secret ns/m2 does not exist'],
    );
  });

  it('lists a cluster the object is still being removed from after the targeted ones', () => {
    const p = planFor(
      [
        deployment(),
        propagationPolicy('pp', 'default', [selectDeployment()], { clusterAffinity: { clusterNames: ['m1'] } }),
        cluster('m1'),
        cluster('m2'),
      ],
      {},
      2,
    );
    const reports = new Map([
      ['m2', { version: 2, status: { name: 'm2', state: 'Removing' as const, message: 'connect ECONNREFUSED' } }],
    ]);
    assert.deepEqual(
      bindingClusters(p, reports, () => undefined).map((c) => [c.name, c.state]),
      [
        ['m1', 'Pending'],
        ['m2', 'Removing'],
      ],
    );
  });
});

describe('plan(): suspension and preserveResourcesOnDeletion', () => {
  const objects = [
    deployment(),
    propagationPolicy('pp', 'default', [selectDeployment()], { clusterAffinity: { clusterNames: ['m1', 'm2'] } }),
    cluster('m1'),
    cluster('m2'),
    cluster('m3'),
  ];

  it('dispatching: true holds every member, targeted or not: nothing applied, nothing removed', () => {
    const p = planFor(objects, { suspension: { dispatching: true } });
    for (const m of ['m1', 'm2', 'm3']) assert.deepEqual(stepFor(p, m), { action: 'suspended' }, m);
    assert.deepEqual(
      bindingClusters(p, new Map(), () => undefined).map((c) => [c.name, c.state, c.message]),
      [
        ['m1', 'Suspended', 'dispatching is suspended by PropagationPolicy default/pp'],
        ['m2', 'Suspended', 'dispatching is suspended by PropagationPolicy default/pp'],
      ],
    );
  });

  it('dispatchingOnClusters holds only the clusters it names', () => {
    const p = planFor(objects, { suspension: { dispatchingOnClusters: { clusterNames: ['m2', 'm3'] } } });
    assert.equal(stepFor(p, 'm1').action, 'apply');
    assert.deepEqual(stepFor(p, 'm2'), { action: 'suspended' });
    assert.deepEqual(stepFor(p, 'm3'), { action: 'suspended' }, 'not targeted, but not pruned while suspended');
    assert.deepEqual(
      [...p.clusters.values()].map((c) => [c.name, c.state]),
      [
        ['m1', 'Pending'],
        ['m2', 'Suspended'],
      ],
    );
  });

  it('without suspension nothing is held, and preserveResourcesOnDeletion is carried on the plan', () => {
    const p = planFor(objects, { preserveResourcesOnDeletion: true, suspension: { dispatching: false } });
    assert.equal(stepFor(p, 'm1').action, 'apply');
    assert.deepEqual(stepFor(p, 'm3'), { action: 'remove' });
    assert.equal(p.preserveOnDeletion, true);
    assert.equal(planFor(objects).preserveOnDeletion, false);
  });
});

describe('the binding of a suspended template', () => {
  it('says Suspended on the cluster and in a condition naming the clusters and the policy', () => {
    const b = bindingObject({
      template: T,
      controllerNamespace: 'flotilla-system',
      policy: { kind: 'PropagationPolicy', namespace: 'default', name: 'pp' },
      clusters: [
        { name: 'm1', state: 'Applied' },
        { name: 'm2', state: 'Suspended', message: 'dispatching is suspended by PropagationPolicy default/pp' },
      ],
      errors: [],
    });
    const conditions = (b.status as { conditions: Obj[] }).conditions;
    const suspended = conditions.find((c) => c.type === 'Suspended');
    assert.equal(suspended?.status, 'True');
    assert.match(String(suspended?.message), /^dispatching to m2 is suspended by PropagationPolicy default\/pp/);
    assert.equal(conditions.find((c) => c.type === 'Applied')?.reason, 'Suspended');
    const plain = bindingObject({
      template: T,
      controllerNamespace: 'flotilla-system',
      policy: { kind: 'PropagationPolicy', namespace: 'default', name: 'pp' },
      clusters: [{ name: 'm1', state: 'Applied' }],
      errors: [],
    });
    assert.equal(
      (plain.status as { conditions: Obj[] }).conditions.some((c) => c.type === 'Suspended'),
      false,
    );
  });
});
