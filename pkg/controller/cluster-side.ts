// The Cluster side of a process: what it reads of each member (cluster-facts.ts), each cluster's health
// taints (cluster-health.ts, from a push member's probe or a pull cluster's agent Lease, agent-leases.ts),
// whether the hub's view is current (hub-liveness.ts), and the two reconcilers that write them on the
// hub's Clusters: status (Ready condition and facts) and taints. An agent writes its own cluster's facts
// under its own field manager and judges no health.

import { POLICY_KINDS } from '../../api/crds/index.js';
import { KubeClient } from '../kube/client.js';
import { AgentLeases, joinedBefore } from './agent-leases.js';
import { agentFieldManager } from './agent.js';
import { ClusterFactsCollector } from './cluster-facts.js';
import { ClusterHealth } from './cluster-health.js';
import { CONTROLLER_DEFAULTS, DEFAULT_LEASE_NAMESPACE } from './defaults.js';
import type { EventRecorder } from './events.js';
import type { HealthTaint } from './health-taints.js';
import { HubLiveness } from './hub-liveness.js';
import type { HubInputs } from './hub-inputs.js';
import type { MemberRegistry } from './members.js';
import type { ControllerOptions } from './options.js';
import type { PullClusters } from './pull-clusters.js';
import type { Share } from './shape-parts.js';
import { ClusterStatusReconciler, ClusterTaintReconciler, PolicyStatusReconciler } from './status.js';

export interface ClusterSide {
  facts: ClusterFactsCollector;
  clusterStatus: ClusterStatusReconciler;
  clusterTaints: ClusterTaintReconciler;
  policyStatus: PolicyStatusReconciler;
  health: ClusterHealth;
  agentLeases: AgentLeases;
  /** Not in an agent. */
  hubLiveness: HubLiveness | undefined;
}

export interface ClusterSideParts {
  hub: KubeClient;
  events: EventRecorder;
  registry: MemberRegistry;
  inputs: HubInputs;
  /** Resolved when called: built after this side. */
  share(): Share;
  pull(): PullClusters;
  /** A cluster's health taints changed: into the engine (and the templates it affects queued). */
  onHealth(name: string, taints: readonly HealthTaint[]): void;
}

/** Builds the Cluster side of a process from its options. */
export function clusterSide(options: ControllerOptions, p: ClusterSideParts): ClusterSide {
  const { registry, inputs, logger } = { ...p, logger: options.logger };
  const agent = options.agent;
  const writes = (name: string) => p.share().writesCluster(name);
  const cluster = (name: string) => inputs.cluster(name);
  const facts = new ClusterFactsCollector({
    intervalMs: options.clusterStatusIntervalMs ?? CONTROLLER_DEFAULTS.clusterStatusIntervalMs,
    members: () =>
      [...registry.all()]
        .filter((m) => writes(m.name))
        .map((m) => ({ name: m.name, client: m.client, ready: m.readiness.ready === true })),
    onChange: (name) => clusterStatus.queue.add(name),
    logger,
  });
  const clusterTaints = new ClusterTaintReconciler(p.hub, {
    cluster: (name) => (writes(name) ? cluster(name) : undefined),
    taints: (name) => health.get(name),
    logger,
  });
  const clusterStatus = new ClusterStatusReconciler(p.hub, {
    cluster,
    // An agent writes what it reads of its cluster; the controller writes Ready, from the agent's Lease.
    condition: (name) => (agent || !writes(name) ? undefined : registry.condition(name)),
    ...(agent ? { fieldManager: agentFieldManager(agent.cluster) } : {}),
    facts: (name) => facts.get(name),
    events: p.events,
    logger,
  });
  const hubLiveness = agent
    ? undefined
    : new HubLiveness({
        client: new KubeClient(options.hub, { concurrency: 1, userAgent: options.tooling }),
        intervalMs: options.hubCheckIntervalMs ?? 2_000,
        timeoutMs: options.probeTimeoutMs ?? CONTROLLER_DEFAULTS.probeTimeoutMs,
        behind: () => p.pull().leasesBehind,
        onChange: (stale) => {
          if (stale) agentLeases.pause();
          else agentLeases.resume(registry.pullNames());
          health.evaluateAll();
        },
        logger,
      });
  const agentLeases = new AgentLeases({
    namespace: options.leaseNamespace ?? DEFAULT_LEASE_NAMESPACE,
    lease: (key) => p.pull().lease(key),
    synced: () => p.pull().leasesListed,
    joinedBefore: (name) => joinedBefore(cluster(name)),
    set: (name, state, message) =>
      registry.setAgentLease(name, state === 'ready', message, state === 'awaiting' ? 'AgentNotJoined' : undefined),
    confirmedAt: () => hubLiveness?.confirmedAt ?? Date.now(),
  });
  const health = new ClusterHealth({
    notReadyAfterMs: options.notReadyTaintAfterMs ?? CONTROLLER_DEFAULTS.notReadyTaintAfterMs,
    failover: options.failover === true,
    evictionAfterMs: options.failoverEvictionTimeoutMs ?? CONTROLLER_DEFAULTS.failoverEvictionTimeoutMs,
    unhealthyThreshold: options.unhealthyClusterThreshold ?? CONTROLLER_DEFAULTS.unhealthyClusterThreshold,
    readiness: (name) => registry.readiness(name),
    isPull: (name) => registry.isPull(name),
    awaitingAgent: (name) => registry.isPull(name) && agentLeases.awaiting(name),
    names: () => new Set([...registry.names(), ...registry.pullNames()]),
    hubStale: () => hubLiveness?.stale === true,
    listed: () => inputs.clustersListed,
    onChange: (name, taints) => {
      // Into the engine at once (the Cluster as the hub has it, or the kubeconfig member's), then onto the hub.
      p.onHealth(name, taints);
      clusterTaints.queue.add(name);
    },
    logger,
  });
  const policyStatus = new PolicyStatusReconciler(p.hub, {
    // Sharded: the coordinator writes policy status.
    policy: (ref) => (p.share().coordinator() ? inputs.policy(ref) : undefined),
    plural: (kind) => POLICY_KINDS.find((k) => k.kind === kind)?.plural,
    intervalMs: options.policyStatusIntervalMs ?? 1_000,
    logger,
  });
  return { facts, clusterStatus, clusterTaints, policyStatus, health, agentLeases, hubLiveness };
}
