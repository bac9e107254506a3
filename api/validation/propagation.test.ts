import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterPropagationPolicy, propagationPolicy, selectDeployment, type Obj } from '../../test/builders.js';
import { formatFieldError } from './errors.js';
import { validateObject, type ValidationContext } from './index.js';

const pp = (spec: Obj = {}, placement?: Obj): Obj =>
  propagationPolicy('pp', 'shop', [selectDeployment('web')], placement, spec);
const errorsOf = (o: unknown, ctx?: ValidationContext): string[] => validateObject(o, ctx).errors.map(formatFieldError);

describe('placement rules', () => {
  const cases: Array<[string, Obj, string[]]> = [
    [
      'accepts an ordinary placement',
      {
        clusterAffinity: { clusterNames: ['m1'] },
        spreadConstraints: [{ spreadByField: 'cluster', maxGroups: 2, minGroups: 1 }],
      },
      [],
    ],
    [
      'denies clusterAffinity together with clusterAffinities, even an empty list',
      { clusterAffinity: { clusterNames: ['m1'] }, clusterAffinities: [] },
      [
        'spec.placement: Invalid value: {"clusterAffinity":{"clusterNames":["m1"]},"clusterAffinities":[]}: clusterAffinities cannot co-exist with clusterAffinity',
      ],
    ],
    [
      'denies an unsupported field selector key',
      { clusterAffinity: { fieldSelector: { matchExpressions: [{ key: 'name', operator: 'In', values: ['x'] }] } } },
      [
        'spec.placement.clusterAffinity.fieldSelector: Invalid value: {"matchExpressions":[{"key":"name","operator":"In","values":["x"]}]}: unsupported key "name", must be provider, region, or zone',
      ],
    ],
    [
      'denies two affinity terms with one name',
      {
        clusterAffinities: [
          { affinityName: 'a', clusterNames: ['m1'] },
          { affinityName: 'a', clusterNames: ['m2'] },
        ],
      },
      [
        'spec.placement.clusterAffinities: Invalid value: [{"affinityName":"a","clusterNames":["m1"]},{"affinityName":"a","clusterNames":["m2"]}]: each affinity term in a policy must have a unique name',
      ],
    ],
    [
      'denies an affinity name that is not a label key, at the term',
      { clusterAffinities: [{ affinityName: 'a b', clusterNames: ['m1'] }] },
      [
        `spec.placement.clusterAffinities[0]: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      ],
    ],
    [
      'denies overflow affinities without dynamic weight or aggregated division',
      {
        clusterAffinities: [
          {
            affinityName: 'a',
            clusterNames: ['m1'],
            overflowAffinities: [{ affinityName: 'b', clusterNames: ['m2'] }],
          },
        ],
      },
      [
        'spec.placement.clusterAffinities[0].overflowAffinities: Invalid value: [{"affinityName":"b","clusterNames":["m2"]}]: overflowAffinities can only be used together with dynamic weight or aggregated scheduling',
      ],
    ],
    [
      'accepts overflow affinities with aggregated division, Divided being the default type',
      {
        clusterAffinities: [
          {
            affinityName: 'a',
            clusterNames: ['m1'],
            overflowAffinities: [{ affinityName: 'b', clusterNames: ['m2'] }],
          },
        ],
        replicaScheduling: { replicaDivisionPreference: 'Aggregated' },
      },
      [],
    ],
    [
      'accepts overflow affinities with a dynamic weight, Weighted being the default preference',
      {
        clusterAffinities: [
          {
            affinityName: 'a',
            clusterNames: ['m1'],
            overflowAffinities: [{ affinityName: 'b', clusterNames: ['m2'] }],
          },
        ],
        replicaScheduling: { weightPreference: { dynamicWeight: 'AvailableReplicas' } },
      },
      [],
    ],
    [
      'denies overflow names that repeat each other or the primary name, and an empty inline affinity',
      {
        clusterAffinities: [
          {
            affinityName: 'a',
            overflowAffinities: [
              { affinityName: 'a', clusterNames: ['m2'] },
              { affinityName: 'b' },
              { affinityName: 'b' },
            ],
          },
        ],
        replicaScheduling: { replicaDivisionPreference: 'Aggregated' },
      },
      [
        'spec.placement.clusterAffinities[0].overflowAffinities: Invalid value: [{"affinityName":"a","clusterNames":["m2"]},{"affinityName":"b"},{"affinityName":"b"}]: overflowAffinities can only be used together with the inline ClusterAffinity',
        `spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName: Invalid value: "a": overflow affinity name must be unique and must not duplicate the primary group's affinityName`,
        `spec.placement.clusterAffinities[0].overflowAffinities[2].affinityName: Invalid value: "b": overflow affinity name must be unique and must not duplicate the primary group's affinityName`,
      ],
    ],
    [
      'denies Lt and Gt tolerations',
      {
        clusterTolerations: [
          { key: 'a', operator: 'Equal', value: 'b' },
          { key: 'c', operator: 'Gt', value: '1' },
        ],
      },
      [
        'spec.placement.clusterTolerations[1].operator: Unsupported value: "Gt": supported values: "", "Exists", "Equal"',
      ],
    ],
    [
      'denies equal workload affinity and anti-affinity keys',
      { workloadAffinity: { affinity: { groupByLabelKey: 'app' }, antiAffinity: { groupByLabelKey: 'app' } } },
      [
        'spec.placement.workloadAffinity: Invalid value: {"affinity":{"groupByLabelKey":"app"},"antiAffinity":{"groupByLabelKey":"app"}}: affinity and antiAffinity must not use the same groupByLabelKey',
      ],
    ],
    [
      'checks the field selectors of static weight targets too',
      {
        replicaScheduling: {
          weightPreference: {
            staticWeightList: [
              {
                targetCluster: { fieldSelector: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] } },
                weight: 1,
              },
            ],
          },
        },
      },
      [
        'spec.placement.replicaScheduling.weightPreference.staticWeightList[0].targetCluster.fieldSelector: Invalid value: {"matchExpressions":[{"key":"zone","operator":"Exists"}]}: unsupported operator "Exists", must be In or NotIn',
      ],
    ],
  ];
  for (const [name, placement, want] of cases) it(name, () => assert.deepEqual(errorsOf(pp({}, placement)), want));
});

describe('spread constraints', () => {
  const spread = (spreadConstraints: Obj[]): string[] => errorsOf(pp({}, { spreadConstraints }));
  it('reports every problem of one constraint at its index', () => {
    assert.deepEqual(spread([{ spreadByField: 'cluster', spreadByLabel: 'rack', minGroups: -1, maxGroups: -2 }]), [
      'spec.placement.spreadConstraints[0]: Invalid value: {"spreadByField":"cluster","spreadByLabel":"rack","minGroups":-1,"maxGroups":-2}: spreadByLabel should not co-exist with spreadByField',
      'spec.placement.spreadConstraints[0]: Invalid value: {"spreadByField":"cluster","spreadByLabel":"rack","minGroups":-1,"maxGroups":-2}: minGroups lower than 0 is not allowed',
      'spec.placement.spreadConstraints[0]: Invalid value: {"spreadByField":"cluster","spreadByLabel":"rack","minGroups":-1,"maxGroups":-2}: maxGroups lower than 0 is not allowed',
    ]);
  });
  it('denies maxGroups below minGroups', () => {
    assert.deepEqual(spread([{ spreadByField: 'cluster', maxGroups: 1, minGroups: 2 }]), [
      'spec.placement.spreadConstraints[0]: Invalid value: {"spreadByField":"cluster","maxGroups":1,"minGroups":2}: maxGroups lower than minGroups is not allowed',
    ]);
  });
  it('reports a repeated field once, however often it repeats', () => {
    const list = [
      { spreadByField: 'region' },
      { spreadByField: 'region' },
      { spreadByField: 'region' },
      { spreadByField: 'cluster' },
    ];
    assert.deepEqual(spread(list), [
      `spec.placement.spreadConstraints: Invalid value: ${JSON.stringify(list)}: multiple region spread constraints are not allowed`,
    ]);
  });
  it('requires a cluster constraint once any field constraint is used', () => {
    assert.deepEqual(spread([{ spreadByField: 'zone' }]), [
      'spec.placement.spreadConstraints: Invalid value: [{"spreadByField":"zone"}]: the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled',
    ]);
  });
  it('accepts label spreading without a cluster constraint', () =>
    assert.deepEqual(spread([{ spreadByLabel: 'rack' }]), []));
});

describe('failover rules', () => {
  const failover = (application: Obj, extra: Obj = { propagateDeps: true }): string[] =>
    errorsOf(pp({ failover: { application }, ...extra }));
  const cases: Array<[string, Obj, string[]]> = [
    ['accepts defaults left to the API server and the mutating webhook', { decisionConditions: {} }, []],
    [
      'denies a negative toleration',
      { decisionConditions: { tolerationSeconds: -5 } },
      [
        'spec.failover.application.decisionConditions.tolerationSeconds: Invalid value: -5: must be greater than or equal to 0',
      ],
    ],
    [
      'denies a grace period without graceful purging',
      { decisionConditions: {}, purgeMode: 'Directly', gracePeriodSeconds: 30 },
      [
        'spec.failover.application.gracePeriodSeconds: Invalid value: 30: only takes effect when purgeMode is gracefully',
      ],
    ],
    [
      'denies an explicit graceful purge with no grace period',
      { decisionConditions: {}, purgeMode: 'Gracefully' },
      [
        'spec.failover.application.gracePeriodSeconds: Invalid value: null: should not be empty when purgeMode is gracefully',
      ],
    ],
    [
      'denies a grace period of zero',
      { decisionConditions: {}, gracePeriodSeconds: 0 },
      ['spec.failover.application.gracePeriodSeconds: Invalid value: 0: must be greater than 0'],
    ],
    [
      'checks state preservation alias names as label names',
      {
        decisionConditions: {},
        statePreservation: {
          rules: [
            { aliasLabelName: 'ok', jsonPath: '{.a}' },
            { aliasLabelName: 'x'.repeat(64), jsonPath: '{.b}' },
          ],
        },
      },
      [
        `spec.failover.application.statePreservation.rules[1].aliasLabelName: Invalid value: "${'x'.repeat(64)}": name part must be no more than 63 bytes`,
      ],
    ],
  ];
  for (const [name, application, want] of cases) it(name, () => assert.deepEqual(failover(application), want));

  it('requires propagateDeps with application failover', () => {
    assert.deepEqual(failover({ decisionConditions: {} }, {}), [
      'spec.propagateDeps: Invalid value: false: application failover is set, propagateDeps must be true',
    ]);
  });
  it('checks cluster failover state preservation', () => {
    const errs = errorsOf(
      pp({ failover: { cluster: { statePreservation: { rules: [{ aliasLabelName: '-x', jsonPath: '{.a}' }] } } } }),
    );
    assert.equal(errs.length, 1);
    assert.match(
      errs[0] ?? '',
      /^spec\.failover\.cluster\.statePreservation\.rules\[0\]\.aliasLabelName: Invalid value: "-x": name part must consist/,
    );
  });
});

describe('resource selectors, preemption and suspension', () => {
  it('denies a selector naming another namespace than the policy', () => {
    const policy = propagationPolicy('pp', 'shop', [{ ...selectDeployment(), namespace: 'other' }]);
    assert.deepEqual(errorsOf(policy), [
      'spec.resourceSelectors[0].namespace: Invalid value: "other": namespace of resource selector must be the same as the namespace of the policy',
    ]);
  });
  it('lets a cluster propagation policy select any namespace', () => {
    assert.deepEqual(errorsOf(clusterPropagationPolicy('cpp', [{ ...selectDeployment(), namespace: 'other' }])), []);
  });
  it('requires names on every selector when preemption is Always', () => {
    const policy = propagationPolicy('pp', 'shop', [selectDeployment('web'), selectDeployment()], undefined, {
      preemption: 'Always',
    });
    assert.deepEqual(errorsOf(policy), [
      'spec.resourceSelectors[1].name: Invalid value: "": name cannot be empty if preemption is Always, the empty name may cause unexpected resources preemption',
    ]);
  });
  it('denies suspending all dispatching while naming clusters, at the doubled path Karmada uses', () => {
    const suspension = { dispatching: true, dispatchingOnClusters: { clusterNames: ['m1'] } };
    assert.deepEqual(errorsOf(pp({ suspension })), [
      'spec.suspension.suspension: Invalid value: {"dispatching":true,"dispatchingOnClusters":{"clusterNames":["m1"]}}: suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames',
    ]);
  });
  it('accepts dispatching false with clusters named', () => {
    assert.deepEqual(
      errorsOf(pp({ suspension: { dispatching: false, dispatchingOnClusters: { clusterNames: ['m1'] } } })),
      [],
    );
  });
});

describe('rules on admission operations', () => {
  const withLabels = (labels: Record<string, string>, schedulerName?: string): Obj => {
    const p = pp(schedulerName ? { schedulerName } : {});
    (p.metadata as Obj).labels = labels;
    return p;
  };
  it('requires the permanent-id label only when asked to, on CREATE or UPDATE', () => {
    const want = [
      'metadata.labels: Required value: label policy.flotilla.io/permanent-id is required, it should be set by the mutating admission webhook during creation',
    ];
    assert.deepEqual(errorsOf(withLabels({}), { operation: 'CREATE', requirePermanentId: true }), want);
    assert.deepEqual(errorsOf(withLabels({}), { operation: 'CREATE' }), []);
    assert.deepEqual(errorsOf(withLabels({}), { requirePermanentId: true }), []);
  });
  it("accepts Karmada's permanent-id label for the kind", () => {
    assert.deepEqual(
      errorsOf(withLabels({ 'propagationpolicy.karmada.io/permanent-id': 'u' }), {
        operation: 'CREATE',
        requirePermanentId: true,
      }),
      [],
    );
    const cpp = clusterPropagationPolicy('cpp', [selectDeployment()]);
    (cpp.metadata as Obj).labels = { 'clusterpropagationpolicy.karmada.io/permanent-id': 'u' };
    assert.deepEqual(errorsOf(cpp, { operation: 'CREATE', requirePermanentId: true }), []);
  });
  it('denies changing the scheduler on UPDATE, an absent one being the default scheduler', () => {
    assert.deepEqual(errorsOf(withLabels({}, 'other'), { operation: 'UPDATE', oldObject: withLabels({}) }), [
      'spec.schedulerName: Forbidden: the schedulerName should not be updated',
    ]);
    assert.deepEqual(
      errorsOf(withLabels({}, 'default-scheduler'), { operation: 'UPDATE', oldObject: withLabels({}) }),
      [],
    );
  });
  it('denies changing the permanent-id label on UPDATE', () => {
    const old = withLabels({ 'policy.flotilla.io/permanent-id': 'a' });
    assert.deepEqual(
      errorsOf(withLabels({ 'policy.flotilla.io/permanent-id': 'b' }), { operation: 'UPDATE', oldObject: old }),
      [
        'metadata.labels[policy.flotilla.io/permanent-id]: Forbidden: label policy.flotilla.io/permanent-id is immutable, it can only be set by the system during creation',
      ],
    );
  });
  it('stops at the first failing identity rule, before the spec rules', () => {
    const changed = withLabels({}, 'other');
    (changed.spec as Obj).preemption = 'Always';
    (changed.spec as Obj).resourceSelectors = [selectDeployment()];
    assert.deepEqual(errorsOf(changed, { operation: 'UPDATE', oldObject: withLabels({}) }), [
      'spec.schedulerName: Forbidden: the schedulerName should not be updated',
    ]);
  });
});

describe('propagation warnings', () => {
  const clusters = [{ metadata: { name: 'm1' } }, { metadata: { name: 'm2' } }];
  it('names clusters the placement refers to that are not known', () => {
    const policy = pp(
      {},
      {
        clusterAffinity: { clusterNames: ['m1', 'm3'] },
        replicaScheduling: {
          weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ['m9'] }, weight: 1 }] },
        },
      },
    );
    assert.deepEqual(validateObject(policy, { clusters }).warnings, [
      'spec.placement.clusterAffinity.clusterNames[1]: cluster "m3" is not among the known clusters (m1, m2)',
      'spec.placement.replicaScheduling.weightPreference.staticWeightList[0].targetCluster.clusterNames[0]: cluster "m9" is not among the known clusters (m1, m2)',
    ]);
  });
  it('warns about a selector whose apiVersion the kind is no longer served under', () => {
    const policy = propagationPolicy('pp', 'shop', [{ apiVersion: 'extensions/v1beta1', kind: 'Deployment' }]);
    const { errors, warnings } = validateObject(policy);
    assert.deepEqual(errors, []);
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0] ?? '',
      /^spec\.resourceSelectors\[0\]: kind Deployment is served as apps\/v1, not extensions\/v1beta1/,
    );
  });
});
