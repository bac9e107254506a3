// What /override admits with, kept current by watches on the cluster the webhook runs in: OverridePolicies
// and ClusterOverridePolicies of both groups (policy.flotilla.io v1beta1, policy.karmada.io v1alpha1),
// Gatekeeper's Assign, AssignMetadata, ModifySet (mutations.gatekeeper.sh v1) and AssignImage (v1alpha1), Namespaces (for namespaceSelector)
// and the cluster's own Cluster object (cluster.flotilla.io or cluster.karmada.io), which, when it
// exists, says the cluster's labels, provider, region and zones in place of the flags.
//
// A group the cluster does not serve (no Karmada CRDs, no Gatekeeper) is looked for again every
// `rediscoverMs`, so installing it later needs no restart. Ready once every served collection has listed.

import { clusterInfo, OverrideSet, type ClusterInfo } from '../engine/index.js';
import { Discovery, resourcePath, type ResourceInfo } from '../kube/discovery.js';
import { UnknownKindError } from '../kube/errors.js';
import type { KubeClient } from '../kube/client.js';
import { Informer, listWatchSource } from '../kube/informer.js';
import { isObject, type JsonObject } from '../kube/objects.js';
import type { Watcher } from '../kube/watch.js';
import type { Logger } from '../runtime/log.js';
import { sleep } from '../runtime/clock.js';
import type { OverrideSource } from './overriding.js';

interface Collection {
  apiVersion: string;
  kind: string;
  /** Only the cluster's own Cluster object is watched. */
  own?: 'cluster';
}

const COLLECTIONS: readonly Collection[] = [
  { apiVersion: 'policy.flotilla.io/v1beta1', kind: 'OverridePolicy' },
  { apiVersion: 'policy.flotilla.io/v1beta1', kind: 'ClusterOverridePolicy' },
  { apiVersion: 'policy.karmada.io/v1alpha1', kind: 'OverridePolicy' },
  { apiVersion: 'policy.karmada.io/v1alpha1', kind: 'ClusterOverridePolicy' },
  { apiVersion: 'mutations.gatekeeper.sh/v1', kind: 'Assign' },
  { apiVersion: 'mutations.gatekeeper.sh/v1', kind: 'AssignMetadata' },
  { apiVersion: 'mutations.gatekeeper.sh/v1', kind: 'ModifySet' },
  { apiVersion: 'mutations.gatekeeper.sh/v1alpha1', kind: 'AssignImage' },
  { apiVersion: 'cluster.flotilla.io/v1alpha1', kind: 'Cluster', own: 'cluster' },
  { apiVersion: 'cluster.karmada.io/v1alpha1', kind: 'Cluster', own: 'cluster' },
];

export interface ClusterIdentity {
  name: string;
  labels?: Record<string, string>;
  provider?: string;
  region?: string;
  zones?: string[];
}

export interface WatchedOverridesOptions {
  client: KubeClient;
  watcher: Watcher;
  cluster: ClusterIdentity;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** How often groups the cluster does not serve are looked for again. Default 30 s. */
  rediscoverMs?: number;
}

/** The Cluster object the flags describe. */
export function clusterFromFlags(c: ClusterIdentity): ClusterInfo {
  const spec: JsonObject = {};
  if (c.provider) spec.provider = c.provider;
  if (c.region) spec.region = c.region;
  if (c.zones && c.zones.length > 0) spec.zones = c.zones;
  return clusterInfo({
    apiVersion: 'cluster.flotilla.io/v1alpha1',
    kind: 'Cluster',
    metadata: { name: c.name, ...(c.labels ? { labels: c.labels } : {}) },
    spec,
  });
}

export class WatchedOverrides implements OverrideSource {
  readonly set: OverrideSet;
  private readonly o: WatchedOverridesOptions;
  private readonly discovery: Discovery;
  private readonly informers: Informer[] = [];
  private namespaces: Informer | undefined;
  private readonly pending = new Set<Collection>(COLLECTIONS);
  private discovered = false;
  private readonly fromFlags: ClusterInfo;
  /** Which Cluster object (by apiVersion) speaks for the cluster now. */
  private readonly clusterObjects = new Map<string, JsonObject>();

  constructor(options: WatchedOverridesOptions) {
    this.o = options;
    this.discovery = new Discovery(options.client);
    this.fromFlags = clusterFromFlags(options.cluster);
    this.set = new OverrideSet(this.fromFlags);
  }

  ready(): boolean {
    return this.discovered && (this.namespaces?.synced ?? false) && this.informers.every((i) => i.synced);
  }

  namespaceLabels(namespace: string): Readonly<Record<string, string>> | undefined {
    const ns = this.namespaces?.get(namespace);
    const labels = isObject(ns?.metadata) ? ns.metadata.labels : undefined;
    if (!isObject(labels)) return ns ? {} : undefined;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
    return out;
  }

  /** Starts the watches; resolves once discovery ran (not when synced: see ready()). Runs until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    this.namespaces = new Informer({
      name: 'namespaces',
      source: listWatchSource(this.o.client, this.o.watcher),
      path: '/api/v1/namespaces',
      apiVersion: 'v1',
      kind: 'Namespace',
      onError: (err, attempt) => this.reportError('namespaces', err, attempt),
    });
    void this.namespaces.start(signal);
    await this.discover(signal);
    this.discovered = true;
    void (async () => {
      while (!signal.aborted && this.pending.size > 0) {
        await sleep(this.o.rediscoverMs ?? 30_000, signal).catch(() => undefined);
        if (signal.aborted) return;
        for (const c of this.pending) this.discovery.forget(c.apiVersion);
        await this.discover(signal);
      }
    })();
  }

  private async discover(signal: AbortSignal): Promise<void> {
    for (const c of [...this.pending]) {
      let info: ResourceInfo;
      try {
        info = await this.discovery.resolve(c.apiVersion, c.kind);
      } catch (err: unknown) {
        if (!(err instanceof UnknownKindError))
          this.o.logger.warn('discovery failed; retrying', {
            apiVersion: c.apiVersion,
            kind: c.kind,
            error: String(err),
          });
        continue;
      }
      this.pending.delete(c);
      this.watch(c, info, signal);
    }
  }

  private watch(c: Collection, info: ResourceInfo, signal: AbortSignal): void {
    const path = resourcePath(info, undefined);
    const name = `${info.resource}.${info.group}`;
    const handlers =
      c.own === 'cluster'
        ? {
            onAdd: (o: JsonObject) => this.clusterChanged(c.apiVersion, o),
            onUpdate: (o: JsonObject) => this.clusterChanged(c.apiVersion, o),
            onDelete: () => this.clusterChanged(c.apiVersion, undefined),
          }
        : {
            onAdd: (o: JsonObject) => this.upsert(o),
            onUpdate: (o: JsonObject) => this.upsert(o),
            onDelete: (o: JsonObject) => this.remove(o),
          };
    const informer = new Informer({
      name,
      source: listWatchSource(this.o.client, this.o.watcher),
      path,
      apiVersion: c.apiVersion,
      kind: c.kind,
      ...(c.own === 'cluster' ? { fieldSelector: `metadata.name=${this.o.cluster.name}` } : {}),
      handlers,
      onError: (err, attempt) => this.reportError(name, err, attempt),
    });
    this.informers.push(informer);
    this.o.logger.info('watching', { resource: name });
    void informer.start(signal);
  }

  private upsert(o: JsonObject): void {
    const problem = this.set.upsert(o);
    if (problem !== undefined) this.o.logger.warn('not used for admission overrides', { object: describe(o), problem });
  }

  private remove(o: JsonObject): void {
    const meta = isObject(o.metadata) ? o.metadata : {};
    this.set.remove({
      apiVersion: String(o.apiVersion),
      kind: String(o.kind),
      namespace: typeof meta.namespace === 'string' ? meta.namespace : undefined,
      name: String(meta.name),
    });
  }

  private clusterChanged(apiVersion: string, o: JsonObject | undefined): void {
    if (o) this.clusterObjects.set(apiVersion, o);
    else this.clusterObjects.delete(apiVersion);
    // Flotilla's Cluster speaks first, then Karmada's, then the flags.
    const object =
      this.clusterObjects.get('cluster.flotilla.io/v1alpha1') ?? this.clusterObjects.get('cluster.karmada.io/v1alpha1');
    this.set.setCluster(object ? clusterInfo(object) : this.fromFlags);
  }

  private reportError(name: string, err: unknown, attempt: number): void {
    if (attempt === 1 || attempt % 10 === 0)
      this.o.logger.warn('watch failed; retrying', {
        resource: name,
        attempt,
        error: err instanceof Error ? err.message : String(err),
      });
  }
}

function describe(o: JsonObject): string {
  const meta = isObject(o.metadata) ? o.metadata : {};
  return `${String(o.kind)} ${typeof meta.namespace === 'string' ? `${meta.namespace}/` : ''}${String(meta.name)}`;
}
