// The controller: templates and policies on a hub apiserver, delivered to member clusters and kept there.
//
//   hub informers ──► EngineState (pure, incremental) ──► WorkQueue of template keys ──► reconcile(key)
//   member informers (objects carrying the controller's labels) ──► drift: the owning template's key
//
// reconcile(template): render it from the state → server-side apply each member's object (field manager
// `flotilla`, see member.ts), remove it from members no longer targeted (only an object carrying the
// template's uid label) → the ResourceBinding on the hub. A template no policy claims any more keeps what
// was propagated (Karmada's rule); a deleted template is removed from every member before its finalizer
// is released (or after cleanupTimeoutMs of unreachable members, said in the log). Failures are retried by
// the queue with backoff; an unreachable member does not hold up the others.
//
// Members: the contexts of --members-kubeconfig, and every Cluster on the hub whose spec.secretRef names a
// Secret with credentials (credentials.ts). Each Secret is watched: a changed Secret reconnects its member,
// a deleted one disconnects it, without a restart. Every member is probed (GET /readyz) on an interval;
// the result is the Ready condition of its Cluster. A member that is not ready is skipped (its clusters
// say Unreachable in the bindings) and every template is reconciled again when it becomes ready.
//
// Policies are read in their storage version (v1beta1) and clusters as they are: the controller does not
// need the conversion webhook to be up to read what is stored. Template kinds are those named by any
// propagation policy's resourceSelectors, resolved by discovery; their informers start and stop as
// policies change.

import { hostname } from 'node:os';

import type { KubeConfig } from '@kubernetes/client-node';

import { EngineState } from '../engine/state.js';
import type { ObjectRef } from '../engine/types.js';
import { KubeClient, METADATA_ACCEPT, apiError } from '../kube/client.js';
import { Discovery, resourcePath, type ResourceInfo } from '../kube/discovery.js';
import { Informer, listWatchSource } from '../kube/informer.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import { Watcher } from '../kube/watch.js';
import { WorkQueue } from '../runtime/queue.js';
import { BINDING_API_VERSION, BINDING_PLURAL, bindingName, bindingNamespace, bindingObject, type ClusterStatus } from './binding.js';
import { credentialsFromSecret } from './credentials.js';
import { EventRecorder } from './events.js';
import { Member, probeLoop, type ApplyOutcome } from './member.js';
import { FINALIZER, HUB_FIELD_MANAGER, describeTemplate, ownerTemplate, stampOwnership, type TemplateIdentity } from './ownership.js';
import { PolicyStatusBook, parseKey, policyKey } from './policy-status.js';

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
  /** Members from a kubeconfig; more come from Cluster objects' secretRef Secrets (unless clusterSecrets is false). */
  members: MemberAccess[];
  /** Read Cluster objects' spec.secretRef Secrets for credentials. Default true. */
  clusterSecrets?: boolean;
  /** GET /readyz on every member this often while it is ready (faster, with backoff, while it is not). Default 10 s. */
  probeIntervalMs?: number;
  /** How long a /readyz probe may take. Default 5 s. */
  probeTimeoutMs?: number;
  /** The controller's namespace: ResourceBindings of cluster-scoped templates; ApplySet parents on members. */
  namespace: string;
  /** Templates reconciled at once. */
  concurrency: number;
  /** Requests in flight per member. */
  memberConcurrency?: number;
  logger: ControllerLogger;
  /** `flotilla/<version>`: the user agent. */
  tooling: string;
  /** This replica's identity, in the Events it writes. Default the host name. */
  instance?: string;
  /** How long a deleted template waits for unreachable members before its finalizer is released. Default 10 min. */
  cleanupTimeoutMs?: number;
  /** Policies' status (templates claimed, render errors) is written at most this often. Default 1 s. */
  policyStatusIntervalMs?: number;
  /** Every template is reconciled again this often (what a dropped event or a lost write missed). Default 10 min. */
  resyncMs?: number;
  /** Told of every finished reconcile, for metrics. */
  onReconcile?: (durationMs: number, outcome: string) => void;
  /** Told of every apply or removal on a member (state: Applied, Unchanged, Failed, Conflict, Unreachable, Removed), for metrics. */
  onMemberResult?: (member: string, state: string) => void;
  /** Told when a member's readiness changes (undefined: the member went away), for metrics. */
  onMemberReady?: (member: string, ready: boolean | undefined) => void;
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
/** A failed member is tried again after this long even when nothing changed. */
const RETRY_UNREACHABLE_MS = 5_000;
const CLUSTER_READY = 'Ready';

/** A member connected from its Cluster's secretRef. */
interface SecretMember {
  /** `namespace/name` of the Secret. */
  ref: string;
  informer: Informer;
  stop: AbortController;
  /** What the current connection was made from (Secret resourceVersion and the Cluster fields it uses). */
  version?: string;
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
  /** Every member the controller can reach now, by cluster name. */
  private readonly members = new Map<string, Member>();
  /** Names of the members from --members-kubeconfig (their Clusters' secretRef is not read). */
  private readonly kubeconfigMembers = new Set<string>();
  /** Members from Cluster secretRefs: the Secret watched for each, by cluster name. */
  private readonly secretMembers = new Map<string, SecretMember>();
  /** Why a cluster has no member (no secretRef, unreadable Secret, refused credentials), by cluster name. */
  private readonly noAccess = new Map<string, string>();
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
  /** Cluster name → the Ready condition last written to its status (status, reason, message). */
  private readonly clusterConditions = new Map<string, string>();
  private readonly events: EventRecorder;
  private readonly policyStatus = new PolicyStatusBook();
  /** Policy key → the status last written to it, so an unchanged status costs no request. */
  private readonly policyStatusWritten = new Map<string, string>();
  private signal: AbortSignal = new AbortController().signal;
  private syncedFlag = false;

  constructor(options: ControllerOptions) {
    this.o = options;
    const userAgent = options.tooling;
    this.hub = new KubeClient(options.hub, { concurrency: 16, userAgent });
    this.events = new EventRecorder(this.hub, { component: 'flotilla-controller', instance: options.instance ?? hostname() });
    this.hubWatcher = new Watcher(options.hub, { userAgent });
    this.hubDiscovery = new Discovery(this.hub);
    for (const m of options.members) {
      this.kubeconfigMembers.add(m.name);
      this.members.set(m.name, this.newMember(m.name, m.kubeConfig));
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
    for (const m of this.members.values()) this.startMember(m);

    // Clusters first (placement needs them), then policies, then the template kinds they name.
    this.clusterInformer = this.hubInformer('clusters', `/apis/cluster.flotilla.io/v1alpha1/clusters`, CLUSTER_API_VERSION, 'Cluster', {
      onAdd: (o) => this.onCluster(o),
      onUpdate: (o) => this.onCluster(o),
      onDelete: (o) => this.onClusterDeleted(o),
    });
    for (const name of this.kubeconfigMembers) this.upsert(this.clusterObject({ metadata: { name } }));
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
    log.info('caches synced', { templates: this.templates.size, members: [...this.members.keys()] });

    const resync = setInterval(() => {
      for (const key of this.templates.keys()) this.queue.add(key);
    }, this.o.resyncMs ?? 600_000);
    resync.unref();
    let writing: Promise<void> = Promise.resolve();
    const statusWriter = setInterval(() => {
      writing = writing.then(() => this.writePolicyStatuses()).catch((err: unknown) => this.o.logger.warn('cannot write policy statuses', { error: err instanceof Error ? err.message : String(err) }));
    }, this.o.policyStatusIntervalMs ?? 1_000);
    statusWriter.unref();
    signal.addEventListener('abort', () => { clearInterval(resync); clearInterval(statusWriter); }, { once: true });
    await queueDone;
    await writing;
    await this.events.flush();
    await Promise.all([...this.members.values()].map((m) => m.close()));
  }

  // ---- hub events -----------------------------------------------------------------------------------

  private hubInformer(name: string, path: string, apiVersion: string, kind: string, handlers: ConstructorParameters<typeof Informer>[0]['handlers'], fieldSelector?: string): Informer {
    const informer = new Informer({
      name: `hub ${name}`,
      source: listWatchSource(this.hub, this.hubWatcher),
      path,
      apiVersion,
      kind,
      ...(fieldSelector ? { fieldSelector } : {}),
      handlers,
      onError: (err, attempt, retryInMs) => this.o.logger.warn('hub watch failed; retrying', { resource: name, attempt, retryInMs, error: err instanceof Error ? err.message : String(err) }),
    });
    void informer.start(this.signal);
    return informer;
  }

  /** Into the state; the templates it can affect are enqueued. Returns why the object is not used, if it is not. */
  private upsert(object: JsonObject): string[] {
    const m = this.state.upsert(object);
    for (const r of m.rejected) this.o.logger.warn('object not used', { object: `${r.object.kind} ${r.object.namespace ? `${r.object.namespace}/` : ''}${r.object.name}`, reason: r.reason, message: r.message });
    for (const key of m.affected) this.queue.add(key);
    return m.rejected.map((r) => r.message);
  }

  /** A hub Cluster, or a member of the kubeconfig that has none, as the engine reads clusters. */
  private clusterObject(o: JsonObject): JsonObject {
    return { apiVersion: CLUSTER_API_VERSION, kind: 'Cluster', metadata: isObject(o.metadata) ? o.metadata : {}, ...(isObject(o.spec) ? { spec: o.spec } : {}) };
  }

  private onCluster(o: JsonObject): void {
    this.upsert(this.clusterObject(o));
    const name = ownString(o.metadata, 'name') ?? '';
    if (!name) return;
    if (this.kubeconfigMembers.has(name)) {
      const m = this.members.get(name);
      if (m) void this.writeClusterReady(name, m);
      return;
    }
    if (this.o.clusterSecrets === false) {
      this.setNoAccess(name, 'not a context of --members-kubeconfig (Cluster secretRefs are not read: --cluster-secrets=false)');
      return;
    }
    const spec = isObject(o.spec) ? o.spec : {};
    const ref = isObject(spec.secretRef) ? spec.secretRef : undefined;
    const ns = ownString(ref, 'namespace');
    const secretName = ownString(ref, 'name');
    const refText = ns && secretName ? `${ns}/${secretName}` : undefined;
    const current = this.secretMembers.get(name);
    if (current && current.ref === refText) {
      // Same Secret: the Cluster's apiEndpoint or TLS setting may have changed (Karmada's token form).
      void this.connect(name);
      return;
    }
    if (current) this.dropSecretMember(name);
    if (!ns || !secretName || !refText) {
      this.setNoAccess(name, 'not a context of --members-kubeconfig, and its Cluster has no spec.secretRef');
      return;
    }
    const stop = new AbortController();
    const informer = new Informer({
      name: `hub secret ${refText}`,
      source: listWatchSource(this.hub, this.hubWatcher),
      path: `/api/v1/namespaces/${encodeURIComponent(ns)}/secrets`,
      apiVersion: 'v1',
      kind: 'Secret',
      fieldSelector: `metadata.name=${secretName}`,
      handlers: { onAdd: () => void this.connect(name), onUpdate: () => void this.connect(name), onDelete: () => void this.connect(name) },
      onError: (err, attempt) => {
        if (attempt === 1) this.o.logger.warn('cannot watch the Secret a Cluster names; retrying', { cluster: name, secret: refText, error: err instanceof Error ? err.message : String(err) });
        if (attempt === 1) this.setNoAccess(name, `its Secret ${refText} cannot be read: ${err instanceof Error ? err.message : String(err)}`);
      },
    });
    this.secretMembers.set(name, { ref: refText, informer, stop });
    void informer.start(AbortSignal.any([this.signal, stop.signal]));
  }

  private onClusterDeleted(o: JsonObject): void {
    const name = ownString(o.metadata, 'name') ?? '';
    this.clusterConditions.delete(name);
    // A member of the kubeconfig stays a member, without the labels the Cluster object gave it.
    if (this.kubeconfigMembers.has(name)) {
      this.upsert(this.clusterObject({ metadata: { name } }));
      return;
    }
    this.dropSecretMember(name);
    this.noAccess.delete(name);
    this.apply(this.state.remove({ apiVersion: CLUSTER_API_VERSION, kind: 'Cluster', name }).affected);
  }

  /** (Re)connects the member of Cluster `name` from its watched Secret, when what it is made from changed. */
  private async connect(name: string): Promise<void> {
    const s = this.secretMembers.get(name);
    const cluster = this.clusterInformer?.get(name);
    if (!s || !cluster || this.signal.aborted) return;
    const secret = s.informer.get(s.ref);
    const spec = isObject(cluster.spec) ? cluster.spec : {};
    if (!secret) {
      if (s.informer.synced) this.setNoAccess(name, `its Secret ${s.ref} does not exist`);
      return;
    }
    const version = JSON.stringify([ownString(secret.metadata, 'resourceVersion'), spec.apiEndpoint, spec.insecureSkipTLSVerification]);
    if (s.version === version) return;
    s.version = version;
    const creds = credentialsFromSecret(spec, secret);
    if ('error' in creds) {
      this.o.logger.error('cannot use the credentials of a Cluster', { cluster: name, secret: s.ref, error: creds.error });
      this.setNoAccess(name, `its Secret ${s.ref}: ${creds.error}`, 'InvalidCredentials');
      return;
    }
    // Two member names for one apiserver would each remove what the other applied for the same template.
    const twin = [...this.members.values()].find((m) => m.name !== name && m.server === creds.server);
    if (twin) {
      this.o.logger.error('not connected: the Cluster reaches the apiserver of another member', { cluster: name, member: twin.name, server: creds.server });
      this.setNoAccess(name, `its Secret ${s.ref} reaches ${creds.server}, the apiserver of member ${twin.name}`, 'DuplicateServer');
      return;
    }
    const old = this.members.get(name);
    const m = this.newMember(name, creds.kubeConfig);
    this.members.set(name, m);
    this.noAccess.delete(name);
    if (old) await old.close();
    this.startMember(m);
    this.o.logger.info(old ? 'member reconnected: its credentials changed' : 'member connected from its Cluster secretRef', { cluster: name, secret: s.ref, server: m.server });
    this.apply(this.templates.keys());
  }

  private dropSecretMember(name: string): void {
    const s = this.secretMembers.get(name);
    if (!s) return;
    s.stop.abort();
    this.secretMembers.delete(name);
    const m = this.members.get(name);
    if (m) {
      this.members.delete(name);
      this.o.onMemberReady?.(name, undefined);
      void m.close();
      this.o.logger.info('member disconnected', { cluster: name });
      this.apply(this.templates.keys());
    }
  }

  /** Cluster `name` has no member: why, in its Ready condition and in the bindings that target it. */
  private setNoAccess(name: string, why: string, reason = 'NoCredentials'): void {
    this.noAccess.set(name, why);
    const m = this.members.get(name);
    if (m && !this.kubeconfigMembers.has(name)) {
      this.members.delete(name);
      this.o.onMemberReady?.(name, undefined);
      void m.close();
      this.apply(this.templates.keys());
    }
    void this.writeCondition(name, { status: 'False', reason, message: why });
  }

  private newMember(name: string, kubeConfig: KubeConfig): Member {
    return new Member({
      name,
      kubeConfig,
      userAgent: this.o.tooling,
      concurrency: this.o.memberConcurrency ?? 16,
      onOwnedEvent: (o) => {
        const t = ownerTemplate(o);
        if (t) this.queue.add(this.keyOfRef(t));
      },
      onWatchError: (resource, err, attempt) => {
        if (attempt === 1) this.o.logger.warn('member watch failed; retrying', { member: name, resource, error: err instanceof Error ? err.message : String(err) });
      },
    });
  }

  /** Binds a member to the run, starts its probe loop and the watches of the template kinds known so far. */
  private startMember(m: Member): void {
    m.bind(this.signal);
    for (const k of this.templateKinds.values()) void this.watchMember(m, k.apiVersion, k.info.kind);
    void probeLoop(
      m,
      {
        intervalMs: this.o.probeIntervalMs ?? 10_000,
        timeoutMs: this.o.probeTimeoutMs ?? 5_000,
        onChange: (member) => {
          if (this.members.get(member.name) !== member) return;
          const r = member.readiness;
          this.o.onMemberReady?.(member.name, r.ready);
          if (r.ready) this.o.logger.info('member ready', { member: member.name });
          else this.o.logger.warn('member not ready; skipped until it is', { member: member.name, error: r.message });
          void this.writeClusterReady(member.name, member);
          // Catch up what was skipped (and say Unreachable in the bindings when it went away).
          this.apply(this.templates.keys());
        },
      },
      AbortSignal.any([this.signal, m.closed]),
    );
  }

  private writeClusterReady(name: string, m: Member): Promise<void> {
    const r = m.readiness;
    if (r.ready === undefined) return Promise.resolve();
    return this.writeCondition(name, r.ready ? { status: 'True', reason: 'MemberReady', message: `${m.server}/readyz answered ok` } : { status: 'False', reason: 'MemberNotReady', message: r.message ?? 'not ready' });
  }

  /** The Ready condition on a Cluster's status (only for Clusters that exist on the hub); unchanged costs nothing. */
  private async writeCondition(name: string, c: { status: 'True' | 'False'; reason: string; message: string }): Promise<void> {
    const cluster = this.clusterInformer?.get(name);
    if (!cluster || this.signal.aborted) return;
    const text = JSON.stringify(c);
    if (this.clusterConditions.get(name) === text) return;
    this.clusterConditions.set(name, text);
    const lastTransitionTime = transitionTime(cluster, CLUSTER_READY, c.status);
    const status = await this.applyStatus(`/apis/${CLUSTER_API_VERSION}/clusters/${encodeURIComponent(name)}/status`, {
      apiVersion: CLUSTER_API_VERSION,
      kind: 'Cluster',
      metadata: { name },
      status: { conditions: [{ type: CLUSTER_READY, status: c.status, reason: c.reason, message: c.message.slice(0, 1024), lastTransitionTime }] },
    });
    if (status >= 400 || status === 0) {
      this.clusterConditions.delete(name);
      if (status !== 404) this.o.logger.warn('cannot write the Ready condition of a Cluster', { cluster: name, status });
    }
  }

  /** Server-side applies `body` to a status subresource on the hub; the HTTP status, 0 when the hub did not answer. */
  private async applyStatus(path: string, body: JsonObject): Promise<number> {
    const res = await this.hub
      .request({ method: 'PATCH', accept: METADATA_ACCEPT, path, query: { fieldManager: HUB_FIELD_MANAGER, force: 'true' }, contentType: 'application/apply-patch+yaml', body })
      .catch(() => ({ status: 0 }));
    return res.status;
  }

  private onPolicy(o: JsonObject): void {
    const refused = this.upsert(o);
    // A refused policy says so on its status; an accepted one (again) says what it claims.
    const ref = this.refOf(o);
    if (refused.length > 0) this.policyStatus.refuse(ref, refused.join('; '));
    else this.policyStatus.accept(ref);
    this.policyStatus.touch(ref);
    if (this.syncedFlag) void this.syncTemplateKinds();
  }

  private onPolicyDeleted(o: JsonObject): void {
    const ref = this.refOf(o);
    this.policyStatus.drop(ref);
    this.policyStatusWritten.delete(policyKey(ref));
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
      for (const m of this.members.values()) void this.watchMember(m, apiVersion, kind);
    }
    for (const [id, k] of this.templateKinds) {
      if (wanted.has(id)) continue;
      // Templates of that kind stay in the state: what was propagated stays until a policy claims them.
      k.stop.abort();
      this.templateKinds.delete(id);
    }
  }

  /** Watches, on a member, the objects of a template kind the controller applied there (drift). */
  private async watchMember(m: Member, apiVersion: string, kind: string): Promise<void> {
    try {
      const info = await m.resolve(apiVersion, kind);
      if (info) m.watchOwned(info, apiVersion);
    } catch {
      // Unreachable now: the first apply of that kind starts the watch.
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
    this.policyStatus.forget(key);
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
    if (!result) {
      this.policyStatus.forget(key);
      return undefined;
    }
    this.policyStatus.record(key, describeTemplate(identity), { policy: result.policy, overrides: result.placements.flatMap((p) => p.overrides), errors: result.errors });
    if (!result.policy) {
      // Never claimed (no finalizer of ours): nothing to say, no binding. No longer claimed: what was
      // propagated stays on the members, and the binding says so.
      if (hasFinalizer) await this.writeBinding(identity, template, { clusters: [], errors: [] });
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
    const overrideFailed: string[] = [];
    for (const e of result.errors) {
      if (e.cluster) {
        clusters.set(e.cluster, { name: e.cluster, state: 'Failed', message: e.message });
        overrideFailed.push(`${e.cluster}: ${e.message}`);
      } else errors.push(e.message);
    }

    const generation = typeof meta.generation === 'number' ? meta.generation : undefined;
    let retry = false;
    const applied: string[] = [];
    const failed: string[] = [];
    const conflicts: string[] = [];
    const removed: string[] = [];
    const renamed: string[] = [];
    await Promise.all(
      [...this.members.values()].map(async (m) => {
        const object = desired.get(m.name);
        const status = clusters.get(m.name);
        if (m.readiness.ready === false) {
          // Skipped; every template is reconciled again when the member is ready.
          if (status && status.state !== 'Failed') Object.assign(status, { state: 'Unreachable', message: `not ready: ${m.readiness.message ?? 'its /readyz probe fails'}` });
          return;
        }
        if (!object) {
          // Targeted, but its render failed there: the member keeps what it has until the render works.
          if (status) return;
          // Not targeted (any more): what the template has there goes.
          const gone = await this.removeFrom(m, identity, ref, signal);
          if (gone === 'removed') removed.push(m.name);
          else if (gone !== 'absent') {
            retry = true;
            clusters.set(m.name, { name: m.name, state: 'Removing', message: gone.error });
          }
          return;
        }
        if (!status || status.state === 'Failed') return;
        const outcome = await m.apply(object, identity, conflictResolution, signal);
        this.o.onMemberResult?.(m.name, outcome.state === 'Applied' && !outcome.changed ? 'Unchanged' : outcome.state);
        if (outcome.state === 'Unreachable' || outcome.state === 'Failed') retry = true;
        if (outcome.state === 'Applied' && outcome.changed) applied.push(m.name);
        if (outcome.state === 'Applied') {
          // An override that renames the object (or moves it) leaves its old copy: it goes.
          const gone = await this.removeFrom(m, identity, ref, signal, outcome.key);
          if (gone === 'removed') renamed.push(m.name);
          else if (gone !== 'absent') retry = true;
        }
        else if (outcome.state === 'Failed') failed.push(`${m.name}: ${outcome.message}`);
        else if (outcome.state === 'Conflict') conflicts.push(`${m.name}: ${outcome.message}`);
        Object.assign(status, clusterStatusOf(outcome, generation));
        log.debug('applied', { template: describeTemplate(identity), cluster: m.name, state: outcome.state, ...(outcome.state === 'Applied' ? { changed: outcome.changed } : { error: outcome.message }) });
      }),
    );
    for (const [name, status] of clusters) {
      if (status.state === 'Pending' && !this.members.has(name)) Object.assign(status, { state: 'Unreachable', message: `no access to cluster ${name}: ${this.noAccess.get(name) ?? 'not a context of --members-kubeconfig, and no Cluster secretRef connected yet'}` });
    }
    await this.writeBinding(identity, template, { policy: result.policy, conflictResolution, clusters: [...clusters.values()], errors });
    if (applied.length > 0) this.events.record(identity, 'Normal', 'Applied', `applied to ${applied.join(', ')}`);
    if (failed.length > 0) this.events.record(identity, 'Warning', 'ApplyFailed', failed.join('; '));
    if (conflicts.length > 0) this.events.record(identity, 'Warning', 'Conflict', conflicts.join('; '));
    if (overrideFailed.length > 0) this.events.record(identity, 'Warning', 'OverrideFailed', overrideFailed.join('; '));
    if (removed.length > 0) this.events.record(identity, 'Normal', 'Pruned', `removed from ${removed.join(', ')}: no longer targeted`);
    if (renamed.length > 0) this.events.record(identity, 'Normal', 'Pruned', `removed the previous copy from ${renamed.join(', ')}: the overrides now give the object another name or namespace`);
    log.debug('reconciled', { template: describeTemplate(identity), clusters: [...clusters.values()].map((c) => `${c.name}: ${c.state}`), errors });
    return retry ? { requeueAfter: RETRY_UNREACHABLE_MS } : undefined;
  }

  /**
   * Removes the template's objects from a member, but the one at `keep` (the object it has there now, when
   * an override renamed it): 'removed' or 'absent' (nothing of the template's is there), else why not.
   */
  private async removeFrom(m: Member, t: TemplateIdentity, at: ObjectRef, signal: AbortSignal, keep?: string): Promise<'removed' | 'absent' | { error: string }> {
    try {
      const removed = await m.removeAll(t, at, keep, signal);
      if (removed.length === 0) return 'absent';
      this.o.onMemberResult?.(m.name, 'Removed');
      this.o.logger.info('removed from a member', { template: describeTemplate(t), cluster: m.name, objects: removed });
      return 'removed';
    } catch (err: unknown) {
      this.o.onMemberResult?.(m.name, 'Failed');
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }

  private policyObject(p: { kind: string; namespace?: string; name: string }): JsonObject | undefined {
    return this.policyInformers.get(p.kind)?.get(p.namespace ? `${p.namespace}/${p.name}` : p.name);
  }

  /** Writes the status of every policy whose templates, errors or generation changed (policy-status.ts). */
  private async writePolicyStatuses(): Promise<void> {
    for (const key of this.policyStatus.takeDirty()) {
      if (this.signal.aborted) return;
      const ref = parseKey(key);
      const resource = POLICY_RESOURCES.find((r) => r.kind === ref.kind);
      const policy = this.policyObject(ref);
      if (!resource || !policy) continue;
      const meta = isObject(policy.metadata) ? policy.metadata : {};
      const generation = typeof meta.generation === 'number' ? meta.generation : undefined;
      const s = this.policyStatus.statusOf(key);
      const text = JSON.stringify([generation, s]);
      if (this.policyStatusWritten.get(key) === text) continue;
      const lastTransitionTime = transitionTime(policy, s.condition.type, s.condition.status);
      const g = generation === undefined ? {} : { observedGeneration: generation };
      const apiVersion = `${POLICY_GROUP}/${POLICY_STORAGE_VERSION}`;
      const status = await this.applyStatus(`/apis/${apiVersion}/${ref.namespace ? `namespaces/${encodeURIComponent(ref.namespace)}/` : ''}${resource.resource}/${encodeURIComponent(ref.name)}/status`, {
        apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
        status: { ...g, templates: s.templates, failedTemplates: s.failedTemplates, conditions: [{ ...s.condition, ...g, lastTransitionTime }] },
      });
      if (status > 0 && status < 400) {
        this.policyStatusWritten.set(key, text);
        continue;
      }
      if (status === 404) continue; // deleted meanwhile
      this.o.logger.warn('cannot write the status of a policy; retrying', { policy: `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`, status });
      this.policyStatus.touch(ref);
    }
  }

  /** A deleted template: its objects go from every member, then the finalizer. */
  private async cleanup(key: string, template: JsonObject, t: TemplateIdentity, signal: AbortSignal): Promise<{ requeueAfter?: number } | undefined> {
    const log = this.o.logger;
    const unreachable: string[] = [];
    const removedFrom: string[] = [];
    const ref = this.refOf(template);
    await Promise.all(
      [...this.members.values()].map(async (m) => {
        const gone = await this.removeFrom(m, t, ref, signal);
        if (gone === 'removed') removedFrom.push(m.name);
        else if (gone !== 'absent') unreachable.push(`${m.name}: ${gone.error}`);
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
    if (removedFrom.length > 0) this.events.record(t, 'Normal', 'Pruned', `removed from ${removedFrom.join(', ')}: the template is being deleted`);
    // The binding's owner reference would have the garbage collector remove it; do not wait for that.
    const bindingPath = this.bindingPath(t);
    this.written.delete(bindingPath);
    await this.hub.request({ method: 'DELETE', path: bindingPath });
    const meta = isObject(template.metadata) ? template.metadata : {};
    const finalizers = (Array.isArray(meta.finalizers) ? meta.finalizers : []).filter((f) => f !== FINALIZER);
    await this.patchFinalizers(ref, finalizers);
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
      accept: METADATA_ACCEPT,
      path: await this.templatePath(ref),
      contentType: 'application/merge-patch+json',
      body: { metadata: { finalizers } },
    });
    if (res.status === 404) return;
    if (res.status >= 400) throw apiError(res);
  }

  private bindingPath(t: TemplateIdentity): string {
    return `/apis/${BINDING_API_VERSION}/namespaces/${encodeURIComponent(bindingNamespace(t, this.o.namespace))}/${BINDING_PLURAL}/${encodeURIComponent(bindingName(t.name, t.kind))}`;
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
    const path = this.bindingPath(t);
    const text = JSON.stringify(body);
    if (this.written.get(path) === text) return;
    this.written.delete(path);
    const res = await this.hub.request({
      method: 'PATCH',
      accept: METADATA_ACCEPT,
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

/** A condition's lastTransitionTime: kept from `o`'s condition of that type while its status stays, else now. */
function transitionTime(o: JsonObject, type: string, status: string): string {
  const current = isObject(o.status) ? o.status : {};
  const previous = (Array.isArray(current.conditions) ? current.conditions.filter(isObject) : []).find((x) => x.type === type);
  return previous && previous.status === status && typeof previous.lastTransitionTime === 'string' ? previous.lastTransitionTime : new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** A cluster's line in the binding from what applying there gave. */
function clusterStatusOf(outcome: ApplyOutcome, generation: number | undefined): Partial<ClusterStatus> {
  if (outcome.state !== 'Applied') return { state: outcome.state, message: outcome.message };
  return { state: 'Applied', health: outcome.health, ...(generation === undefined ? {} : { observedGeneration: generation }) };
}
