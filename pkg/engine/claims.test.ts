// Claims that stick, and preemption (Karmada's detector): a template that records its claim stays with
// that policy until the policy goes or stops selecting it, unless a policy with `preemption: Always` may
// take it by Karmada's rules. Render reads the recorded claim and leaves the record off member copies.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cluster,
  clusterPropagationPolicy,
  deployment,
  propagationPolicy,
  selectDeployment,
  type Obj,
} from '../../test/builders.js';
import {
  CLAIM_CPP_ID_LABEL,
  CLAIM_CPP_NAME_ANNOTATION,
  CLAIM_PP_ID_LABEL,
  CLAIM_PP_NAME_ANNOTATION,
  CLAIM_PP_NAMESPACE_ANNOTATION,
} from './match.js';
import { renderDetailed } from './render.js';

const ID = 'policy.flotilla.io/permanent-id';

function claimedBy(kind: 'pp' | 'cpp', name: string, id?: string): Obj {
  const d = deployment();
  const meta = d.metadata as Obj;
  if (kind === 'pp') {
    meta.annotations = { [CLAIM_PP_NAME_ANNOTATION]: name, [CLAIM_PP_NAMESPACE_ANNOTATION]: 'default' };
    if (id) meta.labels = { [CLAIM_PP_ID_LABEL]: id };
  } else {
    meta.annotations = { [CLAIM_CPP_NAME_ANNOTATION]: name };
    if (id) meta.labels = { [CLAIM_CPP_ID_LABEL]: id };
  }
  return d;
}

const withId = (p: Obj, id: string): Obj => ({ ...p, metadata: { ...(p.metadata as Obj), labels: { [ID]: id } } });
const pp = (name: string, extra: Obj = {}) =>
  propagationPolicy(name, 'default', [selectDeployment('web')], undefined, extra);
const cpp = (name: string, extra: Obj = {}) =>
  clusterPropagationPolicy(name, [selectDeployment('web')], undefined, extra);

function claimOf(...objects: Obj[]): string | undefined {
  const r = renderDetailed({ objects: [...objects, cluster('m1')] });
  const p = r.placements[0]?.policy;
  return p ? `${p.kind}/${p.name}` : undefined;
}

describe('recorded claims', () => {
  it('without a record, the best match claims (a PropagationPolicy beats a ClusterPropagationPolicy)', () => {
    assert.equal(claimOf(deployment(), cpp('c'), pp('p')), 'PropagationPolicy/p');
  });

  it('a claim by a ClusterPropagationPolicy stays when a PropagationPolicy appears without preemption', () => {
    assert.equal(claimOf(claimedBy('cpp', 'c'), cpp('c'), pp('p')), 'ClusterPropagationPolicy/c');
  });

  it('preemption: Always lets a PropagationPolicy take it from a ClusterPropagationPolicy whatever the priorities', () => {
    assert.equal(
      claimOf(claimedBy('cpp', 'c'), cpp('c', { priority: 100 }), pp('p', { preemption: 'Always' })),
      'PropagationPolicy/p',
    );
  });

  it('a policy of the same kind needs preemption: Always and a strictly higher explicit priority', () => {
    const holder = pp('a', { priority: 1 });
    assert.equal(claimOf(claimedBy('pp', 'a'), holder, pp('b', { priority: 5 })), 'PropagationPolicy/a');
    assert.equal(
      claimOf(claimedBy('pp', 'a'), holder, pp('b', { priority: 1, preemption: 'Always' })),
      'PropagationPolicy/a',
    );
    assert.equal(
      claimOf(claimedBy('pp', 'a'), holder, pp('b', { priority: 2, preemption: 'Always' })),
      'PropagationPolicy/b',
    );
  });

  it('a ClusterPropagationPolicy never preempts a PropagationPolicy', () => {
    assert.equal(
      claimOf(claimedBy('pp', 'a'), pp('a'), cpp('c', { priority: 9, preemption: 'Always' })),
      'PropagationPolicy/a',
    );
  });

  it('the claim goes when its policy is gone, stops selecting the template, or is another policy of that name', () => {
    assert.equal(claimOf(claimedBy('cpp', 'gone'), pp('p')), 'PropagationPolicy/p');
    const elsewhere = clusterPropagationPolicy('c', [selectDeployment('other')]);
    assert.equal(claimOf(claimedBy('cpp', 'c'), elsewhere, pp('p')), 'PropagationPolicy/p');
    assert.equal(claimOf(claimedBy('cpp', 'c', 'id-1'), withId(cpp('c'), 'id-2'), pp('p')), 'PropagationPolicy/p');
    assert.equal(
      claimOf(claimedBy('cpp', 'c', 'id-1'), withId(cpp('c'), 'id-1'), pp('p')),
      'ClusterPropagationPolicy/c',
    );
  });

  it('member copies do not carry the claim record', () => {
    const r = renderDetailed({ objects: [claimedBy('cpp', 'c', 'id-1'), withId(cpp('c'), 'id-1'), cluster('m1')] });
    assert.deepEqual(r.placements[0]?.object.metadata, { name: 'web', namespace: 'default' });
  });
});
