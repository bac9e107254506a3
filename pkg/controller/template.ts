// The template reconciler: for one template on the hub, what the controller does there — its finalizer,
// its plan (plan.ts) handed to every member's work queue (execute.ts), its ResourceBinding from what the
// members report, and the removal of its objects from every member when it is deleted.
//
// reconcile(template):
//   - deleted (deletionTimestamp) and carrying our finalizer: the object goes from every member (only
//     one carrying the template's uid label, with its uid as a precondition), then the binding and the
//     finalizer; unreachable members hold the finalizer for cleanupTimeoutMs, retried every 5 s;
//   - not claimed: a template that was claimed (it carries the finalizer) keeps what it has on the
//     members (Karmada's rule) and its binding says Claimed: False; one that never was gets nothing;
//   - claimed, or required by workloads whose policy says propagateDeps: the finalizer is added, the plan
//     made and queued on every member; the binding lists the workloads in spec.requiredBy;
//   - no longer required nor claimed, having gone to the members only because workloads required it (its
//     last plan, or its binding, says so): it goes from every member, then the binding and the finalizer.
// The binding is written (server-side apply, skipped when unchanged) once every targeted member has
// reported on the current plan, or BINDING_PARTIAL_MS after the first report when some have not, so a
// slow member delays only its own line.

import { createHash } from 'node:crypto';

import { refOf } from '../engine/inputs.js';
import {
  CLAIM_ANNOTATIONS,
  CLAIM_CPP_ID_LABEL,
  CLAIM_CPP_NAME_ANNOTATION,
  CLAIM_LABELS,
  CLAIM_PP_ID_LABEL,
  CLAIM_PP_NAME_ANNOTATION,
  CLAIM_PP_NAMESPACE_ANNOTATION,
  permanentIdOf,
} from '../engine/match.js';
import type { EngineState } from '../engine/state.js';
import type { ObjectRef } from '../engine/types.js';
import { apiError, METADATA_ACCEPT, type KubeClient } from '../kube/client.js';
import { serverSideApply } from '../kube/delivery.js';
import { resourcePath, type Discovery } from '../kube/discovery.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import { WorkQueue } from '../runtime/queue.js';
import {
  BINDING_API_VERSION,
  BINDING_KIND,
  BINDING_PLURAL,
  bindingName,
  bindingNamespace,
  bindingObject,
  type ClusterStatus,
  type PolicyRef,
  type EvictionTask,
  type PurgeMode,
  type RequiredBy,
} from './binding.js';
import { aggregateStatus, aggregates, type MemberObservation } from './aggregate.js';
import { appFailoverOf, preservedLabels } from './app-failover.js';
import { assessEvictions, bindingTasks, clusterPurgeMode, placementHealthy } from './eviction.js';
import type { EventRecorder } from './events.js';
import { MemberWork, RETRY_UNREACHABLE_MS, type MemberReport } from './execute.js';
import type { Member } from './member.js';
import type { MemberRegistry } from './members.js';
import { CONTROLLER_FIELD_MANAGER, FINALIZER, describeTemplate, type TemplateIdentity } from './ownership.js';
import { bindingClusters, plan, type TemplatePlan } from './plan.js';
import type { PolicyStatusReconciler } from './status.js';
import { executionSpace, workName, workObject, workPath, workWanted } from './work.js';

/** How long a binding waits for the members that have not reported yet before it is written without them. */
const BINDING_PARTIAL_MS = 1_000;
/** How long the binding's summary waits after another writer's entry changed, to take a burst in one write. */
const BINDING_SUMMARY_MS = 2_000;

export interface TemplateOptions {
  hub: KubeClient;
  hubDiscovery: Discovery;
  state: EngineState;
  registry: MemberRegistry;
  events: EventRecorder;
  policyStatus: PolicyStatusReconciler;
  /** The claiming policy's object, for its spec (conflictResolution). */
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
}

export interface Sharding {
  owns(member: string): boolean;
  coordinator(): boolean;
  /** This replica's field manager for its members' entries of the bindings' status. */
  entriesManager: string;
}

export class TemplateReconciler {
  readonly queue: WorkQueue;
  readonly work: MemberWork;
  private readonly bindings: WorkQueue;
  private readonly o: TemplateOptions;
  /** Template key → its object on the hub, as last seen (kept after it left the state, for cleanup). */
  readonly templates = new Map<string, JsonObject>();
  private readonly plans = new Map<string, TemplatePlan>();
  private readonly reports = new Map<string, Map<string, MemberReport>>();
  private readonly cleanupSince = new Map<string, number>();
  /** Template key → the aggregated status last written on it. */
  private readonly statusWritten = new Map<string, string>();
  /** Pull clusters' namespaces on the hub known to exist. */
  private readonly spaces = new Set<string>();
  /** Template key → cluster → since when its copy there has been unhealthy (application failover). */
  private readonly unhealthySince = new Map<string, Map<string, number>>();
  /**
   * Template key → the clusters application failover evicted it from, for one template generation (a new
   * generation may be healthy there: it is tried again), and the labels statePreservation keeps.
   */
  private readonly appEvicted = new Map<
    string,
    { generation: number | undefined; clusters: Set<string>; before: Set<string>; labels: Record<string, string> }
  >();
  /** Template key → cluster → the eviction task of a cluster a NoExecute taint took the template off. */
  private readonly evictions = new Map<string, Map<string, EvictionTask>>();
  /** Template keys whose last plan sent them to members only because workloads required them. */
  private readonly requiredOnly = new Set<string>();
  /** Template key → its last plan's preserveResourcesOnDeletion (plans are dropped once it is deleting). */
  private readonly preserve = new Map<string, boolean>();
  /** Binding path → the body last written there, so an unchanged binding costs no request. */
  private readonly written = new Map<string, string>();
  private versions = 0;

  constructor(o: TemplateOptions) {
    this.o = o;
    this.queue = templateQueue((key, signal) => this.reconcile(key, signal), o);
    this.bindings = hubWriteQueue((key) => this.writeBinding(key), o.logger, 'cannot write a ResourceBinding');
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
  }

  /** Runs the queues until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    this.work.start(signal);
    await Promise.all([this.queue.start(signal), this.bindings.start(signal)]);
  }

  /** Every template again (a member connected or became ready, a resync). */
  all(): void {
    for (const key of this.templates.keys()) this.queue.add(key);
  }

  /** Whether this replica writes what is about the template rather than a member (always, unless sharded). */
  private coordinator(): boolean {
    return this.o.shards?.coordinator() ?? true;
  }

  /** The members this replica works on. */
  private ownMembers(): Member[] {
    const shards = this.o.shards;
    const all = [...this.o.registry.all()];
    return shards ? all.filter((m) => shards.owns(m.name)) : all;
  }

  /** A cluster whose entry someone else writes: a pull cluster's agent, or (sharded) another replica. */
  private remote(cluster: string): boolean {
    const shards = this.o.shards;
    return (
      this.o.registry.isPull(cluster) ||
      (shards !== undefined && this.o.registry.get(cluster) !== undefined && !shards.owns(cluster))
    );
  }

  /** A pull agent's Work status (or, sharded, another replica's entry) changed: the binding (or a cleanup waiting for it) follows. */
  bindingChanged(key: string): void {
    const p = this.plans.get(key);
    // A burst of entries (every agent reporting on a new template) is one summary write, not one each.
    if (p) {
      this.bindings.addAfter(key, BINDING_SUMMARY_MS);
      this.placementChanged(key, p);
    } else if (this.templates.has(key)) this.queue.add(key);
  }

  /** A graceful eviction waits for the new placement to be healthy: look again when it is. */
  private placementChanged(key: string, p: TemplatePlan): void {
    const targets = [...p.clusters.keys()];
    if (
      p.evictionTasks.some((t) => t.purgeMode === 'Gracefully') &&
      placementHealthy(targets, (c) => this.statusOf(key, p, c))
    )
      this.queue.add(key);
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
      const path = this.bindingPath(t);
      for (const at of [path, `${path}/status`, `${path}/status#entries`]) this.written.delete(at);
      for (const c of this.o.registry.pullNames()) this.written.delete(workPath(c, workName(t, this.o.namespace)));
    }
    this.evictions.delete(key);
    this.unhealthySince.delete(key);
    this.appEvicted.delete(key);
    this.requiredOnly.delete(key);
    this.preserve.delete(key);
    this.statusWritten.delete(key);
    this.templates.delete(key);
    this.plans.delete(key);
    this.reports.delete(key);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfter?: number } | undefined> {
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
    const coordinator = this.coordinator();
    const now = Date.now();
    const appEvicted = this.applicationFailover(
      key,
      typeof meta.generation === 'number' ? meta.generation : undefined,
      now,
    );
    // Where each template is now (its last plan): NoSchedule taints do not take a template off those.
    const result = this.o.state.renderTemplate(key, {
      now,
      scheduled: (ref) => {
        const p = this.plans.get(templateKey(ref));
        return p ? new Set(p.clusters.keys()) : undefined;
      },
      excluded: (ref) => this.appEvicted.get(templateKey(ref))?.clusters,
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
      if (coordinator) await this.recordClaim(ref, template, undefined);
      if (!hasFinalizer) return undefined; // never propagated
      // Went only where workloads took it, and none does any more: it goes from the members.
      const prior = this.requiredOnly.has(key) ? 'requiredOnly' : await this.priorBinding(identity);
      if (prior === 'requiredOnly') return this.cleanup(key, template, identity, signal, 'unneeded');
      // No longer claimed: what was propagated stays, and the binding says so. No binding: this template
      // was just cleaned up (the finalizer in the cache is stale), or never planned; nothing to say.
      if (prior === 'other') await this.putBinding(identity, template, { clusters: [], errors: [] });
      return undefined;
    }
    if (coordinator) {
      await this.recordClaim(ref, template, result.policy);
      if (!hasFinalizer) await this.patchFinalizers(ref, [...finalizers, FINALIZER]);
    } else if (!hasFinalizer) return undefined;
    // A dependency no policy claims follows the first workload that requires it in conflictResolution,
    // suspension and preserveResourcesOnDeletion.
    const policy = this.o.policy(result.policy ?? result.requiredBy![0]!.policy);
    const spec = policy && isObject(policy.spec) ? policy.spec : {};
    // The first plan of this process for a template evicted somewhere: its tasks are in its binding.
    if (!this.plans.has(key) && !this.evictions.has(key) && (result.evicted?.length ?? 0) > 0)
      await this.restoreEvictions(key, identity);
    const p = plan(identity, template, result, spec, ++this.versions);
    p.requiredBy = requiredBy;
    p.appFailover = appFailoverOf(spec);
    const evictionDue = this.evict(key, p, spec, now, appEvicted);
    this.preserveState(key, p);
    if (result.policy) this.requiredOnly.delete(key);
    else this.requiredOnly.add(key);
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
    this.work.add(key, this.ownMembers());
    // Targeted clusters without a member, or a plan with nothing to apply: the binding says so now.
    if (![...p.steps.values()].some((s) => s.action === 'apply')) this.bindings.add(key);
    else this.bindings.addAfter(key, BINDING_PARTIAL_MS);
    // Look again when a NoExecute toleration runs out or an eviction task expires.
    // And when a copy has been unhealthy for as long as application failover tolerates.
    const tolerated = p.appFailover
      ? Math.min(...[...(this.unhealthySince.get(key)?.values() ?? [])].map((t) => t + p.appFailover!.tolerationMs))
      : Infinity;
    const due = Math.min(result.recheckAt ?? Infinity, evictionDue ?? Infinity, tolerated);
    return Number.isFinite(due) ? { requeueAfter: Math.max(100, due - now) } : undefined;
  }

  /**
   * Graceful eviction (eviction.ts): the template's tasks after plan `p`; a kept copy's cluster gets a
   * `keep` step and an Evicting entry. Returns when the next task expires.
   */
  private evict(
    key: string,
    p: TemplatePlan,
    spec: JsonObject,
    now: number,
    byApplication: ReadonlySet<string>,
  ): number | undefined {
    const previous = this.plans.get(key);
    const targets = [...p.clusters.keys()];
    const app = p.appFailover;
    const out = assessEvictions({
      tasks: this.evictions.get(key) ?? new Map<string, EvictionTask>(),
      targets,
      evicted: [...p.evicted],
      wasTargeted: (c) => previous?.steps.has(c) === true,
      purgeMode: clusterPurgeMode(spec, this.o.evictionPurgeMode),
      application: app ? { clusters: byApplication, failover: app } : undefined,
      reasons: new Map(p.notChosen.map((n) => [n.cluster, n.reason])),
      healthy: placementHealthy(targets, (c) => this.statusOf(key, p, c)),
      now,
      timeoutMs: this.o.gracefulEvictionTimeoutMs,
    });
    for (const [c, entry] of out.kept) p.steps.set(c, { action: 'keep', message: entry.message ?? 'evicted' });
    const kept = out.created.flatMap((c) =>
      out.kept.has(c) ? [`${c}: ${out.kept.get(c)!.message ?? 'evicted'}`] : [],
    );
    if (kept.length > 0) {
      this.o.events.record(p.identity, 'Normal', 'Evicting', kept.join('; '));
      this.o.logger.info('evicted; the copy is kept', { template: describeKey(key), clusters: kept });
    }
    if (out.tasks.length > 0) this.evictions.set(key, new Map(out.tasks.map((t) => [t.fromCluster, t])));
    else this.evictions.delete(key);
    p.evictionTasks = out.tasks;
    p.evicting = [...out.kept.values()];
    return out.due;
  }

  /** Reads the template's eviction tasks back from its binding on the hub (a restart keeps them, and their timeouts). */
  private async restoreEvictions(key: string, t: TemplateIdentity): Promise<void> {
    const res = await this.o.hub.request({ method: 'GET', path: this.bindingPath(t) });
    if (res.status === 404) return;
    if (res.status >= 400) throw apiError(res);
    // Only this template's: a binding left by an earlier template of the same name says nothing of it.
    const resource = isObject(res.body) && isObject(res.body.spec) ? res.body.spec.resource : undefined;
    if (!isObject(resource) || resource.uid !== t.uid) return;
    const tasks = bindingTasks(res.body);
    if (tasks.size > 0) this.evictions.set(key, tasks);
  }

  /**
   * Application failover, before rendering: the clusters whose copy has been unhealthy longer than the
   * last plan's policy tolerates join the template's evicted set (for this generation; a new one is tried
   * everywhere again). Returns the clusters evicted by this call.
   */
  private applicationFailover(key: string, generation: number | undefined, now: number): Set<string> {
    let ev = this.appEvicted.get(key);
    if (ev && ev.generation !== generation) {
      this.appEvicted.delete(key);
      ev = undefined;
    }
    const out = new Set<string>();
    const previous = this.plans.get(key);
    const app = previous?.appFailover;
    if (!previous || !app) return out;
    for (const [c, since] of this.unhealthySince.get(key) ?? []) {
      if (now - since < app.tolerationMs || !previous.clusters.has(c) || ev?.clusters.has(c)) continue;
      ev ??= { generation, clusters: new Set(), before: new Set(previous.clusters.keys()), labels: {} };
      ev.clusters.add(c);
      Object.assign(ev.labels, preservedLabels(app.rules, this.reports.get(key)?.get(c)?.observed?.status));
      this.unhealthySince.get(key)?.delete(c);
      out.add(c);
      this.o.logger.info('application failover: evicting an unhealthy copy', {
        template: describeKey(key),
        cluster: c,
        unhealthyForMs: now - since,
      });
    }
    if (ev) this.appEvicted.set(key, ev);
    return out;
  }

  /** statePreservation: the kept labels go onto the copies on clusters the template was not on before failover. */
  private preserveState(key: string, p: TemplatePlan): void {
    const ev = this.appEvicted.get(key);
    if (!ev || Object.keys(ev.labels).length === 0) return;
    for (const [c, step] of p.steps) {
      if (step.action !== 'apply' || ev.before.has(c)) continue;
      const meta = isObject(step.object.metadata) ? step.object.metadata : (step.object.metadata = {});
      meta.labels = { ...(isObject(meta.labels) ? meta.labels : {}), ...ev.labels };
    }
  }

  /** What cluster `c` last said of the template (any plan version): its member's report, or its agent's (or replica's) entry. */
  private statusOf(key: string, p: TemplatePlan, c: string): ClusterStatus | undefined {
    return this.remote(c) ? this.o.agentEntries(p.identity).get(c) : this.reports.get(key)?.get(c)?.status;
  }

  private report(key: string, member: string, r: MemberReport): void {
    let byMember = this.reports.get(key);
    if (!byMember) this.reports.set(key, (byMember = new Map<string, MemberReport>()));
    byMember.set(member, r);
    const p = this.plans.get(key);
    if (!p) return;
    // Application failover: how long the copy has been unhealthy; look again when that is too long.
    const app = p.appFailover;
    if (app && p.clusters.has(member)) {
      let since = this.unhealthySince.get(key);
      const unhealthy = r.status.state === 'Applied' && r.status.health?.state === 'Progressing';
      if (unhealthy && !since?.has(member)) {
        if (!since) this.unhealthySince.set(key, (since = new Map<string, number>()));
        since.set(member, Date.now());
        this.queue.addAfter(key, app.tolerationMs + 50);
      } else if (!unhealthy && r.status.state === 'Applied') since?.delete(member);
    }
    this.placementChanged(key, p);
    const waiting = [...p.steps].some(
      ([name, s]) =>
        s.action === 'apply' &&
        this.o.registry.get(name) &&
        !this.remote(name) &&
        byMember.get(name)?.version !== p.version,
    );
    if (!waiting) this.bindings.add(key);
  }

  private async writeBinding(key: string): Promise<void> {
    const p = this.plans.get(key);
    const template = this.templates.get(key);
    if (!p || !template) return;
    const registry = this.o.registry;
    const every = bindingClusters(p, this.reports.get(key) ?? new Map<string, MemberReport>(), (c) =>
      registry.whyNoAccess(c),
    );
    // A pull cluster's entry is its agent's report in its Work (the replicas are the plan's); sharded, another
    // replica's member's entry is that replica's.
    const entries =
      registry.pullNames().length > 0 || this.o.shards
        ? this.o.agentEntries(p.identity)
        : new Map<string, ClusterStatus>();
    const reported = every
      .filter((c) => this.remote(c.name) && c.state !== 'Removing' && c.state !== 'Evicting')
      .map((base): ClusterStatus => {
        const e = entries.get(base.name);
        const planned = base.replicas === undefined ? {} : { replicas: base.replicas };
        if (base.state === 'Suspended') return base;
        if (!e)
          return {
            ...base,
            state: 'Pending',
            message: registry.isPull(base.name)
              ? 'waiting for its agent to report (pull mode)'
              : 'waiting for the replica working on it to report (sharded)',
          };
        return { ...e, ...planned, ...(base.overrides ? { overrides: base.overrides } : {}) };
      });
    // A pull cluster's entry is listed by the controller (from the agent's Work); sharded, the coordinator
    // counts the other replicas' and pull agents' entries and each replica lists its own members'.
    // A kept evicted copy (Evicting) is the controller's to say, listed or counted as its cluster's entry is.
    const listed = (c: ClusterStatus) => !this.o.shards && registry.isPull(c.name);
    const evicting = every.filter((c) => c.state === 'Evicting' && this.remote(c.name));
    const clusters = [
      ...every.filter((c) => !this.remote(c.name)),
      ...reported.filter(listed),
      ...evicting.filter(listed),
    ];
    const agentClusters = [...reported, ...evicting].filter((c) => !listed(c));
    await this.putBinding(p.identity, template, {
      ...(agentClusters.length > 0 ? { agentClusters } : {}),
      ...(p.policy ? { policy: p.policy } : {}),
      ...(p.requiredBy.length > 0 ? { requiredBy: p.requiredBy } : {}),
      ...(p.evictionTasks.length > 0 ? { evictionTasks: p.evictionTasks } : {}),
      ...(p.notChosen.length > 0 ? { notChosen: p.notChosen } : {}),
      conflictResolution: p.conflictResolution,
      ...(p.preserveOnDeletion ? { preserveResourcesOnDeletion: true } : {}),
      clusters,
      errors: p.errors,
    });
    // Sharded, a replica sees its own members' copies only: the template's status is not aggregated.
    if (!this.o.shards) await this.putTemplateStatus(key, p, template);
  }

  /** The template's status from its members' copies (aggregate.ts), when its kind has one; unchanged: no request. */
  private async putTemplateStatus(key: string, p: TemplatePlan, template: JsonObject): Promise<void> {
    const t = p.identity;
    if (!aggregates(t.apiVersion, t.kind)) return;
    const reports = this.reports.get(key);
    const members: MemberObservation[] = [...p.clusters.keys()].map((cluster) => {
      const r = reports?.get(cluster);
      return { cluster, object: r && r.version === p.version ? r.observed : undefined };
    });
    const meta = isObject(template.metadata) ? template.metadata : {};
    const status = aggregateStatus(t.kind, typeof meta.generation === 'number' ? meta.generation : undefined, members);
    if (!status) return;
    const text = JSON.stringify(status);
    if (this.statusWritten.get(key) === text) return;
    const info = await this.o.hubDiscovery.resolve(t.apiVersion, t.kind);
    const res = await this.o.hub.request({
      method: 'PATCH',
      accept: METADATA_ACCEPT,
      path: `${resourcePath(info, t.namespace, t.name)}/status`,
      contentType: 'application/merge-patch+json',
      body: { status },
    });
    if (res.status === 404) return;
    if (res.status >= 400) throw apiError(res);
    this.statusWritten.set(key, text);
  }

  /**
   * A deleted template, or a dependency no workload requires any more ('unneeded'): its objects go from
   * every member, then the binding and the finalizer.
   */
  private async cleanup(
    key: string,
    template: JsonObject,
    t: TemplateIdentity,
    signal: AbortSignal,
    why: 'deleted' | 'unneeded',
  ): Promise<{ requeueAfter?: number } | undefined> {
    const log = this.o.logger;
    const unreachable: string[] = [];
    const removedFrom: string[] = [];
    const ref = refOf(template);
    const preserve = why === 'deleted' && (this.preserve.get(key) ?? this.preservedByPolicy(key));
    const reason =
      why === 'deleted' ? 'the template is being deleted' : 'no workload requires it any more and no policy claims it';
    await Promise.all(
      this.ownMembers().map(async (m) => {
        const gone = preserve ? await this.work.release(m, t, ref, signal) : await this.work.remove(m, t, ref, signal);
        if (gone === 'removed') removedFrom.push(m.name);
        else if (gone !== 'absent') unreachable.push(`${m.name}: ${gone.error}`);
      }),
    );
    if (!this.coordinator()) {
      // Sharded: this replica's members are clean; its entries go, and the coordinator, which waits for
      // them, releases the finalizer.
      if (unreachable.length > 0) return { requeueAfter: RETRY_UNREACHABLE_MS };
      await this.putEntries(t, []);
      this.reports.delete(key);
      return undefined;
    }
    // A pull cluster's agent removes its copy, then clears its Work's status (sharded, another replica
    // removes its entry from the binding): wait for that.
    if (why === 'deleted')
      for (const [cluster] of this.o.agentEntries(t))
        if (this.remote(cluster))
          unreachable.push(
            this.o.registry.isPull(cluster)
              ? `${cluster}: its agent has not removed its copy yet (pull mode)`
              : `${cluster}: the replica working on it has not removed its copy yet (sharded)`,
          );
    if (unreachable.length > 0) {
      const since = this.cleanupSince.get(key) ?? Date.now();
      this.cleanupSince.set(key, since);
      if (Date.now() - since < this.o.cleanupTimeoutMs) {
        log.warn('members not cleaned yet', { template: describeTemplate(t), reason, members: unreachable });
        return { requeueAfter: RETRY_UNREACHABLE_MS };
      }
      log.error('releasing the finalizer although some members could not be cleaned', {
        template: describeTemplate(t),
        reason,
        members: unreachable,
        waitedMs: Date.now() - since,
      });
    }
    this.cleanupSince.delete(key);
    if (removedFrom.length > 0 && preserve)
      this.o.events.record(
        t,
        'Normal',
        'Preserved',
        `left on ${removedFrom.join(', ')} without Flotilla's ownership labels: the template is being deleted and its policy says preserveResourcesOnDeletion`,
      );
    else if (removedFrom.length > 0)
      this.o.events.record(t, 'Normal', 'Pruned', `removed from ${removedFrom.join(', ')}: ${reason}`);
    // The binding's owner reference would have the garbage collector remove it; do not wait for that.
    const path = this.bindingPath(t);
    this.written.delete(path);
    this.written.delete(`${path}/status`);
    this.written.delete(`${path}/status#entries`);
    await this.o.hub.request({ method: 'DELETE', path, accept: METADATA_ACCEPT });
    await this.deleteWorks(t);
    const meta = isObject(template.metadata) ? template.metadata : {};
    await this.patchFinalizers(
      ref,
      (Array.isArray(meta.finalizers) ? meta.finalizers : []).filter((f) => f !== FINALIZER),
    );
    this.reports.delete(key);
    this.preserve.delete(key);
    this.requiredOnly.delete(key);
    log.info(
      preserve
        ? 'template deleted; its objects stay on the members (preserveResourcesOnDeletion)'
        : `removed from every member: ${reason}`,
      { template: describeTemplate(t), members: removedFrom },
    );
    return undefined;
  }

  /**
   * What the binding on the hub says of a template no policy claims and no workload requires: it went to
   * the members only because workloads required it, or it was claimed, or there is no binding.
   */
  private async priorBinding(t: TemplateIdentity): Promise<'requiredOnly' | 'other' | 'absent'> {
    const path = this.bindingPath(t);
    const res = await this.o.hub.request({ method: 'GET', path });
    if (res.status === 404) {
      this.written.delete(path);
      this.written.delete(`${path}/status`);
      return 'absent';
    }
    if (res.status >= 400) throw apiError(res);
    const spec = isObject(res.body) && isObject(res.body.spec) ? res.body.spec : {};
    return spec.policy === undefined && Array.isArray(spec.requiredBy) && spec.requiredBy.length > 0
      ? 'requiredOnly'
      : 'other';
  }

  /**
   * Records the claim on the template, with Karmada's labels and annotations (the engine reads them, so the
   * claim sticks until its policy goes or a policy preempts it); removes the record when nothing claims it.
   * Unchanged: no request.
   */
  private async recordClaim(ref: ObjectRef, template: JsonObject, claim: PolicyRef | undefined): Promise<void> {
    const meta = isObject(template.metadata) ? template.metadata : {};
    const labels = isObject(meta.labels) ? meta.labels : {};
    const annotations = isObject(meta.annotations) ? meta.annotations : {};
    const id = claim ? permanentIdOf(this.o.policy(claim)) : undefined;
    const want: { labels: Record<string, string | null>; annotations: Record<string, string | null> } = {
      labels: Object.fromEntries(CLAIM_LABELS.map((l) => [l, null])),
      annotations: Object.fromEntries(CLAIM_ANNOTATIONS.map((a) => [a, null])),
    };
    if (claim?.kind === 'PropagationPolicy') {
      if (id) want.labels[CLAIM_PP_ID_LABEL] = id;
      want.annotations[CLAIM_PP_NAMESPACE_ANNOTATION] = claim.namespace ?? ref.namespace ?? '';
      want.annotations[CLAIM_PP_NAME_ANNOTATION] = claim.name;
    } else if (claim?.kind === 'ClusterPropagationPolicy') {
      if (id) want.labels[CLAIM_CPP_ID_LABEL] = id;
      want.annotations[CLAIM_CPP_NAME_ANNOTATION] = claim.name;
    }
    const same = (have: JsonObject, w: Record<string, string | null>) =>
      Object.entries(w).every(([k, v]) => (v === null ? !Object.hasOwn(have, k) : have[k] === v));
    if (same(labels, want.labels) && same(annotations, want.annotations)) return;
    const info = await this.o.hubDiscovery.resolve(ref.apiVersion, ref.kind);
    const res = await this.o.hub.request({
      method: 'PATCH',
      accept: METADATA_ACCEPT,
      path: resourcePath(info, ref.namespace, ref.name),
      contentType: 'application/merge-patch+json',
      body: { metadata: want },
    });
    if (res.status === 404) return;
    if (res.status >= 400) throw apiError(res);
  }

  /** The claiming policy's preserveResourcesOnDeletion, for a template deleted before this process planned it. */
  private preservedByPolicy(key: string): boolean {
    const ref = this.o.state.renderTemplate(key)?.policy;
    const policy = ref ? this.o.policy(ref) : undefined;
    return isObject(policy?.spec) && policy.spec.preserveResourcesOnDeletion === true;
  }

  private async patchFinalizers(ref: ObjectRef, finalizers: unknown[]): Promise<void> {
    const info = await this.o.hubDiscovery.resolve(ref.apiVersion, ref.kind);
    const res = await this.o.hub.request({
      method: 'PATCH',
      accept: METADATA_ACCEPT,
      path: resourcePath(info, ref.namespace, ref.name),
      contentType: 'application/merge-patch+json',
      body: { metadata: { finalizers } },
    });
    if (res.status === 404) return;
    if (res.status >= 400) throw apiError(res);
  }

  private bindingPath(t: TemplateIdentity): string {
    const ns = encodeURIComponent(bindingNamespace(t, this.o.namespace));
    return `/apis/${BINDING_API_VERSION}/namespaces/${ns}/${BINDING_PLURAL}/${encodeURIComponent(bindingName(t.name, t.kind))}`;
  }

  private async putBinding(
    t: TemplateIdentity,
    template: JsonObject,
    b: {
      policy?: PolicyRef;
      requiredBy?: RequiredBy[];
      evictionTasks?: EvictionTask[];
      notChosen?: Array<{ cluster: string; reason: string }>;
      conflictResolution?: string;
      preserveResourcesOnDeletion?: boolean;
      clusters: ClusterStatus[];
      agentClusters?: ClusterStatus[];
      errors: string[];
    },
  ): Promise<void> {
    const meta = isObject(template.metadata) ? template.metadata : {};
    const generation = typeof meta.generation === 'number' ? meta.generation : undefined;
    const body = bindingObject({
      template: { ...t, ...(generation === undefined ? {} : { generation }) },
      controllerNamespace: this.o.namespace,
      ...b,
    });
    const path = this.bindingPath(t);
    // Spec (with metadata) on the resource, status on its subresource: each written only when it changed.
    // Sharded: the coordinator writes spec and the summary, each replica its own members' entries.
    const { status, ...main } = body;
    const { clusters: entries, ...summary } = status as JsonObject;
    const id = body.metadata as JsonObject;
    const statusOf = (s: JsonObject) => ({
      apiVersion: body.apiVersion,
      kind: body.kind,
      metadata: { name: id.name, namespace: id.namespace },
      status: s,
    });
    if (!this.o.shards) {
      await this.apply(path, main, CONTROLLER_FIELD_MANAGER);
      await this.apply(`${path}/status`, statusOf(status as JsonObject), CONTROLLER_FIELD_MANAGER);
      await this.putWorks(t, body.spec as JsonObject);
      return;
    }
    if (this.coordinator()) {
      await this.apply(path, main, CONTROLLER_FIELD_MANAGER);
      await this.apply(`${path}/status`, statusOf(summary), CONTROLLER_FIELD_MANAGER);
      await this.putWorks(t, body.spec as JsonObject);
    }
    await this.putEntries(t, Array.isArray(entries) ? entries.filter(isObject) : []);
  }

  /** Each pull cluster's Work of the template (work.ts): applied while wanted, deleted once not. */
  private async putWorks(t: TemplateIdentity, spec: JsonObject): Promise<void> {
    // All clusters at once: the hub client bounds the requests in flight.
    await Promise.all(
      this.o.registry.pullNames().map(async (cluster) => {
        const existing = this.o.work(cluster, t);
        const path = workPath(cluster, workName(t, this.o.namespace));
        if (workWanted(spec, cluster, existing)) {
          await this.ensureExecutionSpace(cluster);
          await this.apply(path, workObject(t, this.o.namespace, cluster, spec), CONTROLLER_FIELD_MANAGER);
        } else if (existing) await this.deleteWork(path);
      }),
    );
  }

  /** Deletes template `t`'s Works (its cleanup is done). */
  private async deleteWorks(t: TemplateIdentity): Promise<void> {
    for (const cluster of this.o.registry.pullNames())
      if (this.o.work(cluster, t)) await this.deleteWork(workPath(cluster, workName(t, this.o.namespace)));
  }

  private async deleteWork(path: string): Promise<void> {
    this.written.delete(path);
    const res = await this.o.hub.request({ method: 'DELETE', path, accept: METADATA_ACCEPT });
    if (res.status >= 400 && res.status !== 404) throw apiError(res);
  }

  /** A pull cluster's namespace on the hub, created once if missing (the chart creates it with the agent's rights there). */
  private async ensureExecutionSpace(cluster: string): Promise<void> {
    const name = executionSpace(cluster);
    if (this.spaces.has(name)) return;
    const res = await this.o.hub.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      accept: METADATA_ACCEPT,
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    });
    if (res.status >= 400 && res.status !== 409) throw apiError(res);
    this.spaces.add(name);
  }

  /** Sharded: this replica's members' entries of the template's binding status (none: its entries go). */
  private async putEntries(t: TemplateIdentity, entries: JsonObject[]): Promise<void> {
    const shards = this.o.shards;
    if (!shards) return;
    const at = `${this.bindingPath(t)}/status#entries`;
    const body = {
      apiVersion: BINDING_API_VERSION,
      kind: BINDING_KIND,
      metadata: { name: bindingName(t.name, t.kind), namespace: bindingNamespace(t, this.o.namespace) },
      status: { clusters: entries },
    };
    // Nothing written before and nothing to write: no request.
    if (entries.length === 0 && !this.written.has(at)) return;
    await this.apply(at, body, shards.entriesManager);
  }

  /** One server-side apply at `at` (a `#part` suffix names a second writer of one path), skipped when unchanged. */
  private async apply(at: string, body: JsonObject, fieldManager: string): Promise<void> {
    // A digest, not the text: one is kept per binding and per pull cluster's Work.
    const text = createHash('sha256').update(JSON.stringify(body)).digest('base64');
    if (this.written.get(at) === text) return;
    this.written.delete(at);
    const res = await serverSideApply(this.o.hub, at.replace(/#.*$/, ''), body, { fieldManager, force: true });
    // A binding the coordinator has not written yet: the entries come with the next report.
    if (res.status === 404 && at.endsWith('#entries')) return;
    if (res.status >= 400) throw apiError(res);
    this.written.set(at, text);
  }
}

/** A template reconciler's queue: each result told to onReconcile, a failure logged and retried with backoff. */
export function templateQueue(
  reconcile: (key: string, signal: AbortSignal) => Promise<{ requeueAfter?: number } | undefined>,
  o: { concurrency: number; logger: Logger; onReconcile?: ((durationMs: number, outcome: string) => void) | undefined },
): WorkQueue {
  return new WorkQueue<string>(
    { reconcile },
    {
      concurrency: o.concurrency,
      onResult: (e) => {
        o.onReconcile?.(e.durationMs, e.outcome);
        if (e.outcome === 'error')
          o.logger.warn('reconcile failed; retrying with backoff', {
            template: describeKey(e.key),
            error: e.error instanceof Error ? e.error.message : String(e.error),
          });
      },
    },
  );
}

/** A queue of one write on the hub per template key (a binding, an entry), 4 at once; a failure is logged as `what` and retried. */
export function hubWriteQueue(write: (key: string) => Promise<void>, logger: Logger, what: string): WorkQueue {
  return new WorkQueue<string>(
    { reconcile: write },
    {
      concurrency: 4,
      onResult: (e) => {
        if (e.outcome === 'error')
          logger.warn(`${what}; retrying`, { template: describeKey(e.key), error: String(e.error) });
      },
    },
  );
}

function describePolicyRef(p: PolicyRef | undefined): string {
  return p ? `${p.kind} ${p.namespace ? `${p.namespace}/` : ''}${p.name}` : 'its policy';
}

export function templateKey(ref: ObjectRef): string {
  return JSON.stringify([ref.apiVersion, ref.kind, ref.namespace ?? '', ref.name]);
}

export function describeKey(key: string): string {
  try {
    const [apiVersion, kind, namespace, name] = JSON.parse(key) as string[];
    return describeTemplate({
      apiVersion: apiVersion ?? '',
      kind: kind ?? '',
      name: name ?? '',
      ...(namespace ? { namespace } : {}),
    });
  } catch {
    return key;
  }
}
