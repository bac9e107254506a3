import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { cluster } from '../../test/builders.js';
import { clusterInfo } from './inputs.js';
import { divideReplicas, templateReplicas } from './division.js';
import { PlacementError, selectClusters } from './placement.js';
import { MAX_REPLICAS, websterSeats } from './webster.js';

const clusters = [
  clusterInfo(cluster('a', { labels: { env: 'prod' }, region: 'eu' })),
  clusterInfo(cluster('b', { labels: { env: 'prod' }, region: 'us' })),
  clusterInfo(
    cluster('c', {
      labels: { env: 'dev' },
      region: 'eu',
      taints: [{ key: 'dedicated', value: 'dev', effect: 'NoSchedule' }],
    }),
  ),
];
const names = (r: { clusters: Array<{ name: string }> }) => r.clusters.map((c) => c.name);

describe('selectClusters', () => {
  it('takes every untainted cluster when there is no affinity', () =>
    assert.deepEqual(names(selectClusters(undefined, clusters)), ['a', 'b']));
  it('takes a tainted cluster whose taint is tolerated', () => {
    const placement = {
      clusterTolerations: [{ key: 'dedicated', operator: 'Equal', value: 'dev', effect: 'NoSchedule' }],
    };
    assert.deepEqual(names(selectClusters(placement, clusters)), ['a', 'b', 'c']);
  });
  it('ignores PreferNoSchedule taints', () => {
    const soft = [clusterInfo(cluster('s', { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] }))];
    assert.deepEqual(names(selectClusters(undefined, soft)), ['s']);
  });
  it('tolerates any taint with an Exists toleration without a key', () => {
    assert.deepEqual(names(selectClusters({ clusterTolerations: [{ operator: 'Exists' }] }, clusters)), [
      'a',
      'b',
      'c',
    ]);
  });
  it('filters by clusterAffinity', () => {
    assert.deepEqual(
      names(
        selectClusters(
          {
            clusterAffinity: {
              fieldSelector: { matchExpressions: [{ key: 'region', operator: 'In', values: ['us'] }] },
            },
          },
          clusters,
        ),
      ),
      ['b'],
    );
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
    assert.deepEqual(
      names(selectClusters({ spreadConstraints: [{ spreadByField: 'cluster', maxGroups: 1 }] }, clusters)),
      ['a'],
    );
  });
  it('by cluster, keeps the clusters the template is on before those with more room or an earlier name', () => {
    // Karmada's ClusterLocality: a template that left a (now untainted) cluster does not move back to it.
    const spreadOne = { spreadConstraints: [{ spreadByField: 'cluster', maxGroups: 1 }] };
    const on = (scheduled: string[], room: Record<string, number> = {}) =>
      names(
        selectClusters(spreadOne, clusters, {
          ref: { apiVersion: 'apps/v1', kind: 'Deployment' },
          replicas: 3,
          scheduled: new Set(scheduled),
          available: (c) => room[c.name] ?? 3,
        }),
      );
    assert.deepEqual(on([]), ['a']);
    assert.deepEqual(on(['b']), ['b']);
    assert.deepEqual(on(['b'], { a: 100 }), ['b']);
    assert.deepEqual(on([], { b: 100 }), ['b']);
  });
  it('fails when fewer groups than minGroups are available', () => {
    assert.throws(
      () => selectClusters({ spreadConstraints: [{ spreadByField: 'region', minGroups: 3 }] }, clusters),
      PlacementError,
    );
  });
});

describe('websterSeats', () => {
  const cases: Array<[string, number, Array<[string, number]>, Record<string, number>]> = [
    [
      'weights 1:2:3 share 7 replicas as 1, 2, 4',
      7,
      [
        ['c1', 1],
        ['c2', 2],
        ['c3', 3],
      ],
      { c1: 1, c2: 2, c3: 4 },
    ],
    [
      'equal weights share 2 replicas one each',
      2,
      [
        ['x', 1],
        ['y', 1],
      ],
      { x: 1, y: 1 },
    ],
    [
      'an odd replica goes to the smaller name among equals',
      3,
      [
        ['y', 1],
        ['x', 1],
      ],
      { x: 2, y: 1 },
    ],
    [
      'votes 1200/900/400 for 4 seats give 2, 1, 1',
      4,
      [
        ['alpha', 1200],
        ['beta', 900],
        ['gamma', 400],
      ],
      { alpha: 2, beta: 1, gamma: 1 },
    ],
    [
      'a zero weight gets nothing',
      5,
      [
        ['a', 0],
        ['b', 1],
      ],
      { a: 0, b: 5 },
    ],
  ];
  for (const [name, replicas, weights, want] of cases) {
    it(name, () =>
      assert.deepEqual(
        Object.fromEntries(
          websterSeats(
            replicas,
            weights.map(([n, w]) => ({ name: n, weight: w })),
          ),
        ),
        want,
      ),
    );
  }
});

/**
 * The seat-by-seat method websterSeats replaced, kept as the reference: O(replicas × clusters), so only
 * for small inputs.
 */
function websterSeatsOneByOne(
  replicas: number,
  weights: ReadonlyArray<{ name: string; weight: number }>,
): Map<string, number> {
  const seats = weights.map(() => 0);
  for (let s = 0; s < replicas; s++) {
    let best = -1;
    let bestScore = 0;
    for (let i = 0; i < weights.length; i++) {
      const w = weights[i] as { name: string; weight: number };
      if (w.weight <= 0) continue;
      const a = seats[i] as number;
      const score = w.weight / (2 * a + 1);
      if (best < 0 || score > bestScore) {
        best = i;
        bestScore = score;
      } else if (score === bestScore) {
        const ab = seats[best] as number;
        if (a < ab || (a === ab && w.name < (weights[best] as { name: string }).name)) {
          best = i;
          bestScore = score;
        }
      }
    }
    if (best < 0) break;
    seats[best] = (seats[best] as number) + 1;
  }
  return new Map(weights.map((w, i) => [w.name, seats[i] as number]));
}

describe('websterSeats against the seat-by-seat method', () => {
  const seatsOf = (m: Map<string, number>) => [...m.entries()];
  // Small integers make ties common; the others reach fractions, huge and tiny (subnormal) weights whose
  // priorities round to equal or to zero, and infinite ones. NaN is left out: seat by seat it is not
  // ordered at all, and divideReplicas never passes it.
  const weight = fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: -1, max: 12 }) },
    { weight: 2, arbitrary: fc.double({ min: 0, max: 1e6, noNaN: true }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(Number.POSITIVE_INFINITY, Number.MAX_VALUE, Number.MIN_VALUE, 1e-320, 2 ** 53, 0.1),
    },
  );
  const input = fc.record({
    replicas: fc.integer({ min: 0, max: 80 }),
    weights: fc.array(fc.record({ name: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'), weight }), {
      maxLength: 7,
    }),
  });

  it('gives the same seats for every input', () => {
    fc.assert(
      fc.property(input, ({ replicas, weights }) => {
        assert.deepEqual(seatsOf(websterSeats(replicas, weights)), seatsOf(websterSeatsOneByOne(replicas, weights)));
      }),
      { numRuns: 3000 },
    );
  });

  it('gives the same seats for many clusters and a few hundred replicas', () => {
    const many = fc.record({
      replicas: fc.integer({ min: 0, max: 400 }),
      weights: fc.array(fc.record({ name: fc.string({ maxLength: 2 }), weight: fc.integer({ min: 0, max: 1000 }) }), {
        maxLength: 40,
      }),
    });
    fc.assert(
      fc.property(many, ({ replicas, weights }) => {
        assert.deepEqual(seatsOf(websterSeats(replicas, weights)), seatsOf(websterSeatsOneByOne(replicas, weights)));
      }),
      { numRuns: 300 },
    );
  });

  it('hands out every seat of an int32 replica count, in proportion to the weights', () => {
    const weights = Array.from({ length: 100 }, (_, i) => ({
      name: `member-${String(i).padStart(3, '0')}`,
      weight: i + 1,
    }));
    const seats = websterSeats(MAX_REPLICAS, weights);
    const total = [...seats.values()].reduce((a, b) => a + b, 0);
    assert.equal(total, MAX_REPLICAS);
    const sum = weights.reduce((a, w) => a + w.weight, 0);
    for (const w of weights)
      assert.ok(Math.abs((seats.get(w.name) ?? 0) - (MAX_REPLICAS * w.weight) / sum) < 1, w.name);
  });

  it('refuses a replica count outside int32', () => {
    assert.throws(() => websterSeats(MAX_REPLICAS + 1, [{ name: 'a', weight: 1 }]), RangeError);
    assert.throws(() => websterSeats(1.5, [{ name: 'a', weight: 1 }]), RangeError);
  });
});

describe('divideReplicas', () => {
  const two = clusters.slice(0, 2);
  it('leaves Duplicated placements alone', () =>
    assert.equal(divideReplicas({ replicaScheduling: { replicaSchedulingType: 'Duplicated' } }, 4, two), undefined));
  it('leaves templates without replicas alone', () =>
    assert.equal(divideReplicas({ replicaScheduling: {} }, undefined, two), undefined));
  it('divides by the largest matching static weight', () => {
    const placement = {
      replicaScheduling: {
        replicaSchedulingType: 'Divided',
        weightPreference: {
          staticWeightList: [
            { targetCluster: { clusterNames: ['a'] }, weight: 3 },
            { targetCluster: {}, weight: 1 },
          ],
        },
      },
    };
    assert.deepEqual(Object.fromEntries(divideReplicas(placement, 4, two) ?? []), { a: 3, b: 1 });
  });
  it('divides equally without a weight list', () => {
    assert.deepEqual(
      Object.fromEntries(divideReplicas({ replicaScheduling: { replicaSchedulingType: 'Divided' } }, 4, two) ?? []),
      { a: 2, b: 2 },
    );
  });
  it('divides an int32 replica count among the clusters', () => {
    assert.deepEqual(
      Object.fromEntries(
        divideReplicas({ replicaScheduling: { replicaSchedulingType: 'Divided' } }, MAX_REPLICAS, two) ?? [],
      ),
      { a: 1_073_741_824, b: 1_073_741_823 },
    );
  });
  it('reports a replica count above int32 as a placement error', () => {
    assert.throws(
      () => divideReplicas({ replicaScheduling: { replicaSchedulingType: 'Divided' } }, 1e300, two),
      (e: unknown) => e instanceof PlacementError && /at most 2147483647/.test(e.message),
    );
  });
  it('refuses Aggregated division when no cluster reports capacity, saying where it comes from', () => {
    assert.throws(
      () => divideReplicas({ replicaScheduling: { replicaDivisionPreference: 'Aggregated' } }, 4, two),
      /^PlacementError: Clusters available replicas 0 are not enough to schedule\. No candidate Cluster has status\.resourceSummary/,
    );
  });
});

describe('templateReplicas', () => {
  it('reads spec.replicas', () => assert.equal(templateReplicas('Deployment', { spec: { replicas: 3 } }), 3));
  it('defaults a Deployment to 1', () => assert.equal(templateReplicas('Deployment', { spec: {} }), 1));
  it('has none for a ConfigMap', () => assert.equal(templateReplicas('ConfigMap', { data: {} }), undefined));
});

describe('NoExecute taints against a clock', () => {
  const T0 = Date.parse('2026-11-25T10:00:00Z');
  const tainted = (effect: string, timeAdded?: string) =>
    clusterInfo({
      apiVersion: 'cluster.flotilla.io/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'sick' },
      spec: { taints: [{ key: 'cluster.karmada.io/not-ready', effect, ...(timeAdded ? { timeAdded } : {}) }] },
    });
  const healthy = clusterInfo({
    apiVersion: 'cluster.flotilla.io/v1alpha1',
    kind: 'Cluster',
    metadata: { name: 'ok' },
  });
  const tolerate = (tolerationSeconds?: number) => ({
    clusterTolerations: [
      {
        key: 'cluster.karmada.io/not-ready',
        operator: 'Exists',
        effect: 'NoExecute',
        ...(tolerationSeconds === undefined ? {} : { tolerationSeconds }),
      },
    ],
  });
  const demand = (now?: number) => ({
    ref: { apiVersion: 'apps/v1', kind: 'Deployment' },
    replicas: 1,
    now,
    available: () => 1,
  });
  const names = (s: { clusters: Array<{ name: string }> }) => s.clusters.map((c) => c.name);

  it('an untolerated NoExecute taint evicts; an untolerated NoSchedule one only keeps the cluster out', () => {
    const ne = selectClusters({}, [tainted('NoExecute'), healthy], demand(T0));
    assert.deepEqual([names(ne), ne.evicted], [['ok'], ['sick']]);
    const ns = selectClusters({}, [tainted('NoSchedule'), healthy], demand(T0));
    assert.deepEqual([names(ns), ns.evicted], [['ok'], []]);
  });

  it('NoSchedule does not take a template off a cluster it is on; NoExecute does', () => {
    const on = { ...demand(T0), scheduled: new Set(['sick']) };
    assert.deepEqual(names(selectClusters({}, [tainted('NoSchedule'), healthy], on)), ['sick', 'ok']);
    const ne = selectClusters({}, [tainted('NoExecute'), healthy], on);
    assert.deepEqual([names(ne), ne.evicted], [['ok'], ['sick']]);
    // Both taints, the template already moved off: still reported evicted, whichever taint comes first.
    const both = clusterInfo({
      apiVersion: 'cluster.flotilla.io/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'sick' },
      spec: {
        taints: [
          { key: 'k', effect: 'NoSchedule' },
          { key: 'k', effect: 'NoExecute' },
        ],
      },
    });
    assert.deepEqual(selectClusters({}, [both, healthy], demand(T0)).evicted, ['sick']);
  });

  it('a toleration with tolerationSeconds keeps the cluster until timeAdded + seconds, and says when that is', () => {
    const clusters = [tainted('NoExecute', '2026-11-25T10:00:00Z'), healthy];
    const before = selectClusters(tolerate(60), clusters, demand(T0 + 59_999));
    assert.deepEqual([names(before), before.evicted, before.recheckAt], [['sick', 'ok'], [], T0 + 60_000]);
    const after = selectClusters(tolerate(60), clusters, demand(T0 + 60_000));
    assert.deepEqual([names(after), after.evicted, after.recheckAt], [['ok'], ['sick'], undefined]);
  });

  it('without tolerationSeconds, without timeAdded, or without a clock, the tolerated taint is tolerated for good', () => {
    const far = T0 + 10 * 365 * 86_400_000;
    assert.deepEqual(names(selectClusters(tolerate(), [tainted('NoExecute', '2026-11-25T10:00:00Z')], demand(far))), [
      'sick',
    ]);
    assert.deepEqual(names(selectClusters(tolerate(1), [tainted('NoExecute')], demand(far))), ['sick']);
    assert.deepEqual(names(selectClusters(tolerate(1), [tainted('NoExecute', '2026-11-25T10:00:00Z')], demand())), [
      'sick',
    ]);
  });
});
