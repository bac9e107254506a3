import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatFieldError } from './errors.js';
import {
  checkSchema,
  CLUSTER_SPEC,
  OVERRIDE_SPEC,
  PROPAGATION_SPEC,
  type Schema,
  type SchemaReport,
} from './schema.js';

function run(value: unknown, schema: Schema, path = 'spec'): { errors: string[]; unknown: string[] } {
  const report: SchemaReport = { errors: [], unknownFields: [] };
  checkSchema(value, schema, path, report);
  return { errors: report.errors.map(formatFieldError), unknown: report.unknownFields };
}

describe('checkSchema on a small schema', () => {
  const schema: Schema = {
    type: 'object',
    required: ['name', 'items'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 4 },
      mode: { type: 'string', enum: ['A', 'B'] },
      count: { type: 'integer', minimum: 1, format: 'int32' },
      on: { type: 'boolean' },
      items: { type: 'array', minItems: 1, items: { type: 'string' } },
      tags: { type: 'map', values: { type: 'string' } },
      any: { type: 'any' },
    },
  };
  const cases: Array<[string, unknown, string[]]> = [
    [
      'accepts a well-formed object',
      { name: 'ab', mode: 'A', count: 3, on: true, items: ['x'], tags: { k: 'v' }, any: { deep: [1] } },
      [],
    ],
    ['reports each missing required field', {}, ['spec.name: Required value', 'spec.items: Required value']],
    ['reads null as absent', { name: null, items: ['x'] }, ['spec.name: Required value']],
    [
      'names the expected and the actual type',
      { name: 5, items: ['x'] },
      ['spec.name: Invalid value: 5: spec.name in body must be of type string: "integer"'],
    ],
    [
      'tells a fraction from an integer',
      { name: 'a', items: ['x'], count: 1.5 },
      ['spec.count: Invalid value: 1.5: spec.count in body must be of type integer: "number"'],
    ],
    [
      'lists the supported values of an enum',
      { name: 'a', items: ['x'], mode: 'C' },
      ['spec.mode: Unsupported value: "C": supported values: "A", "B"'],
    ],
    [
      'enforces minimum',
      { name: 'a', items: ['x'], count: 0 },
      ['spec.count: Invalid value: 0: spec.count in body should be greater than or equal to 1'],
    ],
    [
      'enforces the int32 range',
      { name: 'a', items: ['x'], count: 2 ** 31 },
      [
        'spec.count: Invalid value: 2147483648: spec.count in body must be a 32-bit integer (-2147483648 to 2147483647)',
      ],
    ],
    [
      'enforces minItems with the item count as the value',
      { name: 'a', items: [] },
      ['spec.items: Invalid value: 0: spec.items in body should have at least 1 items'],
    ],
    [
      'enforces minLength',
      { name: '', items: ['x'] },
      ['spec.name: Invalid value: "": spec.name in body should be at least 1 chars long'],
    ],
    [
      'enforces maxLength without printing the value',
      { name: 'abcde', items: ['x'] },
      ['spec.name: Too long: may not be more than 4 bytes'],
    ],
    [
      'checks array items at their index',
      { name: 'a', items: ['x', 2] },
      ['spec.items[1]: Invalid value: 2: spec.items[1] in body must be of type string: "integer"'],
    ],
    [
      'checks map values at their key',
      { name: 'a', items: ['x'], tags: { k: 1 } },
      ['spec.tags[k]: Invalid value: 1: spec.tags[k] in body must be of type string: "integer"'],
    ],
    [
      'rejects an array where an object belongs',
      [],
      ['spec: Invalid value: []: spec in body must be of type object: "array"'],
    ],
  ];
  for (const [name, value, want] of cases) it(name, () => assert.deepEqual(run(value, schema).errors, want));

  it('returns undeclared fields for the caller to warn about, without erring', () => {
    assert.deepEqual(run({ name: 'a', items: ['x'], nmae: 'b', any: { free: 1 } }, schema), {
      errors: [],
      unknown: ['spec.nmae'],
    });
  });
});

describe('the policy and cluster schemas', () => {
  it('require at least one resource selector on a propagation policy', () => {
    assert.deepEqual(run({}, PROPAGATION_SPEC).errors, ['spec.resourceSelectors: Required value']);
    assert.deepEqual(run({ resourceSelectors: [] }, PROPAGATION_SPEC).errors, [
      'spec.resourceSelectors: Invalid value: 0: spec.resourceSelectors in body should have at least 1 items',
    ]);
  });

  it('require apiVersion and kind in every resource selector', () => {
    assert.deepEqual(run({ resourceSelectors: [{ name: 'x' }] }, PROPAGATION_SPEC).errors, [
      'spec.resourceSelectors[0].apiVersion: Required value',
      'spec.resourceSelectors[0].kind: Required value',
    ]);
  });

  it('hold propagation enums to the CRD values', () => {
    const spec = {
      resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
      conflictResolution: 'Replace',
      placement: {
        spreadConstraints: [{ spreadByField: 'rack' }],
        replicaScheduling: { replicaSchedulingType: 'Split' },
      },
    };
    assert.deepEqual(run(spec, PROPAGATION_SPEC).errors, [
      'spec.placement.spreadConstraints[0].spreadByField: Unsupported value: "rack": supported values: "cluster", "region", "zone", "provider"',
      'spec.placement.replicaScheduling.replicaSchedulingType: Unsupported value: "Split": supported values: "Duplicated", "Divided"',
      'spec.conflictResolution: Unsupported value: "Replace": supported values: "Abort", "Overwrite"',
    ]);
  });

  it('require a weight of at least 1 and a target in static weights', () => {
    const spec = {
      resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
      placement: { replicaScheduling: { weightPreference: { staticWeightList: [{ weight: 0 }] } } },
    };
    assert.deepEqual(run(spec, PROPAGATION_SPEC).errors, [
      'spec.placement.replicaScheduling.weightPreference.staticWeightList[0].targetCluster: Required value',
      'spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: Invalid value: 0: spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight in body should be greater than or equal to 1',
    ]);
  });

  it('limit affinity names to 32 characters', () => {
    const spec = {
      resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
      placement: { clusterAffinities: [{ affinityName: 'a'.repeat(33) }] },
    };
    assert.deepEqual(run(spec, PROPAGATION_SPEC).errors, [
      'spec.placement.clusterAffinities[0].affinityName: Too long: may not be more than 32 bytes',
    ]);
  });

  it('require overriders in every override rule, and operators in every overrider', () => {
    const spec = {
      overrideRules: [
        { targetCluster: {} },
        { overriders: { plaintext: [{ path: '/a' }], imageOverrider: [{ component: 'Digest', operator: 'replace' }] } },
      ],
    };
    assert.deepEqual(run(spec, OVERRIDE_SPEC).errors, [
      'spec.overrideRules[0].overriders: Required value',
      'spec.overrideRules[1].overriders.plaintext[0].operator: Required value',
      'spec.overrideRules[1].overriders.imageOverrider[0].component: Unsupported value: "Digest": supported values: "Registry", "Repository", "Tag"',
    ]);
  });

  it('allow only add and remove for command and args overriders', () => {
    const spec = {
      overrideRules: [{ overriders: { argsOverrider: [{ containerName: 'c', operator: 'replace', value: ['a'] }] } }],
    };
    assert.deepEqual(run(spec, OVERRIDE_SPEC).errors, [
      'spec.overrideRules[0].overriders.argsOverrider[0].operator: Unsupported value: "replace": supported values: "add", "remove"',
    ]);
  });

  it('accept any JSON as a plaintext or patch value', () => {
    const spec = {
      overrideRules: [{ overriders: { plaintext: [{ path: '/a', operator: 'add', value: { x: [1, null, 'y'] } }] } }],
    };
    assert.deepEqual(run(spec, OVERRIDE_SPEC), { errors: [], unknown: [] });
  });

  it('require key and effect on cluster taints', () => {
    assert.deepEqual(run({ taints: [{ value: 'x' }] }, CLUSTER_SPEC).errors, [
      'spec.taints[0].key: Required value',
      'spec.taints[0].effect: Required value',
    ]);
  });
});
