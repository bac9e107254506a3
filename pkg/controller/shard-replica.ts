// A sharded push replica (`--sharding true`, shards.ts for the rules): the replicas' Leases watched and
// read into a ShardView, the members this replica works on recomputed when the live set changes (every
// template and Cluster queued again), the bindings watched for the entries other replicas write, and, on
// the coordinator, an expired replica's binding entries cleared. What this process writes of each
// cluster — all of it unsharded (WHOLE), a replica's share sharded — is a Share (shape-parts.ts).

import type { KubeClient } from '../kube/client.js';
import { serverSideApply } from '../kube/delivery.js';
import { Informer, listWatchSource } from '../kube/informer.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { Watcher } from '../kube/watch.js';
import type { Logger } from '../runtime/log.js';
import {
  BINDING_API_VERSION,
  BINDING_KIND,
  BINDING_PLURAL,
  bindingName,
  bindingNamespace,
  clusterStatusOf,
  type ClusterStatus,
} from './binding.js';
import type { HubInputs } from './hub-inputs.js';
import type { MemberRegistry } from './members.js';
import type { TemplateIdentity } from './ownership.js';
import { templateKey } from './queue.js';
import type { Sharding } from './reach.js';
import type { Share } from './shape-parts.js';
import { SHARD_LABEL, ShardView, shardFieldManager, shardOf } from './shards.js';

/** How long the read of the Leases that confirms an expiry may take. */
const CONFIRM_TIMEOUT_MS = 5_000;

export interface ShardReplicaOptions {
  /** This replica's Lease name, the group's label value, and the join handoff (ms). */
  sharding: { self: string; group: string; handoffMs: number };
  /** The controller's namespace: the replicas' Leases, bindings of cluster-scoped templates. */
  namespace: string;
  hub: KubeClient;
  hubWatcher: Watcher;
  inputs: HubInputs;
  registry: MemberRegistry;
  logger: Logger;
  /** This replica's members changed (`owned`), or whether it coordinates: look at everything again. */
  onChange(owned: readonly string[], members: readonly string[]): void;
  /** Another replica's entry of a template's binding changed (template key). */
  bindingChanged(key: string): void;
}

export class ShardReplica implements Share {
  private readonly view: ShardView;
  private shardInformer: Informer | undefined;
  /** ResourceBindings on the hub: the other replicas' entries. */
  private bindingInformer: Informer | undefined;
  private timer: NodeJS.Timeout | undefined;
  private state = '';
  private readonly cleared = new Set<string>();
  private signal: AbortSignal = new AbortController().signal;
  /** A read of the Leases confirming an expiry is in flight. */
  private confirming = false;

  constructor(private readonly o: ShardReplicaOptions) {
    this.view = new ShardView(o.sharding.self, o.sharding.handoffMs);
  }

  /** What the template reconciler asks of the division. */
  get sharding(): Sharding {
    return {
      owns: (m) => this.view.owns(m, Date.now()),
      coordinator: () => this.coordinator(),
      entriesManager: shardFieldManager(this.o.sharding.self),
    };
  }

  coordinator(): boolean {
    return this.view.isCoordinator(Date.now());
  }

  /** The replica working on a member writes its Cluster; the coordinator one no replica reaches (pull, no access). */
  writesCluster(name: string): boolean {
    const now = Date.now();
    return this.o.registry.get(name) ? this.view.owns(name, now) : this.view.isCoordinator(now);
  }

  /** Starts watching the bindings and the replicas' Leases; returns their informers. */
  start(signal: AbortSignal): Informer[] {
    this.signal = signal;
    signal.addEventListener('abort', () => clearTimeout(this.timer), { once: true });
    this.bindingInformer = this.o.inputs.informer(
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
    this.shardInformer = new Informer({
      name: 'hub shard leases',
      source: listWatchSource(this.o.hub, this.o.hubWatcher),
      path: this.leasesPath,
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
    return [this.bindingInformer, this.shardInformer];
  }

  /** What other replicas report of template `t`, by cluster (their members' entries of its binding). */
  entries(t: TemplateIdentity): Map<string, ClusterStatus> {
    const out = new Map<string, ClusterStatus>();
    const b = this.bindingInformer?.get(`${bindingNamespace(t, this.o.namespace)}/${bindingName(t.name, t.kind)}`);
    const r = b && isObject(b.spec) && isObject(b.spec.resource) ? b.spec.resource : undefined;
    if (!b || ownString(r, 'uid') !== t.uid) return out;
    const now = Date.now();
    for (const [c, e] of bindingEntries(b))
      if (!this.o.registry.isPull(c) && this.o.registry.get(c) && !this.view.owns(c, now)) out.set(c, e);
    return out;
  }

  /** A replica's Lease changed: the members are divided again when the live set changes. */
  private onShardLease(o: JsonObject, deleted = false): void {
    const name = ownString(o.metadata, 'name');
    if (!name) return;
    this.view.set(name, deleted ? undefined : shardOf(o));
    this.reshard();
  }

  /** Recomputes what this replica works on; a change queues every template and Cluster. Looks again at the next transition. */
  reshard(): void {
    const view = this.view;
    clearTimeout(this.timer);
    const now = Date.now();
    const names = this.o.registry.names().sort();
    const owned = names.filter((n) => view.owns(n, now));
    const coordinator = view.isCoordinator(now);
    const state = JSON.stringify([owned, coordinator]);
    if (state !== this.state) {
      this.state = state;
      this.o.logger.info('members divided among the replicas', {
        replica: view.self,
        live: view.live(now),
        owned,
        coordinator,
      });
      this.o.onChange(owned, names);
    }
    const pending = view.unconfirmed(now);
    if (pending.length > 0) void this.confirmExpiry(pending);
    if (coordinator) void this.clearExpiredShards(now);
    const next = view.nextChange(now);
    if (next !== undefined && !this.signal.aborted) {
      this.timer = setTimeout(() => this.reshard(), Math.max(10, next - now + 10));
      this.timer.unref();
    }
  }

  /**
   * Other replicas' Leases have expired as the watch shows them: they are read from the hub first (unqueued,
   * bounded), as a busy process's watch may be behind a replica that still renews; what the hub says
   * replaces the view for them, and an expiry it confirms (or a read that fails) counts.
   */
  private async confirmExpiry(pending: string[]): Promise<void> {
    if (this.confirming) return;
    this.confirming = true;
    try {
      const res = await this.o.hub.request<JsonObject>({
        method: 'GET',
        path: this.leasesPath,
        query: { labelSelector: `${SHARD_LABEL}=${this.o.sharding.group}` },
        unqueued: true,
        signal: AbortSignal.any([this.signal, AbortSignal.timeout(CONFIRM_TIMEOUT_MS)]),
      });
      const items = res.status === 200 && res.body && Array.isArray(res.body.items) ? res.body.items : undefined;
      if (!items) throw new Error(`HTTP ${res.status}`);
      const listed = new Map<string, JsonObject>();
      for (const item of items) {
        const name = isObject(item) ? ownString(item.metadata, 'name') : undefined;
        if (name && isObject(item)) listed.set(name, item);
      }
      for (const name of pending) {
        const item = listed.get(name);
        this.view.set(name, item ? shardOf(item) : undefined);
      }
    } catch (err: unknown) {
      if (this.signal.aborted) return;
      this.o.logger.warn('cannot read the replicas’ Leases to confirm an expiry; going by the watch', {
        replicas: pending,
        error: err instanceof Error ? err.message : String(err),
      });
    } finally {
      this.confirming = false;
    }
    const now = Date.now();
    for (const name of pending) this.view.confirmExpired(name, now);
    this.reshard();
  }

  private get leasesPath(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.o.namespace)}/leases`;
  }

  /**
   * The coordinator clears the binding entries of replicas whose Lease expired: it applies an empty list
   * under each one's field manager, which drops the entries only that replica owned (a member's new
   * owner has applied its own entry by then, or will).
   */
  private async clearExpiredShards(now: number): Promise<void> {
    if (!this.bindingInformer) return;
    for (const dead of this.view.expired(now)) {
      if (this.cleared.has(dead)) continue;
      this.cleared.add(dead);
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
        const res = await serverSideApply(this.o.hub, path, body, { fieldManager: manager, force: true }).catch(
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

  /**
   * A binding appeared or changed. A new one: every replica writes its entries, which were refused (404)
   * while the coordinator had not created it. A change: the coordinator counts the entries other replicas
   * own (its own come back as written); the other replicas have nothing to do.
   */
  private onBinding(o: JsonObject, old?: JsonObject): void {
    const view = this.view;
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
      this.o.bindingChanged(templateKey({ apiVersion, kind, name, ...(namespace ? { namespace } : {}) }));
  }
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
