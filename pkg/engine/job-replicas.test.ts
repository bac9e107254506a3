import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { at, cluster, propagationPolicy, type Obj } from '../../test/builders.js';
import { templateReplicas } from './division.js';
import { divideCompletions, jobReplicas } from './job-replicas.js';
import { renderDetailed } from './render.js';

function job(spec: Obj): Obj {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'pi', namespace: 'default' },
    spec: { ...spec, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'perl' }] } } },
  };
}

const members = ['m1', 'm2', 'm3'].map((n) => cluster(n));
const selectJob = { apiVersion: 'batch/v1', kind: 'Job', name: 'pi' };

/** Divided by static weights m1:1, m2:2, m3:3 (the weights of Karmada's JobReplicaScheduling e2e spec). */
const weighted = propagationPolicy('pp', 'default', [selectJob], {
  clusterAffinity: { clusterNames: ['m1', 'm2', 'm3'] },
  replicaScheduling: {
    replicaSchedulingType: 'Divided',
    replicaDivisionPreference: 'Weighted',
    weightPreference: {
      staticWeightList: ['m1', 'm2', 'm3'].map((n, i) => ({ targetCluster: { clusterNames: [n] }, weight: i + 1 })),
    },
  },
});

function specs(objects: Obj[], explain = false) {
  const r = renderDetailed({ objects }, { explain });
  assert.deepEqual(r.errors, []);
  return r.placements.map((p) => ({
    cluster: p.cluster,
    parallelism: at(p.object, 'spec.parallelism'),
    completions: at(p.object, 'spec.completions'),
    replicas: at(p.object, 'spec.replicas'),
    changes: p.changes.map((c) => `${c.op} ${c.path}`),
  }));
}

describe("a Job's replicas (Karmada's jobReplica)", () => {
  it('are its parallelism, at most its completions', () => {
    // Karmada's Test_jobReplica: parallelism 3, completions 2 → 2.
    assert.equal(templateReplicas('Job', job({ parallelism: 3, completions: 2 })), 2);
    assert.equal(templateReplicas('Job', job({ parallelism: 6, completions: 6 })), 6);
    assert.equal(templateReplicas('Job', job({ parallelism: 4 })), 4);
    assert.equal(templateReplicas('Job', job({ parallelism: 0, completions: 5 })), 0);
  });
  it("are 1 without parallelism (the apiserver's default), and none when parallelism is not a count", () => {
    assert.equal(jobReplicas({ completions: 5 }), 1);
    assert.equal(jobReplicas({ parallelism: null, completions: 0 }), 0);
    assert.equal(jobReplicas({ parallelism: 'six' }), undefined);
    assert.equal(jobReplicas({ parallelism: -1 }), undefined);
    assert.equal(jobReplicas({ parallelism: 2.5 }), undefined);
  });
  it('do not read spec.replicas', () => assert.equal(templateReplicas('Job', job({ replicas: 9, parallelism: 2 })), 2));
});

describe("a divided Job's completions (Karmada's divideReplicasByJobCompletions)", () => {
  it('are shared out by each cluster’s parallelism', () => {
    // Karmada's Test_divideReplicasByJobCompletions: 10 over cluster1:5, cluster2:5.
    const even = new Map([
      ['cluster1', 5],
      ['cluster2', 5],
    ]);
    assert.deepEqual(
      divideCompletions('Job', job({ parallelism: 10, completions: 10 }), even),
      new Map([
        ['cluster1', 5],
        ['cluster2', 5],
      ]),
    );
    // Webster by weights 1 and 2: seats go a, b, b, b, a, b, b, a, b, b → a:3, b:7.
    const uneven = new Map([
      ['a', 1],
      ['b', 2],
    ]);
    assert.deepEqual(
      divideCompletions('Job', job({ parallelism: 3, completions: 10 }), uneven),
      new Map([
        ['a', 3],
        ['b', 7],
      ]),
    );
  });
  it('are not divided for a work-queue Job (no completions), another kind, or nothing divided', () => {
    const d = new Map([['a', 1]]);
    assert.equal(divideCompletions('Job', job({ parallelism: 2 }), d), undefined);
    assert.equal(divideCompletions('Deployment', job({ completions: 2 }), d), undefined);
    assert.equal(divideCompletions('Job', job({ completions: 2 }), undefined), undefined);
    assert.equal(divideCompletions('Job', job({ completions: 2 }), new Map([['a', 0]])), undefined);
    assert.equal(divideCompletions('Job', job({ completions: 2 ** 40 }), d), undefined);
  });
});

describe('render: a Job under replicaScheduling', () => {
  it('divides parallelism and completions by static weights, without adding spec.replicas', () => {
    assert.deepEqual(specs([job({ parallelism: 6, completions: 6 }), weighted, ...members], true), [
      {
        cluster: 'm1',
        parallelism: 1,
        completions: 1,
        replicas: undefined,
        changes: ['replace /spec/parallelism', 'replace /spec/completions'],
      },
      {
        cluster: 'm2',
        parallelism: 2,
        completions: 2,
        replicas: undefined,
        changes: ['replace /spec/parallelism', 'replace /spec/completions'],
      },
      {
        cluster: 'm3',
        parallelism: 3,
        completions: 3,
        replicas: undefined,
        changes: ['replace /spec/parallelism', 'replace /spec/completions'],
      },
    ]);
  });
  it('divides completions by the parallelism each cluster got, and leaves out a cluster that got none', () => {
    // 2 parallel pods (capped by nothing) over weights 1:2:3 → m2:1, m3:1; 9 completions by 1:1 → 5:4.
    const got = specs([job({ parallelism: 2, completions: 9 }), weighted, ...members]);
    assert.deepEqual(
      got.map((s) => [s.cluster, s.parallelism, s.completions]),
      [
        ['m2', 1, 5],
        ['m3', 1, 4],
      ],
    );
  });
  it('keeps a work-queue Job without completions', () => {
    const got = specs([job({ parallelism: 6 }), weighted, ...members]);
    assert.deepEqual(
      got.map((s) => [s.cluster, s.parallelism, s.completions]),
      [
        ['m1', 1, undefined],
        ['m2', 2, undefined],
        ['m3', 3, undefined],
      ],
    );
  });
  it('gives every cluster the whole Job when Duplicated', () => {
    const duplicated = propagationPolicy('pp', 'default', [selectJob], {
      replicaScheduling: { replicaSchedulingType: 'Duplicated' },
    });
    const got = specs([job({ parallelism: 6, completions: 6 }), duplicated, ...members]);
    assert.deepEqual(
      got.map((s) => [s.cluster, s.parallelism, s.completions]),
      [
        ['m1', 6, 6],
        ['m2', 6, 6],
        ['m3', 6, 6],
      ],
    );
  });
});
