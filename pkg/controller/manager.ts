// The manager: one process's hub informers (hub-inputs.ts, template-kinds.ts), the engine state fed from
// them (hub-events.ts), the member registry (members.ts), and the reconcilers and loops its shape runs
// (processes.ts: push, sharded replica, agent; made by the factory its command passes, controller-parts.ts
// or agent-parts.ts), each with its own queue — controller-runtime's and Karmada's shape:
//
//   hub informers ──► EngineState (pure, incremental) ──► templates queue ──► TemplateReconciler (template.ts)
//                                                              │ plan per template
//                                                              ▼
//                                        one work queue per member ──► execute (execute.ts) ──► bindings
//   member registry (members.ts): kubeconfig contexts, Cluster secretRefs, probes ──► cluster-status, -taints
//   template reconciles ──► PolicyStatusBook ──► policy-status (status.ts)
//   member informers (objects carrying the controller's labels) ──► drift: the owning template's key

import { hostname } from 'node:os';

import { EngineState } from '../engine/state.js';
import { KubeClient } from '../kube/client.js';
import { Discovery } from '../kube/discovery.js';
import type { Logger } from '../runtime/log.js';
import { Watcher } from '../kube/watch.js';
import { WHOLE, type ShapeFactory, type ShapeParts, type Share, type Templates } from './shape-parts.js';
import { clusterSide, type ClusterSide } from './cluster-side.js';
import { CONTROLLER_DEFAULTS, DEFAULT_LEASE_NAMESPACE } from './defaults.js';
import { EventRecorder } from './events.js';
import { HubEvents } from './hub-events.js';
import { HubInputs } from './hub-inputs.js';
import { MemberRegistry, type RegistryOptions } from './members.js';
import { memberConcurrency, type ControllerOptions } from './options.js';
import { ownerTemplate } from './ownership.js';
import { PROCESSES, TEMPLATE_KEYED, processShape, type ProcessShape } from './processes.js';
import { PullClusters } from './pull-clusters.js';
import { templateKey } from './queue.js';
import { runReconciler } from './reconciler.js';
import { TemplateKinds } from './template-kinds.js';

export type { ControllerOptions, MemberAccess } from './options.js';
export { DEFAULT_LEASE_NAMESPACE } from './defaults.js';

export class Controller {
  private readonly o: ControllerOptions;
  readonly shape: ProcessShape;
  private readonly state = new EngineState();
  private readonly hub: KubeClient;
  private readonly hubWatcher: Watcher;
  private readonly hubDiscovery: Discovery;
  private readonly events: EventRecorder;
  private readonly inputs: HubInputs;
  private readonly registry: MemberRegistry;
  private readonly kinds: TemplateKinds;
  private readonly pull: PullClusters;
  private readonly side: ClusterSide;
  private readonly share: Share;
  private readonly templates: Templates;
  private readonly feed: HubEvents;
  /** Its shape's parts; every reconciler and loop it can run, by name: its shape picks which (processes.ts). */
  private readonly parts: ShapeParts;
  private signal: AbortSignal = new AbortController().signal;
  private syncedFlag = false;

  /** `parts` makes its shape's reconcilers and loops: controllerParts (push, sharded) or agentParts (options.agent). */
  constructor(options: ControllerOptions, parts: ShapeFactory) {
    this.o = options;
    this.shape = processShape(options);
    const { logger, tooling: userAgent, agent } = options;
    this.hub = new KubeClient(options.hub, { concurrency: agent ? AGENT_HUB_CONCURRENCY : 16, userAgent });
    this.hubWatcher = new Watcher(options.hub, { userAgent });
    this.hubDiscovery = new Discovery(this.hub);
    this.events = new EventRecorder(this.hub, {
      component: 'flotilla-controller',
      instance: options.instance ?? hostname(),
      // An agent may read the hub, not write Events there: its log says what an Event would.
      ...(agent ? { disabled: true } : {}),
    });
    const hubParts = { hub: this.hub, hubWatcher: this.hubWatcher, hubDiscovery: this.hubDiscovery, logger };
    this.inputs = new HubInputs({ ...hubParts, karmadaGroups: options.karmadaGroups, agentCluster: agent?.cluster });
    this.registry = memberRegistry(options, this.hub, this.hubWatcher, {
      cluster: (name) => this.inputs.cluster(name),
      onChange: (name, ready) => this.onMemberChange(name, ready),
      onConnect: (m) => this.kinds.onConnect(m),
      onOwnedEvent: (obj, member) => {
        const t = ownerTemplate(obj);
        if (!t) return;
        if (this.templates.ownedChanged) this.templates.ownedChanged(member, templateKey(t));
        else this.templates.queue.add(templateKey(t));
      },
    });
    const registry = this.registry;
    this.side = clusterSide(options, {
      ...hubParts,
      events: this.events,
      registry,
      inputs: this.inputs,
      share: () => this.share,
      pull: () => this.pull,
      onHealth: (name, taints) => this.feed.upsertCluster(name, taints),
    });
    const { facts, agentLeases, hubLiveness, clusterStatus, clusterTaints, policyStatus } = this.side;
    const shape = parts(options, {
      ...hubParts,
      state: this.state,
      registry,
      inputs: this.inputs,
      events: this.events,
      side: this.side,
      pull: () => this.pull,
      feed: () => this.feed,
      kinds: () => this.kinds,
      share: () => this.share,
      signal: () => this.signal,
    });
    this.share = shape.shard ?? WHOLE;
    this.templates = shape.templates;
    this.pull = new PullClusters({
      ...hubParts,
      inputs: this.inputs,
      registry,
      namespace: options.namespace,
      leaseNamespace: options.leaseNamespace ?? DEFAULT_LEASE_NAMESPACE,
      agentCluster: agent?.cluster,
      agentLeases,
      hubLiveness,
      coordinator: () => this.share.coordinator(),
      onWork: (o, old) => this.templates.onWork(o, old),
    });
    this.kinds = new TemplateKinds({
      ...hubParts,
      registry,
      policies: (kind) => this.inputs.policies(kind),
      writes: (name) => this.share.writesCluster(name),
      handlers: {
        onAdd: (o) => this.feed.onTemplate(o),
        onUpdate: (o, old) => this.feed.onTemplate(o, old),
        onDelete: (o) => this.feed.onTemplateDeleted(o),
      },
    });
    this.feed = new HubEvents({
      ...this.side,
      state: this.state,
      logger,
      templates: shape.templates,
      inputs: this.inputs,
      kinds: this.kinds,
      registry,
      pull: this.pull,
      plansOnFinalizer: !options.agent,
      synced: () => this.syncedFlag,
      signal: () => this.signal,
    });
    const reconcilers = {
      'cluster-status': clusterStatus,
      'cluster-taints': clusterTaints,
      'policy-status': policyStatus,
    };
    this.parts = { ...shape, reconcilers: { ...shape.reconcilers, ...reconcilers } };
    this.parts.loops = {
      ...shape.loops,
      'cluster-facts': { start: (signal) => ({ running: facts.run(signal) }) },
      ...(hubLiveness ? { 'hub-liveness': { start: (signal) => ({ running: hubLiveness.run(signal) }) } } : {}),
    };
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
    this.inputs.bind(signal);
    this.pull.bind(signal);
    const process = PROCESSES[this.shape];
    const loops = process.loops.flatMap((name) => this.parts.loops[name] ?? []);
    const started = loops.map((l) => l.start?.(signal) ?? {});
    // Template-keyed reconcilers start once every informer has listed (controller-runtime starts workers
    // after WaitForCacheSync): a dependency reconciled before the workloads that require it are held would
    // be "required by none" and removed from the members. Keys added before then wait in the queue.
    const caches = cacheSyncGate(signal, this.o.logger, () => this.kinds.notSynced());
    const running = Promise.all([
      ...process.reconcilers.map((name) => {
        const r = this.parts.reconcilers[name];
        if (!r) return Promise.resolve();
        return TEMPLATE_KEYED.has(name) ? caches.synced.then(() => runReconciler(r, signal)) : runReconciler(r, signal);
      }),
      ...started.flatMap((s) => s.running ?? []),
    ]);
    this.registry.start(signal);
    signal.addEventListener('abort', () => {
      this.side.health.stop();
      this.side.agentLeases.stop();
    });
    // Clusters first (placement needs them), then policies, then the template kinds they name.
    await this.inputs.start({
      onCluster: (o) => this.parts.onCluster(o),
      onClusterDeleted: (o) => this.feed.onClusterDeleted(o),
      onPolicy: (o) => (this.feed.onPolicy(o), this.parts.namespaces?.onPolicy(o)),
      onPolicyDeleted: (o) => (this.feed.onPolicyDeleted(o), this.parts.namespaces?.onPolicy(o, true)),
    });
    const informers = [...this.inputs.informers(), ...started.flatMap((s) => s.informers ?? [])];
    await Promise.all(informers.map((i) => i.waitForSync(signal)));
    for (const l of loops) await l.listed?.(signal);
    await this.kinds.sync(signal);
    await this.kinds.waitForSync(signal);
    this.syncedFlag = !signal.aborted;
    caches.open();
    void this.kinds.sync(signal);
    this.o.logger.info('caches synced', { templates: this.templates.templates.size, members: this.registry.names() });

    for (const l of loops) l.synced?.(signal);
    const resync = setInterval(() => {
      this.templates.all();
      for (const l of loops) l.resync?.(signal);
    }, this.o.resyncMs ?? CONTROLLER_DEFAULTS.resyncMs);
    resync.unref();
    signal.addEventListener('abort', () => clearInterval(resync), { once: true });
    await running;
    await this.events.flush();
    await this.registry.close();
  }

  /** A member connected, changed readiness or went away. */
  private onMemberChange(name: string, ready: boolean | undefined): void {
    const { facts, health, clusterStatus } = this.side;
    this.o.onMemberReady?.(name, ready);
    if (ready === undefined && !this.registry.get(name)) {
      this.templates.work.drop(name);
      facts.forget(name);
    }
    const m = ready ? this.registry.get(name) : undefined;
    if (m) void facts.refresh(m, this.signal);
    this.parts.shard?.reshard();
    this.parts.namespaces?.onMember(name, ready, this.signal);
    // Taints first: the templates queued below must see the member's health as it is now.
    if (this.shape !== 'agent') health.evaluate(name);
    clusterStatus.queue.add(name);
    if (this.registry.isPull(name)) this.pull.startWorks();
    // Catch up what was skipped (and say Unreachable in the bindings when it went away).
    this.templates.all();
  }
}

/** The members: kubeconfig contexts and Cluster secretRefs, probed; `hooks` say what their changes do. */
function memberRegistry(
  o: ControllerOptions,
  hub: KubeClient,
  hubWatcher: Watcher,
  hooks: Pick<RegistryOptions, 'cluster' | 'onChange' | 'onConnect' | 'onOwnedEvent'>,
): MemberRegistry {
  return new MemberRegistry(
    {
      ...hooks,
      hub,
      hubWatcher,
      clusterSecrets: o.clusterSecrets !== false,
      probeIntervalMs: o.probeIntervalMs ?? CONTROLLER_DEFAULTS.probeIntervalMs,
      probeTimeoutMs: o.probeTimeoutMs ?? CONTROLLER_DEFAULTS.probeTimeoutMs,
      memberConcurrency: memberConcurrency(o),
      userAgent: o.tooling,
      logger: o.logger,
    },
    o.members,
  );
}

/**
 * Requests an agent has in flight to the hub at once: its Works' status, its Cluster's, the lists its
 * watches start from. To a hub that speaks HTTP/2 each is a stream on the one connection; over HTTP/1.1
 * each is a TLS connection, about 110 KiB of the agent's RSS that stays after a burst (its budget: 80
 * MiB). An agent writes one Work status per template applied, so 4 keep up with it.
 */
const AGENT_HUB_CONCURRENCY = 4;

/** How long templates wait for every informer to list before those listed are reconciled anyway. */
const CACHE_SYNC_GRACE_MS = 60_000;

/**
 * Resolves `synced` when opened, or when the signal aborts, or after CACHE_SYNC_GRACE_MS: a kind that never
 * lists (not permitted, not served) must not hold every other template; what is listed is reconciled then.
 */
function cacheSyncGate(
  signal: AbortSignal,
  logger: Logger,
  notSynced: () => string[],
): { synced: Promise<void>; open(): void } {
  let resolve!: () => void;
  const synced = new Promise<void>((r) => (resolve = r));
  signal.addEventListener('abort', () => resolve(), { once: true });
  const grace = setTimeout(() => {
    logger.warn('caches not synced yet; reconciling the templates listed so far', {
      waitedMs: CACHE_SYNC_GRACE_MS,
      notSynced: notSynced(),
    });
    resolve();
  }, CACHE_SYNC_GRACE_MS);
  grace.unref();
  return {
    synced,
    open: () => {
      clearTimeout(grace);
      resolve();
    },
  };
}
