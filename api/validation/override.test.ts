import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterOverridePolicy, overridePolicy, selectDeployment, type Obj } from '../../test/builders.js';
import { formatFieldError } from './errors.js';
import { validateObject, type ValidationContext } from './index.js';
import { emptyOverriders, MAX_PATH_BYTES, MAX_TEMPLATED_BYTES } from './override.js';

/** An OverridePolicy in namespace "shop" with one rule holding `overriders`. */
const op = (overriders: Obj, targetCluster?: Obj): Obj =>
  overridePolicy('op', 'shop', [{ ...(targetCluster ? { targetCluster } : {}), overriders }]);
const errorsOf = (o: unknown, ctx?: ValidationContext): string[] => validateObject(o, ctx).errors.map(formatFieldError);
const R = 'spec.overrideRules[0].overriders';
const NAME_PART = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`;

describe("Karmada's override rules", () => {
  const cases: Array<[string, Obj, string[]]> = [
    ['accepts a plaintext remove without a value', { plaintext: [{ path: '/spec/optional', operator: 'remove' }] }, []],
    [
      'denies an annotation key with a tilde',
      { annotationsOverrider: [{ operator: 'add', value: { 'team~id': 'x' } }] },
      [`${R}.annotationsOverrider[0].value: Invalid value: "team~id": ${NAME_PART}`],
    ],
    [
      'denies a label key with a tilde',
      { labelsOverrider: [{ operator: 'add', value: { 'team~id': 'x' } }] },
      [`${R}.labelsOverrider[0].value: Invalid value: "team~id": ${NAME_PART}`],
    ],
    [
      'denies a label value that is not a label value',
      { labelsOverrider: [{ operator: 'add', value: { team: 'a b' } }] },
      [
        `${R}.labelsOverrider[0].value: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      ],
    ],
    [
      'denies an image predicate path without a leading slash',
      { imageOverrider: [{ predicate: { path: 'spec/image' }, component: 'Tag', operator: 'replace', value: 'v2' }] },
      [
        `${R}.imageOverrider[0].predicate.path: Invalid value: "spec/image": JSON pointer must be empty or start with a "/"`,
      ],
    ],
    [
      'denies a field overrider with both JSON and YAML, showing the overrider',
      {
        fieldOverrider: [
          {
            fieldPath: '/data/cfg',
            json: [{ subPath: '/a', operator: 'remove' }],
            yaml: [{ subPath: '/a', operator: 'remove' }],
          },
        ],
      },
      [
        `${R}.fieldOverrider[0]: Invalid value: {"fieldPath":"/data/cfg","json":[{"subPath":"/a","operator":"remove"}],"yaml":[{"subPath":"/a","operator":"remove"}]}: FieldOverrider has both YAML and JSON set. Only one is allowed`,
      ],
    ],
    [
      'denies a field overrider with neither JSON nor YAML',
      { fieldOverrider: [{ fieldPath: '/data/cfg', json: [] }] },
      [`${R}.fieldOverrider[0]: Required value: FieldOverrider must have either JSON or YAML set`],
    ],
    [
      'denies field and sub paths that are not pointers',
      { fieldOverrider: [{ fieldPath: 'data', yaml: [{ subPath: 'a', operator: 'remove' }] }] },
      [
        `${R}.fieldOverrider[0].fieldPath: Invalid value: "data": JSON pointer must be empty or start with a "/"`,
        `${R}.fieldOverrider[0].yaml[0].subPath: Invalid value: "a": JSON pointer must be empty or start with a "/"`,
      ],
    ],
    [
      'requires a patch value for add',
      { fieldOverrider: [{ fieldPath: '/data/cfg', json: [{ subPath: '/a', operator: 'add' }] }] },
      [`${R}.fieldOverrider[0].json[0].value: Invalid value: null: value is required for add or replace operation`],
    ],
    [
      'reads a null patch value as none',
      { fieldOverrider: [{ fieldPath: '/data/cfg', json: [{ subPath: '/a', operator: 'replace', value: null }] }] },
      [`${R}.fieldOverrider[0].json[0].value: Invalid value: null: value is required for add or replace operation`],
    ],
    [
      'forbids a patch value for remove',
      {
        fieldOverrider: [
          { fieldPath: '/data/cfg', json: [{ subPath: '/a', operator: 'remove', value: { db: 'new' } }] },
        ],
      },
      [`${R}.fieldOverrider[0].json[0].value: Invalid value: {"db":"new"}: value is not allowed for remove operation`],
    ],
    [
      'accepts an empty string as a value',
      { fieldOverrider: [{ fieldPath: '/data/cfg', yaml: [{ subPath: '/a', operator: 'replace', value: '' }] }] },
      [],
    ],
  ];
  for (const [name, overriders, want] of cases) it(name, () => assert.deepEqual(errorsOf(op(overriders)), want));

  it('denies an unsupported field selector key in a rule target', () => {
    assert.deepEqual(
      errorsOf(op({}, { fieldSelector: { matchExpressions: [{ key: 'foo', operator: 'In', values: ['x'] }] } })),
      [
        'spec.overrideRules[0].targetCluster.fieldSelector: Invalid value: {"matchExpressions":[{"key":"foo","operator":"In","values":["x"]}]}: unsupported key "foo", must be provider, region, or zone',
      ],
    );
  });

  it('denies the deprecated targetCluster beside overrideRules, even an empty rule list', () => {
    const policy = clusterOverridePolicy('cop', []);
    (policy.spec as Obj).targetCluster = { clusterNames: ['m1'] };
    assert.deepEqual(errorsOf(policy), [
      `spec.targetCluster: Invalid value: {"clusterNames":["m1"]}: overrideRules and targetCluster can't co-exist`,
    ]);
  });

  it('denies the deprecated overriders beside overrideRules, but not when only field overriders are set', () => {
    const policy = clusterOverridePolicy('cop', []);
    (policy.spec as Obj).overriders = { plaintext: [{ path: '/a', operator: 'remove' }] };
    assert.deepEqual(errorsOf(policy), [
      `spec.overriders: Invalid value: {"plaintext":[{"path":"/a","operator":"remove"}]}: overrideRules and overriders can't co-exist`,
    ]);
    (policy.spec as Obj).overriders = {
      fieldOverrider: [{ fieldPath: '/data/a', json: [{ subPath: '/x', operator: 'remove' }] }],
    };
    assert.deepEqual(errorsOf(policy), []);
  });

  it('denies a selector naming another namespace than the override policy', () => {
    const policy = overridePolicy('op', 'shop', [], [{ ...selectDeployment(), namespace: 'other' }]);
    assert.deepEqual(errorsOf(policy), [
      'spec.resourceSelectors[0].namespace: Invalid value: "other": namespace of resource selector must be the same as the namespace of the policy',
    ]);
  });

  it('collects every error of a rule instead of stopping at the first', () => {
    const errs = errorsOf(
      op({
        labelsOverrider: [{ operator: 'add', value: { '-a': 'x' } }],
        imageOverrider: [{ predicate: { path: 'x' }, component: 'Tag', operator: 'remove' }],
      }),
    );
    assert.equal(errs.length, 2);
  });
});

describe('emptyOverriders', () => {
  it('ignores field overriders, as Karmada does', () =>
    assert.equal(emptyOverriders({ fieldOverrider: [{ fieldPath: '/a' }] }), true));
  it('is false once any other overrider list has an item', () =>
    assert.equal(emptyOverriders({ commandOverrider: [{ containerName: 'c', operator: 'add' }] }), false));
});

describe("Flotilla's override rules", () => {
  const cases: Array<[string, Obj, string[]]> = [
    [
      'accepts keyed list segments in paths',
      { plaintext: [{ path: '/spec/template/spec/containers[name=web]/image', operator: 'replace', value: 'nginx' }] },
      [],
    ],
    [
      'denies a plaintext path without a leading slash',
      { plaintext: [{ path: 'spec/replicas', operator: 'replace', value: 2 }] },
      [`${R}.plaintext[0].path: Invalid value: "spec/replicas": JSON pointer must be empty or start with a "/"`],
    ],
    [
      'denies a prototype segment in a plaintext path',
      { plaintext: [{ path: '/metadata/__proto__/polluted', operator: 'add', value: 1 }] },
      [
        `${R}.plaintext[0].path: Invalid value: "/metadata/__proto__/polluted": path "/metadata/__proto__/polluted" has the segment "__proto__", which is not allowed`,
      ],
    ],
    [
      'denies a prototype segment in a field overrider sub path',
      { fieldOverrider: [{ fieldPath: '/data/cfg', json: [{ subPath: '/constructor', operator: 'remove' }] }] },
      [
        `${R}.fieldOverrider[0].json[0].subPath: Invalid value: "/constructor": path "/constructor" has the segment "constructor", which is not allowed`,
      ],
    ],
    [
      'denies a bad escape in an image predicate path',
      { imageOverrider: [{ predicate: { path: '/spec/a~2b' }, component: 'Tag', operator: 'remove' }] },
      [
        `${R}.imageOverrider[0].predicate.path: Invalid value: "/spec/a~2b": invalid escape "~2" in path "/spec/a~2b": only ~0 and ~1 are allowed`,
      ],
    ],
    [
      'denies an empty field path, which can never name a string',
      { fieldOverrider: [{ fieldPath: '', yaml: [{ subPath: '/a', operator: 'remove' }] }] },
      [
        `${R}.fieldOverrider[0].fieldPath: Invalid value: "": must name a field: the empty path is the whole object, which is not a string`,
      ],
    ],
    [
      'requires a plaintext value for replace',
      { plaintext: [{ path: '/spec/replicas', operator: 'replace' }] },
      [`${R}.plaintext[0].value: Invalid value: null: value is required for add or replace operation`],
    ],
    [
      'forbids a plaintext value for remove',
      { plaintext: [{ path: '/spec/replicas', operator: 'remove', value: 3 }] },
      [`${R}.plaintext[0].value: Invalid value: 3: value is not allowed for remove operation`],
    ],
    [
      'denies an unknown variable deep inside a plaintext value, at its own path',
      {
        plaintext: [
          {
            path: '/spec/template/spec/containers/0/env',
            operator: 'add',
            value: [
              { name: 'A', value: 'ok' },
              { name: 'B', value: '${cluster.nmae}' },
            ],
          },
        ],
      },
      [
        `${R}.plaintext[0].value[1].value: Invalid value: "\${cluster.nmae}": unknown variable "\${cluster.nmae}"; known variables: \${cluster.name}, \${cluster.region}, \${cluster.provider}, \${cluster.zone}, \${cluster.labels['<key>']}`,
      ],
    ],
    [
      'denies an unterminated variable in an args value',
      { argsOverrider: [{ containerName: 'c', operator: 'add', value: ['--x', '--zone=${cluster.zone'] }] },
      [
        `${R}.argsOverrider[0].value[1]: Invalid value: "--zone=\${cluster.zone": unterminated variable in "--zone=\${cluster.zone": "\${" needs a closing "}" (write "$\${" for a literal "\${")`,
      ],
    ],
    [
      'accepts known variables everywhere values go',
      {
        imageOverrider: [
          { component: 'Registry', operator: 'replace', value: '${cluster.region}.registry.example.com' },
        ],
        commandOverrider: [{ containerName: 'c', operator: 'add', value: ['--cluster=${cluster.name}'] }],
        labelsOverrider: [
          { operator: 'add', value: { cluster: '${cluster.name}', tier: "${cluster.labels['tier']}" } },
        ],
        annotationsOverrider: [{ operator: 'add', value: { note: 'in ${cluster.provider}' } }],
        fieldOverrider: [
          { fieldPath: '/data/cfg', yaml: [{ subPath: '/region', operator: 'replace', value: '${cluster.region}' }] },
        ],
        plaintext: [{ path: '/metadata/labels/zone', operator: 'add', value: '${cluster.zone}' }],
      },
      [],
    ],
    [
      'checks a templated label value with its variables replaced by a sample',
      { labelsOverrider: [{ operator: 'add', value: { zone: '${cluster.zone}-' } }] },
      [
        `${R}.labelsOverrider[0].value: Invalid value: "\${cluster.zone}-": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      ],
    ],
    [
      'denies an unknown variable in an annotation value, at its key',
      { annotationsOverrider: [{ operator: 'add', value: { note: '${region}' } }] },
      [
        `${R}.annotationsOverrider[0].value[note]: Invalid value: "\${region}": unknown variable "\${region}"; known variables: \${cluster.name}, \${cluster.region}, \${cluster.provider}, \${cluster.zone}, \${cluster.labels['<key>']}`,
      ],
    ],
  ];
  for (const [name, overriders, want] of cases) it(name, () => assert.deepEqual(errorsOf(op(overriders)), want));

  it('holds the deprecated overriders to the same rules', () => {
    const policy = clusterOverridePolicy('cop', []);
    delete (policy.spec as Obj).overrideRules;
    (policy.spec as Obj).overriders = {
      plaintext: [{ path: 'spec', operator: 'add', value: 1 }],
      labelsOverrider: [{ operator: 'add', value: { '-x': 'y' } }],
    };
    assert.deepEqual(errorsOf(policy), [
      `spec.overriders.labelsOverrider[0].value: Invalid value: "-x": ${NAME_PART}`,
      'spec.overriders.plaintext[0].path: Invalid value: "spec": JSON pointer must be empty or start with a "/"',
    ]);
  });
});

describe('override warnings', () => {
  const warningsOf = (o: unknown, ctx?: ValidationContext): string[] => validateObject(o, ctx).warnings;

  it('names rule targets that are not known clusters, only when clusters are known', () => {
    const policy = op({ plaintext: [{ path: '/a', operator: 'remove' }] }, { clusterNames: ['m1', 'mx'] });
    assert.deepEqual(warningsOf(policy), []);
    assert.deepEqual(warningsOf(policy, { clusters: [{ metadata: { name: 'm1' } }] }), [
      'spec.overrideRules[0].targetCluster.clusterNames[1]: cluster "mx" is not among the known clusters (m1)',
    ]);
  });

  it('warns when two rules write one path for the same clusters, whatever spelling the path has', () => {
    const policy = overridePolicy('op', 'shop', [
      {
        targetCluster: { clusterNames: ['m1'] },
        overriders: { plaintext: [{ path: '/metadata/annotations/a~1b', operator: 'add', value: 'x' }] },
      },
      {
        targetCluster: { clusterNames: ['m2'] },
        overriders: { plaintext: [{ path: '/metadata/annotations/a~1b', operator: 'add', value: 'y' }] },
      },
      {
        targetCluster: { clusterNames: ['m1'] },
        overriders: { plaintext: [{ path: '/metadata/annotations/a~1b', operator: 'remove' }] },
      },
    ]);
    assert.deepEqual(warningsOf(policy), [
      'spec.overrideRules[2].overriders.plaintext[0].path: "/metadata/annotations/a~1b" is also written by spec.overrideRules[0].overriders.plaintext[0].path for the same target clusters; rules apply in order, so this one decides',
    ]);
  });

  it('warns when two rules patch one sub path of one field for every cluster', () => {
    const patch = { fieldPath: '/data/cfg', yaml: [{ subPath: '/db', operator: 'replace', value: 'a' }] };
    const policy = overridePolicy('op', 'shop', [
      { overriders: { fieldOverrider: [patch] } },
      { overriders: { fieldOverrider: [patch] } },
    ]);
    assert.deepEqual(warningsOf(policy), [
      'spec.overrideRules[1].overriders.fieldOverrider[0].yaml[0].subPath: "/db" in "/data/cfg" is also written by spec.overrideRules[0].overriders.fieldOverrider[0].yaml[0].subPath for the same target clusters; rules apply in order, so this one decides',
    ]);
  });

  it('says nothing about one rule writing a path twice', () => {
    assert.deepEqual(
      warningsOf(
        op({
          plaintext: [
            { path: '/a', operator: 'add', value: 1 },
            { path: '/a', operator: 'replace', value: 2 },
          ],
        }),
      ),
      [],
    );
  });

  it('asks for the deprecated top-level fields to move into overrideRules', () => {
    const policy = clusterOverridePolicy('cop', []);
    delete (policy.spec as Obj).overrideRules;
    Object.assign(policy.spec as Obj, {
      targetCluster: { clusterNames: ['m1'] },
      overriders: { plaintext: [{ path: '/a', operator: 'remove' }] },
    });
    assert.deepEqual(warningsOf(policy), [
      'spec.targetCluster is deprecated: move it into spec.overrideRules[].targetCluster',
      'spec.overriders is deprecated: move it into spec.overrideRules[].overriders',
    ]);
  });

  it('does not call an empty overriders block deprecated use', () => {
    const policy = clusterOverridePolicy('cop', []);
    (policy.spec as Obj).overriders = {};
    assert.deepEqual(warningsOf(policy), []);
  });

  it('warns about a Tag replacement that is neither a tag nor a digest', () => {
    assert.deepEqual(warningsOf(op({ imageOverrider: [{ component: 'Tag', operator: 'replace', value: 'v1:2' }] })), [
      `${R}.imageOverrider[0].value: "v1:2" is neither a tag nor a digest, so replacing the Tag with it leaves the image unchanged`,
    ]);
  });
});

describe('length limits on paths and templated values', () => {
  const long = (n: number, s = 'a') => s.repeat(n);
  const PATH_MAX = `Too long: may not be more than ${MAX_PATH_BYTES} bytes`;
  const VALUE_MAX = `Too long: may not be more than ${MAX_TEMPLATED_BYTES} bytes`;
  const templated = (bytes: number) => `\${cluster.name}${long(bytes - '${cluster.name}'.length)}`;
  const cases: Array<[string, Obj, string[]]> = [
    [
      'accepts a plaintext path of exactly the limit',
      { plaintext: [{ path: `/${long(MAX_PATH_BYTES - 1)}`, operator: 'remove' }] },
      [],
    ],
    [
      'denies a plaintext path one byte over',
      { plaintext: [{ path: `/${long(MAX_PATH_BYTES)}`, operator: 'remove' }] },
      [`${R}.plaintext[0].path: ${PATH_MAX}`],
    ],
    [
      'counts a path in UTF-8 bytes',
      { plaintext: [{ path: `/${long(1366, '€')}`, operator: 'remove' }] },
      [`${R}.plaintext[0].path: ${PATH_MAX}`],
    ],
    [
      'denies a 2 MB plaintext path',
      { plaintext: [{ path: `/${long(2_000_000)}`, operator: 'remove' }] },
      [`${R}.plaintext[0].path: ${PATH_MAX}`],
    ],
    [
      'denies long field and sub paths',
      { fieldOverrider: [{ fieldPath: `/${long(5000)}`, json: [{ subPath: `/${long(5000)}`, operator: 'remove' }] }] },
      [`${R}.fieldOverrider[0].fieldPath: ${PATH_MAX}`, `${R}.fieldOverrider[0].json[0].subPath: ${PATH_MAX}`],
    ],
    [
      'denies a long image predicate path',
      {
        imageOverrider: [{ predicate: { path: `/${long(5000)}` }, component: 'Tag', operator: 'replace', value: 'v2' }],
      },
      [`${R}.imageOverrider[0].predicate.path: ${PATH_MAX}`],
    ],
    [
      'accepts a templated value of exactly the limit',
      { plaintext: [{ path: '/data/a', operator: 'add', value: templated(MAX_TEMPLATED_BYTES) }] },
      [],
    ],
    [
      'denies a templated plaintext value one byte over',
      { plaintext: [{ path: '/data', operator: 'add', value: { a: templated(MAX_TEMPLATED_BYTES + 1) } }] },
      [`${R}.plaintext[0].value.a: ${VALUE_MAX}`],
    ],
    [
      'accepts a long value without variables',
      { plaintext: [{ path: '/data/a', operator: 'add', value: long(2_000_000) }] },
      [],
    ],
    [
      'denies a long templated json patch value',
      {
        fieldOverrider: [
          { fieldPath: '/data/c', json: [{ subPath: '/a', operator: 'add', value: [templated(2_000_000)] }] },
        ],
      },
      [`${R}.fieldOverrider[0].json[0].value[0]: ${VALUE_MAX}`],
    ],
    [
      'denies a long templated image value',
      { imageOverrider: [{ component: 'Registry', operator: 'replace', value: templated(2_000_000) }] },
      [`${R}.imageOverrider[0].value: ${VALUE_MAX}`],
    ],
    [
      'denies a long templated command value',
      { commandOverrider: [{ containerName: 'c', operator: 'add', value: ['x', templated(2_000_000)] }] },
      [`${R}.commandOverrider[0].value[1]: ${VALUE_MAX}`],
    ],
    [
      'denies a long templated label value',
      { labelsOverrider: [{ operator: 'add', value: { team: templated(2_000_000) } }] },
      [`${R}.labelsOverrider[0].value[team]: ${VALUE_MAX}`],
    ],
  ];
  for (const [name, overriders, want] of cases) it(name, () => assert.deepEqual(errorsOf(op(overriders)), want));

  it('denies a long templated annotation value besides the annotation size limit', () => {
    assert.deepEqual(
      errorsOf(op({ annotationsOverrider: [{ operator: 'add', value: { 'example.com/x': templated(2_000_000) } }] })),
      [
        `${R}.annotationsOverrider[0].value: Too long: may not be more than 262144 bytes`,
        `${R}.annotationsOverrider[0].value[example.com/x]: ${VALUE_MAX}`,
      ],
    );
  });
  it('does not repeat a long path in an overlap warning', () => {
    const path = `/${long(2_000_000)}`;
    const policy = overridePolicy('op', 'shop', [
      { overriders: { plaintext: [{ path, operator: 'remove' }] } },
      { overriders: { plaintext: [{ path, operator: 'remove' }] } },
    ]);
    assert.deepEqual(validateObject(policy).warnings, []);
  });
});
