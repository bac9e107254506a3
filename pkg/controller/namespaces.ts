// NamespaceSync (the namespaces reconciler), Karmada's namespace controller (pkg/controllers/namespace):
// every namespace on the hub is created on every member, with the ClusterOverridePolicies that select it
// applied (namespace-copies.ts), except
//   - Karmada's reserved namespaces (karmada-system, karmada-cluster, karmada-es-*, default) and this
//     controller's own (its namespace, the pull agents' Lease namespace, flotilla-es-*),
//   - those matching --skipped-propagating-namespaces (anchored regular expressions; Karmada's default kube-.*),
//   - those labelled namespace.karmada.io/skip-auto-propagation=true (Karmada: left as they are, copies kept).
// A namespace being deleted is left alone; once it is gone from the hub, the members' copies that carry
// this controller's label go too. As Karmada, a member namespace that exists and is not this controller's
// is not touched unless the hub's carries work.karmada.io/conflict-resolution: overwrite.
// Keys are namespace names. What queues them: the hub's Namespaces, ClusterOverridePolicies (the
// namespaces they select, or all), a member that connects (every hub namespace and its labelled copies),
// and the resync. Writes are server-side applies under field manager flotilla-namespaces, skipped while
// the copy is unchanged since the last write to that member.

import { createHash } from 'node:crypto';

import { clusterInfo } from '../engine/inputs.js';
import { namespaceCopies } from '../engine/namespace-copies.js';
import type { KubeClient } from '../kube/client.js';
import type { Discovery } from '../kube/discovery.js';
import type { Informer } from '../kube/informer.js';
import { isObject, type JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import { WorkQueue } from '../runtime/queue.js';
import { CONTROLLER_DEFAULTS, DEFAULT_LEASE_NAMESPACE } from './defaults.js';
import type { HubInputs } from './hub-inputs.js';
import type { MemberRegistry } from './members.js';
import type { ControllerOptions } from './options.js';
import { DROPPED_ANNOTATIONS } from './ownership.js';
import type { Share } from './shape-parts.js';
import type { ReconcileResult } from './queue.js';
import type { Reconciler } from './reconciler.js';

/** On the members' copies: the uid of the hub Namespace they were made from. */
export const NAMESPACE_UID_LABEL = 'namespace.flotilla.io/hub-uid';
/** Karmada's label: a namespace carrying it with "true" is not propagated. */
export const SKIP_AUTO_PROPAGATION_LABEL = 'namespace.karmada.io/skip-auto-propagation';
/** Karmada's annotation on a template: "overwrite" takes over a member object that is not Karmada's. */
export const CONFLICT_RESOLUTION_ANNOTATION = 'work.karmada.io/conflict-resolution';
export const NAMESPACE_FIELD_MANAGER = 'flotilla-namespaces';
/** Karmada's --skipped-propagating-namespaces default. */
export const DEFAULT_SKIPPED_NAMESPACES: readonly string[] = ['kube-.*'];

/** Karmada's reserved namespaces (names.IsReservedNamespace, and default). */
const KARMADA_RESERVED = /^(karmada-system|karmada-cluster|default)$|^karmada-es-/;
const FLOTILLA_EXECUTION_SPACE = /^flotilla-es-/;

export interface NamespaceSyncOptions {
  logger: Logger;
  /**
   * 'auto': when the hub serves policy.karmada.io (and `karmadaGroups` is not 'off'), as Karmada runs its
   * namespace controller by default; 'on', 'off'.
   */
  mode: 'auto' | 'on' | 'off';
  karmadaGroups?: 'auto' | 'off' | undefined;
  hubDiscovery: Pick<Discovery, 'resolve'>;
  /** Starts the hub's Namespace informer with these handlers (HubInputs.informer). */
  startInformer(handlers: ReturnType<NamespaceSync['informerHandlers']>): Informer;
  registry: MemberRegistry;
  /** The hub's Cluster of that name, either group (labels, provider, region … for targetCluster). */
  cluster(name: string): JsonObject | undefined;
  /** The ClusterOverridePolicies of both groups, as one pool. */
  overridePolicies(): JsonObject[];
  /** Whether this process writes that member (a sharded replica: its share). */
  writes(cluster: string): boolean;
  /** Namespaces of this controller, never propagated (its own, the agents' Lease namespace). */
  own: readonly string[];
  /** --skipped-propagating-namespaces: regular expressions, each matched against the whole name. */
  skipped: readonly string[];
  concurrency?: number;
  /** Every copy written again this often (a member's copy deleted there comes back). */
  resyncMs: number;
}

/** The manager's NamespaceSync: its options from the controller's, the hub's informers and registry. */
export function namespaceSync(
  o: ControllerOptions,
  hub: { logger: Logger; hubDiscovery: Discovery },
  inputs: HubInputs,
  registry: MemberRegistry,
  share: () => Share,
): NamespaceSync {
  return new NamespaceSync({
    ...hub,
    registry,
    writes: (cluster) => share().writesCluster(cluster),
    mode: o.propagateNamespaces ?? 'auto',
    karmadaGroups: o.karmadaGroups,
    startInformer: (handlers) => inputs.informer('namespaces', '/api/v1/namespaces', 'v1', 'Namespace', handlers),
    cluster: (name) => inputs.cluster(name),
    overridePolicies: () => inputs.policies('ClusterOverridePolicy'),
    own: [o.namespace, o.leaseNamespace ?? DEFAULT_LEASE_NAMESPACE],
    skipped: o.skippedPropagatingNamespaces ?? DEFAULT_SKIPPED_NAMESPACES,
    resyncMs: o.resyncMs ?? CONTROLLER_DEFAULTS.resyncMs,
  });
}

/** The skip list as anchored expressions; throws naming the one that is not a regular expression. */
export function skippedNamespaces(patterns: readonly string[]): RegExp[] {
  return patterns.map((p) => {
    try {
      return new RegExp(`^(?:${p})$`);
    } catch (err: unknown) {
      throw new Error(
        `--skipped-propagating-namespaces: ${JSON.stringify(p)} is not a regular expression: ${String(err)}`,
        { cause: err },
      );
    }
  });
}

const labelsOf = (o: JsonObject | undefined): Record<string, unknown> => {
  const meta = o && isObject(o.metadata) ? o.metadata : {};
  return isObject(meta.labels) ? meta.labels : {};
};
const annotationsOf = (o: JsonObject | undefined): Record<string, unknown> => {
  const meta = o && isObject(o.metadata) ? o.metadata : {};
  return isObject(meta.annotations) ? meta.annotations : {};
};
const own = (m: Record<string, unknown>, k: string): unknown => (Object.hasOwn(m, k) ? m[k] : undefined);
const metaString = (o: JsonObject, k: string): string | undefined => {
  const meta = isObject(o.metadata) ? o.metadata : {};
  const v = own(meta, k);
  return typeof v === 'string' ? v : undefined;
};

export class NamespaceSync implements Reconciler {
  readonly name = 'namespaces';
  readonly queue: WorkQueue;
  private readonly o: NamespaceSyncOptions;
  private readonly skip: RegExp[];
  /** `cluster/namespace` → digest of the copy last written there. */
  private readonly written = new Map<string, string>();
  /** ClusterOverridePolicy (kind/group/name) → the namespaces it selected when last seen ('*': all). */
  private readonly selected = new Map<string, string[]>();
  private informer: Informer | undefined;

  constructor(o: NamespaceSyncOptions) {
    this.o = o;
    this.skip = skippedNamespaces(o.skipped);
    this.queue = new WorkQueue<string>(
      { reconcile: (key, signal) => this.reconcile(key, signal) },
      {
        concurrency: o.concurrency ?? 4,
        onResult: (e) => {
          if (e.outcome === 'error')
            o.logger.warn('namespace propagation failed; retrying', {
              namespace: e.key,
              error: e.error instanceof Error ? e.error.message : String(e.error),
            });
        },
      },
    );
  }

  /** Runs its queue until `signal` aborts; the informer and the resync start once propagation is decided. */
  run(signal: AbortSignal): Promise<void> {
    void this.start().then((on) => {
      if (!on || signal.aborted) return;
      const resync = setInterval(() => this.resync(), this.o.resyncMs);
      resync.unref();
      signal.addEventListener('abort', () => clearInterval(resync), { once: true });
    });
    return this.queue.start(signal);
  }

  /** Starts the hub's Namespace informer when namespaces are propagated here; resolves to whether they are. */
  async start(): Promise<boolean> {
    const { mode, karmadaGroups, hubDiscovery } = this.o;
    let on = mode === 'on';
    if (mode === 'auto' && karmadaGroups !== 'off')
      on = await hubDiscovery.resolve('policy.karmada.io/v1alpha1', 'PropagationPolicy').then(
        (info) => info !== undefined,
        () => false,
      );
    if (on) this.informer = this.o.startInformer(this.informerHandlers());
    this.o.logger.info(on ? 'propagating namespaces to the members' : 'not propagating namespaces', { mode });
    return on;
  }

  /** Whether a hub namespace of that name is propagated at all (its labels aside). */
  propagates(name: string): boolean {
    if (KARMADA_RESERVED.test(name) || FLOTILLA_EXECUTION_SPACE.test(name) || this.o.own.includes(name)) return false;
    return !this.skip.some((r) => r.test(name));
  }

  /** The handlers of the hub's Namespace informer. */
  informerHandlers() {
    return {
      onAdd: (o: JsonObject) => this.add(metaString(o, 'name')),
      onUpdate: (o: JsonObject) => this.add(metaString(o, 'name')),
      onDelete: (o: JsonObject) => this.add(metaString(o, 'name')),
    };
  }

  /**
   * A ClusterOverridePolicy was added, changed or deleted: the namespaces it selects now and those it
   * selected before (a selector of Namespaces without a name: all), as Karmada's controller maps it.
   */
  onPolicy(o: JsonObject, deleted = false): void {
    if (o.kind !== 'ClusterOverridePolicy' || !this.informer) return;
    const key = `${String(o.apiVersion)}/${metaString(o, 'name') ?? ''}`;
    const names: string[] = [];
    const spec = isObject(o.spec) ? o.spec : {};
    for (const s of Array.isArray(spec.resourceSelectors) ? spec.resourceSelectors : []) {
      if (!isObject(s) || s.apiVersion !== 'v1' || s.kind !== 'Namespace') continue;
      names.push(typeof s.name === 'string' && s.name !== '' ? s.name : '*');
    }
    const before = this.selected.get(key) ?? [];
    if (deleted) this.selected.delete(key);
    else this.selected.set(key, names);
    const affected = new Set([...before, ...names]);
    if (affected.has('*')) return this.all();
    for (const n of affected) this.add(n);
  }

  /** A member connected (or its readiness changed): every namespace for it again, and its copies checked. */
  onMember(name: string, ready: boolean | undefined, signal: AbortSignal): void {
    for (const key of [...this.written.keys()]) if (key.startsWith(`${name}/`)) this.written.delete(key);
    if (!ready || !this.informer) return;
    this.all();
    const m = this.o.registry.get(name);
    if (!m || !this.o.writes(name)) return;
    // Copies of namespaces deleted from the hub while this process was not watching.
    void m.client
      .request<{ items?: JsonObject[] }>({
        method: 'GET',
        path: '/api/v1/namespaces',
        query: { labelSelector: NAMESPACE_UID_LABEL },
        signal,
      })
      .then(
        (r) => {
          for (const ns of r.status === 200 ? (r.body?.items ?? []) : []) this.add(metaString(ns, 'name'));
        },
        () => undefined,
      );
  }

  /** Every hub namespace, copies written again (the resync). */
  resync(): void {
    this.written.clear();
    this.all();
  }

  private all(): void {
    for (const ns of this.informer?.values() ?? []) this.add(metaString(ns, 'name'));
  }

  private add(name: string | undefined): void {
    if (name && this.propagates(name)) this.queue.add(name);
  }

  async reconcile(name: string, signal: AbortSignal): Promise<ReconcileResult> {
    const informer = this.informer;
    if (!informer?.synced) return { requeueAfter: 1000 };
    const ns = informer.get(name);
    const members = [...this.o.registry.all()].filter(
      (m) => this.o.writes(m.name) && this.o.registry.readiness(m.name)?.ready === true,
    );
    if (!ns) {
      await Promise.all(members.map((m) => this.removeCopy(m, name, signal)));
      return undefined;
    }
    if (metaString(ns, 'deletionTimestamp')) return undefined;
    if (String(own(labelsOf(ns), SKIP_AUTO_PROPAGATION_LABEL)).toLowerCase() === 'true') return undefined;
    const uid = metaString(ns, 'uid') ?? '';
    const clusters = members.map((m) => clusterInfo(this.o.cluster(m.name) ?? { metadata: { name: m.name } }));
    const copies = namespaceCopies(ns, clusters, this.o.overridePolicies());
    for (const e of copies.errors)
      this.o.logger.warn('namespace not propagated to a cluster: its overrides failed', {
        namespace: name,
        ...(e.cluster ? { cluster: e.cluster } : {}),
        error: e.message,
      });
    const overwrite = own(annotationsOf(ns), CONFLICT_RESOLUTION_ANNOTATION) === 'overwrite';
    await Promise.all(
      copies.placements.map((p) => {
        const m = this.o.registry.get(p.cluster);
        return m ? this.writeCopy(m, p.object, uid, overwrite, signal) : Promise.resolve();
      }),
    );
    return undefined;
  }

  private async writeCopy(
    m: { name: string; client: KubeClient },
    copy: JsonObject,
    uid: string,
    overwrite: boolean,
    signal: AbortSignal,
  ): Promise<void> {
    const name = metaString(copy, 'name') ?? '';
    const annotations = { ...annotationsOf(copy) };
    for (const a of DROPPED_ANNOTATIONS) delete annotations[a];
    const body: JsonObject = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { ...labelsOf(copy), [NAMESPACE_UID_LABEL]: uid }, annotations },
      ...(isObject(copy.spec) ? { spec: copy.spec } : {}),
    };
    const digest = createHash('sha256').update(JSON.stringify(body)).digest('hex');
    const key = `${m.name}/${name}`;
    if (this.written.get(key) === digest) return;
    const path = `/api/v1/namespaces/${encodeURIComponent(name)}`;
    const current = await m.client.request<JsonObject>({ method: 'GET', path, signal });
    if (
      current.status === 200 &&
      current.body &&
      !overwrite &&
      own(labelsOf(current.body), NAMESPACE_UID_LABEL) === undefined
    ) {
      this.o.logger.info('namespace exists on the member and is not propagated from the hub: left as it is', {
        namespace: name,
        cluster: m.name,
        hint: `annotate the hub's namespace ${CONFLICT_RESOLUTION_ANNOTATION}=overwrite to take it over`,
      });
      this.written.set(key, digest);
      return;
    }
    if (current.status !== 200 && current.status !== 404)
      throw new Error(`${m.name}: reading namespace ${name}: HTTP ${current.status}`);
    const r = await m.client.request({
      method: 'PATCH',
      path,
      query: { fieldManager: NAMESPACE_FIELD_MANAGER, force: 'true' },
      contentType: 'application/apply-patch+yaml',
      body,
      signal,
    });
    if (r.status >= 300)
      throw new Error(`${m.name}: applying namespace ${name}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    this.written.set(key, digest);
  }

  /** The member's copy of a namespace gone from the hub, when it is this controller's. */
  private async removeCopy(m: { name: string; client: KubeClient }, name: string, signal: AbortSignal): Promise<void> {
    this.written.delete(`${m.name}/${name}`);
    const path = `/api/v1/namespaces/${encodeURIComponent(name)}`;
    const current = await m.client.request<JsonObject>({ method: 'GET', path, signal });
    if (current.status === 404) return;
    if (current.status !== 200 || !current.body)
      throw new Error(`${m.name}: reading namespace ${name}: HTTP ${current.status}`);
    if (own(labelsOf(current.body), NAMESPACE_UID_LABEL) === undefined || metaString(current.body, 'deletionTimestamp'))
      return;
    const r = await m.client.request({
      method: 'DELETE',
      path,
      body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: metaString(current.body, 'uid') } },
      signal,
    });
    if (r.status >= 300 && r.status !== 404 && r.status !== 409)
      throw new Error(`${m.name}: deleting namespace ${name}: HTTP ${r.status}`);
  }
}
