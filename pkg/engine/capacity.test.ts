// Scheduling that knows the clusters: Karmada's general estimator on status.resourceSummary, dynamic
// weights and Aggregated division by available replicas, spread constraints that keep the clusters with
// room, and the API-enablement filter — through render(), as a fleet snapshot renders offline.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';

import { cluster, deployment, propagationPolicy, selectDeployment, type Obj } from '../../test/builders.js';
import { estimateReplicas, readCapacity, replicaRequests } from './capacity.js';
import { clusterInfo } from './inputs.js';
import { parseMilli } from './quantity.js';
import { renderDetailed } from './render.js';

/** A Cluster whose status says what it has and what is taken (quantities as the apiserver writes them). */
function sized(
  name: string,
  allocatable: Obj,
  allocated: Obj = {},
  extra: { apis?: string[]; region?: string } = {},
): Obj {
  const c = cluster(name, extra.region ? { region: extra.region } : {});
  const status: Obj = { resourceSummary: { allocatable, allocated, allocating: {} } };
  if (extra.apis)
    status.apiEnablements = extra.apis.map((gvk) => {
      const i = gvk.lastIndexOf('/');
      return {
        groupVersion: gvk.slice(0, i),
        resources: [{ name: `${gvk.slice(i + 1).toLowerCase()}s`, kind: gvk.slice(i + 1) }],
      };
    });
  return { ...c, status };
}

/** A Deployment asking `cpu` per replica. */
function web(replicas: number, cpu = '1'): Obj {
  return deployment('web', 'default', {
    replicas,
    containers: [{ name: 'web', image: 'nginx', resources: { requests: { cpu } } }],
  });
}

const dynamic = {
  replicaScheduling: {
    replicaSchedulingType: 'Divided',
    replicaDivisionPreference: 'Weighted',
    weightPreference: { dynamicWeight: 'AvailableReplicas' },
  },
};
const aggregated = { replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Aggregated' } };

function divided(placement: Obj, ...objects: Obj[]): Record<string, number> | string {
  const r = renderDetailed({
    objects: [web(6), propagationPolicy('web', 'default', [selectDeployment('web')], placement), ...objects],
  });
  if (r.errors.length > 0) return r.errors.map((e) => e.message).join('; ');
  return Object.fromEntries(r.placements.map((p) => [p.cluster, (p.object.spec as Obj).replicas as number]));
}

describe('quantities and requests', () => {
  it('reads quantities in milli-units, rounding up like Kubernetes', () => {
    assert.deepEqual(['100m', '1', '1.5', '2Gi', '1k', '1e3', '0.1', '1n', 4, 'x', '1Qi', ''].map(parseMilli), [
      100,
      1000,
      1500,
      2 * 2 ** 30 * 1000,
      1e6,
      1e6,
      100,
      1,
      4000,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("adds containers' requests, takes the largest init container, fills requests from limits, adds overhead", () => {
    const d = deployment('web', 'default', {
      containers: [
        { name: 'a', resources: { requests: { cpu: '250m' } } },
        { name: 'b', resources: { limits: { cpu: '500m', memory: '1Gi' } } },
      ],
      initContainers: [{ name: 'i', resources: { requests: { cpu: '2' } } }],
    });
    (((d.spec as Obj).template as Obj).spec as Obj).overhead = { cpu: '100m' };
    assert.deepEqual(replicaRequests('Deployment', d), { cpu: 2100, memory: 2 ** 30 * 1000 });
    assert.equal(replicaRequests('ConfigMap', { data: {} }), undefined);
  });
});

describe("Karmada's general estimator", () => {
  const info = (allocatable: Obj, allocated: Obj = {}) => clusterInfo(sized('m', allocatable, allocated));

  it('fits by the scarcest resource, CPU in millicores, others in whole units, and never past the pods left', () => {
    const c = info({ cpu: '4', memory: '8Gi', pods: '110' }, { cpu: '1500m', memory: '1Gi', pods: '10' });
    assert.equal(estimateReplicas(c, { cpu: 500, memory: 2 ** 30 * 1000 }), 5); // 2500m / 500m
    assert.equal(estimateReplicas(c, { memory: 2 * 2 ** 30 * 1000 }), 3); // 7Gi / 2Gi
    assert.equal(estimateReplicas(c, undefined), 100); // pods left
    assert.equal(estimateReplicas(info({ cpu: '4', pods: '3' }), { cpu: 100 }), 3);
  });

  it('fits nothing without a summary, without pods, or when a requested resource is not offered', () => {
    assert.equal(estimateReplicas(clusterInfo(cluster('m')), { cpu: 100 }), 0);
    assert.equal(estimateReplicas(info({ cpu: '4' }), { cpu: 100 }), 0);
    assert.equal(estimateReplicas(info({ cpu: '4', pods: '10' }), { 'nvidia.com/gpu': 1000 }), 0);
    assert.equal(estimateReplicas(info({ cpu: '4', pods: '10' }, { cpu: '4' }), { cpu: 100 }), 0);
  });

  it('reads a hostile summary as numbers or nothing', () => {
    const c = readCapacity(JSON.parse('{"resourceSummary":{"allocatable":{"__proto__":"1","cpu":"a lot","pods":[]}}}'));
    assert.deepEqual(Object.keys(c?.allocatable ?? {}), ['__proto__']);
    assert.equal(Object.getPrototypeOf(c?.allocatable), Object.prototype);
  });
});

describe('division by available replicas', () => {
  const three = [
    sized('m1', { cpu: '4', pods: '110' }),
    sized('m2', { cpu: '2', pods: '110' }),
    sized('m3', { cpu: '8', pods: '110' }, { cpu: '8' }),
  ];

  it('dynamicWeight AvailableReplicas: weights are what fits (4, 2, 0 replicas of 1 CPU)', () => {
    assert.deepEqual(divided(dynamic, ...three), { m1: 4, m2: 2 });
  });

  it('follows a capacity change', () => {
    const grown = [sized('m1', { cpu: '4', pods: '110' }), sized('m2', { cpu: '8', pods: '110' })];
    assert.deepEqual(divided(dynamic, ...grown), { m1: 2, m2: 4 });
  });

  it('Aggregated: the fewest clusters with the most room that hold every replica', () => {
    const big = [
      sized('m1', { cpu: '10', pods: '110' }),
      sized('m2', { cpu: '5', pods: '110' }),
      sized('m3', { cpu: '3', pods: '110' }),
    ];
    assert.deepEqual(divided(aggregated, ...big), { m1: 6 });
    const tight = [
      sized('m1', { cpu: '4', pods: '110' }),
      sized('m2', { cpu: '3', pods: '110' }),
      sized('m3', { cpu: '1', pods: '110' }),
    ];
    assert.deepEqual(divided(aggregated, ...tight), { m1: 3, m2: 3 }); // 4 + 3 ≥ 6, split 4:3 by Webster
  });

  it("says in Karmada's words when the replicas fit nowhere", () => {
    assert.match(
      JSON.stringify(divided(dynamic, sized('m1', { cpu: '2', pods: '110' }))),
      /Clusters available replicas 2 are not enough to schedule\./,
    );
  });

  it('property: replicas are preserved and no cluster gets more than fits, whenever they fit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(12), { minLength: 1, maxLength: 5 }),
        fc.nat(30),
        fc.boolean(),
        (cpus, replicas, agg) => {
          const clusters = cpus.map((cpu, i) => sized(`m${i}`, { cpu: String(cpu), pods: '110' }));
          const r = renderDetailed({
            objects: [
              web(replicas),
              propagationPolicy('web', 'default', [selectDeployment('web')], agg ? aggregated : dynamic),
              ...clusters,
            ],
          });
          const total = cpus.reduce((a, b) => a + b, 0);
          if (total < replicas) return assert.equal(r.errors.length, 1);
          assert.deepEqual(r.errors, []);
          const got = r.placements.map((p) => ({
            cpu: cpus[Number(p.cluster.slice(1))] as number,
            n: (p.object.spec as Obj).replicas as number,
          }));
          assert.equal(
            got.reduce((a, g) => a + g.n, 0),
            replicas,
          );
          for (const g of got) assert.ok(g.n <= g.cpu, JSON.stringify({ cpus, replicas, got }));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('cluster choice by capacity and API', () => {
  it('a spread constraint by cluster keeps the clusters with the most room, not the first by name', () => {
    const placement = { ...dynamic, spreadConstraints: [{ spreadByField: 'cluster', maxGroups: 2, minGroups: 1 }] };
    const clusters = [
      sized('a', { cpu: '1', pods: '110' }),
      sized('b', { cpu: '3', pods: '110' }),
      sized('c', { cpu: '4', pods: '110' }),
    ];
    assert.deepEqual(divided(placement, ...clusters), { b: 3, c: 3 });
  });

  it('a spread constraint by region keeps the region with the most room', () => {
    const placement = { spreadConstraints: [{ spreadByField: 'region', maxGroups: 1, minGroups: 1 }] };
    const clusters = [
      sized('a', { cpu: '1', pods: '110' }, {}, { region: 'eu' }),
      sized('b', { cpu: '9', pods: '110' }, {}, { region: 'us' }),
    ];
    assert.deepEqual(divided(placement, ...clusters), { b: 6 });
  });

  it('leaves out a cluster that lists its APIs without the template kind; one that lists none is not known to lack it', () => {
    const clusters = [
      sized('m1', { cpu: '4', pods: '110' }, {}, { apis: ['v1/ConfigMap'] }),
      sized('m2', { cpu: '4', pods: '110' }, {}, { apis: ['apps/v1/Deployment', 'v1/ConfigMap'] }),
      cluster('m3'),
    ];
    assert.deepEqual(divided({}, ...clusters), { m2: 6, m3: 6 });
  });
});

describe('why a cluster was not chosen (--explain, the binding)', () => {
  it('names the first reason per cluster: affinity, taint, API, spread, division', () => {
    const objects = [
      web(3),
      propagationPolicy('web', 'default', [selectDeployment('web')], {
        clusterAffinity: { clusterNames: ['m1', 'm2', 'm3', 'm4', 'm5'] },
        spreadConstraints: [{ spreadByField: 'cluster', maxGroups: 2, minGroups: 1 }],
        ...dynamic,
      }),
      sized('m1', { cpu: '8', pods: '110' }),
      sized('m2', { cpu: '1', pods: '110' }),
      sized('m3', { cpu: '8', pods: '110' }, {}, { apis: ['v1/ConfigMap'] }),
      {
        ...sized('m4', { cpu: '8', pods: '110' }),
        spec: { taints: [{ key: 'gpu', value: 'yes', effect: 'NoSchedule' }] },
      },
      sized('m5', { cpu: '2', pods: '110' }),
      sized('m6', { cpu: '8', pods: '110' }),
    ];
    const r = renderDetailed({ objects }, { explain: true });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(
      r.placements.map((p) => p.cluster),
      ['m1', 'm5'],
    );
    assert.deepEqual(
      (r.skipped ?? []).map((s) => `${s.cluster}: ${s.reason}`),
      [
        'm2: cut by spread constraints (the groups with the most available replicas were kept; 1 fit here)',
        'm3: does not serve apps/v1 Deployment (status.apiEnablements)',
        'm4: untolerated taint gpu=yes:NoSchedule',
        'm6: not selected by spec.placement.clusterAffinity',
      ],
    );
    assert.equal(renderDetailed({ objects }).skipped, undefined, 'only with explain');
  });

  it('puts the reasons in the error when no cluster is left', () => {
    const r = renderDetailed({
      objects: [
        web(1),
        propagationPolicy('web', 'default', [selectDeployment('web')], { clusterAffinity: { clusterNames: ['m1'] } }),
        { ...sized('m1', { cpu: '8', pods: '110' }), spec: { taints: [{ key: 'down', effect: 'NoExecute' }] } },
        sized('m2', { cpu: '8', pods: '110' }),
      ],
    });
    assert.match(
      r.errors[0]?.message ?? '',
      /no cluster matches its placement \(2 clusters known: m1, m2\); m1: evicted: untolerated taint down:NoExecute; m2: not selected by spec\.placement\.clusterAffinity$/,
    );
  });
});
