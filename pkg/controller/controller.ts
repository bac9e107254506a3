// The controller: templates and policies on a hub apiserver, delivered to member clusters and kept there.
//
//   hub informers ──► EngineState (pure, incremental) ──► WorkQueue of template keys ──► reconcile(key)
//   member informers (objects carrying the controller's labels) ──► drift: the owning template's key
//
// reconcile(template): render it from the state → server-side apply each member's object (field manager
// `flotilla`, the same MemberApplier as `flotilla apply`), one ApplySet per template and member, pruning
// what the set held and no longer renders for that member → the ResourceBinding on the hub. A template
// no policy claims any more keeps what was propagated (Karmada's rule); a deleted template is removed from
// every member before its finalizer is released (or after cleanupTimeoutMs of unreachable members, said
// in the log). Failures are retried by the queue with backoff; an unreachable member does not hold up the
// others.
//
// Policies are read in their storage version (v1beta1) and clusters as they are: the controller does not
// need the conversion webhook to be up to read what is stored. Template kinds are those named by any
// propagation policy's resourceSelectors, resolved by discovery; their informers start and stop as
// policies change.

import { createHash } from 'node:crypto';

import type { KubeConfig } from '@kubernetes/client-node';

import { EngineState } from '../engine/state.js';
import type { ObjectRef } from '../engine/types.js';
import { KubeClient, apiError } from '../kube/client.js';
import { Discovery, resourcePath, type ResourceInfo } from '../kube/discovery.js';
import { MemberApplier, type MemberReport } from '../kube/applier.js';
import { Informer, listWatchSource } from '../kube/informer.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import { Watcher } from '../kube/watch.js';
import { WorkQueue } from '../runtime/queue.js';
import { BINDING_API_VERSION, BINDING_PLURAL, bindingName, bindingNamespace, bindingObject, memberHealth, type ClusterStatus } from './binding.js';
import { FINALIZER, HUB_FIELD_MANAGER, MEMBER_FIELD_MANAGER, TEMPLATE_UID_LABEL, describeTemplate, ownerTemplate, stampOwnership, type TemplateIdentity } from './ownership.js';

export interface ControllerLogger {
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
}

export interface MemberAccess {
  name: string;
  /** Holds this member's context as its current context. */
  kubeConfig: KubeConfig;
}

export interface ControllerOptions {
  hub: KubeConfig;
  members: MemberAccess[];
  /** The controller's namespace: ResourceBindings of cluster-scoped templates; ApplySet parents on members. */
  namespace: string;
  /** Templates reconciled at once. */
  concurrency: number;
  /** Requests in flight per member. */
  memberConcurrency?: number;
  logger: ControllerLogger;
  /** `flotilla/<version>`, the ApplySet tooling annotation. */
  tooling: string;
  /** How long a deleted template waits for unreachable members before its finalizer is released. Default 10 min. */
  cleanupTimeoutMs?: number;
  /** Every template is reconciled again this often (what a dropped event or a lost write missed). Default 10 min. */
  resyncMs?: number;
  /** Told of every finished reconcile, for metrics. */
  onReconcile?: (durationMs: number, outcome: string) => void;
}

const POLICY_GROUP = 'policy.flotilla.io';
const POLICY_STORAGE_VERSION = 'v1beta1';
const POLICY_RESOURCES: ReadonlyArray<{ kind: string; resource: string; namespaced: boolean }> = [
  { kind: 'PropagationPolicy', resource: 'propagationpolicies', namespaced: true },
  { kind: 'ClusterPropagationPolicy', resource: 'clusterpropagationpolicies', namespaced: false },
  { kind: 'OverridePolicy', resource: 'overridepolicies', namespaced: true },
  { kind: 'ClusterOverridePolicy', resource: 'clusteroverridepolicies', namespaced: false },
];
const CLUSTER_API_VERSION = 'cluster.flotilla.io/v1alpha1';
/** Kinds whose member status says more than "present": read back after apply for the binding. */
const HEALTH_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job']);
/** A failed member is tried again after this long even when nothing changed. */
const RETRY_UNREACHABLE_MS = 5_000;

interface Member {
  name: string;
  client: KubeClient;
  watcher: Watcher;
  discovery: Discovery;
  /** Drift informers, by resource path. */
  watches: Map<string, { informer: Informer; stop: AbortController }>;
}

interface TemplateKind {
  info: ResourceInfo;
  apiVersion: string;
  informer: Informer;
  stop: AbortController;
}

export class Controller {
  private readonly o: ControllerOptions;
  private readonly state = new EngineState();
  private readonly hub: KubeClient;
  private readonly hubWatcher: Watcher;
  private readonly hubDiscovery: Discovery;
  private readonly members = new Map<string, Member>();
  private readonly policyInformers = new Map<string, Informer>();
  private clusterInformer: Informer | undefined;
  private readonly templateKinds = new Map<string, TemplateKind>();
  private readonly queue: WorkQueue;
  /** Template key → its object on the hub, as last seen (kept after it left the state, for cleanup). */
  private readonly templates = new Map<string, JsonObject>();
  /** Template key → when its cleanup first found a member unreachable. */
  private readonly cleanupSince = new Map<string, number>();
  /** Binding path → the body last written there, so an unchanged binding costs no request. */
  private readonly written = new Map<string, string>();
  private signal: AbortSignal = new AbortController().signal;
  private syncedFlag = false;

  constructor(options: ControllerOptions) {
    this.o = options;
    const userAgent = options.tooling;
    this.hub = new KubeClient(options.hub, { concurrency: 16, userAgent });
    this.hubWatcher = new Watcher(options.hub, { userAgent });
    this.hubDiscovery = new Discovery(this.hub);
    for (const m of options.members) {
      const client = new KubeClient(m.kubeConfig, { concurrency: options.memberConcurrency ?? 16, userAgent });
      this.members.set(m.name, { name: m.name, client, watcher: new Watcher(m.kubeConfig, { userAgent }), discovery: new Discovery(client), watches: new Map() });
    }
    this.queue = new WorkQueue<string>({ reconcile: (key, signal) => this.reconcile(key, signal) }, {
      concurrency: options.concurrency,
      onResult: (e) => {
        options.onReconcile?.(e.durationMs, e.outcome);
        if (e.outcome === 'error') options.logger.warn('reconcile failed; retrying with backoff', { template: this.describeKey(e.key), error: e.error instanceof Error ? e.error.message : String(e.error) });
      },
    });
  }

  /** True once the hub's caches have been listed once (readiness). */
  get synced(): boolean {
    return this.syncedFlag;
  }

  get queueDepth(): number {
    return this.queue.depth;
  }

  /** Runs until `signal` aborts; in-flight reconciles finish first. */
  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const log = this.o.logger;
    const queueDone = this.queue.start(signal);

    // Clusters first (placement needs them), then policies, then the template kinds they name.
    this.clusterInformer = this.hubInformer('clusters', `/apis/cluster.flotilla.io/v1alpha1/clusters`, CLUSTER_API_VERSION, 'Cluster', {
      onAdd: (o) => this.upsert(this.clusterObject(o)),
      onUpdate: (o) => this.upsert(this.clusterObject(o)),
      onDelete: (o) => this.onClusterDeleted(o),
    });
    for (const m of this.members.values()) this.upsert(this.clusterObject({ metadata: { name: m.name } }));
    for (const p of POLICY_RESOURCES) {
      const informer = this.hubInformer(p.resource, `/apis/${POLICY_GROUP}/${POLICY_STORAGE_VERSION}/${p.resource}`, `${POLICY_GROUP}/${POLICY_STORAGE_VERSION}`, p.kind, {
        onAdd: (o) => this.onPolicy(o),
        onUpdate: (o) => this.onPolicy(o),
        onDelete: (o) => this.onPolicyDeleted(o),
      });
      this.policyInformers.set(p.kind, informer);
    }
    await Promise.all([this.clusterInformer, ...this.policyInformers.values()].map((i) => i.waitForSync(signal)));
    await this.syncTemplateKinds();
    await Promise.all([...this.templateKinds.values()].map((k) => k.informer.waitForSync(signal)));
    this.syncedFlag = !signal.aborted;
    log.info('caches synced', { templates: this.templates.size, members: this.members.size });

    const resync = setInterval(() => {
      for (const key of this.templates.keys()) this.queue.add(key);
    }, this.o.resyncMs ?? 600_000);
    resync.unref();
    signal.addEventListener('abort', () => clearInterval(resync), { once: true });
    await queueDone;
  }

  // ---- hub events -----------------------------------------------------------------------------------

  private hubInformer(name: string, path: string, apiVersion: string, kind: string, handlers: ConstructorParameters<typeof Informer>[0]['handlers']): Informer {
    const informer = new Informer({
      name: `hub ${name}`,
      source: listWatchSource(this.hub, this.hubWatcher),
      path,
      apiVersion,
      kind,
      handlers,
      onError: (err, attempt, retryInMs) => this.o.logger.warn('hub watch failed; retrying', { resource: name, attempt, retryInMs, error: err instanceof Error ? err.message : String(err) }),
    });
    void informer.start(this.signal);
    return informer;
  }

  private upsert(object: JsonObject): void {
    const m = this.state.upsert(object);
    for (const r of m.rejected) this.o.logger.warn('object not used', { object: `${r.object.kind} ${r.object.namespace ? `${r.object.namespace}/` : ''}${r.object.name}`, reason: r.reason, message: r.message });
    for (const key of m.affected) this.queue.add(key);
  }

  /** A hub Cluster, or a member of the kubeconfig that has none, as the engine reads clusters. */
  private clusterObject(o: JsonObject): JsonObject {
    return { apiVersion: CLUSTER_API_VERSION, kind: 'Cluster', metadata: isObject(o.metadata) ? o.metadata : {}, ...(isObject(o.spec) ? { spec: o.spec } : {}) };
  }

  private onClusterDeleted(o: JsonObject): void {
    const name = ownString(o.metadata, 'name') ?? '';
    // A member of the kubeconfig stays a member, without the labels the Cluster object gave it.
    if (this.members.has(name)) this.upsert(this.clusterObject({ metadata: { name } }));
    else this.apply(this.state.remove({ apiVersion: CLUSTER_API_VERSION, kind: 'Cluster', name }).affected);
  }

  private onPolicy(o: JsonObject): void {
    this.upsert(o);
    if (this.syncedFlag) void this.syncTemplateKinds();
  }

  private onPolicyDeleted(o: JsonObject): void {
    const meta = isObject(o.metadata) ? o.metadata : {};
    const ref: ObjectRef = { apiVersion: ownString(o, 'apiVersion') ?? '', kind: ownString(o, 'kind') ?? '', name: ownString(meta, 'name') ?? '' };
    const ns = ownString(meta, 'namespace');
    if (ns) ref.namespace = ns;
    this.apply(this.state.remove(ref).affected);
    if (this.syncedFlag) void this.syncTemplateKinds();
  }

  private apply(keys: Iterable<string>): void {
    for (const key of keys) this.queue.add(key);
  }

  /** Starts an informer for every template kind a propagation policy names, and stops those no policy names. */
  private async syncTemplateKinds(): Promise<void> {
    const wanted = new Map<string, { apiVersion: string; kind: string }>();
    for (const kind of ['PropagationPolicy', 'ClusterPropagationPolicy']) {
      for (const p of this.policyInformers.get(kind)?.values() ?? []) {
        const spec = isObject(p.spec) ? p.spec : {};
        for (const s of Array.isArray(spec.resourceSelectors) ? spec.resourceSelectors : []) {
          const apiVersion = ownString(s, 'apiVersion');
          const k = ownString(s, 'kind');
          if (apiVersion && k) wanted.set(`${apiVersion}/${k}`, { apiVersion, kind: k });
        }
      }
    }
    for (const [id, { apiVersion, kind }] of wanted) {
      if (this.templateKinds.has(id)) continue;
      let info: ResourceInfo;
      try {
        info = await this.hubDiscovery.resolve(apiVersion, kind);
      } catch (err: unknown) {
        // Not served (yet): the next policy event or resync tries again.
        this.hubDiscovery.forget(apiVersion);
        this.o.logger.warn('template kind not served by the hub', { kind: id, error: err instanceof Error ? err.message : String(err) });
        continue;
      }
      if (this.templateKinds.has(id) || this.signal.aborted) continue;
      const stop = new AbortController();
      const signal = AbortSignal.any([this.signal, stop.signal]);
      const informer = new Informer({
        name: `hub ${info.resource}.${info.group || 'core'}`,
        source: listWatchSource(this.hub, this.hubWatcher),
        path: resourcePath(info, undefined),
        apiVersion,
        kind,
        handlers: { onAdd: (o) => this.onTemplate(o), onUpdate: (o, old) => this.onTemplate(o, old), onDelete: (o) => this.onTemplateDeleted(o) },
        onError: (err, attempt, retryInMs) => this.o.logger.warn('hub watch failed; retrying', { resource: info.resource, attempt, retryInMs, error: err instanceof Error ? err.message : String(err) }),
      });
      this.templateKinds.set(id, { info, apiVersion, informer, stop });
      void informer.start(signal);
      for (const m of this.members.values()) this.watchMember(m, info, apiVersion);
    }
    for (const [id, k] of this.templateKinds) {
      if (wanted.has(id)) continue;
      // Templates of that kind stay in the state: what was propagated stays until a policy claims them.
      k.stop.abort();
      this.templateKinds.delete(id);
    }
  }

  private refOf(o: JsonObject): ObjectRef {
    const meta = isObject(o.metadata) ? o.metadata : {};
    const ref: ObjectRef = { apiVersion: ownString(o, 'apiVersion') ?? '', kind: ownString(o, 'kind') ?? '', name: ownString(meta, 'name') ?? '' };
    const ns = ownString(meta, 'namespace');
    if (ns) ref.namespace = ns;
    return ref;
  }

  private keyOfRef(ref: ObjectRef): string {
    return JSON.stringify([ref.apiVersion, ref.kind, ref.namespace ?? '', ref.name]);
  }

  private onTemplate(o: JsonObject, old?: JsonObject): void {
    const key = this.keyOfRef(this.refOf(o));
    this.templates.set(key, o);
    // Our own finalizer write, a status update or a managedFields change renders nothing new.
    if (old && renderedPart(o) === renderedPart(old)) return;
    this.upsert(o);
    this.queue.add(key);
  }

  private onTemplateDeleted(o: JsonObject): void {
    const key = this.keyOfRef(this.refOf(o));
    this.templates.delete(key);
    this.apply(this.state.remove(this.refOf(o)).affected);
  }

  private describeKey(key: string): string {
    try {
      const [apiVersion, kind, namespace, name] = JSON.parse(key) as string[];
      return describeTemplate({ apiVersion: apiVersion ?? '', kind: kind ?? '', name: name ?? '', ...(namespace ? { namespace } : {}) });
    } catch {
      return key;
    }
  }

  // ---- members: drift -------------------------------------------------------------------------------

  /** Watches the objects of one kind that the controller applied on a member: a change or delete enqueues their template. */
  private watchMember(m: Member, info: ResourceInfo, apiVersion: string): void {
    const path = resourcePath(info, undefined);
    if (m.watches.has(path)) return;
    const stop = new AbortController();
    const enqueue = (o: JsonObject) => {
      const t = ownerTemplate(o);
      if (t) this.queue.add(this.keyOfRef(t));
    };
    const informer = new Informer({
      name: `${m.name} ${info.resource}`,
      source: listWatchSource(m.client, m.watcher),
      path,
      apiVersion,
      kind: info.kind,
      labelSelector: TEMPLATE_UID_LABEL,
      handlers: { onUpdate: enqueue, onDelete: enqueue },
      backoff: { baseMs: 1_000, maxMs: 30_000 },
      onError: (err, attempt) => {
        if (attempt === 1) this.o.logger.warn('member watch failed; retrying', { member: m.name, resource: info.resource, error: err instanceof Error ? err.message : String(err) });
      },
    });
    m.watches.set(path, { informer, stop });
    void informer.start(AbortSignal.any([this.signal, stop.signal]));
  }

  // ---- reconcile ------------------------------------------------------------------------------------

  private async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfter?: number } | undefined> {
    const template = this.templates.get(key);
    if (!template) return undefined; // deleted without our finalizer: nothing was propagated by us
    const meta = isObject(template.metadata) ? template.metadata : {};
    const uid = ownString(meta, 'uid') ?? '';
    const ref = this.refOf(template);
    const identity: TemplateIdentity = { ...ref, uid };
    const finalizers: unknown[] = Array.isArray(meta.finalizers) ? (meta.finalizers as unknown[]) : [];
    const hasFinalizer = finalizers.includes(FINALIZER);
    const log = this.o.logger;

    if (ownString(meta, 'deletionTimestamp')) {
      if (!hasFinalizer) return undefined;
      return this.cleanup(key, template, identity, signal);
    }

    const result = this.state.renderTemplate(key);
    if (!result) return undefined;
    if (!result.policy) {
      // No policy claims it (any more): what was propagated stays on the members.
      await this.writeBinding(identity, template, { clusters: [], errors: [] });
      return undefined;
    }
    if (!hasFinalizer) await this.patchFinalizers(ref, [...finalizers, FINALIZER]);

    const policy = this.policyObject(result.policy);
    const spec = policy && isObject(policy.spec) ? policy.spec : {};
    const conflictResolution = ownString(spec, 'conflictResolution') === 'Overwrite' ? 'Overwrite' : 'Abort';
    const desired = new Map<string, JsonObject>();
    const clusters = new Map<string, ClusterStatus>();
    for (const p of result.placements) {
      const object = p.object as JsonObject;
      stampOwnership(object, identity);
      desired.set(p.cluster, object);
      const replicas = isObject(object.spec) && typeof object.spec.replicas === 'number' ? object.spec.replicas : undefined;
      clusters.set(p.cluster, { name: p.cluster, state: 'Pending', overrides: p.overrides.map((o) => ({ ...o })), ...(replicas === undefined ? {} : { replicas }) });
    }
    const errors: string[] = [];
    for (const e of result.errors) {
      if (e.cluster) clusters.set(e.cluster, { name: e.cluster, state: 'Failed', message: e.message });
      else errors.push(e.message);
    }

    const generation = typeof meta.generation === 'number' ? meta.generation : undefined;
    let retry = false;
    await Promise.all(
      [...this.members.values()].map(async (m) => {
        const object = desired.get(m.name);
        // A template's set holds at most its one object (same kind, namespace and name on every member), so
        // applying it leaves nothing to prune; a member no longer targeted gets an empty run with prune.
        const report = await this.applier(m, identity, signal, object === undefined).run(object ? [{ object, conflictResolution }] : []);
        const status = clusters.get(m.name);
        if (report.unreachable || report.errors.length > 0) retry = true;
        if (!status) {
          // Not targeted: the set was pruned there; say so only while it could not be.
          if (report.unreachable) clusters.set(m.name, { name: m.name, state: 'Removing', message: report.errors.join('; ') });
          return;
        }
        if (status.state === 'Failed') return;
        Object.assign(status, await this.memberState(m, report, object, generation));
        log.debug('applied', { template: describeTemplate(identity), cluster: m.name, state: status.state });
      }),
    );
    for (const [name, status] of clusters) {
      if (status.state === 'Pending' && !this.members.has(name)) Object.assign(status, { state: 'Unreachable', message: `no access to cluster ${name}: it is not a context of --members-kubeconfig (a Cluster's spec.secretRef is not read yet)` });
    }
    await this.writeBinding(identity, template, { policy: result.policy, conflictResolution, clusters: [...clusters.values()], errors });
    log.debug('reconciled', { template: describeTemplate(identity), clusters: [...clusters.values()].map((c) => `${c.name}: ${c.state}`), errors });
    return retry ? { requeueAfter: RETRY_UNREACHABLE_MS } : undefined;
  }

  /** One ApplySet per template and member, so prune removes exactly what this template put there. */
  private applier(m: Member, t: TemplateIdentity, signal: AbortSignal, prune: boolean): MemberApplier {
    return new MemberApplier(m.name, m.client, {
      fieldManager: MEMBER_FIELD_MANAGER,
      parent: { namespace: this.o.namespace, name: parentName(t) },
      tooling: this.o.tooling,
      mode: 'apply',
      prune,
      signal,
      discovery: m.discovery,
      // Drift: what someone changed on a member in an object of ours is put back.
      forceOwned: true,
      // One object per run: read it, rather than list its kind in its namespace.
      lookup: 'get',
    });
  }

  private async memberState(m: Member, report: MemberReport, object: JsonObject | undefined, generation: number | undefined): Promise<Partial<ClusterStatus>> {
    if (report.unreachable) return { state: 'Unreachable', message: report.errors.join('; ') };
    const r = report.results.find((x) => x.action !== 'pruned');
    if (!r) return { state: 'Failed', message: report.errors.join('; ') || 'nothing was applied' };
    if (r.action === 'conflict') return { state: 'Conflict', ...(r.message ? { message: r.message } : {}) };
    if (r.action === 'failed') return { state: 'Failed', ...(r.message ? { message: r.message } : {}) };
    const out: Partial<ClusterStatus> = { state: 'Applied', ...(generation === undefined ? {} : { observedGeneration: generation }) };
    if (object && HEALTH_KINDS.has(r.kind)) {
      try {
        const info = await m.discovery.resolve(r.apiVersion, r.kind);
        const res = await m.client.request<JsonObject>({ method: 'GET', path: resourcePath(info, r.namespace, r.name) });
        out.health = memberHealth(res.status === 200 ? res.body : undefined);
      } catch {
        out.health = { state: 'Unknown', message: 'status not read' };
      }
    } else {
      out.health = { state: 'Healthy' };
    }
    return out;
  }

  private policyObject(p: { kind: string; namespace?: string; name: string }): JsonObject | undefined {
    return this.policyInformers.get(p.kind)?.get(p.namespace ? `${p.namespace}/${p.name}` : p.name);
  }

  /** A deleted template: its objects and ApplySet parents go from every member, then the finalizer. */
  private async cleanup(key: string, template: JsonObject, t: TemplateIdentity, signal: AbortSignal): Promise<{ requeueAfter?: number } | undefined> {
    const log = this.o.logger;
    const unreachable: string[] = [];
    await Promise.all(
      [...this.members.values()].map(async (m) => {
        const report = await this.applier(m, t, signal, true).run([]);
        if (report.unreachable || report.errors.length > 0) {
          unreachable.push(`${m.name}: ${report.errors.join('; ')}`);
          return;
        }
        const parent = `/api/v1/namespaces/${encodeURIComponent(this.o.namespace)}/secrets/${encodeURIComponent(parentName(t))}`;
        const res = await m.client.request({ method: 'DELETE', path: parent }).catch((e: unknown) => ({ status: 0, body: undefined, warnings: [], error: e }));
        if (res.status >= 400 && res.status !== 404) unreachable.push(`${m.name}: deleting the ApplySet parent: HTTP ${res.status}`);
        else if (res.status === 0) unreachable.push(`${m.name}: deleting the ApplySet parent failed`);
      }),
    );
    if (unreachable.length > 0) {
      const since = this.cleanupSince.get(key) ?? Date.now();
      this.cleanupSince.set(key, since);
      const timeout = this.o.cleanupTimeoutMs ?? 600_000;
      if (Date.now() - since < timeout) {
        log.warn('template deleted; members not cleaned yet', { template: describeTemplate(t), members: unreachable });
        return { requeueAfter: RETRY_UNREACHABLE_MS };
      }
      log.error('template deleted; releasing its finalizer although some members could not be cleaned', { template: describeTemplate(t), members: unreachable, waitedMs: Date.now() - since });
    }
    this.cleanupSince.delete(key);
    // The binding's owner reference would have the garbage collector remove it; do not wait for that.
    const bindingPath = `/apis/${BINDING_API_VERSION}/namespaces/${encodeURIComponent(bindingNamespace(t, this.o.namespace))}/${BINDING_PLURAL}/${encodeURIComponent(bindingName(t.name, t.kind))}`;
    this.written.delete(bindingPath);
    await this.hub.request({ method: 'DELETE', path: bindingPath });
    const meta = isObject(template.metadata) ? template.metadata : {};
    const finalizers = (Array.isArray(meta.finalizers) ? meta.finalizers : []).filter((f) => f !== FINALIZER);
    await this.patchFinalizers(this.refOf(template), finalizers);
    log.info('template deleted; removed from every member', { template: describeTemplate(t) });
    return undefined;
  }

  private async templatePath(ref: ObjectRef): Promise<string> {
    const info = await this.hubDiscovery.resolve(ref.apiVersion, ref.kind);
    return resourcePath(info, ref.namespace, ref.name);
  }

  private async patchFinalizers(ref: ObjectRef, finalizers: unknown[]): Promise<void> {
    const res = await this.hub.request({
      method: 'PATCH',
      path: await this.templatePath(ref),
      contentType: 'application/merge-patch+json',
      body: { metadata: { finalizers } },
    });
    if (res.status === 404) return;
    if (res.status >= 400) throw apiError(res);
  }

  private async writeBinding(t: TemplateIdentity, template: JsonObject, b: { policy?: { kind: string; namespace?: string; name: string }; conflictResolution?: string; clusters: ClusterStatus[]; errors: string[] }): Promise<void> {
    const meta = isObject(template.metadata) ? template.metadata : {};
    const generation = typeof meta.generation === 'number' ? meta.generation : undefined;
    const body = bindingObject({
      template: { ...t, ...(generation === undefined ? {} : { generation }) },
      controllerNamespace: this.o.namespace,
      ...(b.policy ? { policy: b.policy } : {}),
      ...(b.conflictResolution ? { conflictResolution: b.conflictResolution } : {}),
      clusters: b.clusters,
      errors: b.errors,
    });
    const ns = bindingNamespace(t, this.o.namespace);
    const path = `/apis/${BINDING_API_VERSION}/namespaces/${encodeURIComponent(ns)}/${BINDING_PLURAL}/${encodeURIComponent(bindingName(t.name, t.kind))}`;
    const text = JSON.stringify(body);
    if (this.written.get(path) === text) return;
    this.written.delete(path);
    const res = await this.hub.request({
      method: 'PATCH',
      path,
      query: { fieldManager: HUB_FIELD_MANAGER, force: 'true' },
      contentType: 'application/apply-patch+yaml',
      body,
    });
    if (res.status >= 400) throw apiError(res);
    this.written.set(path, text);
  }
}

/** What of a template can change what is rendered or done with it: all but status and server bookkeeping. */
function renderedPart(o: JsonObject): string {
  const meta = isObject(o.metadata) ? { ...o.metadata } : {};
  for (const k of ['resourceVersion', 'managedFields', 'generation', 'finalizers']) delete meta[k];
  const { status: _status, ...rest } = o;
  return JSON.stringify({ ...rest, metadata: meta });
}

/** The ApplySet parent Secret of one template on every member: `flotilla-t-<hash of the template's identity>`. */
export function parentName(t: TemplateIdentity): string {
  const hash = createHash('sha256').update(JSON.stringify([t.apiVersion, t.kind, t.namespace ?? '', t.name])).digest('hex').slice(0, 20);
  return `flotilla-t-${hash}`;
}

