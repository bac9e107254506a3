// EngineState against render(): random templates, policies (both groups, v1alpha1 and v1beta1, some the
// webhook denies, some unusable) and Clusters, upserted and removed in random order. After every mutation
// every held template renders through the state exactly as renderDetailed renders it among all current
// objects, and every template outside the returned `affected` set renders exactly as it did before.
// Deployments name ConfigMaps (held or not) and policies may say propagateDeps, so dependencies come and go.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { convertObject } from '../../api/conversion/index.js';
import { checkDocuments } from '../cli/check.js';
import { refOf, sortInputs } from './inputs.js';
import { renderDetailed, type DetailedResult } from './render.js';
import { EngineState, templateKey, type TemplateResult } from './state.js';

type Obj = Record<string, unknown>;

// Repeats weight the draw: most objects share a namespace and a kind, so policies often match.
const NAMESPACES = ['default', 'default', 'default', 'shop', 'kube-system'] as const;
const NAMES = ['a', 'b'] as const;
const CLUSTERS = ['m1', 'm2', 'm3', 'm4'] as const;
const POLICY_NAMES = ['p1', 'p2', 'p3'] as const;
const KINDS = [
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'v1', kind: 'Namespace' },
] as const;

const labelsArb = fc.record(
  { app: fc.constantFrom('x', 'y'), tier: fc.constantFrom('web', 'api') },
  { requiredKeys: [] },
);

/** An object and the identity the hub would store it under (what a later remove names). */
interface Doc {
  id: string;
  object: Obj;
}

const templateArb: fc.Arbitrary<Doc> = fc
  .record({
    gvk: fc.constantFrom(...KINDS),
    ns: fc.constantFrom(...NAMESPACES),
    name: fc.constantFrom(...NAMES),
    labels: labelsArb,
    replicas: fc.option(fc.nat(6), { nil: undefined }),
    omitDefault: fc.boolean(),
    uses: fc.subarray(['a', 'b', 'absent']),
  })
  .map(({ gvk, ns, name, labels, replicas, omitDefault, uses }) => {
    const clusterScoped = gvk.kind === 'Namespace';
    const metadata: Obj = { name, labels };
    if (!clusterScoped && !(ns === 'default' && omitDefault)) metadata.namespace = ns;
    const object: Obj = { ...gvk, metadata };
    if (gvk.kind === 'Deployment')
      object.spec = {
        ...(replicas === undefined ? {} : { replicas }),
        template: {
          spec: {
            containers: [{ name: 'web', image: 'nginx:1.25' }],
            ...(uses.length ? { volumes: uses.map((u) => ({ name: u, configMap: { name: u } })) } : {}),
          },
        },
      };
    if (gvk.kind === 'ConfigMap') object.data = { k: 'v' };
    return { id: `template ${gvk.apiVersion} ${gvk.kind} ${clusterScoped ? '' : ns} ${name}`, object };
  });

/** `value` with the given chance, else undefined. */
const sometimes = <T>(arb: fc.Arbitrary<T>, chance: number): fc.Arbitrary<T | undefined> =>
  fc.oneof(
    { arbitrary: fc.constant(undefined), weight: Math.round((1 - chance) * 100) },
    { arbitrary: arb, weight: Math.round(chance * 100) },
  );

const selectorArb = (withNamespace: boolean): fc.Arbitrary<Obj> =>
  fc
    .record({
      gvk: fc.constantFrom(...KINDS, KINDS[0], KINDS[0], KINDS[0]),
      namespace: withNamespace ? sometimes(fc.constantFrom(...NAMESPACES), 0.3) : fc.constant(undefined),
      name: sometimes(fc.constantFrom(...NAMES), 0.25),
      labelSelector: sometimes(
        fc.oneof(
          fc.record({ matchLabels: fc.record({ app: fc.constantFrom('x', 'y') }) }),
          fc.constant({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }] }),
        ),
        0.3,
      ),
    })
    .map(({ gvk, ...rest }) => {
      const s: Obj = { ...gvk };
      for (const [k, v] of Object.entries(rest)) if (v !== undefined) s[k] = v;
      return s;
    });

const affinityArb: fc.Arbitrary<Obj> = fc.oneof(
  fc.subarray([...CLUSTERS], { minLength: 1 }).map((clusterNames) => ({ clusterNames })),
  fc.constantFrom('prod', 'dev').map((env) => ({ labelSelector: { matchLabels: { env } } })),
  fc.constantFrom(...CLUSTERS).map((c) => ({ exclude: [c] })),
  fc.constant({ fieldSelector: { matchExpressions: [{ key: 'region', operator: 'In', values: ['eu'] }] } }),
);

const placementArb: fc.Arbitrary<Obj> = fc
  .record({
    clusterAffinity: sometimes(affinityArb, 0.4),
    clusterAffinities: sometimes(
      fc
        .array(affinityArb, { minLength: 1, maxLength: 2 })
        .map((terms) => terms.map((t, i) => ({ affinityName: `t${i}`, ...t }))),
      0.2,
    ),
    clusterTolerations: sometimes(fc.constant([{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }]), 0.3),
    replicaScheduling: sometimes(
      fc.constantFrom<Obj>(
        { replicaSchedulingType: 'Duplicated' },
        {
          replicaSchedulingType: 'Divided',
          replicaDivisionPreference: 'Weighted',
          weightPreference: {
            staticWeightList: [
              { targetCluster: { clusterNames: ['m1'] }, weight: 2 },
              { targetCluster: { labelSelector: { matchLabels: { env: 'dev' } } }, weight: 1 },
            ],
          },
        },
        { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' },
      ),
      0.5,
    ),
    spreadConstraints: sometimes(fc.constant([{ spreadByField: 'region', maxGroups: 1, minGroups: 1 }]), 0.15),
  })
  .map((p) => {
    const out: Obj = {};
    for (const [k, v] of Object.entries(p)) if (v !== undefined) out[k] = v;
    // clusterAffinity and clusterAffinities are exclusive (the webhook denies both): keep the first.
    if (out.clusterAffinity) delete out.clusterAffinities;
    return out;
  });

const overriderArb: fc.Arbitrary<Obj> = fc.constantFrom<Obj>(
  { labelsOverrider: [{ operator: 'add', value: { who: '${cluster.name}' } }] },
  { annotationsOverrider: [{ operator: 'add', value: { region: '${cluster.region}' } }] },
  { plaintext: [{ path: '/spec/replicas', operator: 'replace', value: 9 }] },
  { imageOverrider: [{ component: 'Registry', operator: 'replace', value: 'mirror.example.com' }] },
  { labelsOverrider: [{ operator: 'add', value: { who: 'late' } }] },
);

const ruleArb: fc.Arbitrary<Obj> = fc
  .record({ targetCluster: affinityArb, overriders: overriderArb }, { requiredKeys: ['overriders'] })
  .map((r) => r as Obj);

/** How a policy document is written: group, version, and whether it is broken on purpose. */
const flavourArb = fc.record({
  apiVersion: fc.constantFrom(
    'policy.flotilla.io/v1alpha1',
    'policy.karmada.io/v1alpha1',
    'policy.flotilla.io/v1beta1',
  ),
  // denied: the webhook rejects it (a selector without kind) yet the engine can read it; unusable: no spec.
  broken: fc.constantFrom('no', 'no', 'no', 'no', 'no', 'no', 'denied', 'unusable'),
});

function policy(
  kind: string,
  name: string,
  namespace: string | undefined,
  spec: Obj,
  flavour: { apiVersion: string; broken: string },
): Doc {
  const metadata: Obj = { name };
  if (namespace !== undefined) metadata.namespace = namespace;
  let object: Obj = { apiVersion: 'policy.flotilla.io/v1alpha1', kind, metadata, spec };
  if (flavour.broken === 'denied') {
    const selectors = (spec.resourceSelectors as Obj[] | undefined) ?? [];
    object.spec = { ...spec, resourceSelectors: [{ apiVersion: 'v1' }, ...selectors] };
  }
  if (flavour.apiVersion === 'policy.flotilla.io/v1beta1') object = convertObject(object, flavour.apiVersion);
  else object.apiVersion = flavour.apiVersion;
  if (flavour.broken === 'unusable') delete object.spec;
  return { id: `policy ${kind} ${namespace ?? ''} ${name}`, object };
}

const propagationArb = (clusterWide: boolean): fc.Arbitrary<Doc> =>
  fc
    .record({
      name: fc.constantFrom(...POLICY_NAMES),
      ns: fc.constantFrom(...NAMESPACES),
      selectors: fc.array(selectorArb(clusterWide), { minLength: 1, maxLength: 2 }),
      placement: placementArb,
      priority: fc.option(fc.integer({ min: -1, max: 2 }), { nil: undefined }),
      propagateDeps: fc.boolean(),
      flavour: flavourArb,
    })
    .map(({ name, ns, selectors, placement, priority, propagateDeps, flavour }) =>
      policy(
        clusterWide ? 'ClusterPropagationPolicy' : 'PropagationPolicy',
        name,
        clusterWide ? undefined : ns,
        {
          resourceSelectors: selectors,
          placement,
          ...(priority === undefined ? {} : { priority }),
          ...(propagateDeps ? { propagateDeps } : {}),
        },
        flavour,
      ),
    );

const overrideArb = (clusterWide: boolean): fc.Arbitrary<Doc> =>
  fc
    .record({
      name: fc.constantFrom(...POLICY_NAMES),
      ns: fc.constantFrom(...NAMESPACES),
      selectors: fc.array(selectorArb(clusterWide), { maxLength: 2 }),
      rules: fc.array(ruleArb, { minLength: 1, maxLength: 2 }),
      flavour: flavourArb,
    })
    .map(({ name, ns, selectors, rules, flavour }) =>
      policy(
        clusterWide ? 'ClusterOverridePolicy' : 'OverridePolicy',
        name,
        clusterWide ? undefined : ns,
        { ...(selectors.length ? { resourceSelectors: selectors } : {}), overrideRules: rules },
        flavour,
      ),
    );

const clusterArb: fc.Arbitrary<Doc> = fc
  .record({
    name: fc.constantFrom(...CLUSTERS),
    env: fc.option(fc.constantFrom('prod', 'dev'), { nil: undefined }),
    region: fc.option(fc.constantFrom('eu', 'us'), { nil: undefined }),
    tainted: fc.boolean(),
    karmada: fc.boolean(),
    note: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
  })
  .map(({ name, env, region, tainted, karmada, note }) => {
    const spec: Obj = {};
    if (region) spec.region = region;
    if (tainted) spec.taints = [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }];
    const metadata: Obj = { name, ...(env ? { labels: { env } } : {}), ...(note ? { annotations: { note } } : {}) };
    return {
      id: `cluster ${name}`,
      object: {
        apiVersion: karmada ? 'cluster.karmada.io/v1alpha1' : 'cluster.flotilla.io/v1alpha1',
        kind: 'Cluster',
        metadata,
        spec,
      },
    };
  });

type Op = { type: 'upsert'; doc: Doc } | { type: 'remove'; pick: number };

const docArb: fc.Arbitrary<Doc> = fc.oneof(
  { arbitrary: templateArb, weight: 4 },
  { arbitrary: propagationArb(false), weight: 2 },
  { arbitrary: propagationArb(true), weight: 2 },
  { arbitrary: overrideArb(false), weight: 2 },
  { arbitrary: overrideArb(true), weight: 1 },
  { arbitrary: clusterArb, weight: 2 },
);

const opsArb: fc.Arbitrary<Op[]> = fc.array(
  fc.oneof(
    { arbitrary: docArb.map((doc): Op => ({ type: 'upsert', doc })), weight: 4 },
    { arbitrary: fc.nat().map((pick): Op => ({ type: 'remove', pick })), weight: 1 },
  ),
  { minLength: 5, maxLength: 40, size: 'max' },
);

/** renderDetailed's answer for each template, keyed as the state keys templates. */
function expectedByTemplate(objects: unknown[]): Map<string, DetailedResult> {
  const r = renderDetailed({ objects });
  const out = new Map<string, DetailedResult>();
  const slot = (ref: Parameters<typeof templateKey>[0]) => {
    const k = templateKey(ref);
    let s = out.get(k);
    if (!s) out.set(k, (s = { placements: [], unmatched: [], errors: [], warnings: [] }));
    return s;
  };
  for (const p of r.placements) slot(p.template).placements.push(p);
  for (const u of r.unmatched) slot(u).unmatched.push(u);
  for (const w of r.warnings) slot(w.object).warnings.push(w);
  // render() lists the documents it cannot read first; the rest are per template.
  for (const e of r.errors.slice(sortInputs(objects).errors.length)) slot(e.object).errors.push(e);
  return out;
}

function admitted(objects: Obj[]): Obj[] {
  const docs = objects.map((object, i) => ({ object, source: `doc ${i}` }));
  const denied = new Set(checkDocuments(docs).denials.map((d) => d.document));
  return docs.filter((d) => !denied.has(d)).map((d) => d.object);
}

function strip(r: TemplateResult): DetailedResult {
  return { placements: r.placements, unmatched: r.unmatched, errors: r.errors, warnings: r.warnings };
}

/** How much the random runs exercised, so a generator that stops claiming templates fails the test. */
interface Tally {
  steps: number;
  claimed: number;
  placements: number;
  unaffected: number;
  /** Placements of a dependency on a cluster only its workloads send it to. */
  required: number;
  warnings: number;
}

function runSequence(ops: Op[], admission: boolean, tally: Tally): void {
  const state = new EngineState({ admission });
  const model = new Map<string, Obj>();
  let previous = new Map<string, TemplateResult>();
  for (const [step, op] of ops.entries()) {
    let affected: Set<string>;
    if (op.type === 'upsert') {
      model.set(op.doc.id, op.doc.object);
      affected = state.upsert(op.doc.object).affected;
    } else {
      const ids = [...model.keys()];
      if (ids.length === 0) continue;
      const id = ids[op.pick % ids.length] as string;
      const ref = refOf(model.get(id));
      model.delete(id);
      affected = state.remove(ref).affected;
    }
    const objects = [...model.values()];
    const expected = expectedByTemplate(admission ? admitted(objects) : objects);
    const current = new Map<string, TemplateResult>();
    for (const key of state.templateKeys()) {
      const got = state.renderTemplate(key);
      assert.ok(got, `held template ${key} renders`);
      current.set(key, got);
      assert.deepStrictEqual(strip(got), expected.get(key), `step ${step}: ${key} renders as render() does`);
    }
    assert.deepStrictEqual(
      new Set(current.keys()),
      new Set(expected.keys()),
      `step ${step}: the state holds the templates render() sees`,
    );
    for (const [key, before] of previous) {
      const after = current.get(key);
      if (affected.has(key)) continue;
      assert.ok(after, `step ${step}: removed template ${key} is reported as affected`);
      // notChosen explains; a cluster no placement can select does not make a template affected (state.ts).
      const { notChosen: _a, ...afterRest } = after;
      const { notChosen: _b, ...beforeRest } = before;
      assert.deepStrictEqual(afterRest, beforeRest, `step ${step}: ${key} is outside 'affected' and renders as before`);
    }
    for (const key of current.keys())
      if (!previous.has(key))
        assert.ok(affected.has(key), `step ${step}: added template ${key} is reported as affected`);
    tally.steps++;
    for (const [key, r] of current) {
      if (r.policy) tally.claimed++;
      tally.placements += r.placements.length;
      tally.required += r.placements.filter((p) => p.requiredBy).length;
      tally.warnings += r.warnings.length;
      if (previous.has(key) && !affected.has(key)) tally.unaffected++;
    }
    previous = current;
  }
}

describe('EngineState against render() on random objects and mutations', () => {
  for (const admission of [false, true]) {
    it(`renders every template as render() does${admission ? ' on the objects the webhook admits' : ''}, and templates outside 'affected' as before (admission ${admission ? 'on' : 'off'})`, () => {
      const tally: Tally = { steps: 0, claimed: 0, placements: 0, unaffected: 0, required: 0, warnings: 0 };
      fc.assert(
        fc.property(opsArb, (ops) => runSequence(ops, admission, tally)),
        { numRuns: 300 },
      );
      // Not vacuous: the runs claimed templates, rendered placements and left templates unaffected.
      assert.ok(
        tally.claimed > tally.steps / 10 &&
          tally.placements > tally.steps / 10 &&
          tally.unaffected > tally.steps / 10 &&
          tally.required > tally.steps / 250 &&
          tally.warnings > tally.steps / 50,
        JSON.stringify(tally),
      );
    });
  }
});
