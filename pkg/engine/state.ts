// The engine as a state kept across calls, for the controller: templates, policies and Clusters are
// upserted and removed one at a time, and one template is rendered at a time. Still pure: no I/O, no
// clock, no environment.
//
// Same answers as render(): renderTemplate(key) gives exactly the placements, errors or "unmatched" that
// renderDetailed({objects}) gives for that template when `objects` are the objects the state holds (with
// admission on, minus the policies and Clusters the webhook would deny). Claiming uses PropagationMatcher,
// override ordering OverrideCatalog, and everything after the claim renderClaimed, each fed only the
// candidate policies the indexes find; a policy that is not a candidate cannot match the template.
//
// Cost: renderTemplate looks up the policies filed under the template's (apiVersion, kind, namespace,
// name) and walks the clusters; it never looks at another template. A mutation costs the size of what it
// can affect (below), never a pass over every template unless a policy selects every template.
//
// `affected`: every mutation returns the keys of the held templates whose renderTemplate() answer may
// differ from the one before the call — all of it but `notChosen`, which explains: a Cluster that no
// placement could select does not make templates affected, so their list of clusters not chosen is
// refreshed at their next render. How tight it is:
//   - template upsert/remove: that template's key (always; also when the object did not change).
//   - Propagation/ClusterPropagationPolicy: the templates whose claiming policy differs before and after,
//     found by computing the claim, before and after, of every template the old or the new selectors match.
//     Exact, except that a template claimed by the policy both times is included even when the change
//     cannot alter its output (e.g. a selector edit that keeps it claimed). An update with an equal spec
//     affects nothing.
//   - Override/ClusterOverridePolicy: the templates the old or new selectors match that are claimed (an
//     unmatched template has no placements). A superset: rules whose targetCluster selects none of the
//     template's clusters, or templates whose placement fails, are included. Equal spec: nothing.
//   - propagateDeps: to all of the above, the held dependencies a affected workload names (before and
//     after the change); a template that appears or goes adds the workloads that name it (their missing-
//     dependency warnings); an override policy's scope includes the dependencies workloads name.
//   - Cluster: the templates claimed by a propagation policy whose placement could select the cluster
//     before or after (affinity, ignoring taints and spread constraints, which only narrow), plus, when
//     a cluster is added or removed, the templates of policies that select no cluster (their error lists
//     every cluster name). A superset: the cluster may still lose on spread constraints or get no
//     replicas. An update that changes nothing placement, division or overrides read (status,
//     annotations, the kubeconfig secret) affects nothing.

import { karmadaClaimMetadata } from './claim-copy.js';
import { dispatchOf, type Dispatch } from './dispatch.js';
import { admissionErrors } from './admission.js';
import { refOf, sortInputs, type PolicyEntry, type Template } from './inputs.js';
import { isObject, jsonEqual, obj } from './json.js';
import { PropagationMatcher, type Claim } from './match.js';
import { requiredDispatch } from './required-dispatch.js';
import { OverrideCatalog } from './overrides.js';
import { couldSelect, selectsNone } from './placement.js';
import { DependencyIndex } from './state-deps.js';
import {
  missingDependency,
  renderClaimed,
  renderRequired,
  renderScheduled,
  sortRequirements,
  workloadDependencies,
  type DetailedResult,
  type RenderOptions,
  type Requirement,
} from './render.js';
import { scheduleClaimed, type Unplaced } from './schedule.js';
import { identify, policyKey, PolicyBuckets, TemplateIndex, templateKey, type Identity } from './state-index.js';
import type { ClusterInfo, ObjectRef, PolicyRef } from './types.js';

export { templateKey };

export interface EngineStateOptions {
  /**
   * Leave out the policies and Clusters the admission webhook would deny, as an API server guarded by it
   * would never hold them and `flotilla render` leaves them out. Default true. With false the state
   * answers as render() does for the same objects.
   */
  admission?: boolean;
}

export interface Rejection {
  object: ObjectRef;
  /** Denied: the admission rules deny it. Unusable: the engine cannot read it (render() reports these as errors). */
  reason: 'Denied' | 'Unusable';
  message: string;
}

export interface Mutation {
  /** Keys of held (or just removed) templates whose renderTemplate() answer may have changed; see the file comment. */
  affected: Set<string>;
  /** Why the object is not used. Whatever was held under the same identity has been dropped. */
  rejected: Rejection[];
}

/** renderDetailed's result for one template, with the claiming policy. */
export interface TemplateResult extends DetailedResult {
  template: ObjectRef;
  /** The propagation policy that claims the template; absent when it is unmatched. */
  policy?: PolicyRef;
  /** The workloads that take this template with them (propagateDeps), sorted; absent when none does. */
  requiredBy?: Requirement[];
  /** Clusters a NoExecute taint keeps the claimed template off (failover: eviction). */
  evicted?: string[];
  /** When the answer changes with no mutation (a NoExecute toleration runs out): render it again then. */
  recheckAt?: number;
  /** The known clusters the claimed template does not go to, and why (placement's first reason). */
  notChosen?: Array<{ cluster: string; reason: string }>;
  /** What the claiming policy says about dispatching (dispatch.ts); required only: its workloads' policies' (required-dispatch.ts). */
  dispatch?: Dispatch;
}

export interface StateCounts {
  templates: number;
  propagationPolicies: number;
  overridePolicies: number;
  clusters: number;
}

/** The shapes render()'s input reading expands into their items; the state holds single objects. */
function isList(o: unknown): boolean {
  if (!isObject(o) || !Array.isArray(o.items)) return false;
  return o.kind === 'List' || (typeof o.kind === 'string' && o.kind.endsWith('List') && o.metadata === undefined);
}

/** Equal in everything placement, division and overrides read from a cluster (all of ClusterInfo but the raw object). */
function sameClusterFacts(a: ClusterInfo, b: ClusterInfo): boolean {
  const { object: _a, ...fa } = a;
  const { object: _b, ...fb } = b;
  return jsonEqual(fa, fb);
}

export class EngineState {
  private readonly admission: boolean;
  private readonly templates = new TemplateIndex();
  private readonly propagation = new Map<string, PolicyEntry>();
  private readonly overrides = new Map<string, PolicyEntry>();
  private readonly propagationBuckets = new PolicyBuckets();
  private readonly overrideBuckets = new PolicyBuckets();
  private readonly clusters = new Map<string, ClusterInfo>();
  private readonly dependencies = new DependencyIndex();
  /** Clusters sorted by name, rebuilt on the first render after a cluster set change. */
  private sortedClusters: ClusterInfo[] | undefined;

  constructor(options: EngineStateOptions = {}) {
    this.admission = options.admission !== false;
  }

  /** The key a template is held under (namespace defaulted as render() reads it), or undefined for non-templates. */
  keyOf(ref: ObjectRef): string | undefined {
    const id = identify(ref);
    return id?.type === 'template' ? id.key : undefined;
  }

  has(key: string): boolean {
    return this.templates.get(key) !== undefined;
  }

  templateRef(key: string): ObjectRef | undefined {
    return this.templates.get(key)?.ref;
  }

  /** Keys of every held template, in insertion order (a changed template keeps its place). */
  templateKeys(): IterableIterator<string> {
    return this.templates.keys();
  }

  counts(): StateCounts {
    return {
      templates: this.templates.size,
      propagationPolicies: this.propagation.size,
      overridePolicies: this.overrides.size,
      clusters: this.clusters.size,
    };
  }

  /**
   * Adds or replaces one object: a template, a policy (either group, either version) or a Cluster. Held by
   * reference: do not change it afterwards (informer caches give objects to be treated as immutable). A
   * List is rejected; upsert its items. An object that is rejected drops what was held under its identity.
   */
  upsert(object: unknown): Mutation {
    const m: Mutation = { affected: new Set(), rejected: [] };
    const ref = refOf(object);
    if (isList(object)) {
      m.rejected.push({
        object: ref,
        reason: 'Unusable',
        message: `${ref.kind || 'List'}: the state holds single objects; upsert the items one by one`,
      });
      return m;
    }
    const denied = this.admission ? admissionErrors(object) : [];
    if (denied.length > 0) {
      for (const message of denied) m.rejected.push({ object: ref, reason: 'Denied', message });
      this.drop(identify(ref), m);
      this.withDependencies(m);
      return m;
    }
    const inputs = sortInputs([object]);
    if (inputs.errors.length > 0) {
      for (const e of inputs.errors) m.rejected.push({ object: e.object, reason: 'Unusable', message: e.message });
      this.drop(identify(ref), m);
      this.withDependencies(m);
      return m;
    }
    for (const t of inputs.templates) this.setTemplate(t, m);
    for (const p of inputs.propagation) this.changePropagation(policyKey(p.kind, p.namespace, p.name), p, m);
    for (const p of inputs.overrides) this.changeOverride(policyKey(p.kind, p.namespace, p.name), p, m);
    for (const c of inputs.clusters) this.changeCluster(c.name, c, m);
    this.withDependencies(m);
    return m;
  }

  /** Removes whatever is held under the object's identity (see keyOf; Clusters by name, policies by kind, namespace and name). */
  remove(ref: ObjectRef): Mutation {
    const m: Mutation = { affected: new Set(), rejected: [] };
    this.drop(identify(ref), m);
    this.withDependencies(m);
    return m;
  }

  /**
   * What renderDetailed() gives for this template: its placements and errors, or unmatched. Undefined
   * when no such template is held. Costs the template's candidate policies and the clusters, whatever the
   * number of other templates.
   */
  renderTemplate(keyOrRef: string | ObjectRef, options: RenderOptions = {}): TemplateResult | undefined {
    const key = typeof keyOrRef === 'string' ? keyOrRef : this.keyOf(keyOrRef);
    const t = key === undefined ? undefined : this.templates.get(key);
    if (!t) return undefined;
    const result: TemplateResult = { template: t.ref, placements: [], unmatched: [], errors: [], warnings: [] };
    const claim = this.claimOf(t);
    const requirements = this.requirementsOf(key!, options);
    if (!claim && requirements.length === 0) {
      result.unmatched.push(t.ref);
      return result;
    }
    const ctx = {
      clusters: this.clusterList(),
      rulesFor: (x: Template) => new OverrideCatalog(this.overrideBuckets.candidates(x)).rulesFor(x),
      only: options.clusters ? new Set(options.clusters) : undefined,
      now: options.now,
      scheduled: options.scheduled,
      excluded: options.excluded,
      explain: options.explain === true,
    };
    const own = new Set<string>();
    if (claim) {
      result.policy = claim.policy.ref;
      result.dispatch = dispatchOf(claim.policy.spec);
      // Placed nowhere: which clusters were evicted still counts (a graceful eviction keeps their copies).
      const unplaced: Unplaced = { evicted: [], skipped: [] };
      const schedule = renderClaimed(t, claim.policy, ctx, result, unplaced);
      for (const c of schedule?.targets ?? []) own.add(c.name);
      const { evicted, skipped } = schedule ?? unplaced;
      if (evicted.length > 0) result.evicted = evicted;
      if (skipped.length > 0) result.notChosen = skipped;
      if (schedule?.recheckAt !== undefined) result.recheckAt = schedule.recheckAt;
      for (const dep of workloadDependencies(t, claim.policy))
        if (!this.templates.get(templateKey(dep.ref))) result.warnings.push(missingDependency(t, claim.policy, dep));
    }
    if (requirements.length > 0) {
      result.requiredBy = requirements;
      result.dispatch ??= requiredDispatch(
        requirements.map((r) => {
          const w = this.templates.get(templateKey(r.workload));
          return (w && this.claimOf(w)?.policy.spec) ?? {};
        }),
      );
      renderRequired(t, requirements, own, ctx, result);
    }
    return result;
  }

  /**
   * The template rendered for clusters whose placement was decided elsewhere (the hub's ResourceBinding, as
   * a pull agent reads it): each named cluster that is held gets the template with its override rules and
   * the replicas given (undefined: the template's own). Placement is not run; a named cluster not held is
   * skipped (an agent holds its own Cluster only). `policy` names the decision's policy in errors; absent,
   * the claiming policy's, else the decision is reported as the hub's. Undefined when no such template is held.
   */
  renderPlaced(
    keyOrRef: string | ObjectRef,
    placed: { clusters: ReadonlyMap<string, number | undefined>; policy?: PolicyRef },
    options: Pick<RenderOptions, 'explain'> = {},
  ): TemplateResult | undefined {
    const key = typeof keyOrRef === 'string' ? keyOrRef : this.keyOf(keyOrRef);
    const t = key === undefined ? undefined : this.templates.get(key);
    if (!t) return undefined;
    const result: TemplateResult = { template: t.ref, placements: [], unmatched: [], errors: [], warnings: [] };
    const claimed = this.claimOf(t)?.policy.ref;
    const policy = placed.policy ?? claimed ?? { kind: 'ResourceBinding', name: t.ref.name };
    if (placed.policy ?? claimed) result.policy = policy;
    const targets = this.clusterList().filter((c) => placed.clusters.has(c.name));
    if (targets.length === 0) return result;
    const division = new Map<string, number>();
    for (const [c, n] of placed.clusters) if (n !== undefined) division.set(c, n);
    const ctx = {
      clusters: targets,
      rulesFor: (x: Template) => new OverrideCatalog(this.overrideBuckets.candidates(x)).rulesFor(x),
      explain: options.explain === true,
    };
    const claimedEntry = this.claimOf(t)?.policy;
    renderScheduled(
      t,
      claimedEntry &&
        claimedEntry.ref === claimed &&
        (placed.policy === undefined || samePolicy(placed.policy, claimed))
        ? claimedEntry
        : { ref: policy },
      { targets, division: division.size > 0 ? division : undefined, evicted: [], skipped: [] },
      ctx,
      result,
    );
    return result;
  }

  /** The held workloads that take this template with them, each with the clusters it is scheduled to. */
  private requirementsOf(key: string, options: RenderOptions): Requirement[] {
    const out: Requirement[] = [];
    for (const w of this.dependencies.requirersOf(key)) {
      const t = this.templates.get(w);
      const policy = t ? this.claimOf(t)?.policy : undefined;
      if (!t || !policy || !workloadDependencies(t, policy).some((d) => templateKey(d.ref) === key)) continue;
      const schedule = scheduleClaimed(
        t,
        policy,
        this.clusterList(),
        [],
        options.now,
        options.scheduled?.(t.ref),
        options.excluded?.(t.ref),
      );
      if (schedule)
        out.push({ workload: t.ref, policy: policy.ref, clusters: schedule.targets.map((c) => c.name).sort() });
    }
    return sortRequirements(out);
  }

  /** Adds to `m.affected` the held dependencies of every affected workload (see the file comment). */
  private withDependencies(m: Mutation): void {
    for (const k of [...m.affected])
      for (const d of this.dependencies.namedBy(k)) if (this.templates.get(d)) m.affected.add(d);
  }

  /** Files a workload's dependencies (both directions); the held ones it named before are added to `m.affected`. */
  private indexDependencies(key: string, t: Template | undefined, m: Mutation): void {
    for (const d of this.dependencies.file(key, t)) if (this.templates.get(d)) m.affected.add(d);
  }

  /** A template appeared or went: the workloads that name it say so differently (missing-dependency warnings). */
  private requirersAffected(key: string, m: Mutation): void {
    for (const w of this.dependencies.requirersOf(key)) m.affected.add(w);
  }

  private clusterList(): ClusterInfo[] {
    this.sortedClusters ??= [...this.clusters.values()].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    return this.sortedClusters;
  }

  private claimOf(t: Template): Claim | undefined {
    const candidates = this.propagationBuckets.candidates(t);
    return candidates.length === 0 ? undefined : new PropagationMatcher(candidates).claim(t);
  }

  private drop(id: Identity | undefined, m: Mutation): void {
    if (!id) return;
    switch (id.type) {
      case 'template':
        if (this.templates.delete(id.key)) {
          m.affected.add(id.key);
          this.indexDependencies(id.key, undefined, m);
          this.requirersAffected(id.key, m);
        }
        return;
      case 'propagation':
        return this.changePropagation(id.key, undefined, m);
      case 'override':
        return this.changeOverride(id.key, undefined, m);
      case 'cluster':
        return this.changeCluster(id.key, undefined, m);
    }
  }

  private setTemplate(t: Template, m: Mutation): void {
    const key = templateKey(t.ref);
    const isNew = !this.templates.get(key);
    this.templates.set(key, t);
    m.affected.add(key);
    this.indexDependencies(key, t, m);
    if (isNew) this.requirersAffected(key, m);
  }

  private changePropagation(key: string, next: PolicyEntry | undefined, m: Mutation): void {
    const prev = this.propagation.get(key);
    if (!prev && !next) return;
    // Claims read the spec (selectors, priority) and the name; rendering reads spec.placement, and the group
    // and Karmada permanent id, which decide the claim metadata the copies carry (claim-copy.ts).
    if (
      prev &&
      next &&
      jsonEqual(prev.spec, next.spec) &&
      jsonEqual(karmadaClaimMetadata(prev), karmadaClaimMetadata(next))
    )
      return;
    const scope = new Map<string, Template>();
    if (prev) this.templates.matching(prev, scope);
    if (next) this.templates.matching(next, scope);
    const before = new Map<string, PolicyEntry | undefined>();
    for (const [k, t] of scope) before.set(k, this.claimOf(t)?.policy);
    if (prev) {
      this.propagationBuckets.delete(prev);
      this.propagation.delete(key);
    }
    if (next) {
      this.propagationBuckets.add(next);
      this.propagation.set(key, next);
    }
    for (const [k, t] of scope) if (this.claimOf(t)?.policy !== before.get(k)) m.affected.add(k);
  }

  private changeOverride(key: string, next: PolicyEntry | undefined, m: Mutation): void {
    const prev = this.overrides.get(key);
    if (!prev && !next) return;
    if (prev && next && jsonEqual(prev.spec, next.spec)) return;
    const scope = new Map<string, Template>();
    if (prev) this.templates.matching(prev, scope);
    if (next) this.templates.matching(next, scope);
    if (prev) {
      this.overrideBuckets.delete(prev);
      this.overrides.delete(key);
    }
    if (next) {
      this.overrideBuckets.add(next);
      this.overrides.set(key, next);
    }
    for (const [k, t] of scope) if (this.dependencies.isRequired(k) || this.claimOf(t)) m.affected.add(k);
  }

  private changeCluster(name: string, next: ClusterInfo | undefined, m: Mutation): void {
    const prev = this.clusters.get(name);
    if (!prev && !next) return;
    if (prev && next && sameClusterFacts(prev, next)) return;
    if (next) this.clusters.set(name, next);
    else this.clusters.delete(name);
    this.sortedClusters = undefined;
    const namesChanged = !prev || !next;
    const clusters = namesChanged ? this.clusterList() : [];
    const claims = new Map<string, PolicyEntry | undefined>();
    for (const p of this.propagation.values()) {
      const placement = obj(p.spec.placement);
      if (
        !couldSelect(placement, prev) &&
        !couldSelect(placement, next) &&
        !(namesChanged && selectsNone(placement, clusters))
      )
        continue;
      const scope = new Map<string, Template>();
      this.templates.matching(p, scope);
      for (const [k, t] of scope) {
        if (m.affected.has(k)) continue;
        let claim = claims.get(k);
        if (!claims.has(k)) claims.set(k, (claim = this.claimOf(t)?.policy));
        if (claim === p) m.affected.add(k);
      }
    }
  }
}

function samePolicy(a: PolicyRef, b: PolicyRef): boolean {
  return a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
}
