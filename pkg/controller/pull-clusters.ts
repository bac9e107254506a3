// The hub's side of pull clusters (`spec.syncMode: Pull`, agents in the members): the agents' Leases
// watched (from the first pull cluster on: the RBAC for them comes with it) and judged by AgentLeases; the
// Works on the hub watched (the controller: every namespace, for the agents' reports; an agent: its own
// cluster's namespace, for its share of each binding); a cluster that leaves Pull mode (or is deleted)
// loses its Works. What a Work changing means is the process's template reconciler's (`onWork`).

import { apiError, METADATA_ACCEPT, type KubeClient } from '../kube/client.js';
import type { Informer } from '../kube/informer.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import type { AgentLeases } from './agent-leases.js';
import type { ClusterStatus } from './binding.js';
import type { HubInputs } from './hub-inputs.js';
import type { HubLiveness } from './hub-liveness.js';
import type { MemberRegistry } from './members.js';
import type { TemplateIdentity } from './ownership.js';
import { WORK_API_VERSION, WORK_KIND, WORK_PLURAL, executionSpace, workEntry, workName, workTemplate } from './work.js';

export interface PullClustersOptions {
  hub: KubeClient;
  inputs: HubInputs;
  registry: MemberRegistry;
  logger: Logger;
  /** The controller's namespace: bindings (and Work names) of cluster-scoped templates. */
  namespace: string;
  /** Where the agents' Leases are. */
  leaseNamespace: string;
  /** An agent's cluster: its namespace's Works only. */
  agentCluster?: string | undefined;
  /** Judges pull clusters from their agents' Leases (the controller). */
  agentLeases: AgentLeases;
  hubLiveness?: HubLiveness | undefined;
  /** Whether this process deletes a cluster's Works (sharded: the coordinator). */
  coordinator(): boolean;
  /** A Work was added, changed or deleted. */
  onWork(o: JsonObject, old?: JsonObject): void;
}

export class PullClusters {
  /** Works on the hub: an agent's, in its cluster's namespace; the controller's, pull agents' reports. */
  private workInformer: Informer | undefined;
  /** Pull agents' Leases (the controller). */
  private leaseInformer: Informer | undefined;
  private signal: AbortSignal = new AbortController().signal;

  constructor(private readonly o: PullClustersOptions) {}

  /** Binds the informers started later to the process's signal. */
  bind(signal: AbortSignal): void {
    this.signal = signal;
  }

  /** The Works informer, once started. */
  get works(): Informer | undefined {
    return this.workInformer;
  }

  /** Why the Lease watch is behind (its last error), or undefined when it is not. */
  get leasesBehind(): string | undefined {
    const e = this.leaseInformer?.error;
    return e === undefined ? undefined : `the Lease watch has not caught up: ${e}`;
  }

  /** A pull agent's Lease, as last seen (`namespace/name`). */
  lease(key: string): JsonObject | undefined {
    return this.leaseInformer?.get(key);
  }

  get leasesListed(): boolean {
    return this.leaseInformer?.synced === true;
  }

  /**
   * Starts watching pull agents' Leases (once, with the first pull cluster: the RBAC for them comes with
   * it); their health is judged by AgentLeases (pull-health.ts). A broken watch makes the hub view stale.
   */
  startLeases(): void {
    if (this.leaseInformer || this.signal.aborted) return;
    const observe = (o: JsonObject) => this.o.agentLeases.observe(ownString(o.metadata, 'name') ?? '');
    this.leaseInformer = this.o.inputs.informer(
      'leases',
      `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.o.leaseNamespace)}/leases`,
      'coordination.k8s.io/v1',
      'Lease',
      { onAdd: observe, onUpdate: observe, onDelete: observe },
      undefined,
      undefined,
      (err) => this.o.hubLiveness?.fail(`the Lease watch: ${err instanceof Error ? err.message : String(err)}`),
    );
    // Once listed, the pull clusters without a Lease are judged too.
    void this.leaseInformer.waitForSync(this.signal).then(() => {
      for (const n of this.o.registry.pullNames()) this.o.agentLeases.observe(n);
    });
  }

  /**
   * Starts watching Works on the hub (once): an agent, its cluster's namespace; the controller, every
   * namespace (its pull clusters').
   */
  startWorks(): void {
    if (this.workInformer || this.signal.aborted) return;
    const agent = this.o.agentCluster;
    const ns = agent ? `/namespaces/${encodeURIComponent(executionSpace(agent))}` : '';
    this.workInformer = this.o.inputs.informer(
      'works',
      `/apis/${WORK_API_VERSION}${ns}/${WORK_PLURAL}`,
      WORK_API_VERSION,
      WORK_KIND,
      {
        onAdd: (o) => this.o.onWork(o),
        onUpdate: (o, old) => this.o.onWork(o, old),
        onDelete: (o) => this.o.onWork(o),
      },
      undefined,
      // One per template and pull cluster: kept without what no one here reads.
      (o) => ({ ...o, metadata: slimMetadata(o.metadata) }),
    );
  }

  /** Pull cluster `cluster`'s Work of template `t`, as last seen (when it is this template's). */
  workOf(cluster: string, t: TemplateIdentity): JsonObject | undefined {
    const w = this.workInformer?.get(`${executionSpace(cluster)}/${workName(t, this.o.namespace)}`);
    return w && workTemplate(w)?.uid === t.uid ? w : undefined;
  }

  /** What the pull agents report of template `t` in their Works, by cluster. */
  entries(t: TemplateIdentity): Map<string, ClusterStatus> {
    const out = new Map<string, ClusterStatus>();
    for (const c of this.o.registry.pullNames()) {
      const w = this.workOf(c, t);
      const e = w ? workEntry(w, c) : undefined;
      if (e) out.set(c, e);
    }
    return out;
  }

  /**
   * A cluster left Pull mode (or was deleted): its Works go, in one request. Its agent stands down when
   * it sees the Cluster; what it applied stays on the member, for the controller to take over (Push) or
   * as it is (deleted), as before the switch.
   */
  async dropWorks(cluster: string): Promise<void> {
    if (!this.o.coordinator()) return;
    const path = `/apis/${WORK_API_VERSION}/namespaces/${encodeURIComponent(executionSpace(cluster))}/${WORK_PLURAL}`;
    const error = await this.o.hub.request({ method: 'DELETE', path, accept: METADATA_ACCEPT }).then(
      (res) => (res.status >= 300 && res.status !== 404 ? apiError(res).message : undefined),
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    if (error) this.o.logger.warn('cannot delete the Works of a cluster that left pull mode', { cluster, error });
  }
}

/** An object's metadata without managedFields and annotations. */
function slimMetadata(m: unknown): JsonObject {
  if (!isObject(m)) return {};
  const { managedFields: _f, annotations: _a, ...rest } = m;
  return rest;
}
