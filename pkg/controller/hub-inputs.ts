// The hub's inputs every process reads, through informers: Clusters and the four policy kinds, in
// Flotilla's groups (policies in their storage version v1beta1: the controller does not need the
// conversion webhook to be up to read what is stored) and, when the hub serves them and they are not
// turned off, Karmada's (policy.karmada.io, cluster.karmada.io). The two pools are one: an object of the
// same kind, namespace and name in both is Flotilla's, and Karmada's takes its place when Flotilla's goes.
// An agent reads its own Cluster only (field-selected). Also the helper every hub informer of the
// manager is made with.

import { API_VERSION as CLUSTER_API_VERSION } from '../../api/cluster/v1alpha1/types.js';
import { POLICY_KINDS } from '../../api/crds/index.js';
import { refOf } from '../engine/inputs.js';
import type { KubeClient } from '../kube/client.js';
import type { Discovery, ResourceInfo } from '../kube/discovery.js';
import { UnknownKindError } from '../kube/errors.js';
import { Informer, listWatchSource, objectKey, type InformerHandlers } from '../kube/informer.js';
import type { JsonObject } from '../kube/objects.js';
import type { Watcher } from '../kube/watch.js';
import type { Logger } from '../runtime/log.js';
import { POLICY_STORAGE_API_VERSION } from './status.js';

const KARMADA_POLICY_API_VERSION = 'policy.karmada.io/v1alpha1';
const KARMADA_CLUSTER_API_VERSION = 'cluster.karmada.io/v1alpha1';

export interface HubInputsOptions {
  hub: KubeClient;
  hubWatcher: Watcher;
  hubDiscovery: Discovery;
  logger: Logger;
  /** 'off': Karmada's groups are not read even when the hub serves them. */
  karmadaGroups?: 'auto' | 'off' | undefined;
  /** An agent's cluster: only that Cluster is read. */
  agentCluster?: string | undefined;
}

/** What the manager does with the Clusters and policies the hub has (whichever group they come from). */
export interface HubInputHandlers {
  onCluster(o: JsonObject): void;
  onClusterDeleted(o: JsonObject): void;
  onPolicy(o: JsonObject): void;
  onPolicyDeleted(o: JsonObject): void;
}

export class HubInputs {
  private readonly policyInformers = new Map<string, Informer>();
  /** policy.karmada.io kinds, when the hub serves them: one pool with Flotilla's (same kind, namespace and name: Flotilla's is used). */
  private readonly karmadaPolicyInformers = new Map<string, Informer>();
  private clusterInformer: Informer | undefined;
  private karmadaClusterInformer: Informer | undefined;
  private signal: AbortSignal = new AbortController().signal;
  private handlers: HubInputHandlers | undefined;

  constructor(private readonly o: HubInputsOptions) {}

  /** Every informer made here (now or later) runs until `signal` aborts. */
  bind(signal: AbortSignal): void {
    this.signal = signal;
  }

  /**
   * Starts the informers: Clusters first (placement needs them), then policies, then Karmada's groups when
   * served. Flotilla's Clusters are read unless the hub serves Karmada's and not Flotilla's (a Karmada
   * user's hub without Flotilla's Cluster CRD, where `kubectl get clusters` then lists Karmada's).
   */
  async start(handlers: HubInputHandlers): Promise<void> {
    this.handlers = handlers;
    const karmadaOnly =
      this.o.karmadaGroups !== 'off' &&
      (await this.notServed(CLUSTER_API_VERSION, 'Cluster')) &&
      (await this.served(KARMADA_CLUSTER_API_VERSION, 'Cluster')) !== undefined;
    if (karmadaOnly)
      this.o.logger.info('the hub serves cluster.karmada.io Clusters and not cluster.flotilla.io: reading those');
    else
      this.clusterInformer = this.clusters(
        'clusters',
        CLUSTER_API_VERSION,
        (o) => handlers.onCluster(o),
        (o) => handlers.onClusterDeleted(o),
      );
    for (const p of POLICY_KINDS) {
      const path = `/apis/${POLICY_STORAGE_API_VERSION}/${p.plural}`;
      const informer = this.informer(p.plural, path, POLICY_STORAGE_API_VERSION, p.kind, {
        onAdd: (o) => handlers.onPolicy(o),
        onUpdate: (o) => handlers.onPolicy(o),
        onDelete: (o) => handlers.onPolicyDeleted(o),
      });
      this.policyInformers.set(p.kind, informer);
    }
    await this.startKarmada();
  }

  /** The informers to wait for before the caches count as synced. */
  informers(): Informer[] {
    return [
      ...(this.clusterInformer ? [this.clusterInformer] : []),
      ...this.policyInformers.values(),
      ...this.karmadaPolicyInformers.values(),
      ...(this.karmadaClusterInformer ? [this.karmadaClusterInformer] : []),
    ];
  }

  /** Whether every Cluster informer has listed once (and there is one). */
  get clustersListed(): boolean {
    const informers = [this.clusterInformer, this.karmadaClusterInformer].filter((i) => i !== undefined);
    return informers.length > 0 && informers.every((i) => i.synced);
  }

  /** The Cluster of that name, as last seen (Flotilla's, else Karmada's). */
  cluster(name: string): JsonObject | undefined {
    return this.clusterInformer?.get(name) ?? this.karmadaClusterInformer?.get(name);
  }

  /** A cluster.karmada.io Cluster shadowed by Flotilla's Cluster `o`, which went: it takes its place. */
  shadowedCluster(o: JsonObject): JsonObject | undefined {
    return o.apiVersion === CLUSTER_API_VERSION ? this.karmadaClusterInformer?.get(objectKey(o)) : undefined;
  }

  /** A policy, as last seen (Flotilla's, else Karmada's). */
  policy(p: { kind: string; namespace?: string; name: string }): JsonObject | undefined {
    const key = p.namespace ? `${p.namespace}/${p.name}` : p.name;
    return this.policyInformers.get(p.kind)?.get(key) ?? this.karmadaPolicyInformers.get(p.kind)?.get(key);
  }

  /** A policy.karmada.io policy shadowed by Flotilla's policy `o`, which went: it takes its place. */
  shadowedPolicy(o: JsonObject): JsonObject | undefined {
    const ref = refOf(o);
    return ref.apiVersion.startsWith('policy.flotilla.io/')
      ? this.karmadaPolicyInformers.get(ref.kind)?.get(objectKey(o))
      : undefined;
  }

  /** Every policy of a kind, from both groups. */
  policies(kind: string): JsonObject[] {
    return [
      ...(this.policyInformers.get(kind)?.values() ?? []),
      ...(this.karmadaPolicyInformers.get(kind)?.values() ?? []),
    ];
  }

  /** A hub informer, started at once on the manager's signal; a failed watch is logged and retried. */
  informer(
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
      source: listWatchSource(this.o.hub, this.o.hubWatcher),
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

  /** The hub's resource for that kind, or undefined when it does not serve it (or discovery fails). */
  private async served(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    try {
      return await this.o.hubDiscovery.resolve(apiVersion, kind);
    } catch {
      return undefined;
    }
  }

  /** Whether discovery says the hub does not serve that kind (a failed discovery is not such an answer). */
  private async notServed(apiVersion: string, kind: string): Promise<boolean> {
    try {
      await this.o.hubDiscovery.resolve(apiVersion, kind);
      return false;
    } catch (e: unknown) {
      return e instanceof UnknownKindError;
    }
  }

  /** The Clusters of one group (an agent's hub: its own Cluster only). */
  private clusters(name: string, apiVersion: string, put: (o: JsonObject) => void, gone: (o: JsonObject) => void) {
    const agent = this.o.agentCluster;
    return this.informer(
      name,
      `/apis/${apiVersion}/clusters`,
      apiVersion,
      'Cluster',
      { onAdd: (o) => put(o), onUpdate: (o) => put(o), onDelete: (o) => gone(o) },
      agent ? `metadata.name=${agent}` : undefined,
    );
  }

  /** Informers for Karmada's groups, when the hub serves them (and they are not turned off). */
  private async startKarmada(): Promise<void> {
    if (this.o.karmadaGroups === 'off') return;
    const served = (apiVersion: string, kind: string) => this.served(apiVersion, kind);
    for (const p of POLICY_KINDS) {
      const info = await served(KARMADA_POLICY_API_VERSION, p.kind);
      if (!info) continue;
      const informer = this.informer(
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
      this.karmadaClusterInformer = this.clusters(
        'clusters.cluster.karmada.io',
        KARMADA_CLUSTER_API_VERSION,
        (o) => this.onKarmadaCluster(o),
        (o) => this.onKarmadaClusterDeleted(o),
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
    this.handlers?.onPolicy(o);
  }

  private onKarmadaPolicyDeleted(o: JsonObject): void {
    if (this.policyInformers.get(refOf(o).kind)?.get(objectKey(o))) return;
    this.handlers?.onPolicyDeleted(o);
  }

  private onKarmadaCluster(o: JsonObject): void {
    if (this.clusterInformer?.get(objectKey(o))) {
      this.o.logger.warn('cluster.karmada.io Cluster not used: cluster.flotilla.io has one of the same name', {
        cluster: objectKey(o),
      });
      return;
    }
    this.handlers?.onCluster(o);
  }

  private onKarmadaClusterDeleted(o: JsonObject): void {
    if (this.clusterInformer?.get(objectKey(o))) return;
    this.handlers?.onClusterDeleted(o);
  }
}
