// What the hub's events do, every process shape alike: each Cluster, policy and template goes into the
// engine state (pure, incremental), and the templates the state says it affects are queued on the
// process's template reconciler; a Cluster also reaches the member registry, the health taints and the
// Cluster reconcilers, a policy its status, a template's deletion its cleanup. An agent reads its own
// Cluster only (onAgentCluster).

import { API_VERSION as CLUSTER_API_VERSION } from '../../api/cluster/v1alpha1/types.js';
import { refOf } from '../engine/inputs.js';
import type { EngineState } from '../engine/state.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import type { WorkQueue } from '../runtime/queue.js';
import type { AgentLeases } from './agent-leases.js';
import type { ClusterHealth } from './cluster-health.js';
import { withHealthTaints, type HealthTaint } from './health-taints.js';
import type { HubInputs } from './hub-inputs.js';
import type { MemberRegistry } from './members.js';
import { policyKey } from './policy-status.js';
import type { PullClusters } from './pull-clusters.js';
import { templateKey } from './queue.js';
import type { ClusterStatusReconciler, ClusterTaintReconciler, PolicyStatusReconciler } from './status.js';
import type { TemplateKinds } from './template-kinds.js';

/** What the hub's events need of a process's template reconciler (the controller's or the agent's). */
export interface TemplateSink {
  readonly queue: WorkQueue;
  /** Template key → its object on the hub, as last seen. */
  readonly templates: Map<string, JsonObject>;
  /** Every template again. */
  all(): void;
  /** The template was deleted on the hub. */
  deleted(key: string): void;
}

export interface HubEventsOptions {
  state: EngineState;
  logger: Logger;
  templates: TemplateSink;
  inputs: HubInputs;
  kinds: TemplateKinds;
  registry: MemberRegistry;
  health: ClusterHealth;
  agentLeases: AgentLeases;
  pull: PullClusters;
  clusterStatus: ClusterStatusReconciler;
  clusterTaints: ClusterTaintReconciler;
  policyStatus: PolicyStatusReconciler;
  /**
   * The controller (not an agent): a template is planned once its finalizer is on it (the claim patch
   * returns, its event brings the template back; sharded, the other replicas wait for it too).
   */
  plansOnFinalizer: boolean;
  /** Whether the hub's caches have been listed once (the template kinds follow the policies from then on). */
  synced(): boolean;
  signal(): AbortSignal;
}

export class HubEvents {
  constructor(private readonly o: HubEventsOptions) {}

  /** Into the state; the templates it can affect are queued. Returns why the object is not used, if it is not. */
  upsert(object: JsonObject, also?: string): string[] {
    const m = this.o.state.upsert(object);
    for (const r of m.rejected)
      this.o.logger.warn('object not used', {
        object: `${r.object.kind} ${r.object.namespace ? `${r.object.namespace}/` : ''}${r.object.name}`,
        reason: r.reason,
        message: r.message,
      });
    // One add per key: a second add after the first started its run would run it again.
    for (const key of new Set([...m.affected, ...(also === undefined ? [] : [also])])) this.o.templates.queue.add(key);
    return m.rejected.map((r) => r.message);
  }

  /** A kubeconfig member, or one whose health changed: into the state as the engine reads clusters. */
  upsertCluster(name: string, taints: readonly HealthTaint[]): void {
    const hubCluster = this.o.inputs.cluster(name);
    if (hubCluster) this.upsert(clusterObject(hubCluster, taints));
    else if (this.o.registry.isKubeconfigMember(name)) this.upsert(clusterObject({ metadata: { name } }, taints));
  }

  /** A kubeconfig member, at start: a cluster with no taints until the hub says otherwise. */
  upsertKubeconfigMember(name: string): void {
    this.upsert(clusterObject({ metadata: { name } }, []));
  }

  onCluster(o: JsonObject): void {
    const name = ownString(o.metadata, 'name') ?? '';
    const { health, registry } = this.o;
    if (name) health.seed(name, isObject(o.spec) ? o.spec.taints : undefined);
    this.upsert(clusterObject(o, name ? health.get(name) : []));
    if (!name) return;
    const wasPull = registry.isPull(name);
    registry.onCluster(o);
    if (wasPull && !registry.isPull(name)) void this.o.pull.dropWorks(name);
    this.o.clusterStatus.queue.add(name);
    this.o.clusterTaints.queue.add(name);
    if (registry.isPull(name)) {
      this.o.pull.startLeases();
      this.o.agentLeases.observe(name);
    }
  }

  /**
   * The agent's own Cluster: its labels and fields for the override rules; its syncMode says whether the
   * agent delivers at all (a switch either way looks at every template again).
   */
  onAgentCluster(o: JsonObject, agentCluster: string): void {
    const name = ownString(o.metadata, 'name') ?? '';
    if (name !== agentCluster) return;
    const before = this.o.inputs.cluster(name);
    this.upsert(clusterObject(o, []));
    this.o.clusterStatus.queue.add(name);
    if (syncModeOf(o) !== syncModeOf(before) || !before) this.o.templates.all();
  }

  onClusterDeleted(o: JsonObject): void {
    const name = ownString(o.metadata, 'name') ?? '';
    const { registry, health } = this.o;
    this.o.clusterStatus.forget(name);
    const wasPull = registry.isPull(name);
    registry.onClusterDeleted(name);
    this.o.agentLeases.forget(name);
    if (!registry.isKubeconfigMember(name)) health.forget(name);
    if (wasPull) void this.o.pull.dropWorks(name);
    // A member of the kubeconfig stays a member, without the labels the Cluster object gave it.
    if (registry.isKubeconfigMember(name)) this.upsert(clusterObject({ metadata: { name } }, health.get(name)));
    else
      for (const key of this.o.state.remove({ apiVersion: CLUSTER_API_VERSION, kind: 'Cluster', name }).affected)
        this.o.templates.queue.add(key);
    // A cluster.karmada.io Cluster of the same name, shadowed until now, takes its place.
    const karmada = this.o.inputs.shadowedCluster(o);
    if (karmada) this.onCluster(karmada);
  }

  onPolicy(o: JsonObject): void {
    const refused = this.upsert(o);
    // A refused policy says so on its status; an accepted one (again) says what it claims.
    const ref = refOf(o);
    const book = this.o.policyStatus.book;
    if (refused.length > 0) book.refuse(ref, refused.join('; '));
    else book.accept(ref);
    book.touch(ref);
    this.o.policyStatus.flush();
    if (this.o.synced()) void this.o.kinds.sync(this.o.signal());
  }

  onPolicyDeleted(o: JsonObject): void {
    const ref = refOf(o);
    this.o.policyStatus.drop(ref, policyKey(ref));
    for (const key of this.o.state.remove(ref).affected) this.o.templates.queue.add(key);
    // A policy.karmada.io policy of the same name, shadowed until now, takes its place.
    const karmada = this.o.inputs.shadowedPolicy(o);
    if (karmada) this.onPolicy(karmada);
    if (this.o.synced()) void this.o.kinds.sync(this.o.signal());
  }

  onTemplate(o: JsonObject, old?: JsonObject): void {
    const key = templateKey(refOf(o));
    this.o.templates.templates.set(key, o);
    // A status update or a managedFields change renders nothing new; the finalizer's arrival is what the
    // template's plan waits for (template.ts).
    if (old && renderedPart(o) === renderedPart(old) && !(this.o.plansOnFinalizer && finalizersChanged(o, old))) return;
    this.upsert(o, key);
  }

  onTemplateDeleted(o: JsonObject): void {
    const key = templateKey(refOf(o));
    this.o.templates.deleted(key);
    this.o.policyStatus.book.forget(key);
    this.o.policyStatus.flush();
    for (const k of this.o.state.remove(refOf(o)).affected) this.o.templates.queue.add(k);
    if (this.o.kinds.releasing(o)) void this.o.kinds.sync(this.o.signal());
  }
}

/**
 * A hub Cluster, or a member of the kubeconfig that has none, as the engine reads clusters: its spec with
 * the health taints this process decided (in place of any the object carries), and of its status what
 * placement reads (resourceSummary, apiEnablements).
 */
function clusterObject(o: JsonObject, health: readonly HealthTaint[]): JsonObject {
  const spec = isObject(o.spec) ? { ...o.spec } : undefined;
  const taints = withHealthTaints(spec?.taints, health);
  const specOut = spec ? { ...spec, taints } : taints.length > 0 ? { taints } : undefined;
  const status = isObject(o.status) ? o.status : {};
  const read: JsonObject = {};
  if (isObject(status.resourceSummary)) read.resourceSummary = status.resourceSummary;
  if (Array.isArray(status.apiEnablements)) read.apiEnablements = status.apiEnablements;
  return {
    apiVersion: CLUSTER_API_VERSION,
    kind: 'Cluster',
    metadata: isObject(o.metadata) ? o.metadata : {},
    ...(specOut ? { spec: specOut } : {}),
    ...(Object.keys(read).length > 0 ? { status: read } : {}),
  };
}

function finalizersChanged(o: JsonObject, old: JsonObject): boolean {
  const f = (x: JsonObject) => JSON.stringify(isObject(x.metadata) ? x.metadata.finalizers : undefined);
  return f(o) !== f(old);
}

function syncModeOf(o: JsonObject | undefined): string | undefined {
  return o && isObject(o.spec) ? ownString(o.spec, 'syncMode') : undefined;
}

/** What of a template can change what is rendered or done with it: all but status and server bookkeeping. */
function renderedPart(o: JsonObject): string {
  const meta = isObject(o.metadata) ? { ...o.metadata } : {};
  for (const k of ['resourceVersion', 'managedFields', 'generation', 'finalizers']) delete meta[k];
  const { status: _status, ...rest } = o;
  return JSON.stringify({ ...rest, metadata: meta });
}
