// The hub as the read model sees it: one informer (list, then watch) per collection it reads — Clusters of
// both groups, ResourceBindings, Works, the four policy kinds of both groups, the agents' Leases — with the
// caller's own credentials. A collection the hub does not serve (Karmada's API not enabled) is left out;
// one that cannot be read (403, an apiserver error) is said in `problems` and retried with the informer's
// backoff. Nothing is written. `start(signal)` runs until the signal aborts; `subscribe` hears every change.

import { CLUSTER_GROUP, KARMADA_CLUSTER_GROUP, KARMADA_POLICY_GROUP, POLICY_GROUP } from '../../api/crds/index.js';
import { BINDING, WORK } from '../../api/work/v1alpha1/types.js';
import { DEFAULT_LEASE_NAMESPACE } from '../controller/defaults.js';
import type { KubeClient } from '../kube/client.js';
import { Discovery, resourcePath } from '../kube/discovery.js';
import { UnknownKindError } from '../kube/errors.js';
import { Informer, type ListWatchSource } from '../kube/informer.js';
import { isObject, type JsonObject } from '../kube/objects.js';

/** Every object the read model is computed from, as the hub has it now. */
export interface HubSnapshot {
  clusters: JsonObject[];
  bindings: JsonObject[];
  works: JsonObject[];
  policies: JsonObject[];
  leases: JsonObject[];
  leaseNamespace: string;
  /** Collections the views need that could not be read, and why (each names the collection). */
  problems: string[];
  /** The same for optional ones (Karmada's kinds, the agents' Leases): the views lack only those facts. */
  warnings: string[];
}

export interface HubReaderOptions {
  /** Requests to the hub (discovery, lists). */
  client: KubeClient;
  /** Lists and watches (listWatchSource(client, watcher) for a real hub). */
  source: ListWatchSource;
  /** Where pull agents renew their Leases (the controller's --lease-namespace). */
  leaseNamespace?: string;
}

type Bucket = Exclude<keyof HubSnapshot, 'leaseNamespace' | 'problems' | 'warnings'>;

interface Collection {
  bucket: Bucket;
  apiVersion: string;
  kind: string;
  namespace?: string;
  /** Said when the hub does not serve it (Flotilla's own kinds); Karmada's are optional. */
  required: boolean;
}

const POLICY_KINDS = ['PropagationPolicy', 'ClusterPropagationPolicy', 'OverridePolicy', 'ClusterOverridePolicy'];

function collections(leaseNamespace: string): Collection[] {
  return [
    { bucket: 'clusters', apiVersion: `${CLUSTER_GROUP}/v1alpha1`, kind: 'Cluster', required: true },
    { bucket: 'clusters', apiVersion: `${KARMADA_CLUSTER_GROUP}/v1alpha1`, kind: 'Cluster', required: false },
    { bucket: 'bindings', apiVersion: BINDING.apiVersion, kind: BINDING.kind, required: true },
    { bucket: 'works', apiVersion: WORK.apiVersion, kind: WORK.kind, required: true },
    // Flotilla's policies in their storage version: read without the conversion webhook.
    ...POLICY_KINDS.map((kind) => ({
      bucket: 'policies' as const,
      apiVersion: `${POLICY_GROUP}/v1beta1`,
      kind,
      required: true,
    })),
    ...POLICY_KINDS.map((kind) => ({
      bucket: 'policies' as const,
      apiVersion: `${KARMADA_POLICY_GROUP}/v1alpha1`,
      kind,
      required: false,
    })),
    {
      bucket: 'leases',
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      namespace: leaseNamespace,
      required: false,
    },
  ];
}

async function servesKarmadaClusters(discovery: Discovery): Promise<boolean> {
  try {
    await discovery.resolve(`${KARMADA_CLUSTER_GROUP}/v1alpha1`, 'Cluster');
    return true;
  } catch {
    return false;
  }
}

/** What nobody reads here: managedFields are most of an object's bytes. */
export function slim(o: JsonObject): JsonObject {
  if (!isObject(o.metadata) || !Object.hasOwn(o.metadata, 'managedFields')) return o;
  const { managedFields: _managedFields, ...metadata } = o.metadata;
  return { ...o, metadata };
}

export class HubReader {
  readonly leaseNamespace: string;
  private readonly o: HubReaderOptions;
  private readonly informers: Array<{ c: Collection; informer: Informer }> = [];
  private readonly unserved: string[] = [];
  private readonly listeners = new Set<() => void>();
  private discovered: Promise<void> | undefined;
  /** Informers that failed at least once, and who waits to hear of it. */
  private readonly failed = new Set<Informer>();
  private failWaiters: Array<{ informer: Informer; resolve: () => void }> = [];
  private changes = 0;

  constructor(options: HubReaderOptions) {
    this.o = options;
    this.leaseNamespace = options.leaseNamespace ?? DEFAULT_LEASE_NAMESPACE;
  }

  /** Counts every change seen (adds, updates, deletes, relist differences). */
  get version(): number {
    return this.changes;
  }

  /** Calls `fn` after each change; returns the function that stops it. */
  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Finds what the hub serves (rejects when the hub cannot be reached or answers with an error), then
   * runs the informers until `signal` aborts.
   */
  async start(signal: AbortSignal): Promise<void> {
    await this.discover();
    await Promise.all(this.informers.map(({ informer }) => informer.start(signal)));
  }

  /**
   * Resolves once every collection has been listed or has failed once (403, an apiserver error: it is
   * retried, and said in `problems` meanwhile), or after `timeoutMs`, or when `signal` aborts, whichever is
   * first; rejects when discovery failed.
   */
  async waitForSync(signal: AbortSignal, timeoutMs: number): Promise<void> {
    await this.discover();
    const timeout = AbortSignal.timeout(timeoutMs);
    const either = AbortSignal.any([signal, timeout]);
    await Promise.all(
      this.informers.map(
        ({ informer }) =>
          new Promise<void>((resolve) => {
            if (this.failed.has(informer)) return resolve();
            this.failWaiters.push({ informer, resolve });
            void informer.waitForSync(either).then(() => resolve());
          }),
      ),
    );
    this.failWaiters = [];
  }

  snapshot(): HubSnapshot {
    const out: HubSnapshot = {
      clusters: [],
      bindings: [],
      works: [],
      policies: [],
      leases: [],
      leaseNamespace: this.leaseNamespace,
      problems: [...this.unserved],
      warnings: [],
    };
    for (const { c, informer } of this.informers) {
      out[c.bucket].push(...informer.values());
      const said = c.required ? out.problems : out.warnings;
      if (!informer.synced) said.push(`${informer.name}: not listed${informer.error ? `: ${informer.error}` : ' yet'}`);
      else if (informer.error) said.push(`${informer.name}: ${informer.error} (showing the last list)`);
    }
    return out;
  }

  private discover(): Promise<void> {
    this.discovered ??= this.findServed();
    return this.discovered;
  }

  private async findServed(): Promise<void> {
    const discovery = new Discovery(this.o.client);
    for (const c of collections(this.leaseNamespace)) {
      let info;
      try {
        info = await discovery.resolve(c.apiVersion, c.kind);
      } catch (err: unknown) {
        if (!(err instanceof UnknownKindError)) throw err;
        // A Karmada user's hub may serve cluster.karmada.io Clusters alone: Flotilla's are not missed there.
        if (c.required && !(c.bucket === 'clusters' && (await servesKarmadaClusters(discovery))))
          this.unserved.push(
            `the hub does not serve ${c.kind} in ${c.apiVersion}: are Flotilla's CRDs installed (helm install, or kubectl apply -k deploy)?`,
          );
        continue;
      }
      const name = `${info.resource}.${info.group || 'core'}${c.namespace ? ` in ${c.namespace}` : ''}`;
      const informer = new Informer({
        name,
        source: this.o.source,
        path: resourcePath(info, c.namespace),
        apiVersion: c.apiVersion,
        kind: c.kind,
        transform: slim,
        onError: () => this.failedOnce(informer),
        handlers: {
          onAdd: () => this.changed(),
          onUpdate: () => this.changed(),
          onDelete: () => this.changed(),
        },
      });
      this.informers.push({ c, informer });
    }
  }

  private failedOnce(informer: Informer): void {
    this.failed.add(informer);
    for (const w of this.failWaiters) if (w.informer === informer) w.resolve();
  }

  private changed(): void {
    this.changes++;
    for (const fn of this.listeners) {
      try {
        fn();
      } catch {
        // a listener's failure is its own
      }
    }
  }
}
