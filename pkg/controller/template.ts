// The template reconciler: for one template on the hub, what the controller decides — its claim and
// finalizer (claims.ts), its plan (plan.ts) with graceful eviction (graceful-eviction.ts) and application
// failover (app-failover-state.ts), handed to every member's work queue (execute.ts); the members'
// reports queue its ResourceBinding (binding-writer.ts, with its Works and status); a deleted template's
// cleanup (cleanup.ts). Who writes what about each cluster (pull agents, shards) is reach.ts's.
//
// reconcile(template):
//   - deleted (deletionTimestamp) and carrying our finalizer: the object goes from every member (only
//     one carrying the template's uid label, with its uid as a precondition), then the binding and the
//     finalizer; unreachable members hold the finalizer for cleanupTimeoutMs, retried every 5 s;
//   - not claimed: a template that was claimed (it carries the finalizer) keeps what it has on the
//     members (Karmada's rule) and its binding says Claimed: False; one that never was gets nothing;
//   - claimed, or required by workloads whose policy says propagateDeps: the claim record and the
//     finalizer are patched in (one patch; its event brings the template back), then the plan is made and
//     handed to the members (member-dispatch.ts says which); the binding lists the workloads in
//     spec.requiredBy;
//   - no longer required nor claimed, having gone to the members only because workloads required it (its
//     last plan, or its binding, says so): it goes from every member, then the binding and the finalizer.
// The binding is written (server-side apply, skipped when unchanged) once every targeted member has
// reported on the current plan, or BINDING_PARTIAL_MS after a report when some have not, so a slow member
// delays only its own line (BINDING_UNREPORTED_MS after the plan when none has reported).

import { refOf } from '../engine/inputs.js';
import { DEFAULT_DISPATCH } from '../engine/dispatch.js';
import type { EngineState } from '../engine/state.js';
import type { KubeClient } from '../kube/client.js';
import type { Discovery } from '../kube/discovery.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import type { WorkQueue } from '../runtime/queue.js';
import type { ClusterStatus, PolicyRef, PurgeMode, RequiredBy } from './binding.js';
import { BindingWriter } from './binding-writer.js';
import { ApplicationFailover } from './app-failover-state.js';
import { TemplateClaims } from './claims.js';
import { TemplateCleanup } from './cleanup.js';
import { placementHealthy } from './eviction.js';
import type { EventRecorder } from './events.js';
import { MemberWork, type MemberReport } from './execute.js';
import { GracefulEviction } from './graceful-eviction.js';
import { HubApplies } from './hub-apply.js';
import type { KarmadaMirror } from './karmada-mirror.js';
import { MemberDispatch } from './member-dispatch.js';
import type { MemberRegistry } from './members.js';
import { FINALIZER, describeTemplate, type TemplateIdentity } from './ownership.js';
import { allReported, plan, type TemplatePlan } from './plan.js';
import { templateKey, templateQueue, type ReconcileResult } from './queue.js';
import { Reach, type Sharding } from './reach.js';
import type { Reconciler } from './reconciler.js';
import type { PolicyStatusReconciler } from './status.js';
import { TemplateStatusWriter } from './template-status.js';
import { WorkWriter } from './work-writer.js';
import { workTemplate } from './work.js';

export type { Sharding } from './reach.js';

/** How long a binding waits for the members that have not reported, after one that has, before it is written without them. */
const BINDING_PARTIAL_MS = 1_000;
/** How long a binding waits for the first report on a plan before it is written with every member pending. */
const BINDING_UNREPORTED_MS = 10_000;
/** How long the binding's summary waits after another writer's entry changed, to take a burst in one write. */
const BINDING_SUMMARY_MS = 2_000;

export interface TemplateOptions {
  hub: KubeClient;
  hubDiscovery: Discovery;
  state: EngineState;
  registry: MemberRegistry;
  events: EventRecorder;
  policyStatus: PolicyStatusReconciler;
  /** The claiming policy's object, for its permanent id (the claim labels). */
  policy(ref: PolicyRef): JsonObject | undefined;
  namespace: string;
  concurrency: number;
  memberConcurrency: number;
  cleanupTimeoutMs: number;
  /** How an evicted cluster's copy goes when the policy's spec.failover.cluster.purgeMode does not say. */
  evictionPurgeMode: PurgeMode;
  /** How long a Gracefully evicted copy is kept at most. */
  gracefulEvictionTimeoutMs: number;
  logger: Logger;
  onReconcile?: ((durationMs: number, outcome: string) => void) | undefined;
  onMemberResult?: ((member: string, state: string) => void) | undefined;
  /** What others report of a template, by cluster: pull agents (their Works), other shards (the binding's status.clusters). */
  agentEntries(t: TemplateIdentity): ReadonlyMap<string, ClusterStatus>;
  /** Pull cluster `cluster`'s Work of template `t` on the hub, as last seen. */
  work(cluster: string, t: TemplateIdentity): JsonObject | undefined;
  /** Sharded push (shards.ts): which members this replica works on, and whether it is the coordinator. */
  shards?: Sharding | undefined;
  /** When the hub serves Karmada's API: Karmada's objects and Events beside each binding. */
  karmada?: KarmadaMirror | undefined;
}

export class TemplateReconciler implements Reconciler {
  readonly name = 'templates';
  readonly queue: WorkQueue;
  readonly work: MemberWork;
  /** The binding writer, its own reconciler with its own queue. */
  readonly bindings: BindingWriter;
  private readonly o: TemplateOptions;
  private readonly reach: Reach;
  private readonly claims: TemplateClaims;
  private readonly cleanups: TemplateCleanup;
  private readonly evictions: GracefulEviction;
  private readonly appFailover: ApplicationFailover;
  private readonly templateStatus: TemplateStatusWriter;
  private readonly works: WorkWriter;
  private readonly dispatches = new MemberDispatch();
  /** Template key → its object on the hub, as last seen (kept after it left the state, for cleanup). */
  readonly templates = new Map<string, JsonObject>();
  private readonly plans = new Map<string, TemplatePlan>();
  private readonly reports = new Map<string, Map<string, MemberReport>>();
  /** Template keys whose last plan sent them to members only because workloads required them. */
  private readonly requiredOnly = new Set<string>();
  /** Template key → its last plan's preserveResourcesOnDeletion (plans are dropped once it is deleting). */
  private readonly preserve = new Map<string, boolean>();
  private versions = 0;

  constructor(o: TemplateOptions) {
    this.o = o;
    this.queue = templateQueue((key, signal) => this.reconcile(key, signal), o);
    this.reach = new Reach({ registry: o.registry, agentEntries: (t) => o.agentEntries(t), shards: o.shards });
    const applies = new HubApplies(o.hub);
    this.works = new WorkWriter({ ...o, applies, work: (c, t) => o.work(c, t) });
    this.templateStatus = new TemplateStatusWriter(o);
    this.bindings = new BindingWriter({
      ...o,
      applies,
      reach: this.reach,
      works: this.works,
      templateStatus: this.templateStatus,
      plan: (key) => this.plans.get(key),
      template: (key) => this.templates.get(key),
      reports: (key) => this.reports.get(key),
    });
    this.claims = new TemplateClaims({ ...o, policy: (ref) => o.policy(ref) });
    this.evictions = new GracefulEviction({
      ...o,
      purgeMode: o.evictionPurgeMode,
      timeoutMs: o.gracefulEvictionTimeoutMs,
      readBinding: (t) => this.bindings.read(t),
    });
    this.appFailover = new ApplicationFailover(o.logger);
    this.work = new MemberWork({
      plan: (key) => this.plans.get(key),
      ref: (key) => {
        const t = this.templates.get(key);
        return t ? refOf(t) : undefined;
      },
      report: (key, member, r) => this.report(key, member, r),
      events: o.events,
      logger: o.logger,
      concurrency: o.memberConcurrency,
      onMemberResult: o.onMemberResult,
    });
    this.cleanups = new TemplateCleanup({
      ...o,
      reach: this.reach,
      work: this.work,
      bindings: this.bindings,
      claims: this.claims,
    });
  }

  /** Runs the templates queue and the members' queues until `signal` aborts (the binding writer runs on its own). */
  async run(signal: AbortSignal): Promise<void> {
    this.work.start(signal);
    await this.queue.start(signal);
  }

  /** Every template again (a member connected or became ready, a resync). */
  all(): void {
    for (const key of this.templates.keys()) {
      this.dispatches.everyMember(key);
      this.queue.add(key);
    }
  }

  /** An object applied for template `key` changed on member `member` (drift, status): the plan goes there again. */
  ownedChanged(member: string, key: string): void {
    this.dispatches.changedOn(member, key);
    this.queue.add(key);
  }

  /** A pull agent's Work status (or, sharded, another replica's entry) changed: the binding (or a cleanup waiting for it) follows. */
  bindingChanged(key: string): void {
    const p = this.plans.get(key);
    // A burst of entries (every agent reporting on a new template) is one summary write, not one each.
    if (p) {
      this.bindings.queue.addAfter(key, BINDING_SUMMARY_MS);
      this.placementChanged(key, p);
    } else if (this.templates.has(key)) this.queue.add(key);
  }

  /** An eviction task (but Never's) ends once the new placement is healthy: look again when it is. */
  private placementChanged(key: string, p: TemplatePlan): void {
    const targets = [...p.clusters.keys()];
    if (
      p.evictionTasks.some((t) => t.purgeMode !== 'Never') &&
      placementHealthy(targets, (c) => this.statusOf(key, p, c))
    )
      this.queue.add(key);
  }

  /** A pull cluster's Work changed: when its agent's report changed (or the Work went), the binding follows. */
  onWork(o: JsonObject, old?: JsonObject): void {
    if (old && JSON.stringify(o.status) === JSON.stringify(old.status)) return;
    const template = workTemplate(o);
    if (!template) return;
    const { uid: _uid, ...ref } = template;
    this.bindingChanged(templateKey(ref));
  }

  /** The template was deleted on the hub (its finalizer, when it had one, was handled before). */
  deleted(key: string): void {
    this.forget(key);
  }

  forget(key: string): void {
    const template = this.templates.get(key);
    if (template) {
      const meta = isObject(template.metadata) ? template.metadata : {};
      const t: TemplateIdentity = { ...refOf(template), uid: ownString(meta, 'uid') ?? '' };
      this.bindings.forget(t);
      this.works.forget(t);
      this.claims.forget(t.uid);
    }
    this.evictions.forget(key);
    this.appFailover.forget(key);
    this.dispatches.forget(key);
    this.cleanups.forget(key);
    this.requiredOnly.delete(key);
    this.preserve.delete(key);
    this.templateStatus.forget(key);
    this.templates.delete(key);
    this.plans.delete(key);
    this.reports.delete(key);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult> {
    const template = this.templates.get(key);
    if (!template) return undefined; // deleted without our finalizer: nothing was propagated by us
    const meta = isObject(template.metadata) ? template.metadata : {};
    const ref = refOf(template);
    const identity: TemplateIdentity = { ...ref, uid: ownString(meta, 'uid') ?? '' };
    const finalizers: unknown[] = Array.isArray(meta.finalizers) ? (meta.finalizers as unknown[]) : [];
    const hasFinalizer = finalizers.includes(FINALIZER);
    if (ownString(meta, 'deletionTimestamp')) {
      this.plans.delete(key);
      return hasFinalizer ? this.cleanup(key, template, identity, signal, 'deleted') : undefined;
    }
    // Sharded: the coordinator adds the finalizer before any replica writes to a member (the finalizer's
    // arrival queues the template again), so a copy is never made that a deletion would not wait for.
    const coordinator = this.reach.coordinator();
    const now = Date.now();
    const generation = typeof meta.generation === 'number' ? meta.generation : undefined;
    const appEvicted = this.appFailover.assess(key, generation, now, this.plans.get(key), this.reports.get(key));
    // Where each template is now (its last plan): NoSchedule taints do not take a template off those.
    const result = this.o.state.renderTemplate(key, {
      now,
      scheduled: (ref) => {
        const p = this.plans.get(templateKey(ref));
        return p ? new Set(p.clusters.keys()) : undefined;
      },
      excluded: (ref) => this.appFailover.excluded(templateKey(ref)),
    });
    const book = this.o.policyStatus.book;
    if (!result) {
      book.forget(key);
      this.o.policyStatus.flush();
      return undefined;
    }
    book.record(key, describeTemplate(identity), {
      policy: result.policy,
      overrides: result.placements.flatMap((p) => p.overrides),
      errors: result.errors,
    });
    this.o.policyStatus.flush();
    const requiredBy: RequiredBy[] = (result.requiredBy ?? []).map((r) => ({
      ...r.workload,
      clusters: r.clusters,
    }));
    if (!result.policy && requiredBy.length === 0) {
      this.plans.delete(key);
      if (coordinator) await this.claims.record(ref, template, undefined);
      if (!hasFinalizer) return undefined; // never propagated
      // Went only where workloads took it, and none does any more: it goes from the members.
      const prior = this.requiredOnly.has(key) ? 'requiredOnly' : await this.bindings.prior(identity);
      if (prior === 'requiredOnly') return this.cleanup(key, template, identity, signal, 'unneeded');
      // No longer claimed: what was propagated stays, and the binding says so. No binding: this template
      // was just cleaned up (the finalizer in the cache is stale), or never planned; nothing to say.
      if (prior === 'other') await this.bindings.put(identity, template, { clusters: [], errors: [] });
      return undefined;
    }
    // The claim record and the finalizer in one patch; its own event brings the template back (hub-events.ts),
    // and that reconcile plans it: a plan made now would be made again on that event, with the member
    // copies maybe not in the watch caches yet, and applied twice.
    if (coordinator) {
      if (await this.claims.record(ref, template, result.policy, true)) return undefined;
    } else if (!hasFinalizer) return undefined;
    // What the claiming policy says about dispatching, as the engine read it (a dependency no policy
    // claims: resolved from the workloads' that require it, required-dispatch.ts).
    const dispatch = result.dispatch ?? DEFAULT_DISPATCH;
    // The first plan of this process for a template evicted somewhere: its tasks are in its binding.
    if (!this.plans.has(key) && !this.evictions.has(key) && (result.evicted?.length ?? 0) > 0)
      await this.evictions.restore(key, identity);
    const p = plan(identity, template, result, dispatch, ++this.versions);
    p.requiredBy = requiredBy;
    const evictionDue = this.evictions.evict(key, p, this.plans.get(key), now, {
      byApplication: appEvicted,
      statusOf: (c) => this.statusOf(key, p, c),
      observed: (c) => this.reports.get(key)?.get(c)?.observed?.status,
    });
    this.appFailover.preserveState(key, p);
    if (result.policy) this.requiredOnly.delete(key);
    else this.requiredOnly.add(key);
    const members = this.dispatches.targets(
      key,
      p,
      this.plans.get(key),
      this.reach.ownMembers(),
      this.reports.get(key),
    );
    this.plans.set(key, p);
    this.preserve.set(key, p.preserveOnDeletion);
    const held = [...p.clusters.values()].filter((c) => c.state === 'Suspended').map((c) => c.name);
    if (held.length > 0)
      this.o.events.record(
        identity,
        'Normal',
        'Suspended',
        `dispatching to ${held.join(', ')} is suspended by ${describePolicyRef(p.policy)}: changes are not written there until it is lifted`,
      );
    if (p.overrideFailed.length > 0)
      this.o.events.record(identity, 'Warning', 'OverrideFailed', p.overrideFailed.join('; '));
    this.work.add(key, members);
    // Targeted clusters without a member, or a plan with nothing to apply: the binding says so now.
    if (
      ![...p.steps.values()].some((s) => s.action === 'apply') ||
      allReported(p, this.reports.get(key), (c) => this.reach.own(c))
    )
      this.bindings.queue.add(key);
    else this.bindings.queue.addAfter(key, BINDING_UNREPORTED_MS);
    // Look again when a NoExecute toleration runs out or an eviction task expires.
    // And when a copy has been unhealthy for as long as application failover tolerates.
    const tolerated = this.appFailover.due(key, p);
    const due = Math.min(result.recheckAt ?? Infinity, evictionDue ?? Infinity, tolerated);
    return Number.isFinite(due) ? { requeueAfter: Math.max(100, due - now) } : undefined;
  }

  /** A deleted template, or a dependency no workload requires any more: cleanup.ts, then what is kept of it goes. */
  private async cleanup(
    key: string,
    template: JsonObject,
    t: TemplateIdentity,
    signal: AbortSignal,
    why: 'deleted' | 'unneeded',
  ): Promise<ReconcileResult> {
    const preserve = why === 'deleted' && (this.preserve.get(key) ?? this.preservedByPolicy(key));
    const out = await this.cleanups.run(key, template, t, signal, why, preserve);
    if (typeof out === 'object') return out;
    this.reports.delete(key);
    if (out === 'done') {
      this.preserve.delete(key);
      this.requiredOnly.delete(key);
    }
    return undefined;
  }

  /** The claiming policy's preserveResourcesOnDeletion, for a template deleted before this process planned it. */
  private preservedByPolicy(key: string): boolean {
    return this.o.state.renderTemplate(key)?.dispatch?.preserveResourcesOnDeletion === true;
  }

  /** What cluster `c` last said of the template (any plan version): its member's report, or its agent's (or replica's) entry. */
  private statusOf(key: string, p: TemplatePlan, c: string): ClusterStatus | undefined {
    return this.reach.remote(c) ? this.reach.entries(p.identity).get(c) : this.reports.get(key)?.get(c)?.status;
  }

  private report(key: string, member: string, r: MemberReport): void {
    let byMember = this.reports.get(key);
    if (!byMember) this.reports.set(key, (byMember = new Map<string, MemberReport>()));
    byMember.set(member, r);
    const p = this.plans.get(key);
    if (!p) return;
    // Application failover: how long the copy has been unhealthy; look again when that is too long.
    const after = this.appFailover.observe(key, member, r, p);
    if (after !== undefined) this.queue.addAfter(key, after);
    this.placementChanged(key, p);
    if (allReported(p, byMember, (c) => this.reach.own(c))) this.bindings.queue.add(key);
    // Members slow alike (a backlog of this process's own) report close together: the wait for the others
    // starts at a report, not at the plan.
    else if (r.version === p.version) this.bindings.queue.addAfter(key, BINDING_PARTIAL_MS);
  }
}

function describePolicyRef(p: PolicyRef | undefined): string {
  return p ? `${p.kind} ${p.namespace ? `${p.namespace}/` : ''}${p.name}` : 'its policy';
}
