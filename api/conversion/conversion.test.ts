import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';

import { CONVERSION_ANNOTATION, ConversionError, KARMADA_V1ALPHA1, V1ALPHA1, V1BETA1, convertObject } from './index.js';

type Obj = Record<string, unknown>;

// ---- generators ---------------------------------------------------------------------------------------
// Objects are passed through JSON once, as they arrive over the wire (plain prototypes, no -0).

const wire = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T> => arb.map((v) => JSON.parse(JSON.stringify(v)) as T);
const rec = <T extends Obj>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }, required: (keyof T)[] = []) =>
  fc.record(model, { requiredKeys: required, noNullPrototype: true });

const dnsName = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/);
const labelKey = fc.oneof(
  dnsName,
  dnsName.map((n) => `example.com/${n}`),
);
const stringMap = fc.dictionary(labelKey, fc.string({ maxLength: 8 }), { maxKeys: 3, noNullPrototype: true });
const anyJSON = fc.jsonValue({ maxDepth: 2 });
const operator = fc.constantFrom('add', 'remove', 'replace');

const metadata = (namespaced: boolean) =>
  rec(
    {
      name: dnsName,
      namespace: namespaced ? dnsName : fc.constant(undefined as unknown as string),
      labels: stringMap,
      annotations: fc.oneof(stringMap, fc.constant({})),
      uid: fc.uuid(),
      resourceVersion: fc.nat().map(String),
      generation: fc.nat(),
    },
    namespaced ? ['name', 'namespace'] : ['name'],
  ).map((m) => {
    if (!namespaced) delete (m as Obj).namespace;
    return m;
  });

const labelSelector = rec({
  matchLabels: stringMap,
  matchExpressions: fc.array(
    rec(
      {
        key: labelKey,
        operator: fc.constantFrom('In', 'NotIn', 'Exists'),
        values: fc.array(dnsName, { maxLength: 2 }),
      },
      ['key', 'operator'],
    ),
    { maxLength: 2 },
  ),
});

const resourceSelector = rec(
  {
    apiVersion: fc.constantFrom('apps/v1', 'v1', 'batch/v1'),
    kind: fc.constantFrom('Deployment', 'ConfigMap', 'Job'),
    namespace: dnsName,
    name: dnsName,
    labelSelector,
  },
  ['apiVersion', 'kind'],
);

const clusterAffinity = rec({
  clusterNames: fc.array(dnsName, { maxLength: 3 }),
  exclude: fc.array(dnsName, { maxLength: 2 }),
  labelSelector,
  fieldSelector: rec({
    matchExpressions: fc.array(
      rec(
        {
          key: fc.constantFrom('region', 'zone', 'provider'),
          operator: fc.constantFrom('In', 'NotIn'),
          values: fc.array(dnsName, { maxLength: 2 }),
        },
        ['key', 'operator'],
      ),
      { maxLength: 2 },
    ),
  }),
});

const patchOperation = rec({ subPath: fc.constantFrom('/a', '/b/c', ''), operator, value: anyJSON }, [
  'subPath',
  'operator',
]);

const overriders = rec({
  plaintext: fc.array(
    rec(
      {
        path: fc.constantFrom('/spec/replicas', '/metadata/labels/x', '/spec/template/spec/containers[name=web]/image'),
        operator,
        value: anyJSON,
      },
      ['path', 'operator'],
    ),
    { maxLength: 3 },
  ),
  imageOverrider: fc.array(
    rec(
      {
        predicate: rec({ path: fc.constant('/spec/template/spec/containers/0/image') }, ['path']),
        component: fc.constantFrom('Registry', 'Repository', 'Tag'),
        operator,
        value: fc.string({ maxLength: 10 }),
        includeInitContainers: fc.boolean(),
      },
      ['component', 'operator'],
    ),
    { maxLength: 2 },
  ),
  commandOverrider: fc.array(
    rec(
      {
        containerName: dnsName,
        operator: fc.constantFrom('add', 'remove'),
        value: fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
      },
      ['containerName', 'operator'],
    ),
    { maxLength: 2 },
  ),
  argsOverrider: fc.array(
    rec(
      {
        containerName: dnsName,
        operator: fc.constantFrom('add', 'remove'),
        value: fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
      },
      ['containerName', 'operator'],
    ),
    { maxLength: 2 },
  ),
  labelsOverrider: fc.array(rec({ operator, value: stringMap }, ['operator', 'value']), { maxLength: 2 }),
  annotationsOverrider: fc.array(rec({ operator, value: stringMap }, ['operator', 'value']), { maxLength: 2 }),
  fieldOverrider: fc.array(
    rec(
      {
        fieldPath: fc.constantFrom('/data/config.yaml', '/data/app.json'),
        json: fc.array(patchOperation, { maxLength: 2 }),
        yaml: fc.array(patchOperation, { maxLength: 2 }),
      },
      ['fieldPath'],
    ),
    { maxLength: 2 },
  ),
});

const rule = rec({ targetCluster: clusterAffinity, overriders }, ['overriders']);

const placement = rec({
  clusterAffinity,
  clusterAffinities: fc.array(
    fc.tuple(dnsName, clusterAffinity).map(([affinityName, a]) => ({ affinityName, ...a })),
    { maxLength: 2 },
  ),
  clusterTolerations: fc.array(
    rec({
      key: labelKey,
      operator: fc.constantFrom('Exists', 'Equal'),
      value: fc.string({ maxLength: 5 }),
      effect: fc.constantFrom('NoSchedule', 'NoExecute'),
      tolerationSeconds: fc.nat(),
    }),
    { maxLength: 2 },
  ),
  spreadConstraints: fc.array(
    rec({ spreadByField: fc.constantFrom('cluster', 'region'), maxGroups: fc.nat(5), minGroups: fc.nat(5) }),
    { maxLength: 2 },
  ),
  replicaScheduling: rec({
    replicaSchedulingType: fc.constantFrom('Duplicated', 'Divided'),
    replicaDivisionPreference: fc.constantFrom('Aggregated', 'Weighted'),
    weightPreference: rec({
      staticWeightList: fc.array(
        rec({ targetCluster: clusterAffinity, weight: fc.integer({ min: 1, max: 9 }) }, ['targetCluster', 'weight']),
        { maxLength: 2 },
      ),
      dynamicWeight: fc.constant('AvailableReplicas'),
    }),
  }),
});

const propagationSpecBeta = rec(
  {
    resourceSelectors: fc.array(resourceSelector, { minLength: 1, maxLength: 3 }),
    propagateDeps: fc.boolean(),
    placement,
    priority: fc.integer({ min: -5, max: 5 }),
    preemption: fc.constantFrom('Always', 'Never'),
    dependentOverrides: fc.array(dnsName, { maxLength: 2 }),
    schedulerName: fc.constant('default-scheduler'),
    failover: rec({
      application: rec(
        {
          decisionConditions: rec({ tolerationSeconds: fc.nat(600) }),
          purgeMode: fc.constantFrom('Directly', 'Gracefully', 'Never'),
          gracePeriodSeconds: fc.integer({ min: 1, max: 900 }),
        },
        ['decisionConditions'],
      ),
    }),
    conflictResolution: fc.constantFrom('Abort', 'Overwrite'),
    activationPreference: fc.constant('Lazy'),
    suspension: rec({
      dispatching: fc.boolean(),
      dispatchingOnClusters: rec({ clusterNames: fc.array(dnsName, { maxLength: 2 }) }),
    }),
    preserveResourcesOnDeletion: fc.boolean(),
  },
  ['resourceSelectors'],
);

// v1alpha1 adds the deprecated `association`.
const propagationSpecAlpha = fc
  .tuple(propagationSpecBeta, fc.option(fc.boolean(), { nil: undefined }))
  .map(([spec, association]) => (association === undefined ? spec : { ...spec, association }));

const selectorsOfOverride = fc.option(
  fc.oneof(fc.constant([]), fc.array(resourceSelector, { minLength: 1, maxLength: 2 })),
  { nil: undefined },
);
const rulesOfBeta = fc.option(fc.oneof(fc.constant([]), fc.array(rule, { minLength: 1, maxLength: 3 })), {
  nil: undefined,
});

const overrideSpecBeta = fc.tuple(selectorsOfOverride, rulesOfBeta).map(([resourceSelectors, overrideRules]) => {
  const spec: Obj = {};
  if (resourceSelectors !== undefined) spec.resourceSelectors = resourceSelectors;
  if (overrideRules !== undefined) spec.overrideRules = overrideRules;
  return spec;
});

// v1alpha1 may use the deprecated top-level pair, alone or (schema-legal, webhook-denied) next to rules,
// and may write `overrideRules: null`.
const overrideSpecAlpha = fc
  .tuple(
    overrideSpecBeta,
    fc.boolean(),
    fc.option(clusterAffinity, { nil: undefined }),
    fc.option(fc.oneof(overriders, fc.constant({})), { nil: undefined }),
  )
  .map(([spec, nullRules, targetCluster, deprecated]) => {
    const out: Obj = { ...spec };
    if (nullRules && out.overrideRules === undefined) out.overrideRules = null;
    if (targetCluster !== undefined) out.targetCluster = targetCluster;
    if (deprecated !== undefined) out.overriders = deprecated;
    return out;
  });

const KINDS = [
  { kind: 'PropagationPolicy', namespaced: true, propagation: true },
  { kind: 'ClusterPropagationPolicy', namespaced: false, propagation: true },
  { kind: 'OverridePolicy', namespaced: true, propagation: false },
  { kind: 'ClusterOverridePolicy', namespaced: false, propagation: false },
] as const;

const policy = (apiVersion: string) =>
  wire(
    fc.constantFrom(...KINDS).chain(({ kind, namespaced, propagation }) =>
      fc.record({
        apiVersion: fc.constant(apiVersion),
        kind: fc.constant(kind),
        metadata: metadata(namespaced),
        spec:
          apiVersion === V1BETA1
            ? propagation
              ? propagationSpecBeta
              : overrideSpecBeta
            : propagation
              ? propagationSpecAlpha
              : overrideSpecAlpha,
      }),
    ),
  );

const alphaPolicy = policy(V1ALPHA1);
const betaPolicy = policy(V1BETA1);
// Every v1beta1 object a v1alpha1 write can leave in storage, annotation included.
const storedBetaPolicy = fc.oneof(
  betaPolicy,
  alphaPolicy.map((p) => convertObject(p, V1BETA1)),
);

const RUNS = { numRuns: 400 };

// ---- properties ---------------------------------------------------------------------------------------

void describe('conversion round trips', () => {
  void it('returns an equal object for v1alpha1 → v1beta1 → v1alpha1', () => {
    fc.assert(
      fc.property(alphaPolicy, (alpha) => {
        assert.deepStrictEqual(convertObject(convertObject(alpha, V1BETA1), V1ALPHA1), alpha);
      }),
      RUNS,
    );
  });

  void it('returns an equal object for v1beta1 → v1alpha1 → v1beta1', () => {
    fc.assert(
      fc.property(storedBetaPolicy, (beta) => {
        assert.deepStrictEqual(convertObject(convertObject(beta, V1ALPHA1), V1BETA1), beta);
      }),
      RUNS,
    );
  });

  void it('never mutates its input', () => {
    fc.assert(
      fc.property(fc.oneof(alphaPolicy, storedBetaPolicy), fc.constantFrom(V1ALPHA1, V1BETA1), (input, to) => {
        const before = structuredClone(input);
        convertObject(input, to);
        assert.deepStrictEqual(input, before);
      }),
      RUNS,
    );
  });

  void it('changes nothing in metadata but the conversion annotation', () => {
    const withoutAnnotation = (o: Obj): Obj => {
      const m = structuredClone(o.metadata) as Obj;
      const a = m.annotations as Obj | undefined;
      if (a) {
        delete a[CONVERSION_ANNOTATION];
        if (Object.keys(a).length === 0) delete m.annotations;
      }
      return m;
    };
    fc.assert(
      fc.property(alphaPolicy, (alpha) => {
        const beta = convertObject(alpha, V1BETA1);
        assert.deepStrictEqual(withoutAnnotation(beta), withoutAnnotation(alpha));
        assert.equal(beta.kind, alpha.kind);
        assert.equal(beta.apiVersion, V1BETA1);
      }),
      RUNS,
    );
  });

  void it('leaves no deprecated field in a v1beta1 object', () => {
    fc.assert(
      fc.property(alphaPolicy, (alpha) => {
        const spec = convertObject(alpha, V1BETA1).spec as Obj;
        for (const key of ['association', 'targetCluster', 'overriders']) assert.equal(key in spec, false, key);
      }),
      RUNS,
    );
  });

  void it('stores the rules Karmada would apply for a v1alpha1 override policy', () => {
    // Karmada: overrideRules when non-empty, otherwise one rule made of targetCluster + overriders.
    const karmadaRules = (spec: Obj): unknown[] => {
      const rules = spec.overrideRules;
      if (Array.isArray(rules) && rules.length > 0) return rules;
      const r: Obj = {};
      if ('targetCluster' in spec) r.targetCluster = spec.targetCluster;
      r.overriders = 'overriders' in spec ? spec.overriders : {};
      return [r];
    };
    fc.assert(
      fc.property(alphaPolicy, (alpha) => {
        const spec = alpha.spec as Obj;
        if (!alpha.kind.endsWith('OverridePolicy') || !('targetCluster' in spec || 'overriders' in spec)) return;
        assert.deepStrictEqual((convertObject(alpha, V1BETA1).spec as Obj).overrideRules, karmadaRules(spec));
      }),
      RUNS,
    );
  });
});

// ---- examples -----------------------------------------------------------------------------------------

const op = (spec: Obj, metadata: Obj = { name: 'op', namespace: 'apps' }): Obj => ({
  apiVersion: V1ALPHA1,
  kind: 'OverridePolicy',
  metadata,
  spec,
});
const plaintextRule = { plaintext: [{ path: '/spec/replicas', operator: 'replace', value: 3 }] };

void describe('convertObject', () => {
  void it('folds the deprecated targetCluster and overriders into a single rule', () => {
    const beta = convertObject(op({ targetCluster: { clusterNames: ['east'] }, overriders: plaintextRule }), V1BETA1);
    assert.deepStrictEqual(beta.spec, {
      overrideRules: [{ targetCluster: { clusterNames: ['east'] }, overriders: plaintextRule }],
    });
    assert.deepStrictEqual(
      JSON.parse((beta.metadata as { annotations: Record<string, string> }).annotations[CONVERSION_ANNOTATION] ?? ''),
      { folded: {} },
    );
  });

  void it('writes no annotation when v1beta1 can hold everything', () => {
    const alpha = op({ overrideRules: [{ overriders: plaintextRule }] });
    const beta = convertObject(alpha, V1BETA1);
    assert.deepStrictEqual(beta, { ...alpha, apiVersion: V1BETA1 });
  });

  void it('keeps deprecated fields that sit next to rules aside, unused', () => {
    const beta = convertObject(
      op({ overrideRules: [{ overriders: plaintextRule }], overriders: { fieldOverrider: [] } }),
      V1BETA1,
    );
    assert.deepStrictEqual(beta.spec, { overrideRules: [{ overriders: plaintextRule }] });
  });

  void it('moves the deprecated association of a propagation policy into the annotation', () => {
    const alpha = {
      apiVersion: V1ALPHA1,
      kind: 'ClusterPropagationPolicy',
      metadata: { name: 'c' },
      spec: { resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }], association: true },
    };
    const beta = convertObject(alpha, V1BETA1);
    assert.deepStrictEqual(beta.spec, { resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }] });
    assert.deepStrictEqual(beta.metadata, {
      name: 'c',
      annotations: { [CONVERSION_ANNOTATION]: '{"association":true}' },
    });
  });

  void it('reads Karmada documents as v1alpha1', () => {
    const beta = convertObject({ ...op({ overriders: plaintextRule }), apiVersion: KARMADA_V1ALPHA1 }, V1BETA1);
    assert.equal(beta.apiVersion, V1BETA1);
    assert.deepStrictEqual((beta.spec as Obj).overrideRules, [{ overriders: plaintextRule }]);
  });

  void it('restores an object that had no metadata to have none', () => {
    const alpha = { apiVersion: V1ALPHA1, kind: 'ClusterOverridePolicy', spec: { overriders: plaintextRule } };
    const beta = convertObject(alpha, V1BETA1);
    assert.ok(beta.metadata);
    assert.deepStrictEqual(convertObject(beta, V1ALPHA1), alpha);
  });

  void it('returns a copy when the object is already in the desired version', () => {
    const alpha = op({ overriders: plaintextRule });
    const out = convertObject(alpha, V1ALPHA1);
    assert.deepStrictEqual(out, alpha);
    assert.notEqual(out, alpha);
  });

  void it('does not restore a folded rule once a v1beta1 writer has added a second rule', () => {
    const beta = convertObject(op({ overriders: plaintextRule }), V1BETA1);
    (beta.spec as { overrideRules: unknown[] }).overrideRules.push({ overriders: {} });
    const alpha = convertObject(beta, V1ALPHA1);
    assert.deepStrictEqual(alpha.spec, { overrideRules: [{ overriders: plaintextRule }, { overriders: {} }] });
    assert.deepStrictEqual(alpha.metadata, { name: 'op', namespace: 'apps' });
  });

  void it('drops an annotation it cannot read on the way to v1alpha1', () => {
    const beta = {
      ...op({ overrideRules: [] }, { name: 'op', annotations: { [CONVERSION_ANNOTATION]: 'not json', keep: 'me' } }),
      apiVersion: V1BETA1,
    };
    assert.deepStrictEqual(convertObject(beta, V1ALPHA1).metadata, { name: 'op', annotations: { keep: 'me' } });
  });

  const failures: Array<{ name: string; object: Obj; to: string; message: RegExp }> = [
    {
      name: 'an unknown apiVersion',
      object: { apiVersion: 'apps/v1', kind: 'OverridePolicy', spec: {} },
      to: V1BETA1,
      message: /apiVersion "apps\/v1" is not convertible/,
    },
    {
      name: 'an unknown desired version',
      object: op({}),
      to: 'policy.flotilla.io/v2',
      message: /desired apiVersion "policy.flotilla.io\/v2"/,
    },
    {
      name: 'an unknown kind',
      object: { apiVersion: V1ALPHA1, kind: 'Cluster', spec: {} },
      to: V1BETA1,
      message: /kind "Cluster" is not a policy.flotilla.io kind/,
    },
    {
      name: 'a spec that is not an object',
      object: { apiVersion: V1ALPHA1, kind: 'OverridePolicy', spec: [1] },
      to: V1BETA1,
      message: /spec must be an object/,
    },
    {
      name: 'rules that are not a list',
      object: op({ overrideRules: { a: 1 }, overriders: {} }),
      to: V1BETA1,
      message: /spec.overrideRules must be an array/,
    },
    {
      name: 'a v1beta1 object with a deprecated field',
      object: { ...op({ overriders: {} }), apiVersion: V1BETA1 },
      to: V1ALPHA1,
      message: /spec.overriders is not a v1beta1 field/,
    },
    {
      name: 'a v1beta1 object with association',
      object: { apiVersion: V1BETA1, kind: 'PropagationPolicy', spec: { association: true } },
      to: V1ALPHA1,
      message: /spec.association is not a v1beta1 field/,
    },
  ];
  for (const f of failures) {
    void it(`rejects ${f.name} with a ConversionError`, () => {
      assert.throws(
        () => convertObject(f.object, f.to),
        (e: unknown) => e instanceof ConversionError && e.code === 'CONVERSION' && f.message.test(e.message),
      );
    });
  }
});
