// The agent's template reconciler (`flotilla agent`, a Cluster with spec.syncMode Pull): the same per
// (template, member) work as the controller (execute.ts, the delivery core), for one member — the cluster
// the agent runs in — with the placement read from the hub rather than computed. The hub's controller
// schedules every template (it knows every cluster, their health and taints), writes the decision in the
// template's ResourceBinding, and the cluster's share of it in a Work in the cluster's namespace on the
// hub (work.ts). The agent reads its namespace's Works, renders its own cluster's copy with the
// incremental engine (the template, the override policies, its own Cluster: EngineState.renderPlaced),
// applies it locally, and writes what happened in the Work's status (server-side apply on the status
// subresource, field manager `flotilla-agent.<cluster>`); the controller carries it into the binding.
//
// What the agent's cluster should hold of a template, from its Work (the binding's spec for the cluster):
//   - the cluster is in spec.clusters: the rendered copy (with its replicas), or, when the render fails
//     there, what it has (the entry says Failed);
//   - a spec.gracefulEvictionTasks entry names the cluster: what it has, until the hub drops the task;
//   - the binding has no policy and no requiredBy (the claim was released): what it has (Karmada's rule);
//   - otherwise, and when there is no Work (never placed there, or the hub removed it): nothing.
// A template being deleted (deletionTimestamp) or gone is removed from the cluster, or released when its
// Work said preserveResourcesOnDeletion; then the Work's status is cleared, which is what the controller
// waits for before it releases the template's finalizer. While the agent's Cluster is not
// in Pull mode, it does nothing: the controller delivers there.
//
// Once its cluster reports a plan's copy applied, the plan lets the copy go (it keeps what the Work's
// status needs): an agent holds a template's rendered copy only while it is being applied. Whatever would
// apply it again — drift, a Work or Cluster change, the member coming back — plans the template again
// first; a retry of the member's work that finds the copy gone does that too.

import { createHash } from 'node:crypto';

import { refOf } from '../engine/inputs.js';
import type { EngineState } from '../engine/state.js';
import { apiError, type KubeClient } from '../kube/client.js';
import { serverSideApply } from '../kube/delivery.js';
import { deepEqual, isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import { type WorkQueue } from '../runtime/queue.js';
import { type ClusterStatus, type PolicyRef } from './binding.js';
import type { EventRecorder } from './events.js';
import { MemberWork, RETRY_UNREACHABLE_MS, type MemberReport } from './execute.js';
import type { Member } from './member.js';
import { describeTemplate, type TemplateIdentity } from './ownership.js';
import { bindingClusters, plan, type TemplatePlan } from './plan.js';
import { hubWriteQueue, templateKey, templateQueue, type ReconcileResult } from './queue.js';
import type { Reconciler } from './reconciler.js';
import {
  WORK_API_VERSION,
  WORK_KIND,
  executionSpace,
  workName,
  workPath,
  workStatus,
  workDispatch,
  workTemplate,
} from './work.js';

/** The field manager of an agent's Work status (and its Cluster's). */
export function agentFieldManager(cluster: string): string {
  const full = `flotilla-agent.${cluster}`;
  // The apiserver takes 128 characters; a longer name keeps a hash of the whole, so two never meet.
  if (full.length <= 128) return full;
  return `${full.slice(0, 119)}.${createHash('sha256').update(cluster).digest('hex').slice(0, 8)}`;
}

export interface AgentReconcilerOptions {
  hub: KubeClient;
  state: EngineState;
  /** The member this agent runs in, under its cluster's name. */
  member(): Member | undefined;
  cluster: string;
  /** The agent's own Cluster on the hub, as last seen. */
  clusterObject(): JsonObject | undefined;
  /** A Work in the cluster's namespace on the hub, as last seen (by name). */
  work(name: string): JsonObject | undefined;
  /** The hub controller's namespace: bindings of cluster-scoped templates. */
  namespace: string;
  concurrency: number;
  events: EventRecorder;
  logger: Logger;
  onReconcile?: ((durationMs: number, outcome: string) => void) | undefined;
  onMemberResult?: ((member: string, state: string) => void) | undefined;
}

export class AgentReconciler implements Reconciler {
  readonly name = 'agent-templates';
  readonly queue: WorkQueue;
  /** The agent's report in each Work's status: its own reconciler and queue. */
  readonly status: Reconciler;
  readonly work: MemberWork;
  /** Template key → its object on the hub, as last seen (kept after it was deleted, until its copy is gone). */
  readonly templates = new Map<string, JsonObject>();
  private readonly entries: WorkQueue;
  private readonly o: AgentReconcilerOptions;
  private readonly plans = new Map<string, TemplatePlan>();
  /** Templates whose plan's copy was applied and let go: their member work plans them again first. */
  private readonly applied = new Set<string>();
  private readonly reports = new Map<string, MemberReport>();
  /** Templates deleted on the hub whose copy is still to be removed here. */
  private readonly gone = new Set<string>();
  /** Template key → its Work's preserveResourcesOnDeletion, as last seen (the Work goes with the template). */
  private readonly preserve = new Map<string, boolean>();
  /** Work status path → the status last written there (none: cleared), so an unchanged status costs no request. */
  private readonly written = new Map<string, string>();
  private versions = 0;
  private idleLogged = false;

  constructor(o: AgentReconcilerOptions) {
    this.o = o;
    this.queue = templateQueue((key, signal) => this.reconcile(key, signal), o);
    this.entries = hubWriteQueue((key) => this.writeEntry(key), o.logger, 'cannot write the status of a Work');
    this.status = { name: 'work-status', queue: this.entries, reconcile: (key) => this.writeEntry(key) };
    this.work = new MemberWork({
      plan: (key) => {
        if (!this.applied.has(key)) return this.plans.get(key);
        this.queue.add(key);
        return undefined;
      },
      ref: (key) => {
        const t = this.templates.get(key);
        return t ? refOf(t) : undefined;
      },
      report: (key, _member, r) => {
        this.reports.set(key, r);
        this.letCopyGo(key, r);
        this.entries.add(key);
      },
      events: o.events,
      logger: o.logger,
      concurrency: o.concurrency,
      onMemberResult: o.onMemberResult,
    });
  }

  /** Runs the templates queue and the member's queue until `signal` aborts (the Work status writer runs on its own). */
  async run(signal: AbortSignal): Promise<void> {
    this.work.start(signal);
    await this.queue.start(signal);
  }

  all(): void {
    for (const key of this.templates.keys()) this.queue.add(key);
  }

  /** The template was deleted on the hub: its copy goes (or is released), then it is forgotten. */
  deleted(key: string): void {
    if (!this.templates.has(key)) return;
    this.gone.add(key);
    this.queue.add(key);
  }

  /**
   * A Work was added, changed or deleted on the hub: its template is looked at again when its spec
   * changed (or it came or went); when only its status changed (this agent's own write, mostly), only the
   * status is checked again, which costs a request only when it is not what this agent wrote.
   */
  onWork(o: JsonObject, old?: JsonObject): void {
    const t = workTemplate(o);
    if (!t) return;
    const { uid: _uid, ...ref } = t;
    const key = templateKey(ref);
    if (!this.templates.has(key)) return;
    if (!old || !deepEqual(o.spec, old.spec)) this.queue.add(key);
    else if (!deepEqual(o.status, old.status)) this.entries.add(key);
  }

  /** The copy of a plan its cluster reports applied is let go: the plan keeps what the Work's status needs. */
  private letCopyGo(key: string, r: MemberReport): void {
    const p = this.plans.get(key);
    if (!p || p.version !== r.version || r.status.state !== 'Applied') return;
    if (p.steps.get(this.o.cluster)?.action !== 'apply') return;
    this.plans.set(key, { ...p, steps: new Map() });
    this.applied.add(key);
  }

  private forget(key: string): void {
    this.gone.delete(key);
    this.templates.delete(key);
    this.plans.delete(key);
    this.applied.delete(key);
    this.reports.delete(key);
    this.preserve.delete(key);
  }

  /** Whether the agent's Cluster says Pull (else the controller delivers here and the agent does nothing). */
  private pullMode(): boolean {
    const c = this.o.clusterObject();
    const mode = c && isObject(c.spec) ? ownString(c.spec, 'syncMode') : undefined;
    const pull = mode === 'Pull';
    if (!pull && !this.idleLogged)
      this.o.logger.warn(
        c
          ? 'the Cluster is not in Pull mode (spec.syncMode): the controller delivers to it; the agent waits'
          : 'no Cluster of this name on the hub; the agent waits',
        { cluster: this.o.cluster },
      );
    this.idleLogged = !pull;
    return pull;
  }

  /** The template's Work on the hub, when it is this template's (same uid). */
  private workOf(t: TemplateIdentity): JsonObject | undefined {
    const w = this.o.work(workName(t, this.o.namespace));
    return w && workTemplate(w)?.uid === t.uid ? w : undefined;
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult> {
    const template = this.templates.get(key);
    const m = this.o.member();
    if (!template || !m || !this.pullMode()) return undefined;
    const meta = isObject(template.metadata) ? template.metadata : {};
    const ref = refOf(template);
    const t: TemplateIdentity = { ...ref, uid: ownString(meta, 'uid') ?? '' };
    const work = this.workOf(t);
    const spec = work && isObject(work.spec) ? work.spec : undefined;
    if (spec) this.preserve.set(key, spec.preserveResourcesOnDeletion === true);
    if (this.gone.has(key) || ownString(meta, 'deletionTimestamp')) return this.cleanup(key, m, t, signal);
    const p = this.planFor(key, template, t, spec);
    this.plans.set(key, p);
    this.applied.delete(key);
    this.work.add(key, [m]);
    // Nothing to apply (kept, suspended, failed to render, removed): the status says so now; an apply
    // reports when it is done (one write, not Pending then Applied).
    if (p.steps.get(this.o.cluster)?.action !== 'apply') this.entries.add(key);
    return undefined;
  }

  /** This cluster's part of the hub's decision for the template (see the file comment). */
  private planFor(key: string, template: JsonObject, t: TemplateIdentity, spec: JsonObject | undefined): TemplatePlan {
    const version = ++this.versions;
    const empty = { template: t, placements: [], unmatched: [], errors: [], warnings: [] };
    const policyRef = spec && isObject(spec.policy) ? policyRefOf(spec.policy) : undefined;
    // What the claiming policy says about dispatching here, as the hub wrote it in the Work.
    const dispatch = workDispatch(spec);
    const d = agentDecision(spec, this.o.cluster);
    if (d.action === 'render') {
      const result = this.o.state.renderPlaced(key, {
        clusters: new Map([[this.o.cluster, d.replicas]]),
        ...(policyRef ? { policy: policyRef } : {}),
      }) ?? { ...empty, policy: policyRef };
      return plan(t, template, result, dispatch, version);
    }
    const p = plan(t, template, empty, dispatch, version);
    if (d.action === 'keep') p.steps.set(this.o.cluster, { action: 'keep', message: d.message });
    return p;
  }

  /** A deleted template: its copy goes (or is released), then the Work's status is cleared. */
  private async cleanup(
    key: string,
    m: Member,
    t: TemplateIdentity,
    signal: AbortSignal,
  ): Promise<{ requeueAfter?: number } | undefined> {
    this.plans.delete(key);
    this.applied.delete(key);
    const template = this.templates.get(key);
    if (!template) return undefined;
    const ref = refOf(template);
    const preserve = this.preserve.get(key) === true;
    const done = preserve ? await this.work.release(m, t, ref, signal) : await this.work.remove(m, t, ref, signal);
    if (done !== 'removed' && done !== 'absent') {
      this.o.logger.warn('cannot remove a deleted template from this cluster yet', {
        template: describeTemplate(t),
        error: done.error,
      });
      return { requeueAfter: RETRY_UNREACHABLE_MS };
    }
    if (done === 'removed')
      this.o.logger.info(
        preserve
          ? 'template deleted; its copy stays (preserveResourcesOnDeletion)'
          : 'removed: the template was deleted',
        {
          template: describeTemplate(t),
        },
      );
    this.reports.delete(key);
    await this.writeEntry(key, t);
    if (this.gone.has(key)) this.forget(key);
    return undefined;
  }

  /** Applies what happened on this cluster to the template's Work status (nothing: the status is cleared). */
  private async writeEntry(key: string, deleting?: TemplateIdentity): Promise<void> {
    const template = this.templates.get(key);
    if (!template) return;
    const meta = isObject(template.metadata) ? template.metadata : {};
    const t = deleting ?? { ...refOf(template), uid: ownString(meta, 'uid') ?? '' };
    const p = deleting ? undefined : this.plans.get(key);
    const r = this.reports.get(key);
    let entry: ClusterStatus | undefined;
    if (p) {
      const reports = new Map(r ? [[this.o.cluster, r]] : []);
      entry = bindingClusters(p, reports, () => undefined).find((c) => c.name === this.o.cluster);
    }
    const work = this.workOf(t);
    if (!work) return; // none yet, or gone: nothing to say there
    const name = workName(t, this.o.namespace);
    const path = `${workPath(this.o.cluster, name)}/status`;
    const status = workStatus(entry);
    const text = JSON.stringify(status);
    if ((this.written.get(path) ?? '{}') === text && !statusDiffers(work, status)) return;
    const body = {
      apiVersion: WORK_API_VERSION,
      kind: WORK_KIND,
      metadata: { name, namespace: executionSpace(this.o.cluster) },
      status,
    };
    const res = await serverSideApply(this.o.hub, path, body, {
      fieldManager: agentFieldManager(this.o.cluster),
      force: true,
    });
    if (res.status === 404) {
      this.written.delete(path);
      return;
    }
    if (res.status >= 400) throw apiError(res);
    if (entry) this.written.set(path, text);
    else this.written.delete(path);
  }
}

/**
 * What a cluster should hold of a template, from its Work's spec as the hub wrote it (the binding's spec
 * cut down to the cluster; undefined: no Work of this template): render it (with the replicas the hub gave the cluster), keep what it has,
 * or remove it. Pure; see the file comment for the rules.
 */
export function agentDecision(
  spec: JsonObject | undefined,
  cluster: string,
): { action: 'render'; replicas?: number } | { action: 'keep'; message: string } | { action: 'remove' } {
  if (!spec) return { action: 'remove' };
  const listed: unknown[] = Array.isArray(spec.clusters) ? spec.clusters : [];
  const mine = listed.find((c) => isObject(c) && c.name === cluster);
  if (isObject(mine))
    return typeof mine.replicas === 'number' ? { action: 'render', replicas: mine.replicas } : { action: 'render' };
  const tasks: unknown[] = Array.isArray(spec.gracefulEvictionTasks) ? spec.gracefulEvictionTasks : [];
  if (tasks.some((e) => isObject(e) && e.fromCluster === cluster))
    return { action: 'keep', message: 'evicted; kept until the hub drops the eviction task' };
  const required: unknown[] = Array.isArray(spec.requiredBy) ? spec.requiredBy : [];
  if (!isObject(spec.policy) && required.length === 0)
    return { action: 'keep', message: 'no policy claims it; what was propagated stays' };
  return { action: 'remove' };
}

function policyRefOf(o: JsonObject): PolicyRef | undefined {
  const kind = ownString(o, 'kind');
  const name = ownString(o, 'name');
  const namespace = ownString(o, 'namespace');
  return kind && name ? { kind, name, ...(namespace ? { namespace } : {}) } : undefined;
}

/** Whether the Work on the hub lacks the status the agent would write (another writer changed it, or it was recreated). */
function statusDiffers(work: JsonObject, want: JsonObject): boolean {
  return !deepEqual(isObject(work.status) ? work.status : {}, want);
}
