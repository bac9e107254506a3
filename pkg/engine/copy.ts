// One (template, cluster) pair: the cluster's copy of the template with its replicas set, the override
// rules that target the cluster applied in order, then the Gatekeeper mutators, then the fields the
// server owns dropped. overrideObject is the one path from rules to an overridden object: rendering and
// admission (admit.ts) both come through here.

import { MutationError, MutationSystem, type Mutator } from './gatekeeper.js';
import type { PolicyEntry, Template } from './inputs.js';
import { cloneJson, isObject, obj, type JsonObject } from './json.js';
import { CLAIM_ANNOTATIONS, CLAIM_LABELS } from './match.js';
import { ruleActsOn, type AdmissionOperation, type OverrideRule } from './overrides.js';
import { applyOverriders, OverrideError, type AdditionGuard } from './overriders/index.js';
import { PatchError } from './patch.js';
import { pruneGeneratedFields } from './prune.js';
import type { DetailedPlacement, RenderContext, RenderOut } from './render.js';
import { clusterMatches } from './selectors.js';
import type { AppliedRule, Change, ClusterInfo, ObjectRef, PolicyRef } from './types.js';
import { stampClaimMetadata, type ClaimMetadata } from './claim-copy.js';

/** An override rule failed: the message names the rule; `policy` is its override policy. */
class RuleError extends OverrideError {
  readonly policy: PolicyRef;
  constructor(message: string, policy: PolicyRef, options?: { cause?: unknown }) {
    super(message, options);
    this.policy = policy;
  }
}

const NO_LABELS: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map();

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

/** A policy as messages name it: `Kind namespace/name`. */
export function describeEntry(p: PolicyEntry): string {
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
        throw new RuleError(`${describeEntry(rule.policy)}: ${rulePath(rule)}.${err.message}`, rule.policy.ref, {
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

/** A cluster's share of a divided workload: its replicas, and a divided Job's completions. */
export interface ReplicaShare {
  replicas: number;
  completions?: number | undefined;
}

/** The spec field holding a workload's replicas: a Job's parallelism, any other kind's replicas. */
function replicaField(kind: unknown): 'parallelism' | 'replicas' {
  return kind === 'Job' ? 'parallelism' : 'replicas';
}

/** The replicas a rendered copy holds (its share when divided), or undefined when it has none. */
export function copyReplicas(copy: JsonObject): number | undefined {
  const n = obj(copy.spec)?.[replicaField(copy.kind)];
  return typeof n === 'number' ? n : undefined;
}

/**
 * Writes a cluster's share into its copy as Karmada's ReviseReplica does: a Job's parallelism, any other
 * workload's spec.replicas; a Job's completions only when the template sets them.
 */
function reviseReplicas(
  doc: JsonObject,
  kind: string,
  share: ReplicaShare,
  policy: PolicyRef,
  changes: Change[] | undefined,
): void {
  const spec = obj(doc.spec) ?? (doc.spec = {});
  const set = (field: string, value: number): void => {
    const op = Object.hasOwn(spec, field) ? 'replace' : 'add';
    spec[field] = value;
    changes?.push({ path: `/spec/${field}`, op, source: { policy, overrider: 'placement.replicaScheduling' } });
  };
  set(replicaField(kind), share.replicas);
  if (share.completions !== undefined && Object.hasOwn(spec, 'completions')) set('completions', share.completions);
}

/** One cluster's copy: replicas set, override rules and Gatekeeper mutators applied, server fields pruned. */
function renderOne(
  t: Template,
  policy: PolicyRef,
  cluster: ClusterInfo,
  share: ReplicaShare | undefined,
  rules: readonly OverrideRule[],
  explain: boolean,
  mutators: readonly Mutator[],
  namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>,
  claim: ClaimMetadata | undefined,
): DetailedPlacement {
  let doc: unknown = cloneJson(t.object);
  const changes: Change[] = [];
  if (share !== undefined && isObject(doc))
    reviseReplicas(doc, t.ref.kind, share, policy, explain ? changes : undefined);
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

/**
 * Renders one (template, cluster) pair into `out`: a placement, or an error for that pair only.
 * `requiredBy` (propagateDeps) is set on the placement before `out` is given it.
 */
export function renderPair(
  t: Template,
  policy: PolicyRef,
  cluster: ClusterInfo,
  share: ReplicaShare | undefined,
  rules: readonly OverrideRule[],
  ctx: RenderContext,
  out: RenderOut,
  claim?: ClaimMetadata,
  requiredBy?: ObjectRef[],
): DetailedPlacement | undefined {
  try {
    const p = renderOne(
      t,
      policy,
      cluster,
      share,
      rules,
      ctx.explain,
      ctx.mutators ?? [],
      ctx.namespaceLabels ?? NO_LABELS,
      claim,
    );
    if (requiredBy) p.requiredBy = requiredBy;
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
