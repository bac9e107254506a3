// The controller's options (`flotilla controller`, `flotilla agent`): what the manager (manager.ts) is
// given; which of push, sharded push or agent the process is follows from `sharding` and `agent`, and what
// each member takes at once from `agent` and `memberConcurrency` (memberConcurrency()).

import type { KubeConfig } from '../kube/config.js';

import type { Transport } from '../kube/transport.js';
import type { Logger } from '../runtime/log.js';
import type { MemberAccess } from './members.js';

export type { MemberAccess } from './members.js';
import { CONTROLLER_DEFAULTS } from './defaults.js';

export { DEFAULT_LEASE_NAMESPACE } from './defaults.js';

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
  /** Templates planned at once (an agent: templates applied to its cluster at once, and its requests there). */
  concurrency: number;
  /** A controller's requests in flight to each member, and templates applied to it at once. Default 4. */
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
   * Create every hub namespace on every member, as Karmada's namespace controller (namespaces.ts): 'auto'
   * (default) when the hub serves policy.karmada.io, 'on', 'off'. `skippedPropagatingNamespaces`: regular
   * expressions of names not propagated (default kube-.*).
   */
  propagateNamespaces?: 'auto' | 'on' | 'off';
  skippedPropagatingNamespaces?: readonly string[];
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

/** Requests in flight to each member and templates applied to it at once: an agent's one member takes what it applies at once, a controller's --member-concurrency. */
export function memberConcurrency(o: ControllerOptions): number {
  return o.agent ? o.concurrency : (o.memberConcurrency ?? CONTROLLER_DEFAULTS.memberConcurrency);
}
