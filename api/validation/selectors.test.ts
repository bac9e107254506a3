import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatFieldError } from './errors.js';
import {
  apiVersionKindWarning,
  checkResourceSelectors,
  fieldSelectorProblem,
  isEmptyAffinity,
  unknownClusterWarnings,
  validateClusterAffinity,
  validateLabelSelector,
} from './selectors.js';

const messages = (errs: Parameters<typeof formatFieldError>[0][]): string[] => errs.map(formatFieldError);

describe('validateLabelSelector', () => {
  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ['accepts an empty selector', {}, []],
    [
      'accepts In with values and Exists without',
      {
        matchExpressions: [
          { key: 'app', operator: 'In', values: ['web'] },
          { key: 'tier', operator: 'Exists' },
        ],
      },
      [],
    ],
    [
      'requires values for In',
      { matchExpressions: [{ key: 'app', operator: 'In' }] },
      ["s.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
    ],
    [
      'requires values for NotIn even when the list is empty',
      { matchExpressions: [{ key: 'app', operator: 'NotIn', values: [] }] },
      ["s.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
    ],
    [
      'forbids values for DoesNotExist',
      { matchExpressions: [{ key: 'app', operator: 'DoesNotExist', values: ['x'] }] },
      ["s.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
    ],
    [
      'rejects an unknown operator',
      { matchExpressions: [{ key: 'app', operator: 'Like', values: ['x'] }] },
      ['s.matchExpressions[0].operator: Invalid value: "Like": not a valid selector operator'],
    ],
    [
      'rejects an empty key',
      { matchExpressions: [{ key: '', operator: 'Exists' }] },
      [
        's.matchExpressions[0].key: Invalid value: "": name part must be non-empty',
        `s.matchExpressions[0].key: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      ],
    ],
  ];
  for (const [name, sel, want] of cases)
    it(name, () => assert.deepEqual(messages(validateLabelSelector(sel, 's')), want));

  it('checks matchLabels as labels and expression values as label values', () => {
    const errs = validateLabelSelector(
      { matchLabels: { 'a b': 'ok' }, matchExpressions: [{ key: 'k', operator: 'In', values: ['ok', 'not ok'] }] },
      's',
    );
    assert.deepEqual(
      errs.map((e) => [e.field, e.value]),
      [
        ['s.matchLabels', 'a b'],
        ['s.matchExpressions[0].values[1]', 'not ok'],
      ],
    );
  });
});

describe('fieldSelectorProblem', () => {
  const cases: Array<[string, unknown[], string | undefined]> = [
    [
      'accepts provider, region and zone with In and NotIn',
      [
        { key: 'provider', operator: 'In' },
        { key: 'region', operator: 'NotIn' },
        { key: 'zone', operator: 'In' },
      ],
      undefined,
    ],
    [
      'names an unsupported key',
      [{ key: 'name', operator: 'In' }],
      'unsupported key "name", must be provider, region, or zone',
    ],
    [
      'names an unsupported operator',
      [{ key: 'zone', operator: 'Exists' }],
      'unsupported operator "Exists", must be In or NotIn',
    ],
    [
      'checks the key before the operator',
      [{ key: 'rack', operator: 'Gt' }],
      'unsupported key "rack", must be provider, region, or zone',
    ],
    [
      'reports only the first bad expression',
      [
        { key: 'provider', operator: 'Gt' },
        { key: 'foo', operator: 'In' },
      ],
      'unsupported operator "Gt", must be In or NotIn',
    ],
  ];
  for (const [name, expressions, want] of cases)
    it(name, () => assert.equal(fieldSelectorProblem({ matchExpressions: expressions }), want));
});

describe('validateClusterAffinity', () => {
  it('reports a field selector problem once, at the field selector, with the selector as the value', () => {
    const fieldSelector = { matchExpressions: [{ key: 'foo', operator: 'In', values: ['a'] }] };
    assert.deepEqual(messages(validateClusterAffinity({ fieldSelector }, 'spec.targetCluster')), [
      'spec.targetCluster.fieldSelector: Invalid value: {"matchExpressions":[{"key":"foo","operator":"In","values":["a"]}]}: unsupported key "foo", must be provider, region, or zone',
    ]);
  });
  it('requires values for In field expressions', () => {
    assert.deepEqual(
      messages(
        validateClusterAffinity({ fieldSelector: { matchExpressions: [{ key: 'region', operator: 'In' }] } }, 't'),
      ),
      [
        "t.fieldSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      ],
    );
  });
  it('validates the label selector under its own path', () => {
    assert.deepEqual(
      messages(
        validateClusterAffinity(
          { labelSelector: { matchExpressions: [{ key: 'env', operator: 'Is', values: ['x'] }] } },
          't',
        ),
      ),
      ['t.labelSelector.matchExpressions[0].operator: Invalid value: "Is": not a valid selector operator'],
    );
  });
});

describe('isEmptyAffinity', () => {
  it('is true for an affinity that constrains nothing', () =>
    assert.equal(isEmptyAffinity({ affinityName: 'a', clusterNames: [] }), true));
  it('is false once any constraint is present', () => {
    for (const a of [{ clusterNames: ['m'] }, { exclude: ['m'] }, { labelSelector: {} }, { fieldSelector: {} }])
      assert.equal(isEmptyAffinity(a), false);
  });
});

describe('unknownClusterWarnings', () => {
  const affinity = { clusterNames: ['member1', 'membr2'], exclude: ['gone'] };
  it('says nothing when the clusters are not known', () =>
    assert.deepEqual(unknownClusterWarnings(affinity, 'a', undefined), []));
  it('names each unknown cluster in clusterNames and exclude with its path', () => {
    assert.deepEqual(unknownClusterWarnings(affinity, 'a', new Set(['member1', 'member2'])), [
      'a.clusterNames[1]: cluster "membr2" is not among the known clusters (member1, member2)',
      'a.exclude[0]: cluster "gone" is not among the known clusters (member1, member2)',
    ]);
  });
});

describe('apiVersionKindWarning', () => {
  const cases: Array<[string, string, string, boolean]> = [
    ['is quiet for the current apiVersion', 'apps/v1', 'Deployment', false],
    ['warns for a retired group', 'extensions/v1beta1', 'Deployment', true],
    ['warns for the core group on an apps kind', 'v1', 'Deployment', true],
    ['warns for a retired version of the right group', 'networking.k8s.io/v1beta1', 'Ingress', true],
    ['accepts every served version of a kind', 'autoscaling/v1', 'HorizontalPodAutoscaler', false],
    ['leaves custom groups alone, whatever the kind is called', 'serving.knative.dev/v1', 'Service', false],
    ['leaves kinds it does not know alone', 'v1', 'Widget', false],
    ['treats a kind named like an object property as unknown', 'v1', 'constructor', false],
  ];
  for (const [name, apiVersion, kind, warns] of cases) {
    it(name, () => assert.equal(apiVersionKindWarning({ apiVersion, kind }, 's') !== undefined, warns));
  }
  it('says which apiVersion the kind is served under', () => {
    assert.match(
      apiVersionKindWarning({ apiVersion: 'v1', kind: 'CronJob' }, 's') ?? '',
      /^s: kind CronJob is served as batch\/v1, not v1;/,
    );
  });
});

describe('checkResourceSelectors', () => {
  it('denies a selector in another namespace than a namespaced policy', () => {
    const r = checkResourceSelectors(
      [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'b' }],
      'spec.resourceSelectors',
      'a',
    );
    assert.deepEqual(messages(r.errors), [
      'spec.resourceSelectors[0].namespace: Invalid value: "b": namespace of resource selector must be the same as the namespace of the policy',
    ]);
  });
  it('lets a cluster-scoped policy select any namespace', () => {
    assert.deepEqual(
      checkResourceSelectors([{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'b' }], 'r', undefined).errors,
      [],
    );
  });
  it('warns that a label selector beside a name is ignored', () => {
    const r = checkResourceSelectors(
      [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', labelSelector: { matchLabels: { a: 'b' } } }],
      'r',
      undefined,
    );
    assert.deepEqual(r.warnings, ['r[0]: labelSelector is ignored because name is set']);
  });
});
