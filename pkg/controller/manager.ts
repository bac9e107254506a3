// The manager: wires the hub's informers, the engine state, the member registry and the reconcilers,
// each with its own queue (controller-runtime's and Karmada's shape):
//
//   hub informers ──► EngineState (pure, incremental) ──► templates queue ──► TemplateReconciler (template.ts)
//                                                              │ plan per template
//                                                              ▼
//                                        one work queue per member ──► execute (execute.ts) ──► binding
//   member registry (members.ts): kubeconfig contexts, Cluster secretRefs, probes ──► ClusterStatusReconciler
//   template reconciles ──► PolicyStatusBook ──► PolicyStatusReconciler (status.ts)
//   member informers (objects carrying the controller's labels) ──► drift: the owning template's key
//
// Policies are read in their storage version (v1beta1) and Clusters as they are: the controller does not
// need the conversion webhook to be up to read what is stored. Template kinds are those named by any
// propagation policy's resourceSelectors, and, while any propagation policy says propagateDeps, the kinds
// a workload can depend on (ConfigMap, Secret, ServiceAccount, PersistentVolumeClaim); resolved by
// discovery, their informers start and stop as policies change.

import { hostname } from 'node:os';

import type { KubeConfig } from '@kubernetes/client-node';

import { API_VERSION as CLUSTER_API_VERSION } from '../../api/cluster/v1alpha1/types.js';
import { POLICY_KINDS } from '../../api/crds/index.js';
import { DEPENDENCY_KINDS } from '../engine/dependencies.js';
import { refOf } from '../engine/inputs.js';
import { EngineState } from '../engine/state.js';
import { apiError, KubeClient, METADATA_ACCEPT } from '../kube/client.js';
import { Discovery, resourcePath, type ResourceInfo } from '../kube/discovery.js';
import { Informer, listWatchSource, objectKey, type InformerHandlers } from '../kube/informer.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { Transport } from '../kube/transport.js';
import { Watcher } from '../kube/watch.js';
import type { Logger } from '../runtime/log.js';
import { ClusterFactsCollector } from './cluster-facts.js';
import { HeldKinds } from './held-kinds.js';
import { withHealthTaints, type HealthTaint } from './health-taints.js';
import { ClusterHealth } from './cluster-health.js';
import { HubLiveness } from './hub-liveness.js';
import { AgentLeases, joinedBefore } from './agent-leases.js';
import { EventRecorder } from './events.js';
import type { Member } from './member.js';
import { MemberRegistry, type MemberAccess } from './members.js';
import { ownerTemplate } from './ownership.js';
import { policyKey } from './policy-status.js';
import {
  ClusterStatusReconciler,
  ClusterTaintReconciler,
  POLICY_STORAGE_API_VERSION,
  PolicyStatusReconciler,
} from './status.js';
import { TemplateReconciler } from './template.js';
import { templateKey } from './queue.js';
import { AgentReconciler, agentFieldManager } from './agent.js';
import { CONTROLLER_DEFAULTS, DEFAULT_LEASE_NAMESPACE } from './defaults.js';
import { SHARD_LABEL, ShardView, shardFieldManager, shardOf } from './shards.js';
import { WORK_API_VERSION, WORK_KIND, WORK_PLURAL, executionSpace, workEntry, workName, workTemplate } from './work.js';
import { serverSideApply } from '../kube/delivery.js';
import {
  BINDING_API_VERSION,
  BINDING_KIND,
  BINDING_PLURAL,
  bindingName,
  bindingNamespace,
  clusterStatusOf,
  type ClusterStatus,
} from './binding.js';
import { TEMPLATE_UID_LABEL, type TemplateIdentity } from './ownership.js';

export type { MemberAccess } from './members.js';

export interface ControllerOptions {
  /** The hub: a KubeConfig, or a Transport that also streams watches (unit tests: test/fake-apiserver.ts). */
  hub: KubeConfig | Transport;
  /** Members from a kubeconfig; more come from Cluster objects' secretRef Secrets (unless clusterSecrets is false). */
  members: MemberAccess[];
  /** Read Cluster objects' spec.secretRef Secrets for credentials. Default true. */
  clusterSecrets?: boolean;
  /** GET /readyz on every member this often while it is ready (faster, with backoff, while it is not). Default 10 s. */
  probeIntervalMs?: number;
  /** How long a /readyz probe may take. Default 5 s. */
  probeTimeoutMs?: number;
  /** Each ready member's Nodes, Pods, version and APIs are read into its Cluster's status this often. Default 30 s. */
  clusterStatusIntervalMs?: number;
  /** A member not ready this long gets a NoSchedule health taint. Default 30 s. */
  notReadyTaintAfterMs?: number;
  /** Taint members not ready for failoverEvictionTimeoutMs NoExecute, which evicts what they run. Default false. */
  failover?: boolean;
  /** Default 5 min. */
  failoverEvictionTimeoutMs?: number;
  /** Not ready clusters (more than two) at or above this fraction evict nothing (disruption.ts). Default 0.55. */
  unhealthyClusterThreshold?: number;
  /** The hub is asked for /readyz this often; a failed check holds health taints (hub-liveness.ts). Default 2 s. */
  hubCheckIntervalMs?: number;
  /** How an evicted cluster's copy goes when the policy does not say (spec.failover.cluster.purgeMode). Default Gracefully. */
  evictionPurgeMode?: 'Directly' | 'Gracefully' | 'Never';
  /** How long a Gracefully evicted copy is kept at most. Default 10 min. */
  gracefulEvictionTimeoutMs?: number;
  /** The controller's namespace: ResourceBindings of cluster-scoped templates. */
  namespace: string;
  /** Templates planned at once, and (template, member) pairs carried out at once per member. */
  concurrency: number;
  /** Requests in flight per member. */
  memberConcurrency?: number;
  logger: Logger;
  /** `flotilla/<version>`: the user agent. */
  tooling: string;
  /** This replica's identity, in the Events it writes. Default the host name. */
  instance?: string;
  /** How long a deleted template waits for unreachable members before its finalizer is released. Default 10 min. */
  cleanupTimeoutMs?: number;
  /** A policy's status is written at most this often. Default 1 s. */
  policyStatusIntervalMs?: number;
  /** Every template is reconciled again this often (what a dropped event or a lost write missed). Default 10 min. */
  resyncMs?: number;
  /** Told of every finished template reconcile, for metrics. */
  onReconcile?: (durationMs: number, outcome: string) => void;
  /** Told of every apply or removal on a member (state: Applied, Unchanged, Failed, Conflict, Unreachable, Removed), for metrics. */
  onMemberResult?: (member: string, state: string) => void;
  /** Told when a member's readiness changes (undefined: the member went away), for metrics. */
  onMemberReady?: (member: string, ready: boolean | undefined) => void;
  /**
   * Act on policy.karmada.io policies and cluster.karmada.io Clusters too: 'auto' (default) when the hub
   * serves those groups, 'off' never (a hub where Karmada itself acts on them).
   */
  karmadaGroups?: 'auto' | 'off';
  /**
   * Run as the pull agent of this cluster (`flotilla agent`): `members` holds that one cluster (the one the
   * process runs in); the hub is read, and only this cluster's entries, status and Lease are written.
   */
  agent?: { cluster: string };
  /** Where pull agents renew their Leases on the hub, one per cluster, named after it. Default flotilla-cluster-lease. */
  leaseNamespace?: string;
  /**
   * Sharded push (shards.ts): this replica's Lease name (`self`, held and renewed by the caller, labelled
   * `flotilla.io/shard-of: <group>`), in `namespace`; the members are divided among the live replicas.
   */
  sharding?: { self: string; group: string; handoffMs: number };
}

export { DEFAULT_LEASE_NAMESPACE } from './defaults.js';

const KARMADA_POLICY_API_VERSION = 'policy.karmada.io/v1alpha1';
/** How long templates wait for every informer to list before those listed are reconciled anyway. */
const CACHE_SYNC_GRACE_MS = 60_000;
const KARMADA_CLUSTER_API_VERSION = 'cluster.karmada.io/v1alpha1';

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
  private readonly registry: MemberRegistry;
  private readonly templates: TemplateReconciler | AgentReconciler;
  private readonly clusterStatus: ClusterStatusReconciler;
  private readonly facts: ClusterFactsCollector;
  private readonly clusterTaints: ClusterTaintReconciler;
  /** Each cluster's health taints (cluster-health.ts); whether the hub answers; pull agents' Leases. */
  private readonly health: ClusterHealth;
  private readonly hubLiveness: HubLiveness | undefined;
  private readonly agentLeases: AgentLeases;
  private readonly policyStatus: PolicyStatusReconciler;
  private readonly events: EventRecorder;
  private readonly policyInformers = new Map<string, Informer>();
  /** policy.karmada.io kinds, when the hub serves them: one pool with Flotilla's (same kind, namespace and name: Flotilla's is used). */
  private readonly karmadaPolicyInformers = new Map<string, Informer>();
  private clusterInformer: Informer | undefined;
  private karmadaClusterInformer: Informer | undefined;
  private readonly templateKinds = new Map<string, TemplateKind>();
  /** Template kinds no policy selects, watched while templates of them carry the finalizer (held-kinds.ts). */
  private readonly heldKinds = new HeldKinds();
  /** Dependency kinds (propagateDeps) the hub does not let this controller read, already logged. */
  private readonly unreadableDependencyKinds = new Set<string>();
  /** ResourceBindings on the hub (sharded: the other replicas' entries). */
  private bindingInformer: Informer | undefined;
  /** Works on the hub: an agent's, in its cluster's namespace; the controller's, pull agents' reports (started with the first pull cluster). */
  private workInformer: Informer | undefined;
  /** Pull agents' Leases (the controller). */
  private leaseInformer: Informer | undefined;
  /** Sharded push: the replicas' Leases, and what this replica made of them last. */
  private readonly shardView: ShardView | undefined;
  private shardInformer: Informer | undefined;
  private shardTimer: NodeJS.Timeout | undefined;
  private shardState = '';
  private readonly clearedShards = new Set<string>();
  private signal: AbortSignal = new AbortController().signal;
  private syncedFlag = false;

  constructor(options: ControllerOptions) {
    this.o = options;
    if (options.sharding) this.shardView = new ShardView(options.sharding.self, options.sharding.handoffMs);
    const userAgent = options.tooling;
    const logger = options.logger;
    this.hub = new KubeClient(options.hub, { concurrency: 16, userAgent });
    this.hubWatcher = new Watcher(options.hub, { userAgent });
    this.hubDiscovery = new Discovery(this.hub);
    this.events = new EventRecorder(this.hub, {
      component: 'flotilla-controller',
      instance: options.instance ?? hostname(),
      // An agent may read the hub, not write Events there: its log says what an Event would.
      ...(options.agent ? { disabled: true } : {}),
    });
    const cluster = (name: string) => this.clusterInformer?.get(name) ?? this.karmadaClusterInformer?.get(name);
    this.registry = new MemberRegistry(
      {
        hub: this.hub,
        hubWatcher: this.hubWatcher,
        clusterSecrets: options.clusterSecrets !== false,
        probeIntervalMs: options.probeIntervalMs ?? CONTROLLER_DEFAULTS.probeIntervalMs,
        probeTimeoutMs: options.probeTimeoutMs ?? CONTROLLER_DEFAULTS.probeTimeoutMs,
        memberConcurrency: options.memberConcurrency ?? 16,
        userAgent,
        logger,
        cluster,
        onChange: (name, ready) => {
          options.onMemberReady?.(name, ready);
          if (ready === undefined && !this.registry.get(name)) {
            this.templates.work.drop(name);
            this.facts.forget(name);
          }
          const m = ready ? this.registry.get(name) : undefined;
          if (m) void this.facts.refresh(m, this.signal);
          this.reshard();
          // Taints first: the templates queued below must see the member's health as it is now.
          if (!options.agent) this.health.evaluate(name);
          this.clusterStatus.queue.add(name);
          if (this.registry.isPull(name)) this.startWorkInformer();
          // Catch up what was skipped (and say Unreachable in the bindings when it went away).
          this.templates.all();
        },
        onConnect: (m) => {
          for (const k of this.templateKinds.values()) void this.watchMember(m, k.apiVersion, k.info.kind);
        },
        onOwnedEvent: (o) => {
          const t = ownerTemplate(o);
          if (t) this.templates.queue.add(templateKey(t));
        },
      },
      options.members,
    );
    this.facts = new ClusterFactsCollector({
      intervalMs: options.clusterStatusIntervalMs ?? CONTROLLER_DEFAULTS.clusterStatusIntervalMs,
      members: () =>
        [...this.registry.all()]
          .filter((m) => this.writesCluster(m.name))
          .map((m) => ({ name: m.name, client: m.client, ready: m.readiness.ready === true })),
      onChange: (name) => this.clusterStatus.queue.add(name),
      logger,
    });
    this.clusterTaints = new ClusterTaintReconciler(this.hub, {
      cluster: (name) => (this.writesCluster(name) ? cluster(name) : undefined),
      taints: (name) => this.health.get(name),
      logger,
    });
    this.clusterStatus = new ClusterStatusReconciler(this.hub, {
      cluster,
      // An agent writes what it reads of its cluster; the controller writes Ready, from the agent's Lease.
      condition: (name) => (options.agent || !this.writesCluster(name) ? undefined : this.registry.condition(name)),
      ...(options.agent ? { fieldManager: agentFieldManager(options.agent.cluster) } : {}),
      facts: (name) => this.facts.get(name),
      events: this.events,
      logger,
    });
    this.hubLiveness = options.agent
      ? undefined
      : new HubLiveness({
          client: new KubeClient(options.hub, { concurrency: 1, userAgent }),
          intervalMs: options.hubCheckIntervalMs ?? 2_000,
          timeoutMs: options.probeTimeoutMs ?? CONTROLLER_DEFAULTS.probeTimeoutMs,
          behind: () => {
            const e = this.leaseInformer?.error;
            return e === undefined ? undefined : `the Lease watch has not caught up: ${e}`;
          },
          onChange: (stale) => {
            if (stale) this.agentLeases.pause();
            else this.agentLeases.resume(this.registry.pullNames());
            this.health.evaluateAll();
          },
          logger,
        });
    const leaseNamespace = options.leaseNamespace ?? DEFAULT_LEASE_NAMESPACE;
    this.agentLeases = new AgentLeases({
      namespace: leaseNamespace,
      lease: (key) => this.leaseInformer?.get(key),
      synced: () => this.leaseInformer?.synced === true,
      joinedBefore: (name) => joinedBefore(cluster(name)),
      set: (name, state, message) =>
        this.registry.setAgentLease(
          name,
          state === 'ready',
          message,
          state === 'awaiting' ? 'AgentNotJoined' : undefined,
        ),
      confirmedAt: () => this.hubLiveness?.confirmedAt ?? Date.now(),
    });
    this.health = new ClusterHealth({
      notReadyAfterMs: options.notReadyTaintAfterMs ?? CONTROLLER_DEFAULTS.notReadyTaintAfterMs,
      failover: options.failover === true,
      evictionAfterMs: options.failoverEvictionTimeoutMs ?? CONTROLLER_DEFAULTS.failoverEvictionTimeoutMs,
      unhealthyThreshold: options.unhealthyClusterThreshold ?? CONTROLLER_DEFAULTS.unhealthyClusterThreshold,
      readiness: (name) => this.registry.readiness(name),
      isPull: (name) => this.registry.isPull(name),
      awaitingAgent: (name) => this.registry.isPull(name) && this.agentLeases.awaiting(name),
      names: () => new Set([...this.registry.names(), ...this.registry.pullNames()]),
      hubStale: () => this.hubLiveness?.stale === true,
      listed: () => this.clusterInformer?.synced === true && (this.karmadaClusterInformer?.synced ?? true),
      onChange: (name, taints) => {
        // Into the engine at once (the Cluster as the hub has it, or the kubeconfig member's), then onto the hub.
        const hubCluster = cluster(name);
        if (hubCluster) this.upsert(clusterObject(hubCluster, taints));
        else if (this.registry.isKubeconfigMember(name)) this.upsert(clusterObject({ metadata: { name } }, taints));
        this.clusterTaints.queue.add(name);
      },
      logger,
    });
    this.policyStatus = new PolicyStatusReconciler(this.hub, {
      // Sharded: the coordinator writes policy status.
      policy: (ref) =>
        this.shardView && !this.shardView.isCoordinator(Date.now()) ? undefined : this.policyObject(ref),
      plural: (kind) => POLICY_KINDS.find((k) => k.kind === kind)?.plural,
      intervalMs: options.policyStatusIntervalMs ?? 1_000,
      logger,
    });
    const agent = options.agent;
    this.templates = agent
      ? new AgentReconciler({
          hub: this.hub,
          state: this.state,
          member: () => this.registry.get(agent.cluster),
          cluster: agent.cluster,
          clusterObject: () => cluster(agent.cluster),
          work: (name) => this.workInformer?.get(`${executionSpace(agent.cluster)}/${name}`),
          policy: (ref) => this.policyObject(ref),
          namespace: options.namespace,
          concurrency: options.concurrency,
          events: this.events,
          logger,
          onReconcile: options.onReconcile,
          onMemberResult: options.onMemberResult,
        })
      : this.templateReconciler(options, logger);
  }

  private templateReconciler(options: ControllerOptions, logger: Logger): TemplateReconciler {
    const view = this.shardView;
    const sharding = options.sharding;
    return new TemplateReconciler({
      agentEntries: (t) => this.agentEntries(t),
      work: (cluster, t) => this.workOf(cluster, t),
      shards:
        view && sharding
          ? {
              owns: (m) => view.owns(m, Date.now()),
              coordinator: () => view.isCoordinator(Date.now()),
              entriesManager: shardFieldManager(sharding.self),
            }
          : undefined,
      hub: this.hub,
      hubDiscovery: this.hubDiscovery,
      state: this.state,
      registry: this.registry,
      events: this.events,
      policyStatus: this.policyStatus,
      policy: (ref) => this.policyObject(ref),
      namespace: options.namespace,
      concurrency: options.concurrency,
      memberConcurrency: options.concurrency,
      cleanupTimeoutMs: options.cleanupTimeoutMs ?? 600_000,
      evictionPurgeMode: options.evictionPurgeMode ?? CONTROLLER_DEFAULTS.evictionPurgeMode,
      gracefulEvictionTimeoutMs: options.gracefulEvictionTimeoutMs ?? CONTROLLER_DEFAULTS.gracefulEvictionTimeoutMs,
      logger,
      onReconcile: options.onReconcile,
      onMemberResult: options.onMemberResult,
    });
  }

  /** True once the hub's caches have been listed once (readiness). */
  get synced(): boolean {
    return this.syncedFlag;
  }

  /** Templates waiting to be planned, and (template, member) pairs waiting to be carried out. */
  get queueDepth(): number {
    return this.templates.queue.depth + this.templates.work.depth;
  }

  /** Runs until `signal` aborts; in-flight reconciles finish first. */
  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const agent = this.o.agent;
    // Templates are reconciled once every informer has listed (controller-runtime starts workers after
    // WaitForCacheSync): a dependency reconciled before the workloads that require it are held would be
    // "required by none" and removed from the members. Keys added before then wait in the queue.
    let cachesSynced!: () => void;
    const synced = new Promise<void>((resolve) => (cachesSynced = resolve));
    signal.addEventListener('abort', () => cachesSynced(), { once: true });
    // A kind that never lists (not permitted, not served) must not hold every other template: after a
    // bounded wait, what is listed is reconciled.
    const syncGrace = setTimeout(() => {
      this.o.logger.warn('caches not synced yet; reconciling the templates listed so far', {
        waitedMs: CACHE_SYNC_GRACE_MS,
        notSynced: [...this.templateKinds.entries()].filter(([, k]) => !k.informer.synced).map(([id]) => id),
      });
      cachesSynced();
    }, CACHE_SYNC_GRACE_MS);
    syncGrace.unref();
    const running = Promise.all([
      this.facts.run(signal),
      synced.then(() => this.templates.run(signal)),
      this.clusterStatus.queue.start(signal),
      ...(agent ? [] : [this.clusterTaints.queue.start(signal), this.policyStatus.queue.start(signal)]),
      ...(this.hubLiveness ? [this.hubLiveness.run(signal)] : []),
    ]);
    this.registry.start(signal);

    // Clusters first (placement needs them), then policies, then the template kinds they name. An agent
    // reads its own Cluster only, and its cluster's Works (where the hub placed each template).
    this.clusterInformer = this.hubInformer(
      'clusters',
      `/apis/${CLUSTER_API_VERSION}/clusters`,
      CLUSTER_API_VERSION,
      'Cluster',
      {
        onAdd: (o) => this.onCluster(o),
        onUpdate: (o) => this.onCluster(o),
        onDelete: (o) => this.onClusterDeleted(o),
      },
      agent ? `metadata.name=${agent.cluster}` : undefined,
    );
    if (agent) this.startWorkInformer();
    else {
      if (this.o.sharding) {
        this.startBindingInformer();
        this.shardInformer = new Informer({
          name: 'hub shard leases',
          source: listWatchSource(this.hub, this.hubWatcher),
          path: `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.o.namespace)}/leases`,
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          labelSelector: `${SHARD_LABEL}=${this.o.sharding.group}`,
          handlers: {
            onAdd: (o) => this.onShardLease(o),
            onUpdate: (o) => this.onShardLease(o),
            onDelete: (o) => this.onShardLease(o, true),
          },
          onError: (err, attempt) => {
            if (attempt === 1)
              this.o.logger.warn('cannot watch the replicas’ Leases; retrying', {
                error: err instanceof Error ? err.message : String(err),
              });
          },
        });
        void this.shardInformer.start(signal);
      }
      for (const name of this.registry.kubeconfigNames()) this.upsert(clusterObject({ metadata: { name } }, []));
    }
    signal.addEventListener('abort', () => {
      this.health.stop();
      this.agentLeases.stop();
      clearTimeout(this.shardTimer);
    });
    for (const p of POLICY_KINDS) {
      const path = `/apis/${POLICY_STORAGE_API_VERSION}/${p.plural}`;
      const informer = this.hubInformer(p.plural, path, POLICY_STORAGE_API_VERSION, p.kind, {
        onAdd: (o) => this.onPolicy(o),
        onUpdate: (o) => this.onPolicy(o),
        onDelete: (o) => this.onPolicyDeleted(o),
      });
      this.policyInformers.set(p.kind, informer);
    }
    await this.startKarmadaInformers();
    await Promise.all(
      [
        this.clusterInformer,
        ...(this.o.sharding && this.bindingInformer ? [this.bindingInformer] : []),
        ...(agent && this.workInformer ? [this.workInformer] : []),
        ...(this.shardInformer ? [this.shardInformer] : []),
        ...this.policyInformers.values(),
        ...this.karmadaPolicyInformers.values(),
        ...(this.karmadaClusterInformer ? [this.karmadaClusterInformer] : []),
      ].map((i) => i.waitForSync(signal)),
    );
    // Health is judged once the hub's Clusters are listed: until then each keeps the taints it carries.
    if (!agent) this.health.evaluateAll();
    // Claimed templates of kinds no policy selects now: their bindings say which kinds to watch for them.
    if (!agent)
      await this.heldKinds.seedFromBindings(
        this.hub,
        `/apis/${BINDING_API_VERSION}/${BINDING_PLURAL}`,
        signal,
        this.o.logger,
      );
    await this.syncTemplateKinds();
    await Promise.all([...this.templateKinds.values()].map((k) => k.informer.waitForSync(signal)));
    this.syncedFlag = !signal.aborted;
    clearTimeout(syncGrace);
    cachesSynced();
    void this.syncTemplateKinds();
    this.o.logger.info('caches synced', { templates: this.templates.templates.size, members: this.registry.names() });

    if (agent) void this.sweepOrphans(signal, 30_000);
    const resync = setInterval(() => {
      this.templates.all();
      if (agent) void this.sweepOrphans(signal, 0);
    }, this.o.resyncMs ?? CONTROLLER_DEFAULTS.resyncMs);
    resync.unref();
    signal.addEventListener('abort', () => clearInterval(resync), { once: true });
    await running;
    await this.events.flush();
    await this.registry.close();
  }

  /** Informers for Karmada's groups, when the hub serves them (and they are not turned off). */
  private async startKarmadaInformers(): Promise<void> {
    if (this.o.karmadaGroups === 'off') return;
    const served = async (apiVersion: string, kind: string): Promise<ResourceInfo | undefined> => {
      try {
        return await this.hubDiscovery.resolve(apiVersion, kind);
      } catch {
        return undefined;
      }
    };
    for (const p of POLICY_KINDS) {
      const info = await served(KARMADA_POLICY_API_VERSION, p.kind);
      if (!info) continue;
      const informer = this.hubInformer(
        `${p.plural}.policy.karmada.io`,
        `/apis/${KARMADA_POLICY_API_VERSION}/${p.plural}`,
        KARMADA_POLICY_API_VERSION,
        p.kind,
        {
          onAdd: (o) => this.onKarmadaPolicy(o),
          onUpdate: (o) => this.onKarmadaPolicy(o),
          onDelete: (o) => this.onKarmadaPolicyDeleted(o),
        },
      );
      this.karmadaPolicyInformers.set(p.kind, informer);
    }
    if (await served(KARMADA_CLUSTER_API_VERSION, 'Cluster')) {
      this.karmadaClusterInformer = this.hubInformer(
        'clusters.cluster.karmada.io',
        `/apis/${KARMADA_CLUSTER_API_VERSION}/clusters`,
        KARMADA_CLUSTER_API_VERSION,
        'Cluster',
        {
          onAdd: (o) => this.onKarmadaCluster(o),
          onUpdate: (o) => this.onKarmadaCluster(o),
          onDelete: (o) => this.onKarmadaClusterDeleted(o),
        },
        this.o.agent ? `metadata.name=${this.o.agent.cluster}` : undefined,
      );
    }
    if (this.karmadaPolicyInformers.size > 0 || this.karmadaClusterInformer)
      this.o.logger.info('acting on Karmada API groups too', {
        policies: [...this.karmadaPolicyInformers.keys()],
        clusters: this.karmadaClusterInformer !== undefined,
      });
  }

  /** A policy.karmada.io policy: used unless Flotilla's group has one of the same kind, namespace and name. */
  private onKarmadaPolicy(o: JsonObject): void {
    const ref = refOf(o);
    if (this.policyInformers.get(ref.kind)?.get(objectKey(o))) {
      this.o.logger.warn('policy.karmada.io policy not used: policy.flotilla.io has one of the same name', {
        policy: `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`,
      });
      return;
    }
    this.onPolicy(o);
  }

  private onKarmadaPolicyDeleted(o: JsonObject): void {
    if (this.policyInformers.get(refOf(o).kind)?.get(objectKey(o))) return;
    this.onPolicyDeleted(o);
  }

  private onKarmadaCluster(o: JsonObject): void {
    if (this.clusterInformer?.get(objectKey(o))) {
      this.o.logger.warn('cluster.karmada.io Cluster not used: cluster.flotilla.io has one of the same name', {
        cluster: objectKey(o),
      });
      return;
    }
    this.onCluster(o);
  }

  private onKarmadaClusterDeleted(o: JsonObject): void {
    if (this.clusterInformer?.get(objectKey(o))) return;
    this.onClusterDeleted(o);
  }

  // ---- hub events -----------------------------------------------------------------------------------

  private hubInformer(
    name: string,
    path: string,
    apiVersion: string,
    kind: string,
    handlers: InformerHandlers,
    fieldSelector?: string,
    transform?: (o: JsonObject) => JsonObject,
    onError?: (err: unknown) => void,
  ): Informer {
    const informer = new Informer({
      name: `hub ${name}`,
      source: listWatchSource(this.hub, this.hubWatcher),
      path,
      apiVersion,
      kind,
      handlers,
      ...(fieldSelector ? { fieldSelector } : {}),
      ...(transform ? { transform } : {}),
      onError: (err, attempt, retryInMs) => {
        onError?.(err);
        this.o.logger.warn('hub watch failed; retrying', {
          resource: name,
          attempt,
          retryInMs,
          error: err instanceof Error ? err.message : String(err),
        });
      },
    });
    void informer.start(this.signal);
    return informer;
  }

  /** Into the state; the templates it can affect are queued. Returns why the object is not used, if it is not. */
  private upsert(object: JsonObject): string[] {
    const m = this.state.upsert(object);
    for (const r of m.rejected)
      this.o.logger.warn('object not used', {
        object: `${r.object.kind} ${r.object.namespace ? `${r.object.namespace}/` : ''}${r.object.name}`,
        reason: r.reason,
        message: r.message,
      });
    for (const key of m.affected) this.templates.queue.add(key);
    return m.rejected.map((r) => r.message);
  }

  private onCluster(o: JsonObject): void {
    const name = ownString(o.metadata, 'name') ?? '';
    if (this.o.agent) {
      // The agent's own Cluster: its labels and fields for the override rules; its syncMode says whether
      // the agent delivers at all (a switch either way looks at every template again).
      if (name !== this.o.agent.cluster) return;
      const before = this.clusterInformer?.get(name) ?? this.karmadaClusterInformer?.get(name);
      this.upsert(clusterObject(o, []));
      this.clusterStatus.queue.add(name);
      if (syncModeOf(o) !== syncModeOf(before) || !before) this.templates.all();
      return;
    }
    if (name) this.health.seed(name, isObject(o.spec) ? o.spec.taints : undefined);
    this.upsert(clusterObject(o, name ? this.health.get(name) : []));
    if (!name) return;
    const wasPull = this.registry.isPull(name);
    this.registry.onCluster(o);
    if (wasPull && !this.registry.isPull(name)) void this.dropWorks(name);
    this.clusterStatus.queue.add(name);
    this.clusterTaints.queue.add(name);
    if (this.registry.isPull(name)) {
      this.startLeaseInformer();
      this.agentLeases.observe(name);
    }
  }

  /**
   * Starts watching pull agents' Leases (once, with the first pull cluster: the RBAC for them comes with
   * it); their health is judged by AgentLeases (pull-health.ts). A broken watch makes the hub view stale.
   */
  private startLeaseInformer(): void {
    if (this.leaseInformer || this.signal.aborted) return;
    const observe = (o: JsonObject) => this.agentLeases.observe(ownString(o.metadata, 'name') ?? '');
    this.leaseInformer = this.hubInformer(
      'leases',
      `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.o.leaseNamespace ?? DEFAULT_LEASE_NAMESPACE)}/leases`,
      'coordination.k8s.io/v1',
      'Lease',
      { onAdd: observe, onUpdate: observe, onDelete: observe },
      undefined,
      undefined,
      (err) => this.hubLiveness?.fail(`the Lease watch: ${err instanceof Error ? err.message : String(err)}`),
    );
    // Once listed, the pull clusters without a Lease are judged too.
    void this.leaseInformer.waitForSync(this.signal).then(() => {
      for (const n of this.registry.pullNames()) this.agentLeases.observe(n);
    });
  }

  /**
   * Whether this process writes cluster `name`'s status and taints: always, unless sharded — then the
   * replica working on the member, or the coordinator for a cluster no replica reaches (pull, no access).
   */
  private writesCluster(name: string): boolean {
    const view = this.shardView;
    if (!view) return true;
    const now = Date.now();
    return this.registry.get(name) ? view.owns(name, now) : view.isCoordinator(now);
  }

  /** A replica's Lease changed: the members are divided again when the live set changes. */
  private onShardLease(o: JsonObject, deleted = false): void {
    const view = this.shardView;
    const name = ownString(o.metadata, 'name');
    if (!view || !name) return;
    view.set(name, deleted ? undefined : shardOf(o));
    this.reshard();
  }

  /** Recomputes what this replica works on; a change queues every template and Cluster. Looks again at the next transition. */
  private reshard(): void {
    const view = this.shardView;
    if (!view) return;
    clearTimeout(this.shardTimer);
    const now = Date.now();
    const names = this.registry.names().sort();
    const owned = names.filter((n) => view.owns(n, now));
    const coordinator = view.isCoordinator(now);
    const state = JSON.stringify([owned, coordinator]);
    if (state !== this.shardState) {
      this.shardState = state;
      this.o.logger.info('members divided among the replicas', {
        replica: view.self,
        live: view.live(now),
        owned,
        coordinator,
      });
      this.templates.all();
      for (const n of [...names, ...this.registry.pullNames()]) this.clusterStatus.queue.add(n);
      for (const m of this.registry.all()) if (owned.includes(m.name)) void this.facts.refresh(m, this.signal);
    }
    if (coordinator) void this.clearExpiredShards(now);
    const next = view.nextChange(now);
    if (next !== undefined && !this.signal.aborted) {
      this.shardTimer = setTimeout(() => this.reshard(), Math.max(10, next - now + 10));
      this.shardTimer.unref();
    }
  }

  /**
   * The coordinator clears the binding entries of replicas whose Lease expired: it applies an empty list
   * under each one's field manager, which drops the entries only that replica owned (a member's new
   * owner has applied its own entry by then, or will).
   */
  private async clearExpiredShards(now: number): Promise<void> {
    const view = this.shardView;
    if (!view || !this.bindingInformer) return;
    for (const dead of view.expired(now)) {
      if (this.clearedShards.has(dead)) continue;
      this.clearedShards.add(dead);
      const manager = shardFieldManager(dead);
      let cleared = 0;
      for (const b of [...this.bindingInformer.values()]) {
        const meta = isObject(b.metadata) ? b.metadata : {};
        const fields = Array.isArray(meta.managedFields) ? meta.managedFields : [];
        if (!fields.some((f) => isObject(f) && f.manager === manager)) continue;
        const name = ownString(meta, 'name') ?? '';
        const namespace = ownString(meta, 'namespace') ?? '';
        const path = `/apis/${BINDING_API_VERSION}/namespaces/${encodeURIComponent(namespace)}/${BINDING_PLURAL}/${encodeURIComponent(name)}/status`;
        const body = {
          apiVersion: BINDING_API_VERSION,
          kind: BINDING_KIND,
          metadata: { name, namespace },
          status: { clusters: [] },
        };
        const res = await serverSideApply(this.hub, path, body, { fieldManager: manager, force: true }).catch(
          () => undefined,
        );
        if (res && res.status < 300) cleared++;
      }
      this.o.logger.info('a replica’s Lease expired: its members were taken over and its binding entries cleared', {
        replica: dead,
        bindings: cleared,
      });
    }
  }

  /** Starts watching ResourceBindings on the hub (once). */
  private startBindingInformer(): void {
    if (this.bindingInformer || this.signal.aborted) return;
    this.bindingInformer = this.hubInformer(
      'resourcebindings',
      `/apis/${BINDING_API_VERSION}/${BINDING_PLURAL}`,
      BINDING_API_VERSION,
      BINDING_KIND,
      {
        onAdd: (o) => this.onBinding(o),
        onUpdate: (o, old) => this.onBinding(o, old),
        onDelete: (o) => this.onBinding(o),
      },
    );
  }

  /**
   * Starts watching Works on the hub (once): an agent, its cluster's namespace; the controller, every
   * namespace (its pull clusters').
   */
  private startWorkInformer(): void {
    if (this.workInformer || this.signal.aborted) return;
    const agent = this.o.agent;
    const ns = agent ? `/namespaces/${encodeURIComponent(executionSpace(agent.cluster))}` : '';
    this.workInformer = this.hubInformer(
      'works',
      `/apis/${WORK_API_VERSION}${ns}/${WORK_PLURAL}`,
      WORK_API_VERSION,
      WORK_KIND,
      {
        onAdd: (o) => this.onWork(o),
        onUpdate: (o, old) => this.onWork(o, old),
        onDelete: (o) => this.onWork(o),
      },
      undefined,
      // One per template and pull cluster: kept without what no one here reads.
      (o) => ({ ...o, metadata: slimMetadata(o.metadata) }),
    );
  }

  /** A Work changed: an agent looks at its template again; the controller, when the agent's report changed (or the Work went). */
  private onWork(o: JsonObject, old?: JsonObject): void {
    const t = this.templates;
    if (t instanceof AgentReconciler) {
      t.onWork(o, old);
      return;
    }
    if (old && JSON.stringify(o.status) === JSON.stringify(old.status)) return;
    const template = workTemplate(o);
    if (!template) return;
    const { uid: _uid, ...ref } = template;
    t.bindingChanged(templateKey(ref));
  }

  /**
   * A cluster left Pull mode (or was deleted): its Works go, in one request. Its agent stands down when
   * it sees the Cluster; what it applied stays on the member, for the controller to take over (Push) or
   * as it is (deleted), as before the switch.
   */
  private async dropWorks(cluster: string): Promise<void> {
    if (this.shardView && !this.shardView.isCoordinator(Date.now())) return;
    const path = `/apis/${WORK_API_VERSION}/namespaces/${encodeURIComponent(executionSpace(cluster))}/${WORK_PLURAL}`;
    const error = await this.hub.request({ method: 'DELETE', path, accept: METADATA_ACCEPT }).then(
      (res) => (res.status >= 300 && res.status !== 404 ? apiError(res).message : undefined),
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    if (error) this.o.logger.warn('cannot delete the Works of a cluster that left pull mode', { cluster, error });
  }

  /** Pull cluster `cluster`'s Work of template `t`, as last seen (when it is this template's). */
  private workOf(cluster: string, t: TemplateIdentity): JsonObject | undefined {
    const w = this.workInformer?.get(`${executionSpace(cluster)}/${workName(t, this.o.namespace)}`);
    return w && workTemplate(w)?.uid === t.uid ? w : undefined;
  }

  /**
   * A binding appeared or changed (sharded). A new one: every replica writes its entries, which were
   * refused (404) while the coordinator had not created it. A change: the coordinator counts the entries
   * other replicas own (its own come back as written); the other replicas have nothing to do.
   */
  private onBinding(o: JsonObject, old?: JsonObject): void {
    const t = this.templates;
    const view = this.shardView;
    if (t instanceof AgentReconciler || !view) return;
    if (old) {
      const listed = (b: JsonObject) => (isObject(b.status) ? b.status.clusters : undefined);
      if (JSON.stringify(listed(o)) === JSON.stringify(listed(old))) return;
      const now = Date.now();
      if (!view.isCoordinator(now)) return;
      const others = (b: JsonObject) => JSON.stringify([...bindingEntries(b)].filter(([c]) => !view.owns(c, now)));
      if (others(o) === others(old)) return;
    }
    const r = isObject(o.spec) && isObject(o.spec.resource) ? o.spec.resource : {};
    const apiVersion = ownString(r, 'apiVersion');
    const kind = ownString(r, 'kind');
    const name = ownString(r, 'name');
    const namespace = ownString(r, 'namespace');
    if (apiVersion && kind && name)
      t.bindingChanged(templateKey({ apiVersion, kind, name, ...(namespace ? { namespace } : {}) }));
  }

  /** What others report of template `t`, by cluster: pull agents in their Works, other replicas in the binding (sharded). */
  private agentEntries(t: TemplateIdentity): ReadonlyMap<string, ClusterStatus> {
    const out = new Map<string, ClusterStatus>();
    for (const c of this.registry.pullNames()) {
      const w = this.workOf(c, t);
      const e = w ? workEntry(w, c) : undefined;
      if (e) out.set(c, e);
    }
    const view = this.shardView;
    const b = view
      ? this.bindingInformer?.get(`${bindingNamespace(t, this.o.namespace)}/${bindingName(t.name, t.kind)}`)
      : undefined;
    const r = b && isObject(b.spec) && isObject(b.spec.resource) ? b.spec.resource : undefined;
    if (!view || !b || ownString(r, 'uid') !== t.uid) return out;
    const now = Date.now();
    for (const [c, e] of bindingEntries(b))
      if (!this.registry.isPull(c) && this.registry.get(c) && !view.owns(c, now)) out.set(c, e);
    return out;
  }

  private onClusterDeleted(o: JsonObject): void {
    const name = ownString(o.metadata, 'name') ?? '';
    this.clusterStatus.forget(name);
    const wasPull = this.registry.isPull(name);
    this.registry.onClusterDeleted(name);
    this.agentLeases.forget(name);
    if (!this.registry.isKubeconfigMember(name)) this.health.forget(name);
    if (wasPull) void this.dropWorks(name);
    // A member of the kubeconfig stays a member, without the labels the Cluster object gave it.
    if (this.registry.isKubeconfigMember(name))
      this.upsert(clusterObject({ metadata: { name } }, this.health.get(name)));
    else
      for (const key of this.state.remove({ apiVersion: CLUSTER_API_VERSION, kind: 'Cluster', name }).affected)
        this.templates.queue.add(key);
    // A cluster.karmada.io Cluster of the same name, shadowed until now, takes its place.
    const karmada = o.apiVersion === CLUSTER_API_VERSION ? this.karmadaClusterInformer?.get(name) : undefined;
    if (karmada) this.onCluster(karmada);
  }

  private policyObject(p: { kind: string; namespace?: string; name: string }): JsonObject | undefined {
    const key = p.namespace ? `${p.namespace}/${p.name}` : p.name;
    return this.policyInformers.get(p.kind)?.get(key) ?? this.karmadaPolicyInformers.get(p.kind)?.get(key);
  }

  private onPolicy(o: JsonObject): void {
    const refused = this.upsert(o);
    // A refused policy says so on its status; an accepted one (again) says what it claims.
    const ref = refOf(o);
    const book = this.policyStatus.book;
    if (refused.length > 0) book.refuse(ref, refused.join('; '));
    else book.accept(ref);
    book.touch(ref);
    this.policyStatus.flush();
    if (this.syncedFlag) void this.syncTemplateKinds();
  }

  private onPolicyDeleted(o: JsonObject): void {
    const ref = refOf(o);
    this.policyStatus.drop(ref, policyKey(ref));
    for (const key of this.state.remove(ref).affected) this.templates.queue.add(key);
    // A policy.karmada.io policy of the same name, shadowed until now, takes its place.
    const karmada = ref.apiVersion.startsWith('policy.flotilla.io/')
      ? this.karmadaPolicyInformers.get(ref.kind)?.get(objectKey(o))
      : undefined;
    if (karmada) this.onPolicy(karmada);
    if (this.syncedFlag) void this.syncTemplateKinds();
  }

  /** Starts an informer for every template kind a propagation policy names, and stops those no policy names. */
  private async syncTemplateKinds(): Promise<void> {
    const wanted = new Map<string, { apiVersion: string; kind: string }>();
    /** Kinds watched only because a policy says propagateDeps (no policy selects them). */
    const dependencyOnly = new Set<string>();
    for (const kind of ['PropagationPolicy', 'ClusterPropagationPolicy']) {
      for (const p of [
        ...(this.policyInformers.get(kind)?.values() ?? []),
        ...(this.karmadaPolicyInformers.get(kind)?.values() ?? []),
      ]) {
        const spec = isObject(p.spec) ? p.spec : {};
        if (spec.propagateDeps === true)
          for (const k of DEPENDENCY_KINDS) if (!wanted.has(`v1/${k}`)) dependencyOnly.add(`v1/${k}`);
        for (const s of Array.isArray(spec.resourceSelectors) ? spec.resourceSelectors : []) {
          const apiVersion = ownString(s, 'apiVersion');
          const k = ownString(s, 'kind');
          if (apiVersion && k) wanted.set(`${apiVersion}/${k}`, { apiVersion, kind: k });
        }
      }
    }
    for (const id of dependencyOnly) {
      if (wanted.has(id)) dependencyOnly.delete(id);
      else wanted.set(id, { apiVersion: 'v1', kind: id.slice(3) });
    }
    const selected = new Set(wanted.keys());
    for (const [id, { apiVersion, kind }] of this.heldKinds.add(wanted)) {
      if (this.templateKinds.has(id)) continue;
      let info: ResourceInfo;
      try {
        info = await this.hubDiscovery.resolve(apiVersion, kind);
        // A dependency kind the controller may not read (Secrets, by default) is left out, once said.
        if (dependencyOnly.has(id) && !(await this.mayWatch(info))) {
          if (!this.unreadableDependencyKinds.has(id))
            this.o.logger.warn(
              'propagateDeps: the controller may not list and watch this kind on the hub; workloads do not take objects of it with them (grant it in the chart value controller.rbac.templateResources)',
              { kind: id },
            );
          this.unreadableDependencyKinds.add(id);
          continue;
        }
      } catch (err: unknown) {
        // Not served (yet): the next policy event or resync tries again.
        this.hubDiscovery.forget(apiVersion);
        this.o.logger.warn('template kind not served by the hub', {
          kind: id,
          error: err instanceof Error ? err.message : String(err),
        });
        continue;
      }
      if (this.templateKinds.has(id) || this.signal.aborted) continue;
      const stop = new AbortController();
      const informer = new Informer({
        name: `hub ${info.resource}.${info.group || 'core'}`,
        source: listWatchSource(this.hub, this.hubWatcher),
        path: resourcePath(info, undefined),
        apiVersion,
        kind,
        handlers: {
          onAdd: (o) => this.onTemplate(o),
          onUpdate: (o, old) => this.onTemplate(o, old),
          onDelete: (o) => this.onTemplateDeleted(o),
        },
        onError: (err, attempt, retryInMs) =>
          this.o.logger.warn('hub watch failed; retrying', {
            resource: info.resource,
            attempt,
            retryInMs,
            error: err instanceof Error ? err.message : String(err),
          }),
      });
      this.templateKinds.set(id, { info, apiVersion, informer, stop });
      void informer.start(AbortSignal.any([this.signal, stop.signal]));
      for (const m of this.registry.all()) void this.watchMember(m, apiVersion, kind);
    }
    for (const [id, k] of this.templateKinds) {
      if (this.heldKinds.keep(id, selected.has(id), k.informer)) continue;
      // Templates of that kind stay in the state: what was propagated stays until a policy claims them.
      k.stop.abort();
      this.templateKinds.delete(id);
    }
  }

  /**
   * An agent's orphans: copies here whose template is gone from the hub (deleted while the agent was down,
   * before it had said it held a copy, so the controller did not wait for it). Each candidate is checked
   * on the hub (GET the template its annotation names: gone, or another uid) before it is removed.
   * Waits up to `waitMs` for this cluster's watches to list once; runs at start and on every resync.
   */
  private async sweepOrphans(signal: AbortSignal, waitMs: number): Promise<void> {
    const agent = this.o.agent;
    const m = agent ? this.registry.get(agent.cluster) : undefined;
    if (!m || !(this.templates instanceof AgentReconciler)) return;
    const deadline = Date.now() + waitMs;
    let owned = m.ownedObjects();
    while (!owned.synced && Date.now() < deadline && !signal.aborted) {
      await new Promise((r) => setTimeout(r, 500));
      owned = m.ownedObjects();
    }
    const known = new Set<string>();
    for (const t of this.templates.templates.values()) known.add(ownString(t.metadata, 'uid') ?? '');
    let removed = 0;
    for (const { object } of owned.objects) {
      const uid = ownString(isObject(object.metadata) ? object.metadata.labels : undefined, TEMPLATE_UID_LABEL);
      const owner = ownerTemplate(object);
      if (!uid || !owner || known.has(uid) || signal.aborted) continue;
      try {
        const info = await this.hubDiscovery.resolve(owner.apiVersion, owner.kind);
        const res = await this.hub.request({
          method: 'GET',
          path: resourcePath(info, owner.namespace, owner.name),
          accept: METADATA_ACCEPT,
        });
        if (res.status === 200 && ownString(isObject(res.body) ? res.body.metadata : undefined, 'uid') === uid)
          continue;
        if (res.status !== 200 && res.status !== 404) throw apiError(res);
        const gone = await this.templates.work.remove(m, { ...owner, uid }, owner, signal);
        if (gone === 'removed') removed++;
      } catch (err: unknown) {
        this.o.logger.warn('cannot check whether a copy here is an orphan; the next resync tries again', {
          template: `${owner.kind} ${owner.namespace ? `${owner.namespace}/` : ''}${owner.name}`,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
    if (removed > 0) this.o.logger.info('removed copies whose template is gone from the hub', { removed });
  }

  /** Whether the hub lets this controller list and watch a resource in every namespace (SelfSubjectAccessReview). */
  private async mayWatch(info: ResourceInfo): Promise<boolean> {
    for (const verb of ['list', 'watch']) {
      const res = await this.hub.request({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { group: info.group, resource: info.resource, verb } },
        },
      });
      if (res.status >= 400) throw apiError(res);
      if (!(isObject(res.body) && isObject(res.body.status) && res.body.status.allowed === true)) return false;
    }
    return true;
  }

  /** Watches, on a member, the objects of a template kind the controller applied there (drift). */
  private async watchMember(m: Member, apiVersion: string, kind: string): Promise<void> {
    // Sharded: only the members this replica works on (gaining one queues every template, and the first
    // apply of a kind there starts the watch).
    if (this.shardView && !this.writesCluster(m.name)) return;
    try {
      const info = await m.resolve(apiVersion, kind);
      if (info) m.watchOwned(info, apiVersion);
    } catch {
      // Unreachable now: the first apply of that kind starts the watch.
    }
  }

  private onTemplate(o: JsonObject, old?: JsonObject): void {
    const key = templateKey(refOf(o));
    this.templates.templates.set(key, o);
    // Our own finalizer write, a status update or a managedFields change renders nothing new (sharded, the
    // coordinator's finalizer is what the other replicas wait for before they write to their members).
    if (old && renderedPart(o) === renderedPart(old) && !(this.shardView && finalizersChanged(o, old))) return;
    this.upsert(o);
    this.templates.queue.add(key);
  }

  private onTemplateDeleted(o: JsonObject): void {
    const key = templateKey(refOf(o));
    this.templates.deleted(key);
    this.policyStatus.book.forget(key);
    this.policyStatus.flush();
    for (const k of this.state.remove(refOf(o)).affected) this.templates.queue.add(k);
    if (this.heldKinds.releasing(o)) void this.syncTemplateKinds();
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

/** An object's metadata without managedFields and annotations. */
function slimMetadata(m: unknown): JsonObject {
  if (!isObject(m)) return {};
  const { managedFields: _f, annotations: _a, ...rest } = m;
  return rest;
}

function finalizersChanged(o: JsonObject, old: JsonObject): boolean {
  const f = (x: JsonObject) => JSON.stringify(isObject(x.metadata) ? x.metadata.finalizers : undefined);
  return f(o) !== f(old);
}

function syncModeOf(o: JsonObject | undefined): string | undefined {
  return o && isObject(o.spec) ? ownString(o.spec, 'syncMode') : undefined;
}

/** A binding's status.clusters entries, by cluster name (own properties only; unreadable entries left out). */
function bindingEntries(b: JsonObject): Map<string, ClusterStatus> {
  const status = isObject(b.status) ? b.status : {};
  const out = new Map<string, ClusterStatus>();
  for (const e of Array.isArray(status.clusters) ? status.clusters : []) {
    const c = clusterStatusOf(e);
    if (c) out.set(c.name, c);
  }
  return out;
}

/** What of a template can change what is rendered or done with it: all but status and server bookkeeping. */
function renderedPart(o: JsonObject): string {
  const meta = isObject(o.metadata) ? { ...o.metadata } : {};
  for (const k of ['resourceVersion', 'managedFields', 'generation', 'finalizers']) delete meta[k];
  const { status: _status, ...rest } = o;
  return JSON.stringify({ ...rest, metadata: meta });
}
