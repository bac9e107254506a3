import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cluster } from '../../test/builders.js';
import { clusterInfo } from './inputs.js';
import { divideReplicas, PlacementError, selectClusters, templateReplicas, websterSeats } from './placement.js';

const clusters = [
  clusterInfo(cluster('a', { labels: { env: 'prod' }, region: 'eu' })),
  clusterInfo(cluster('b', { labels: { env: 'prod' }, region: 'us' })),
  clusterInfo(cluster('c', { labels: { env: 'dev' }, region: 'eu', taints: [{ key: 'dedicated', value: 'dev', effect: 'NoSchedule' }] })),
];
const names = (r: { clusters: Array<{ name: string }> }) => r.clusters.map((c) => c.name);

describe('selectClusters', () => {
  it('takes every untainted cluster when there is no affinity', () => assert.deepEqual(names(selectClusters(undefined, clusters)), ['a', 'b']));
  it('takes a tainted cluster whose taint is tolerated', () => {
    const placement = { clusterTolerations: [{ key: 'dedicated', operator: 'Equal', value: 'dev', effect: 'NoSchedule' }] };
    assert.deepEqual(names(selectClusters(placement, clusters)), ['a', 'b', 'c']);
  });
  it('ignores PreferNoSchedule taints', () => {
    const soft = [clusterInfo(cluster('s', { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] }))];
    assert.deepEqual(names(selectClusters(undefined, soft)), ['s']);
  });
  it('tolerates any taint with an Exists toleration without a key', () => {
    assert.deepEqual(names(selectClusters({ clusterTolerations: [{ operator: 'Exists' }] }, clusters)), ['a', 'b', 'c']);
  });
  it('filters by clusterAffinity', () => {
    assert.deepEqual(names(selectClusters({ clusterAffinity: { fieldSelector: { matchExpressions: [{ key: 'region', operator: 'In', values: ['us'] }] } } }, clusters)), ['b']);
  });
  it('uses the first clusterAffinities term that yields a cluster', () => {
    const placement = {
      clusterAffinities: [
        { affinityName: 'primary', clusterNames: ['c'] },
        { affinityName: 'backup', labelSelector: { matchLabels: { env: 'prod' } } },
      ],
    };
    const r = selectClusters(placement, clusters);
    assert.deepEqual(names(r), ['a', 'b']);
    assert.equal(r.affinityName, 'backup');
  });
  it('keeps the first maxGroups clusters by name under a cluster spread constraint', () => {
    assert.deepEqual(names(selectClusters({ spreadConstraints: [{ spreadByField: 'cluster', maxGroups: 1 }] }, clusters)), ['a']);
  });
  it('fails when fewer groups than minGroups are available', () => {
    assert.throws(() => selectClusters({ spreadConstraints: [{ spreadByField: 'region', minGroups: 3 }] }, clusters), PlacementError);
  });
});

describe('websterSeats', () => {
  const cases: Array<[string, number, Array<[string, number]>, Record<string, number>]> = [
    ['weights 1:2:3 share 7 replicas as 1, 2, 4', 7, [['c1', 1], ['c2', 2], ['c3', 3]], { c1: 1, c2: 2, c3: 4 }],
    ['equal weights share 2 replicas one each', 2, [['x', 1], ['y', 1]], { x: 1, y: 1 }],
    ['an odd replica goes to the smaller name among equals', 3, [['y', 1], ['x', 1]], { x: 2, y: 1 }],
    ['votes 1200/900/400 for 4 seats give 2, 1, 1', 4, [['alpha', 1200], ['beta', 900], ['gamma', 400]], { alpha: 2, beta: 1, gamma: 1 }],
    ['a zero weight gets nothing', 5, [['a', 0], ['b', 1]], { a: 0, b: 5 }],
  ];
  for (const [name, replicas, weights, want] of cases) {
    it(name, () => assert.deepEqual(Object.fromEntries(websterSeats(replicas, weights.map(([n, w]) => ({ name: n, weight: w })))), want));
  }
});

describe('divideReplicas', () => {
  const two = clusters.slice(0, 2);
  it('leaves Duplicated placements alone', () => assert.equal(divideReplicas({ replicaScheduling: { replicaSchedulingType: 'Duplicated' } }, 4, two), undefined));
  it('leaves templates without replicas alone', () => assert.equal(divideReplicas({ replicaScheduling: {} }, undefined, two), undefined));
  it('divides by the largest matching static weight', () => {
    const placement = {
      replicaScheduling: {
        replicaSchedulingType: 'Divided',
        weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ['a'] }, weight: 3 }, { targetCluster: {}, weight: 1 }] },
      },
    };
    assert.deepEqual(Object.fromEntries(divideReplicas(placement, 4, two) ?? []), { a: 3, b: 1 });
  });
  it('divides equally without a weight list', () => {
    assert.deepEqual(Object.fromEntries(divideReplicas({ replicaScheduling: { replicaSchedulingType: 'Divided' } }, 4, two) ?? []), { a: 2, b: 2 });
  });
  it('refuses Aggregated division, which needs member capacity', () => {
    assert.throws(() => divideReplicas({ replicaScheduling: { replicaDivisionPreference: 'Aggregated' } }, 4, two), /member capacity/);
  });
});

describe('templateReplicas', () => {
  it('reads spec.replicas', () => assert.equal(templateReplicas('Deployment', { spec: { replicas: 3 } }), 3));
  it('defaults a Deployment to 1', () => assert.equal(templateReplicas('Deployment', { spec: {} }), 1));
  it('has none for a ConfigMap', () => assert.equal(templateReplicas('ConfigMap', { data: {} }), undefined));
});
