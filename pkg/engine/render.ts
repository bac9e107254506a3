// The engine's pipeline, a pure function of its input objects:
//   sort inputs → claim each template for one propagation policy → pick clusters, divide replicas →
//   per cluster: copy the template, set its replicas, apply the matching override rules in order,
//   drop server-populated fields → placements + provenance.
// A failure for one (template, cluster) pair is reported in `errors` and the other pairs still render.

import { sortInputs, type PolicyEntry, type Template } from './inputs.js';
import { cloneJson, isObject, obj, str, type JsonObject } from './json.js';
import { CLAIM_ANNOTATIONS, CLAIM_LABELS, PropagationMatcher } from './match.js';
import { applyMutator, mutatorMatches, targetOf, type Mutator } from './gatekeeper.js';
import { OverrideCatalog, ruleActsOn, type AdmissionOperation, type OverrideRule } from './overrides.js';
import { applyOverriders, OverrideError } from './overriders/index.js';
import { divideReplicas, PlacementError, selectClusters, templateReplicas } from './placement.js';
import { clusterMatches } from './selectors.js';
import type { AppliedRule, Change, ClusterInfo, ObjectRef, PolicyRef } from './types.js';
import { PatchError } from './patch.js';

export interface RenderInput {
  objects: unknown[];
}

export interface Placement {
  cluster: string;
  object: Record<string, unknown>;
  policy: PolicyRef;
  overrides: PolicyRef[];
}

export interface RenderError {
  object: ObjectRef;
  cluster?: string;
  message: string;
}

/** A RenderError with the policy it comes from: the claiming policy, or the override policy whose rule failed. */
export interface DetailedRenderError extends RenderError {
  policy?: PolicyRef;
}

/** An override rule failed: the message names the rule; `policy` is its override policy. */
class RuleError extends OverrideError {
  readonly policy: PolicyRef;
  constructor(message: string, policy: PolicyRef, options?: { cause?: unknown }) {
    super(message, options);
    this.policy = policy;
  }
}

/** The library contract (docs/architecture.md, README "Library"). */
export interface RenderResult {
  placements: Placement[];
  unmatched: ObjectRef[];
  errors: RenderError[];
}

export interface DetailedPlacement extends Placement {
  template: ObjectRef;
  /** Every rule applied, in order. */
  rules: AppliedRule[];
  /** Every path written, in order (replica division first); later entries win on the same path. */
  changes: Change[];
}

export interface DetailedResult {
  placements: DetailedPlacement[];
  unmatched: ObjectRef[];
  errors: DetailedRenderError[];
}

export interface RenderOptions {
  /** Record changed paths (for --explain); off by default, it costs an allocation per write. */
  explain?: boolean;
  /** Only render for these clusters (the clusters are still all known to placement and division). */
  clusters?: readonly string[];
}

const SERVER_FIELDS = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'ownerReferences',
  'finalizers',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
];

/** Drops what the API server owns, and the hub's claim records, so the object can be applied to another cluster. */
export function pruneServerFields(o: JsonObject): JsonObject {
  delete o.status;
  const meta = obj(o.metadata);
  if (meta) {
    for (const k of SERVER_FIELDS) delete meta[k];
    for (const [field, keys] of [
      ['labels', CLAIM_LABELS],
      ['annotations', CLAIM_ANNOTATIONS],
    ] as const) {
      const map = obj(meta[field]);
      if (!map || !keys.some((k) => Object.hasOwn(map, k))) continue;
      for (const k of keys) delete map[k];
      if (Object.keys(map).length === 0) delete meta[field];
    }
  }
  return o;
}

const NO_LABELS: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map();

function describe(p: PolicyEntry): string {
  return `${p.kind} ${p.namespace ? `${p.namespace}/` : ''}${p.name}`;
}

function rulePath(rule: OverrideRule): string {
  return rule.index < 0 ? 'spec.overriders' : `spec.overrideRules[${rule.index}].overriders`;
}

/**
 * Applies the rules that target `cluster` and act on `operation`, in order, to `doc` (changed in place;
 * the root is returned). The one path from rules to an overridden object: rendering and admission both
 * come through here. Throws RuleError naming the failing rule.
 */
export function overrideObject(
  doc: unknown,
  kind: string,
  cluster: ClusterInfo,
  rules: readonly OverrideRule[],
  operation: AdmissionOperation,
  changes: Change[] | undefined,
): { doc: unknown; applied: AppliedRule[] } {
  const applied: AppliedRule[] = [];
  for (const rule of rules) {
    if (!ruleActsOn(rule, operation)) continue;
    if (rule.targetCluster !== undefined && !clusterMatches(cluster, rule.targetCluster)) continue;
    const ctx = { cluster, source: { policy: rule.policy.ref, rule: rule.index }, changes };
    try {
      doc = applyOverriders(doc, rule.overriders, ctx, kind);
    } catch (err: unknown) {
      if (err instanceof OverrideError || err instanceof PatchError) {
        throw new RuleError(`${describe(rule.policy)}: ${rulePath(rule)}.${err.message}`, rule.policy.ref, {
          cause: err,
        });
      }
      throw err;
    }
    applied.push({ policy: rule.policy.ref, rule: rule.index });
  }
  return { doc, applied };
}

/** Applies the Gatekeeper mutators that match `doc` (in place), in their order. */
export function applyMutators(
  doc: JsonObject,
  mutators: readonly Mutator[],
  namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>,
  changes: Change[] | undefined,
): string[] {
  const applied: string[] = [];
  const ns = str(obj(doc.metadata)?.namespace);
  const target = targetOf(doc, ns === undefined ? undefined : namespaceLabels.get(ns));
  for (const m of mutators) {
    if (!mutatorMatches(m, target)) continue;
    const before = changes?.length;
    applyMutator(doc, m, changes);
    if (changes === undefined || changes.length !== before) applied.push(m.id);
  }
  return applied;
}

function renderOne(
  t: Template,
  claim: PolicyEntry,
  cluster: ClusterInfo,
  replicas: number | undefined,
  rules: readonly OverrideRule[],
  explain: boolean,
  mutators: readonly Mutator[],
  namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>,
): DetailedPlacement {
  let doc: unknown = cloneJson(t.object);
  const changes: Change[] = [];
  if (replicas !== undefined && isObject(doc)) {
    const spec = obj(doc.spec) ?? (doc.spec = {});
    const op = Object.prototype.hasOwnProperty.call(spec, 'replicas') ? 'replace' : 'add';
    spec.replicas = replicas;
    if (explain)
      changes.push({
        path: '/spec/replicas',
        op,
        source: { policy: claim.ref, overrider: 'placement.replicaScheduling' },
      });
  }
  if (isObject(doc) && t.ref.namespace !== undefined) {
    const meta = obj(doc.metadata);
    if (meta && meta.namespace === undefined) meta.namespace = t.ref.namespace;
  }
  const out = overrideObject(doc, t.ref.kind, cluster, rules, 'CREATE', explain ? changes : undefined);
  doc = out.doc;
  const applied = out.applied;
  if (isObject(doc) && mutators.length > 0) {
    applyMutators(doc, mutators, namespaceLabels, explain ? changes : undefined);
  }
  if (!isObject(doc)) throw new OverrideError('the overrides replaced the object with something that is not an object');
  const overrides: PolicyRef[] = [];
  for (const a of applied) {
    const last = overrides[overrides.length - 1];
    if (!last || last.kind !== a.policy.kind || last.name !== a.policy.name || last.namespace !== a.policy.namespace)
      overrides.push(a.policy);
  }
  return {
    cluster: cluster.name,
    object: pruneServerFields(doc),
    policy: claim.ref,
    overrides,
    template: t.ref,
    rules: applied,
    changes,
  };
}

/** What rendering a claimed template needs besides the template and its policy. */
export interface RenderContext {
  /** Every known cluster, sorted by name (placement, division and error messages see them all). */
  clusters: readonly ClusterInfo[];
  /** The override rules that may apply to a template, in application order. */
  rulesFor(t: Template): readonly OverrideRule[];
  /** Only render for these clusters (RenderOptions.clusters). */
  only?: ReadonlySet<string> | undefined;
  explain: boolean;
  /** Gatekeeper mutators applied after the overrides, and the Namespace labels their match reads. */
  mutators?: readonly Mutator[];
  namespaceLabels?: ReadonlyMap<string, Readonly<Record<string, string>>>;
}

/**
 * One template claimed by `policy`: pick clusters, divide replicas, apply overrides per cluster. Appends
 * to `out`; a failure is reported there, for the template or for one (template, cluster) pair. This is
 * the one code path from a claim to placements, shared by renderDetailed and the incremental EngineState.
 */
export function renderClaimed(
  t: Template,
  policy: PolicyEntry,
  ctx: RenderContext,
  out: { placements: DetailedPlacement[]; errors: DetailedRenderError[] },
): void {
  const placement = obj(policy.spec.placement);
  const clusters = ctx.clusters;
  let targets: ClusterInfo[];
  let division: Map<string, number> | undefined;
  let replicas: number | undefined;
  try {
    targets = selectClusters(placement, clusters).clusters;
    replicas = templateReplicas(t.ref.kind, t.object);
    division = divideReplicas(placement, replicas, targets);
  } catch (err: unknown) {
    if (!(err instanceof PlacementError)) throw err;
    out.errors.push({
      object: t.ref,
      policy: policy.ref,
      message: `${describe(policy)}: spec.placement: ${err.message}`,
    });
    return;
  }
  if (division && (replicas ?? 0) > 0) targets = targets.filter((c) => (division.get(c.name) ?? 0) > 0);
  if (targets.length === 0) {
    out.errors.push({
      object: t.ref,
      policy: policy.ref,
      message: `${describe(policy)}: no cluster matches its placement (${clusters.length} cluster${clusters.length === 1 ? '' : 's'} known${clusters.length ? `: ${clusters.map((c) => c.name).join(', ')}` : ''})`,
    });
    return;
  }
  const rules = ctx.rulesFor(t);
  for (const cluster of targets) {
    if (ctx.only && !ctx.only.has(cluster.name)) continue;
    try {
      out.placements.push(
        renderOne(
          t,
          policy,
          cluster,
          division ? division.get(cluster.name) : undefined,
          rules,
          ctx.explain,
          ctx.mutators ?? [],
          ctx.namespaceLabels ?? NO_LABELS,
        ),
      );
    } catch (err: unknown) {
      // Known failures carry their own message; anything else is still reported for this pair only.
      const known = err instanceof OverrideError || err instanceof PatchError;
      const message = err instanceof Error ? err.message : String(err);
      out.errors.push({
        object: t.ref,
        cluster: cluster.name,
        policy: err instanceof RuleError ? err.policy : policy.ref,
        message: known ? message : `unexpected error: ${message}`,
      });
    }
  }
}

export function renderDetailed(input: RenderInput, options: RenderOptions = {}): DetailedResult {
  const objects = isObject(input) && Array.isArray(input.objects) ? input.objects : [];
  const inputs = sortInputs(objects);
  const result: DetailedResult = {
    placements: [],
    unmatched: [],
    errors: inputs.errors.map((e) => ({ object: e.object, message: e.message })),
  };
  const matcher = new PropagationMatcher(inputs.propagation);
  const catalog = new OverrideCatalog(inputs.overrides);
  const ctx: RenderContext = {
    clusters: inputs.clusters,
    rulesFor: (t) => catalog.rulesFor(t),
    only: options.clusters ? new Set(options.clusters) : undefined,
    explain: options.explain === true,
    mutators: inputs.mutators,
    namespaceLabels: inputs.namespaceLabels,
  };

  for (const t of inputs.templates) {
    const claim = matcher.claim(t);
    if (!claim) result.unmatched.push(t.ref);
    else renderClaimed(t, claim.policy, ctx, result);
  }
  return result;
}

/** The library's `render` (docs/architecture.md): per-cluster objects, unmatched templates and errors. Never throws for bad input. */
export function render(input: RenderInput): RenderResult {
  const r = renderDetailed(input);
  return {
    placements: r.placements.map((p) => ({
      cluster: p.cluster,
      object: p.object,
      policy: p.policy,
      overrides: p.overrides,
    })),
    unmatched: r.unmatched,
    errors: r.errors.map(({ policy: _policy, ...e }) => e),
  };
}
