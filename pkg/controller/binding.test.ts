// The ResourceBinding of a dependency (propagateDeps): it lists the workloads that require it, says why
// no policy claims it, and still reports delivery like a claimed template's binding.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { bindingObject } from './binding.js';

type Obj = Record<string, unknown>;

const template = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cfg', uid: 'u1' };
const requiredBy = [
  { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web', clusters: ['m1', 'm2'] },
];

describe('bindingObject for a dependency', () => {
  it('lists the workloads in spec.requiredBy and says Claimed False, RequiredBy, with Applied and Ready', () => {
    const b = bindingObject({
      template,
      controllerNamespace: 'flotilla-system',
      requiredBy,
      clusters: [
        { name: 'm1', state: 'Applied', health: { state: 'Healthy' } },
        { name: 'm2', state: 'Pending' },
      ],
      errors: [],
    });
    const spec = b.spec as Obj;
    assert.equal(spec.policy, undefined);
    assert.deepEqual(spec.requiredBy, [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        namespace: 'shop',
        name: 'web',
        clusters: [{ name: 'm1' }, { name: 'm2' }],
      },
    ]);
    const conditions = (b.status as Obj).conditions as Obj[];
    assert.deepEqual(
      conditions.map((c) => [c.type, c.status, c.reason]),
      [
        ['Claimed', 'False', 'RequiredBy'],
        ['Applied', 'False', 'Pending'],
        ['Ready', 'False', 'NotReady'],
      ],
    );
    assert.match(String(conditions[0]?.message), /Deployment shop\/web/);
  });

  it('a claimed dependency that workloads also require says Claimed True and keeps requiredBy', () => {
    const b = bindingObject({
      template,
      controllerNamespace: 'flotilla-system',
      policy: { kind: 'PropagationPolicy', namespace: 'shop', name: 'cfg' },
      requiredBy,
      clusters: [{ name: 'm1', state: 'Applied', health: { state: 'Healthy' } }],
      errors: [],
    });
    const conditions = (b.status as Obj).conditions as Obj[];
    assert.deepEqual(conditions[0], {
      type: 'Claimed',
      status: 'True',
      reason: 'Claimed',
      message: 'claimed by PropagationPolicy shop/cfg',
    });
    assert.equal(((b.spec as Obj).requiredBy as Obj[]).length, 1);
  });

  it('without policy or requirers: only Claimed False, NoPolicy', () => {
    const b = bindingObject({ template, controllerNamespace: 'x', clusters: [], errors: [] });
    assert.deepEqual(
      ((b.status as Obj).conditions as Obj[]).map((c) => c.reason),
      ['NoPolicy'],
    );
    assert.equal((b.spec as Obj).requiredBy, undefined);
  });
});

describe('bindingObject: the counts kubectl shows (APPLIED and READY columns)', () => {
  it('counts the target clusters that hold the copy and those that are ready, leaving out clusters being emptied', () => {
    const b = bindingObject({
      template,
      controllerNamespace: 'flotilla-system',
      policy: { kind: 'PropagationPolicy', namespace: 'shop', name: 'cfg' },
      clusters: [
        { name: 'm1', state: 'Applied', health: { state: 'Healthy' } },
        { name: 'm2', state: 'Applied', health: { state: 'Progressing', message: '0/1 replicas ready' } },
        {
          name: 'm3',
          state: 'Unreachable',
          message: 'not ready: https://m3/readyz: no answer within 5s (probe timeout)',
        },
        { name: 'm4', state: 'Removing' },
      ],
      agentClusters: [{ name: 'p1', state: 'Pending' }],
      errors: [],
    });
    const status = b.status as Obj;
    assert.deepEqual([status.applied, status.ready], ['2/4', '1/4']);
    assert.deepEqual(
      ((b.spec as Obj).clusters as Obj[]).map((c) => c.name),
      ['m1', 'm2', 'm3', 'p1'],
    );
  });

  it('a binding with no target cluster says 0/0', () => {
    const b = bindingObject({
      template,
      controllerNamespace: 'x',
      policy: { kind: 'PropagationPolicy', namespace: 'shop', name: 'cfg' },
      clusters: [],
      errors: [],
    });
    assert.deepEqual([(b.status as Obj).applied, (b.status as Obj).ready], ['0/0', '0/0']);
  });
});
