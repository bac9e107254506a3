// The engine's pipeline, a pure function of its input objects:
//   sort inputs (inputs.ts) → claim each template for one propagation policy (match.ts) → pick clusters,
//   divide replicas (schedule.ts) → per cluster: copy the template, set its replicas, apply the matching
//   override rules in order, drop server-populated fields (copy.ts) → placements + provenance.
// A failure for one (template, cluster) pair is reported in `errors` and the other pairs still render.
//
// propagateDeps: a workload claimed by a policy that says `propagateDeps: true` takes the ConfigMaps,
// Secrets, ServiceAccounts and PersistentVolumeClaims it names (dependencies.ts) to every cluster it is
// scheduled to, when they are among the templates: a dependency goes to its own policy's clusters (if a
// policy claims it) and to every cluster a workload that requires it goes to, with the override rules of
// that cluster, once per cluster. A dependency that is not among the templates is a warning.

import { karmadaClaimMetadata } from './claim-copy.js';
import { describeEntry, renderPair } from './copy.js';
import { divideCompletions } from './job-replicas.js';
import { dependenciesOf, hasDependencies } from './dependencies.js';
import type { Mutator } from './gatekeeper.js';
import { sortInputs, type PolicyEntry, type Template } from './inputs.js';
import { isObject } from './json.js';
import { PropagationMatcher } from './match.js';
import { OverrideCatalog, type OverrideRule } from './overrides.js';
import { scheduleClaimed, type Schedule, type Unplaced } from './schedule.js';
import { templateKey } from './state-index.js';
import type { AppliedRule, Change, ClusterInfo, ObjectRef, PolicyRef } from './types.js';

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

/** renderDetailed's result without the placements: renderEach hands each placement on instead of keeping it. */
export type RenderSummary = Omit<DetailedResult, 'placements'>;

/** Where rendering puts what it makes: placements (an array, or a sink that hands each one on) and errors. */
export interface RenderOut {
  placements: { push(p: DetailedPlacement): unknown };
  errors: DetailedRenderError[];
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
  out: RenderOut,
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
  out: RenderOut,
): void {
  const rules = ctx.rulesFor(t);
  // A policy.karmada.io claim is named on each copy as Karmada names it (claim-copy.ts).
  const claim = policy.object && policy.kind ? karmadaClaimMetadata(policy as PolicyEntry) : undefined;
  const completions = divideCompletions(t.ref.kind, t.object, schedule.division);
  for (const cluster of schedule.targets) {
    if (ctx.only && !ctx.only.has(cluster.name)) continue;
    const replicas = schedule.division?.get(cluster.name);
    const share = replicas === undefined ? undefined : { replicas, completions: completions?.get(cluster.name) };
    renderPair(t, policy.ref, cluster, share, rules, ctx, out, claim);
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
  out: RenderOut,
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
    const requiredBy = rs.map((r) => r.workload);
    renderPair(t, rs[0]!.policy, cluster, undefined, rules, ctx, out, undefined, requiredBy);
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
    message: `${dep.path} names ${dep.ref.kind} ${dep.ref.namespace}/${dep.ref.name}, which is not found: it does not go with the workload (spec.propagateDeps of ${describeEntry(policy)})`,
  };
}

/** Requirements in one order whatever the order the workloads were found in (render() and the state agree). */
export function sortRequirements(rs: Requirement[]): Requirement[] {
  const key = (r: Requirement) => templateKey(r.workload);
  return rs.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

export function renderDetailed(input: RenderInput, options: RenderOptions = {}): DetailedResult {
  const placements: DetailedPlacement[] = [];
  const summary = renderEach(input, options, (p) => placements.push(p));
  return { placements, ...summary };
}

/**
 * renderDetailed, with each placement handed to `each` as soon as it is made and not kept: what the
 * caller does not hold is garbage at once (the CLI writes each one out; a benchmark counts them). The
 * placements come in renderDetailed's order; warnings and schedules are made before the first of them.
 */
export function renderEach(
  input: RenderInput,
  options: RenderOptions,
  each: (p: DetailedPlacement) => void,
): RenderSummary {
  const objects = isObject(input) && Array.isArray(input.objects) ? input.objects : [];
  const inputs = sortInputs(objects);
  const result: RenderSummary = {
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
  const out: RenderOut = { placements: { push: each }, errors: result.errors };

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
        renderScheduled(t, policy, schedule, ctx, out);
      }
    }
    if (requirements) renderRequired(t, sortRequirements(requirements), own, ctx, out);
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
