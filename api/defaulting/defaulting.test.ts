import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { DEFAULT_GRACE_PERIOD_SECONDS, PERMANENT_ID_LABEL, defaultObject, type DefaultingOptions } from './index.js';

type Obj = Record<string, unknown>;
const create: DefaultingOptions = { operation: 'CREATE', newId: () => 'id-1' };
const update: DefaultingOptions = { operation: 'UPDATE', newId: () => 'never-used' };

const pp = (spec: Obj, extra: Obj = {}): Obj => ({
  apiVersion: 'policy.flotilla.io/v1alpha1',
  kind: 'PropagationPolicy',
  metadata: { name: 'web', namespace: 'shop', ...extra },
  spec,
});
const cpp = (spec: Obj): Obj => ({
  apiVersion: 'policy.flotilla.io/v1beta1',
  kind: 'ClusterPropagationPolicy',
  metadata: { name: 'all' },
  spec,
});
const op = (spec: Obj): Obj => ({
  apiVersion: 'policy.flotilla.io/v1beta1',
  kind: 'OverridePolicy',
  metadata: { name: 'o', namespace: 'shop' },
  spec,
});
const cop = (spec: Obj): Obj => ({
  apiVersion: 'policy.flotilla.io/v1alpha1',
  kind: 'ClusterOverridePolicy',
  metadata: { name: 'c' },
  spec,
});
const idLabels = (id: string) => ({ labels: { [PERMANENT_ID_LABEL]: id } });

void describe('defaultObject', () => {
  const cases: Array<{ name: string; input: Obj; opts?: DefaultingOptions; expected: Obj }> = [
    {
      name: 'fills every default a new PropagationPolicy can take',
      input: pp({
        resourceSelectors: [
          { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceImport' },
          { apiVersion: 'apps/v1', kind: 'Deployment', namespace: '' },
        ],
        placement: { spreadConstraints: [{}], replicaScheduling: { replicaSchedulingType: 'Divided' } },
        failover: { application: { decisionConditions: {}, purgeMode: 'Gracefully' } },
      }),
      expected: {
        ...pp(
          {
            resourceSelectors: [
              { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceImport', namespace: 'shop' },
              { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop' },
            ],
            placement: {
              spreadConstraints: [{ spreadByField: 'cluster', minGroups: 1 }],
              replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' },
            },
            failover: {
              application: {
                decisionConditions: {},
                purgeMode: 'Gracefully',
                gracePeriodSeconds: DEFAULT_GRACE_PERIOD_SECONDS,
              },
            },
            propagateDeps: true,
          },
          idLabels('id-1'),
        ),
      },
    },
    {
      name: 'keeps values the author chose',
      input: pp({
        resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'other' }],
        placement: {
          spreadConstraints: [{ spreadByLabel: 'team', minGroups: 2 }],
          replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Aggregated' },
        },
        failover: { application: { decisionConditions: {}, purgeMode: 'Gracefully', gracePeriodSeconds: 30 } },
      }),
      expected: pp(
        {
          resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'other' }],
          placement: {
            spreadConstraints: [{ spreadByLabel: 'team', minGroups: 2 }],
            replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Aggregated' },
          },
          failover: { application: { decisionConditions: {}, purgeMode: 'Gracefully', gracePeriodSeconds: 30 } },
        },
        idLabels('id-1'),
      ),
    },
    {
      name: 'gives no grace period or division preference where they do not apply',
      input: pp({
        resourceSelectors: [],
        placement: { replicaScheduling: { replicaSchedulingType: 'Duplicated' } },
        failover: { application: { decisionConditions: {}, purgeMode: 'Directly' } },
      }),
      expected: pp(
        {
          resourceSelectors: [],
          placement: { replicaScheduling: { replicaSchedulingType: 'Duplicated' } },
          failover: { application: { decisionConditions: {}, purgeMode: 'Directly' } },
        },
        idLabels('id-1'),
      ),
    },
    {
      name: 'replaces a permanent id the client sent on create',
      input: pp({ resourceSelectors: [] }, idLabels('chosen-by-user')),
      expected: pp({ resourceSelectors: [] }, idLabels('id-1')),
    },
    {
      name: 'leaves the selectors of a ClusterPropagationPolicy namespace-free',
      input: cpp({
        resourceSelectors: [{ apiVersion: 'v1', kind: 'Namespace' }],
        placement: { spreadConstraints: [{ spreadByField: 'region' }] },
      }),
      expected: {
        ...cpp({
          resourceSelectors: [{ apiVersion: 'v1', kind: 'Namespace' }],
          placement: { spreadConstraints: [{ spreadByField: 'region', minGroups: 1 }] },
        }),
        metadata: { name: 'all', ...idLabels('id-1') },
      },
    },
    {
      name: 'gives an OverridePolicy only selector namespaces',
      input: op({ resourceSelectors: [{ apiVersion: 'v1', kind: 'Secret' }, {}], overrideRules: [] }),
      expected: op({
        resourceSelectors: [{ apiVersion: 'v1', kind: 'Secret', namespace: 'shop' }, { namespace: 'shop' }],
        overrideRules: [],
      }),
    },
    {
      name: 'changes nothing in a ClusterOverridePolicy',
      input: cop({ resourceSelectors: [{ apiVersion: 'v1', kind: 'Secret' }] }),
      expected: cop({ resourceSelectors: [{ apiVersion: 'v1', kind: 'Secret' }] }),
    },
    {
      name: 'uses the namespace it is given over the one in metadata',
      input: { ...op({ resourceSelectors: [{}] }), metadata: { name: 'o' } },
      opts: { ...create, namespace: 'from-request' },
      expected: { ...op({ resourceSelectors: [{ namespace: 'from-request' }] }), metadata: { name: 'o' } },
    },
    {
      name: 'assigns no new id on update',
      input: pp({ resourceSelectors: [] }, idLabels('stored')),
      opts: { ...update, oldObject: pp({ resourceSelectors: [] }, idLabels('stored')) },
      expected: pp({ resourceSelectors: [] }, idLabels('stored')),
    },
    {
      name: 'carries the stored id over when an update leaves it out',
      input: pp({ resourceSelectors: [] }),
      opts: { ...update, oldObject: pp({ resourceSelectors: [] }, idLabels('stored')) },
      expected: pp({ resourceSelectors: [] }, idLabels('stored')),
    },
    {
      name: "puts a Karmada-group PropagationPolicy's id under Karmada's key, as Karmada's webhook does",
      input: { ...pp({ resourceSelectors: [] }), apiVersion: 'policy.karmada.io/v1alpha1' },
      expected: {
        ...pp({ resourceSelectors: [] }, { labels: { 'propagationpolicy.karmada.io/permanent-id': 'id-1' } }),
        apiVersion: 'policy.karmada.io/v1alpha1',
      },
    },
    {
      name: "puts a Karmada-group ClusterPropagationPolicy's id under Karmada's key for that kind",
      input: { ...cpp({ resourceSelectors: [] }), apiVersion: 'policy.karmada.io/v1alpha1' },
      expected: {
        ...cpp({ resourceSelectors: [] }),
        apiVersion: 'policy.karmada.io/v1alpha1',
        metadata: { name: 'all', labels: { 'clusterpropagationpolicy.karmada.io/permanent-id': 'id-1' } },
      },
    },
    {
      name: "carries over a Karmada-group policy's stored id under either key when an update leaves it out",
      input: { ...pp({ resourceSelectors: [] }), apiVersion: 'policy.karmada.io/v1alpha1' },
      opts: {
        ...update,
        oldObject: pp(
          { resourceSelectors: [] },
          { labels: { [PERMANENT_ID_LABEL]: 'older', 'propagationpolicy.karmada.io/permanent-id': 'stored' } },
        ),
      },
      expected: {
        ...pp(
          { resourceSelectors: [] },
          { labels: { 'propagationpolicy.karmada.io/permanent-id': 'stored', [PERMANENT_ID_LABEL]: 'older' } },
        ),
        apiVersion: 'policy.karmada.io/v1alpha1',
      },
    },
    {
      name: 'returns other kinds unchanged',
      input: {
        apiVersion: 'cluster.flotilla.io/v1alpha1',
        kind: 'Cluster',
        metadata: { name: 'east' },
        spec: { resourceSelectors: [{}] },
      },
      expected: {
        apiVersion: 'cluster.flotilla.io/v1alpha1',
        kind: 'Cluster',
        metadata: { name: 'east' },
        spec: { resourceSelectors: [{}] },
      },
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      assert.deepStrictEqual(defaultObject(c.input, c.opts ?? create), c.expected);
    });
  }

  void it('does not mutate its argument', () => {
    const input = pp({ resourceSelectors: [{}], placement: { spreadConstraints: [{}] } });
    const before = structuredClone(input);
    defaultObject(input, create);
    assert.deepStrictEqual(input, before);
  });

  void it('gives the same result when applied twice on update', () => {
    const once = defaultObject(
      pp({ resourceSelectors: [{}], placement: { spreadConstraints: [{}, { spreadByLabel: 'x' }] } }),
      create,
    );
    assert.deepStrictEqual(defaultObject(once, { ...update, oldObject: once }), once);
  });

  void it('tolerates shapes that are not policies', () => {
    for (const input of [
      null,
      42,
      'x',
      [],
      { kind: 'PropagationPolicy', spec: 'nope', metadata: 7 },
      { kind: 'OverridePolicy', spec: { resourceSelectors: [null, 3] } },
    ]) {
      assert.doesNotThrow(() => defaultObject(input, create));
    }
  });
});
