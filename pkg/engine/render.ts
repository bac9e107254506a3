// The engine's pipeline, a pure function of its input objects:
//   sort inputs → claim each template for one propagation policy → pick clusters, divide replicas →
//   per cluster: copy the template, set its replicas, apply the matching override rules in order,
//   drop server-populated fields → placements + provenance.
// A failure for one (template, cluster) pair is reported in `errors` and the other pairs still render.
//
// propagateDeps: a workload claimed by a policy that says `propagateDeps: true` takes the ConfigMaps,
// Secrets, ServiceAccounts and PersistentVolumeClaims it names (dependencies.ts) to every cluster it is
// scheduled to, when they are among the templates: a dependency goes to its own policy's clusters (if a
// policy claims it) and to every cluster a workload that requires it goes to, with the override rules of
// that cluster, once per cluster. A dependency that is not among the templates is a warning.

import { sortInputs, type PolicyEntry, type Template } from './inputs.js';
import { cloneJson, isObject, obj, type JsonObject } from './json.js';
import { CLAIM_ANNOTATIONS, CLAIM_LABELS, PropagationMatcher } from './match.js';
import { MutationError, MutationSystem, type Mutator } from './gatekeeper.js';
import { OverrideCatalog, ruleActsOn, type AdmissionOperation, type OverrideRule } from './overrides.js';
import { applyOverriders, OverrideError, type AdditionGuard } from './overriders/index.js';
import { dependenciesOf, hasDependencies } from './dependencies.js';
import { estimateReplicas, replicaRequests, UNLIMITED } from './capacity.js';
import { divideReplicas, templateReplicas } from './division.js';
import { PlacementError, selectClusters, type Demand, type Selection } from './placement.js';
import { clusterMatches } from './selectors.js';
import { templateKey } from './state-index.js';
import type { AppliedRule, Change, ClusterInfo, ObjectRef, PolicyRef } from './types.js';
import { PatchError } from './patch.js';
import { pruneGeneratedFields } from './prune.js';
import { karmadaClaimMetadata, stampClaimMetadata, type ClaimMetadata } from './claim-copy.js';

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
  /**
   * Set when the template is on this cluster because workloads that use it go there (propagateDeps) and
   * its own policy, if any, does not send it there: those workloads. `policy` is then the first one's.
   */
  requiredBy?: ObjectRef[];
  /** Every rule applied, in order. */
  rules: AppliedRule[];
  /** Every path written, in order (replica division first); later entries win on the same path. */
  changes: Change[];
}

/** Not an error, but something the user should know: a dependency a workload names is not there. */
export interface RenderWarning {
  object: ObjectRef;
  message: string;
}

export interface DetailedResult {
  placements: DetailedPlacement[];
  unmatched: ObjectRef[];
  errors: DetailedRenderError[];
  warnings: RenderWarning[];
  /** With `explain`: each known cluster a claimed template does not go to, and why. */
  skipped?: Array<{ template: ObjectRef; cluster: string; reason: string }>;
}

/** A workload that takes a dependency with it (propagateDeps), and the clusters it is scheduled to. */
export interface Requirement {
  workload: ObjectRef;
  /** The workload's claiming policy. */
  policy: PolicyRef;
  /** Sorted by name; never empty. */
  clusters: string[];
}

export interface RenderOptions {
  /** Record changed paths (for --explain); off by default, it costs an allocation per write. */
  explain?: boolean;
  /** Only render for these clusters (the clusters are still all known to placement and division). */
  clusters?: readonly string[];
  /**
   * The time placement is decided at (ms since the epoch): NoExecute taints' tolerationSeconds run out
   * against it. Absent: not applied (the engine reads no clock; the CLI and the controller pass one).
   */
  now?: number;
  /**
   * The clusters a template is placed on now (the controller's last plan): a NoSchedule taint keeps new
   * placements off a cluster but does not take a template off one it is on (Karmada's rule). Absent: none.
   */
  scheduled?: (template: ObjectRef) => ReadonlySet<string> | undefined;
  /** Clusters a template must not be placed on (application failover evicted it there). Absent: none. */
  excluded?: (template: ObjectRef) => ReadonlySet<string> | undefined;
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

/**
 * Drops what the API server owns, what the hub generated for that kind (prune.ts), and the hub's claim
 * records, so the object can be applied to another cluster.
 */
export function pruneServerFields(o: JsonObject): JsonObject {
  pruneGeneratedFields(o);
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
 * come through here. Throws RuleError naming the failing rule. `additions` (admission) decides whether
 * the overriders that append add again.
 */
export function overrideObject(
  doc: unknown,
  kind: string,
  cluster: ClusterInfo,
  rules: readonly OverrideRule[],
  operation: AdmissionOperation,
  changes: Change[] | undefined,
  additions?: AdditionGuard,
): { doc: unknown; applied: AppliedRule[] } {
  const applied: AppliedRule[] = [];
  for (const rule of rules) {
    if (!ruleActsOn(rule, operation)) continue;
    if (rule.targetCluster !== undefined && !clusterMatches(cluster, rule.targetCluster)) continue;
    const ctx = { cluster, source: { policy: rule.policy.ref, rule: rule.index }, changes, additions };
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

const systems = new WeakMap<readonly Mutator[], MutationSystem>();

/** The mutation system of a list of mutators (built once per list). */
export function mutationSystem(mutators: readonly Mutator[]): MutationSystem {
  let s = systems.get(mutators);
  if (!s) systems.set(mutators, (s = new MutationSystem(mutators)));
  return s;
}

/**
 * Applies the Gatekeeper mutators to `doc` (in place) as Gatekeeper's mutation system does, for an object
 * admitted with `operation` in `namespace` (its labels read by namespaceSelector; absent for a
 * cluster-scoped object). Returns the mutators that changed it and those skipped for conflicting schemas;
 * throws MutationError when Gatekeeper's mutation would fail.
 */
export function applyMutators(
  doc: JsonObject,
  mutators: readonly Mutator[],
  namespace: { name: string; labels: Readonly<Record<string, string>> | undefined } | undefined,
  operation: AdmissionOperation,
  changes: Change[] | undefined,
): { applied: string[]; skipped: string[] } {
  return mutationSystem(mutators).mutate(doc, operation, namespace, changes);
}

function renderOne(
  t: Template,
  policy: PolicyRef,
  cluster: ClusterInfo,
  replicas: number | undefined,
  rules: readonly OverrideRule[],
  explain: boolean,
  mutators: readonly Mutator[],
  namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>,
  claim: ClaimMetadata | undefined,
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
        source: { policy, overrider: 'placement.replicaScheduling' },
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
    const ns = t.ref.namespace;
    const namespace = ns === undefined ? undefined : { name: ns, labels: namespaceLabels.get(ns) };
    try {
      applyMutators(doc, mutators, namespace, 'CREATE', explain ? changes : undefined);
    } catch (err: unknown) {
      if (!(err instanceof MutationError)) throw err;
      throw new OverrideError(`Gatekeeper mutation: ${err.message}`, { cause: err });
    }
  }
  if (!isObject(doc)) throw new OverrideError('the overrides replaced the object with something that is not an object');
  const overrides: PolicyRef[] = [];
  for (const a of applied) {
    const last = overrides[overrides.length - 1];
    if (!last || last.kind !== a.policy.kind || last.name !== a.policy.name || last.namespace !== a.policy.namespace)
      overrides.push(a.policy);
  }
  const object = pruneServerFields(doc);
  stampClaimMetadata(object, claim);
  return {
    cluster: cluster.name,
    object,
    policy,
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
  /** RenderOptions.now. */
  now?: number | undefined;
  /** RenderOptions.scheduled. */
  scheduled?: ((template: ObjectRef) => ReadonlySet<string> | undefined) | undefined;
  /** RenderOptions.excluded. */
  excluded?: ((template: ObjectRef) => ReadonlySet<string> | undefined) | undefined;
  explain: boolean;
  /** Gatekeeper mutators applied after the overrides, and the Namespace labels their match reads. */
  mutators?: readonly Mutator[];
  namespaceLabels?: ReadonlyMap<string, Readonly<Record<string, string>>>;
}

/** Where a claimed template goes: the clusters its placement picks, and their replicas when divided. */
export interface Schedule {
  /** Clusters, in placement's order; a divided workload's clusters with no replica are left out. */
  targets: ClusterInfo[];
  division: Map<string, number> | undefined;
  /** Clusters a NoExecute taint keeps out (not tolerated, or tolerationSeconds ran out). */
  evicted: string[];
  /** Every known cluster the template does not go to, with why. */
  skipped: Array<{ cluster: string; reason: string }>;
  /** When a tolerated NoExecute taint runs out on a target (the schedule changes then). */
  recheckAt?: number;
}

/** Why a placement selected no cluster: the clusters evicted, and every cluster with its reason. */
export type Unplaced = Pick<Schedule, 'evicted' | 'skipped'>;

/**
 * Picks the clusters of a template claimed by `policy` and divides its replicas. Undefined, with the
 * reason appended to `errors`, when its placement fails or selects nothing; when it selects nothing,
 * `unplaced` (when given) gets the clusters a NoExecute taint evicted and why each was left out.
 */
export function scheduleClaimed(
  t: Template,
  policy: PolicyEntry,
  clusters: readonly ClusterInfo[],
  errors: DetailedRenderError[],
  now?: number,
  scheduled?: ReadonlySet<string>,
  excluded?: ReadonlySet<string>,
  unplaced?: Unplaced,
): Schedule | undefined {
  const placement = obj(policy.spec.placement);
  let targets: ClusterInfo[];
  let division: Map<string, number> | undefined;
  let replicas: number | undefined;
  let selection: Selection;
  try {
    replicas = templateReplicas(t.ref.kind, t.object);
    const demand = demandOf(t, replicas, now, scheduled, excluded);
    selection = selectClusters(placement, clusters, demand);
    targets = selection.clusters;
    division = divideReplicas(placement, replicas, targets, (c) => demand.available(c));
  } catch (err: unknown) {
    if (!(err instanceof PlacementError)) throw err;
    errors.push({ object: t.ref, policy: policy.ref, message: `${describe(policy)}: spec.placement: ${err.message}` });
    return undefined;
  }
  const skipped = [...selection.skipped];
  if (division && (replicas ?? 0) > 0) {
    for (const c of targets)
      if ((division.get(c.name) ?? 0) === 0)
        skipped.push({ cluster: c.name, reason: 'gets no replica from the division' });
    targets = targets.filter((c) => (division.get(c.name) ?? 0) > 0);
  }
  const order = new Map(clusters.map((c, i) => [c.name, i]));
  skipped.sort((a, b) => (order.get(a.cluster) ?? 0) - (order.get(b.cluster) ?? 0));
  if (targets.length === 0) {
    if (unplaced) {
      unplaced.evicted.push(...selection.evicted);
      unplaced.skipped.push(...skipped);
    }
    const why = skipped.slice(0, 10).map((x) => `${x.cluster}: ${x.reason}`);
    if (skipped.length > 10) why.push(`and ${skipped.length - 10} more`);
    errors.push({
      object: t.ref,
      policy: policy.ref,
      message: `${describe(policy)}: no cluster matches its placement (${clusters.length} cluster${clusters.length === 1 ? '' : 's'} known${clusters.length ? `: ${clusters.map((c) => c.name).join(', ')}` : ''})${why.length ? `; ${why.join('; ')}` : ''}`,
    });
    return undefined;
  }
  const schedule: Schedule = { targets, division, evicted: selection.evicted, skipped };
  if (selection.recheckAt !== undefined) schedule.recheckAt = selection.recheckAt;
  return schedule;
}

/**
 * What placing this template asks of a cluster: its kind, and the replicas that fit there (Karmada's
 * calAvailableReplicas with the general estimator; a template without replicas is not estimated and
 * counts its own replicas, 0). Estimates are computed once per cluster.
 */
function demandOf(
  t: Template,
  replicas: number | undefined,
  now: number | undefined,
  scheduled: ReadonlySet<string> | undefined,
  excluded: ReadonlySet<string> | undefined,
): Demand {
  const requests = replicaRequests(t.ref.kind, t.object);
  const cache = new Map<string, number>();
  return {
    ref: t.ref,
    replicas,
    now,
    scheduled,
    excluded,
    available(c: ClusterInfo): number {
      if (!replicas) return replicas ?? 0;
      let n = cache.get(c.name);
      if (n === undefined) cache.set(c.name, (n = estimateReplicas(c, requests)));
      return n === UNLIMITED ? replicas : n;
    },
  };
}

/** Renders one (template, cluster) pair into `out`: a placement, or an error for that pair only. */
function renderPair(
  t: Template,
  policy: PolicyRef,
  cluster: ClusterInfo,
  replicas: number | undefined,
  rules: readonly OverrideRule[],
  ctx: RenderContext,
  out: { placements: DetailedPlacement[]; errors: DetailedRenderError[] },
  claim?: ClaimMetadata,
): DetailedPlacement | undefined {
  try {
    const p = renderOne(
      t,
      policy,
      cluster,
      replicas,
      rules,
      ctx.explain,
      ctx.mutators ?? [],
      ctx.namespaceLabels ?? NO_LABELS,
      claim,
    );
    out.placements.push(p);
    return p;
  } catch (err: unknown) {
    // Known failures carry their own message; anything else is still reported for this pair only.
    const known = err instanceof OverrideError || err instanceof PatchError;
    const message = err instanceof Error ? err.message : String(err);
    out.errors.push({
      object: t.ref,
      cluster: cluster.name,
      policy: err instanceof RuleError ? err.policy : policy,
      message: known ? message : `unexpected error: ${message}`,
    });
    return undefined;
  }
}

/**
 * One template claimed by `policy`: pick clusters, divide replicas, apply overrides per cluster. Appends
 * to `out`; a failure is reported there, for the template or for one (template, cluster) pair. This is
 * the one code path from a claim to placements, shared by renderDetailed and the incremental EngineState.
 * Returns the schedule (undefined when placement failed).
 */
export function renderClaimed(
  t: Template,
  policy: PolicyEntry,
  ctx: RenderContext,
  out: { placements: DetailedPlacement[]; errors: DetailedRenderError[] },
  unplaced?: Unplaced,
): Schedule | undefined {
  const schedule = scheduleClaimed(
    t,
    policy,
    ctx.clusters,
    out.errors,
    ctx.now,
    ctx.scheduled?.(t.ref),
    ctx.excluded?.(t.ref),
    unplaced,
  );
  if (schedule) renderScheduled(t, policy, schedule, ctx, out);
  return schedule;
}

/** renderClaimed after scheduling: overrides per target cluster. */
export function renderScheduled(
  t: Template,
  policy: Pick<PolicyEntry, 'ref'> & Partial<PolicyEntry>,
  schedule: Schedule,
  ctx: RenderContext,
  out: { placements: DetailedPlacement[]; errors: DetailedRenderError[] },
): void {
  const rules = ctx.rulesFor(t);
  // A policy.karmada.io claim is named on each copy as Karmada names it (claim-copy.ts).
  const claim = policy.object && policy.kind ? karmadaClaimMetadata(policy as PolicyEntry) : undefined;
  for (const cluster of schedule.targets) {
    if (ctx.only && !ctx.only.has(cluster.name)) continue;
    renderPair(t, policy.ref, cluster, schedule.division?.get(cluster.name), rules, ctx, out, claim);
  }
}

/**
 * A dependency on the clusters its requiring workloads go to, except those in `own` (where its own policy
 * sends it, rendered by renderClaimed). One placement per cluster, whatever the number of workloads.
 */
export function renderRequired(
  t: Template,
  requirements: readonly Requirement[],
  own: ReadonlySet<string>,
  ctx: RenderContext,
  out: { placements: DetailedPlacement[]; errors: DetailedRenderError[] },
): void {
  const by = new Map<string, Requirement[]>();
  for (const r of requirements)
    for (const c of r.clusters) {
      if (own.has(c) || (ctx.only && !ctx.only.has(c))) continue;
      const list = by.get(c);
      if (list) list.push(r);
      else by.set(c, [r]);
    }
  if (by.size === 0) return;
  const rules = ctx.rulesFor(t);
  for (const cluster of ctx.clusters) {
    const rs = by.get(cluster.name);
    if (!rs) continue;
    const p = renderPair(t, rs[0]!.policy, cluster, undefined, rules, ctx, out);
    if (p) p.requiredBy = rs.map((r) => r.workload);
  }
}

/**
 * The dependencies a claimed workload takes with it: none unless its policy says `propagateDeps: true`
 * and its kind names any (dependencies.ts).
 */
export function workloadDependencies(t: Template, policy: PolicyEntry): ReturnType<typeof dependenciesOf> {
  if (policy.spec.propagateDeps !== true || !hasDependencies(t.ref.apiVersion, t.ref.kind)) return [];
  return dependenciesOf(t.ref, t.object);
}

/** The warning for a dependency a workload names that is not among the templates. */
export function missingDependency(
  t: Template,
  policy: PolicyEntry,
  dep: { ref: ObjectRef; path: string },
): RenderWarning {
  return {
    object: t.ref,
    message: `${dep.path} names ${dep.ref.kind} ${dep.ref.namespace}/${dep.ref.name}, which is not found: it does not go with the workload (spec.propagateDeps of ${describe(policy)})`,
  };
}

/** Requirements in one order whatever the order the workloads were found in (render() and the state agree). */
export function sortRequirements(rs: Requirement[]): Requirement[] {
  const key = (r: Requirement) => templateKey(r.workload);
  return rs.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

export function renderDetailed(input: RenderInput, options: RenderOptions = {}): DetailedResult {
  const objects = isObject(input) && Array.isArray(input.objects) ? input.objects : [];
  const inputs = sortInputs(objects);
  const result: DetailedResult = {
    placements: [],
    unmatched: [],
    errors: inputs.errors.map((e) => ({ object: e.object, message: e.message })),
    warnings: [],
  };
  const matcher = new PropagationMatcher(inputs.propagation);
  const catalog = new OverrideCatalog(inputs.overrides);
  const ctx: RenderContext = {
    clusters: inputs.clusters,
    rulesFor: (t) => catalog.rulesFor(t),
    only: options.clusters ? new Set(options.clusters) : undefined,
    now: options.now,
    scheduled: options.scheduled,
    excluded: options.excluded,
    explain: options.explain === true,
    mutators: inputs.mutators,
    namespaceLabels: inputs.namespaceLabels,
  };

  // Claims and schedules first: a dependency may come before the workloads that require it.
  const byKey = new Map<string, Template>();
  for (const t of inputs.templates) byKey.set(templateKey(t.ref), t);
  const claims = new Map<Template, PolicyEntry | undefined>();
  const required = new Map<string, Requirement[]>();
  const scheduleErrors = new Map<Template, DetailedRenderError[]>();
  const schedules = new Map<Template, Schedule | undefined>();
  for (const t of inputs.templates) {
    const policy = matcher.claim(t)?.policy;
    claims.set(t, policy);
    if (!policy) continue;
    const errors: DetailedRenderError[] = [];
    const schedule = scheduleClaimed(
      t,
      policy,
      ctx.clusters,
      errors,
      ctx.now,
      ctx.scheduled?.(t.ref),
      ctx.excluded?.(t.ref),
    );
    schedules.set(t, schedule);
    scheduleErrors.set(t, errors);
    for (const dep of workloadDependencies(t, policy)) {
      const key = templateKey(dep.ref);
      if (!byKey.has(key)) {
        result.warnings.push(missingDependency(t, policy, dep));
        continue;
      }
      if (!schedule) continue;
      const list = required.get(key) ?? [];
      list.push({ workload: t.ref, policy: policy.ref, clusters: schedule.targets.map((c) => c.name).sort() });
      required.set(key, list);
    }
  }

  for (const t of inputs.templates) {
    const policy = claims.get(t);
    const requirements = required.get(templateKey(t.ref));
    if (!policy && !requirements) {
      result.unmatched.push(t.ref);
      continue;
    }
    const own = new Set<string>();
    if (policy) {
      result.errors.push(...(scheduleErrors.get(t) ?? []));
      const schedule = schedules.get(t);
      if (schedule && options.explain)
        (result.skipped ??= []).push(...schedule.skipped.map((x) => ({ template: t.ref, ...x })));
      if (schedule) {
        for (const c of schedule.targets) own.add(c.name);
        renderScheduled(t, policy, schedule, ctx, result);
      }
    }
    if (requirements) renderRequired(t, sortRequirements(requirements), own, ctx, result);
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
