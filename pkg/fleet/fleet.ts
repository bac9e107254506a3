// `Fleet`: the read model over one hub. A HubReader keeps the collections current; the views (clusters,
// placement matrix, policies) are computed from its snapshot when asked; a template's detail and an
// object's Events are read from the hub when asked. Construct, `start(signal)`, `waitForSync`, then read;
// `subscribe` says when something changed (the caller decides how often to look again).

import type { KubeConfig } from '../kube/config.js';

import { KubeClient, apiError } from '../kube/client.js';
import { Discovery, resourcePath } from '../kube/discovery.js';
import { listWatchSource, type ListWatchSource } from '../kube/informer.js';
import { Watcher } from '../kube/watch.js';
import { clusterFacts } from './clusters.js';
import { isKubeObject, templateDetail } from './detail.js';
import { recentEvents } from './events.js';
import { HubReader, slim, type HubSnapshot } from './hub.js';
import { placementMatrix, templateRows } from './matrix.js';
import { policyFacts } from './policies.js';
import { describeRef } from './rows.js';
import type {
  ClusterFact,
  EventFact,
  MatrixFilter,
  ObjectRef,
  PlacementMatrix,
  PolicyFact,
  TemplateDetail,
  TemplateRow,
} from './types.js';

export interface FleetOptions {
  client: KubeClient;
  /** Lists and watches; listWatchSource(client, watcher) for a real hub. */
  source: ListWatchSource;
  /** The controller's --lease-namespace (default flotilla-cluster-lease). */
  leaseNamespace?: string;
  /** The clock ages are computed against (ms since the epoch). Default Date.now. */
  now?: () => number;
}

/** What a name given on the command line (or in a URL) finds among the templates the hub has bindings for. */
export interface TemplateQuery {
  name: string;
  namespace?: string;
  /** Kind, case-insensitive (`deployment`, `Deployment`). */
  kind?: string;
}

export class Fleet {
  readonly hub: HubReader;
  readonly client: KubeClient;
  private readonly now: () => number;
  private readonly discovery: Discovery;
  private cached: { version: number; rows: TemplateRow[] } | undefined;
  private cachedPolicies: { version: number; policies: PolicyFact[] } | undefined;

  constructor(options: FleetOptions) {
    this.client = options.client;
    this.hub = new HubReader({
      client: options.client,
      source: options.source,
      ...(options.leaseNamespace ? { leaseNamespace: options.leaseNamespace } : {}),
    });
    this.now = options.now ?? Date.now;
    this.discovery = new Discovery(options.client);
  }

  start(signal: AbortSignal): Promise<void> {
    return this.hub.start(signal);
  }

  waitForSync(signal: AbortSignal, timeoutMs = 30_000): Promise<void> {
    return this.hub.waitForSync(signal, timeoutMs);
  }

  subscribe(fn: () => void): () => void {
    return this.hub.subscribe(fn);
  }

  /** Counts changes; equal values mean the views are unchanged. */
  get version(): number {
    return this.hub.version;
  }

  snapshot(): HubSnapshot {
    return this.hub.snapshot();
  }

  /** What the views need and could not be read, each naming the collection. */
  problems(): string[] {
    return this.hub.snapshot().problems;
  }

  /** What could not be read of the optional collections (Karmada's kinds, agents' Leases). */
  warnings(): string[] {
    return this.hub.snapshot().warnings;
  }

  clusters(): ClusterFact[] {
    return clusterFacts(this.hub.snapshot(), this.now());
  }

  /** Every template's row, unfiltered; kept until the next change (rows are shared: do not mutate them). */
  rows(): readonly TemplateRow[] {
    const version = this.hub.version;
    if (this.cached?.version !== version) this.cached = { version, rows: templateRows(this.hub.snapshot()) };
    return this.cached.rows;
  }

  matrix(filter: MatrixFilter = {}): PlacementMatrix {
    return placementMatrix(this.hub.snapshot(), filter, this.rows());
  }

  /** Every policy; computed once per change (each is judged by admission's rules; shared: do not mutate). */
  policies(): readonly PolicyFact[] {
    const version = this.hub.version;
    if (this.cachedPolicies?.version !== version)
      this.cachedPolicies = { version, policies: policyFacts(this.hub.snapshot()) };
    return this.cachedPolicies.policies;
  }

  /** The templates (with bindings) a name finds; `kind/name` is also accepted as `name`. */
  findTemplates(q: TemplateQuery): ObjectRef[] {
    let { name, kind } = q;
    const slash = name.indexOf('/');
    if (slash > 0 && kind === undefined) [kind, name] = [name.slice(0, slash), name.slice(slash + 1)];
    return this.rows()
      .map((r) => r.template)
      .filter(
        (t) =>
          t.name === name &&
          (q.namespace === undefined || (t.namespace ?? '') === q.namespace) &&
          (kind === undefined || t.kind.toLowerCase() === kind.toLowerCase()),
      );
  }

  /** One template in detail: read from the hub now (with the workloads that require it), explained by the engine. */
  async template(ref: ObjectRef, signal?: AbortSignal): Promise<TemplateDetail> {
    const snapshot = this.hub.snapshot();
    const rows = this.rows();
    const row = rows.find(
      (r) =>
        r.template.apiVersion === ref.apiVersion &&
        r.template.kind === ref.kind &&
        (r.template.namespace ?? '') === (ref.namespace ?? '') &&
        r.template.name === ref.name,
    );
    let readError: string | undefined;
    let template: Awaited<ReturnType<Fleet['read']>>;
    try {
      template = await this.read(ref, signal);
      if (!template) readError = `${describeRef(ref)} is not on the hub (deleted?)`;
    } catch (err: unknown) {
      readError = `cannot read ${describeRef(ref)}: ${err instanceof Error ? err.message : String(err)}`;
    }
    const workloads = [];
    for (const w of row?.requiredBy ?? []) {
      const o = await this.read(w, signal).catch(() => undefined);
      if (o) workloads.push(o);
    }
    return templateDetail({
      ref,
      template,
      workloads,
      snapshot,
      rows,
      now: this.now(),
      ...(readError ? { readError } : {}),
    });
  }

  /** Recent hub Events about an object, newest first. */
  events(ref: ObjectRef, signal?: AbortSignal): Promise<EventFact[]> {
    return recentEvents(this.client, ref, signal);
  }

  private async read(ref: ObjectRef, signal?: AbortSignal) {
    const info = await this.discovery.resolve(ref.apiVersion, ref.kind);
    const res = await this.client.request({ method: 'GET', path: resourcePath(info, ref.namespace, ref.name), signal });
    if (res.status === 404) return undefined;
    if (res.status >= 400) throw apiError(res);
    return isKubeObject(res.body) ? slim(res.body) : undefined;
  }
}

/** A Fleet reading the hub a KubeConfig's current context reaches, with its credentials. */
export function fleetFor(
  kubeConfig: KubeConfig,
  options: { leaseNamespace?: string; userAgent?: string; now?: () => number } = {},
): Fleet {
  const userAgent = options.userAgent ?? 'flotilla-status';
  const client = new KubeClient(kubeConfig, { concurrency: 4, userAgent });
  const watcher = new Watcher(kubeConfig, { userAgent });
  return new Fleet({
    client,
    source: listWatchSource(client, watcher),
    ...(options.leaseNamespace ? { leaseNamespace: options.leaseNamespace } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
}
