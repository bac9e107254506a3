import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { overridePolicy, propagationPolicy, selectDeployment, type Obj } from '../../test/builders.js';
import { aggregate, formatFieldError } from './errors.js';
import { MAX_DEPTH } from '../internal/objects.js';
import { validateObject } from './index.js';

const errorsOf = (o: unknown): string[] => validateObject(o).errors.map(formatFieldError);
const pp = (): Obj => propagationPolicy('pp', 'shop', [selectDeployment('web')]);

describe('validateObject: what kind of object it is', () => {
  const cases: Array<[string, unknown, string[]]> = [
    [
      'denies something that is not an object',
      'text',
      ['<root>: Invalid value: "text": must be an object with apiVersion, kind, metadata and spec'],
    ],
    ['denies an array', [], ['<root>: Invalid value: []: must be an object with apiVersion, kind, metadata and spec']],
    [
      'requires a kind',
      { apiVersion: 'policy.flotilla.io/v1alpha1' },
      [
        'kind: Required value: one of PropagationPolicy, ClusterPropagationPolicy, OverridePolicy, ClusterOverridePolicy, Cluster',
      ],
    ],
    [
      'denies a kind it does not validate',
      { apiVersion: 'apps/v1', kind: 'Deployment' },
      [
        'kind: Unsupported value: "Deployment": supported values: "PropagationPolicy", "ClusterPropagationPolicy", "OverridePolicy", "ClusterOverridePolicy", "Cluster"',
      ],
    ],
    [
      'requires an apiVersion',
      { kind: 'OverridePolicy' },
      ['apiVersion: Required value: one of policy.flotilla.io/v1alpha1, policy.karmada.io/v1alpha1'],
    ],
    [
      'denies a policy kind in the cluster group',
      { apiVersion: 'cluster.flotilla.io/v1alpha1', kind: 'PropagationPolicy' },
      [
        'apiVersion: Unsupported value: "cluster.flotilla.io/v1alpha1": supported values: "policy.flotilla.io/v1alpha1", "policy.karmada.io/v1alpha1"',
      ],
    ],
    [
      'denies v1beta1, which callers convert first',
      { apiVersion: 'policy.flotilla.io/v1beta1', kind: 'PropagationPolicy' },
      [
        'apiVersion: Unsupported value: "policy.flotilla.io/v1beta1": supported values: "policy.flotilla.io/v1alpha1", "policy.karmada.io/v1alpha1"',
      ],
    ],
  ];
  for (const [name, input, want] of cases) it(name, () => assert.deepEqual(errorsOf(input), want));

  it('accepts the Karmada group unchanged', () => {
    assert.deepEqual(errorsOf({ ...pp(), apiVersion: 'policy.karmada.io/v1alpha1' }), []);
  });
});

describe('validateObject: metadata', () => {
  it('requires a name or generateName', () => {
    const p = pp();
    p.metadata = { namespace: 'shop' };
    assert.deepEqual(errorsOf(p), ['metadata.name: Required value: name or generateName is required']);
    p.metadata = { namespace: 'shop', generateName: 'pp-' };
    assert.deepEqual(errorsOf(p), []);
  });
  it('requires metadata itself', () => {
    const p = pp();
    delete p.metadata;
    assert.deepEqual(errorsOf(p), ['metadata.name: Required value: name or generateName is required']);
  });
  it('denies a namespace that is not a DNS label', () => {
    const p = propagationPolicy('pp', 'a.b', [{ ...selectDeployment() }]);
    assert.deepEqual(errorsOf(p), ['metadata.namespace: Invalid value: "a.b": must not contain dots']);
  });
  it('checks the policy labels and annotations as the API server does', () => {
    const p = pp();
    p.metadata = { name: 'pp', namespace: 'shop', labels: { ok: 'a b' }, annotations: { 'a/b/c': 'x' } };
    const errs = validateObject(p).errors;
    assert.deepEqual(
      errs.map((e) => [e.field, e.value]),
      [
        ['metadata.labels', 'a b'],
        ['metadata.annotations', 'a/b/c'],
      ],
    );
  });
  it('warns that a namespace on a cluster-scoped kind is ignored', () => {
    const cop: Obj = {
      apiVersion: 'policy.flotilla.io/v1alpha1',
      kind: 'ClusterOverridePolicy',
      metadata: { name: 'c', namespace: 'shop' },
      spec: {},
    };
    assert.deepEqual(validateObject(cop), {
      errors: [],
      warnings: ['metadata.namespace is ignored: ClusterOverridePolicy is cluster-scoped'],
    });
  });
});

describe('validateObject: order and collection', () => {
  it('reports schema errors first, then still runs the webhook rules on what has the right shape', () => {
    const p = propagationPolicy(
      'pp',
      'shop',
      [{ kind: 'Deployment', namespace: 'other' }],
      { spreadConstraints: [{ spreadByField: 'zone' }] },
      { priority: 'high' },
    );
    assert.deepEqual(errorsOf(p), [
      'spec.resourceSelectors[0].apiVersion: Required value',
      'spec.priority: Invalid value: "high": spec.priority in body must be of type integer: "string"',
      'spec.placement.spreadConstraints: Invalid value: [{"spreadByField":"zone"}]: the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled',
      'spec.resourceSelectors[0].namespace: Invalid value: "other": namespace of resource selector must be the same as the namespace of the policy',
    ]);
  });
  it('skips a rule whose input has the wrong shape rather than throwing', () => {
    const p = pp();
    (p.spec as Obj).placement = { clusterAffinities: 'all', spreadConstraints: [null, 3], workloadAffinity: [] };
    const errs = errorsOf(p);
    assert.deepEqual(errs, [
      'spec.placement.clusterAffinities: Invalid value: "all": spec.placement.clusterAffinities in body must be of type array: "string"',
      'spec.placement.spreadConstraints[0]: Invalid value: null: spec.placement.spreadConstraints[0] in body must be of type object: "null"',
      'spec.placement.spreadConstraints[1]: Invalid value: 3: spec.placement.spreadConstraints[1] in body must be of type object: "integer"',
      'spec.placement.workloadAffinity: Invalid value: []: spec.placement.workloadAffinity in body must be of type object: "array"',
    ]);
  });
  it('requires a spec on a policy', () => {
    const p = pp();
    delete p.spec;
    assert.deepEqual(errorsOf(p), ['spec: Required value']);
  });
  it('warns about fields the schema does not know, at any depth', () => {
    const op = overridePolicy('op', 'shop', [
      { overriders: { plaintext: [{ path: '/a', operator: 'remove', vaule: 1 }] } },
    ]);
    op.statsu = {};
    assert.deepEqual(validateObject(op).warnings, [
      'unknown field "spec.overrideRules[0].overriders.plaintext[0].vaule"',
      'unknown field "statsu"',
    ]);
  });
  it('takes the status the controller writes on a policy without a warning', () => {
    const op = overridePolicy('op', 'shop', [{ overriders: { plaintext: [{ path: '/a', operator: 'remove' }] } }]);
    op.status = {
      templates: 2,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Applied', message: 'overrides 2 templates' }],
    };
    assert.deepEqual(validateObject(op), { errors: [], warnings: [] });
  });
  it('allows DELETE and CONNECT without looking at the object', () => {
    assert.deepEqual(validateObject('anything', { operation: 'DELETE' }), { errors: [], warnings: [] });
    assert.deepEqual(validateObject(null, { operation: 'CONNECT' }), { errors: [], warnings: [] });
  });
  it('aggregates several errors in brackets, in rule order', () => {
    const p = propagationPolicy('pp', 'shop', [], undefined, { preemption: 'Later' });
    assert.equal(
      aggregate(validateObject(p).errors),
      '[spec.resourceSelectors: Invalid value: 0: spec.resourceSelectors in body should have at least 1 items, spec.preemption: Unsupported value: "Later": supported values: "Always", "Never"]',
    );
  });
  it('denies a document nested deeper than MAX_DEPTH before any rule walks it', () => {
    const nest = (levels: number): unknown => {
      let v: unknown = '${cluster.name}';
      for (let i = 0; i < levels; i++) v = { a: v };
      return v;
    };
    const policy = (levels: number) =>
      overridePolicy('op', 'shop', [
        { overriders: { plaintext: [{ path: '/data/x', operator: 'add', value: nest(levels) }] } },
      ]);
    // spec, overrideRules, [0], overriders, plaintext, [0], value: the value's first level is level 8.
    assert.deepEqual(errorsOf(policy(MAX_DEPTH - 7)), []);
    assert.deepEqual(errorsOf(policy(MAX_DEPTH - 6)), [
      `spec: Forbidden: must not be nested more than ${MAX_DEPTH} levels deep`,
    ]);
    assert.deepEqual(errorsOf(policy(200_000)), [
      `spec: Forbidden: must not be nested more than ${MAX_DEPTH} levels deep`,
    ]);
  });

  it('never throws, whatever the input', () => {
    const weird: unknown[] = [
      undefined,
      0,
      {
        apiVersion: 'policy.flotilla.io/v1alpha1',
        kind: 'OverridePolicy',
        metadata: 'x',
        spec: {
          overrideRules: [null, { overriders: [] }, { overriders: { plaintext: 'x', fieldOverrider: [{ json: {} }] } }],
        },
      },
      {
        apiVersion: 'policy.flotilla.io/v1alpha1',
        kind: 'PropagationPolicy',
        metadata: { name: 'p', labels: [] },
        spec: { resourceSelectors: [1], failover: { application: 1 }, suspension: [] },
      },
      {
        apiVersion: 'cluster.flotilla.io/v1alpha1',
        kind: 'Cluster',
        metadata: { name: 'c' },
        spec: { taints: 'x', proxyURL: 5 },
      },
      { apiVersion: 'policy.flotilla.io/v1alpha1', kind: 'toString' },
      propagationPolicy('p', 'shop', [
        { apiVersion: 'v1', kind: 'constructor' },
        { apiVersion: 'v1', kind: '__proto__' },
      ]),
    ];
    for (const w of weird)
      assert.doesNotThrow(() => validateObject(w, { operation: 'UPDATE', oldObject: 5, requirePermanentId: true }));
  });
});
