// The process shapes and what each runs, by name, the way Karmada's controller manager and agent register
// their controllers: `flotilla controller` (push: every member from this process; sharded: the members
// divided among replicas) and `flotilla agent` (one pull cluster, from inside it). Reconcilers have a
// queue of keys (reconciler.ts); loops run on their own clock or informers.
//
//   reconciler       key            what it writes
//   templates        template key   claims, finalizers, plans onto the members' queues (template.ts)
//   bindings         template key   the ResourceBinding, the pull clusters' Works, the template's status
//   cluster-status   Cluster name   the Ready condition and what was read of the member (status.ts)
//   cluster-taints   Cluster name   the health taints on the Cluster's spec (status.ts)
//   policy-status    policy key     the policies' status (status.ts)
//   namespaces       namespace      each hub namespace on every member, as Karmada's namespace controller (namespaces.ts)
//   agent-templates  template key   the agent's cluster's copy, from its Work (agent.ts)
//   work-status      template key   the agent's report in its Work's status (agent.ts)
//
//   loop             what it does
//   cluster-facts    reads each member's version, resource summary and API enablements (cluster-facts.ts)
//   hub-liveness     asks the hub for /readyz; a stale view holds health taints (hub-liveness.ts)
//   member-clusters  the kubeconfig's members as clusters in the engine; once the hub is listed, health
//                    judged and the kinds the bindings name held (cluster-health.ts, held-kinds.ts)
//   shard-replica    the replicas' Leases: which members this replica owns (shard-replica.ts)
//   agent-works      the Works in the agent's cluster's namespace: its share of each binding (pull-clusters.ts)
//   orphan-sweep     removes the agent's copies whose template is gone from the hub (agent-orphans.ts)

import type { ControllerOptions } from './options.js';

export type ProcessShape = 'push' | 'sharded' | 'agent';

export type ReconcilerName =
  | 'templates'
  | 'bindings'
  | 'cluster-status'
  | 'cluster-taints'
  | 'policy-status'
  | 'namespaces'
  | 'agent-templates'
  | 'work-status';

export type LoopName =
  'cluster-facts' | 'hub-liveness' | 'member-clusters' | 'shard-replica' | 'agent-works' | 'orphan-sweep';

export interface Process {
  reconcilers: readonly ReconcilerName[];
  loops: readonly LoopName[];
}

/** What each process shape runs. */
export const PROCESSES: Readonly<Record<ProcessShape, Process>> = {
  push: {
    reconcilers: ['templates', 'bindings', 'cluster-status', 'cluster-taints', 'policy-status', 'namespaces'],
    loops: ['cluster-facts', 'hub-liveness', 'member-clusters'],
  },
  sharded: {
    reconcilers: ['templates', 'bindings', 'cluster-status', 'cluster-taints', 'policy-status', 'namespaces'],
    loops: ['cluster-facts', 'hub-liveness', 'member-clusters', 'shard-replica'],
  },
  agent: {
    reconcilers: ['agent-templates', 'work-status', 'cluster-status'],
    loops: ['cluster-facts', 'agent-works', 'orphan-sweep'],
  },
};

/** Reconcilers keyed by template: they start once every hub informer has listed (WaitForCacheSync). */
export const TEMPLATE_KEYED: ReadonlySet<ReconcilerName> = new Set<ReconcilerName>([
  'templates',
  'bindings',
  'agent-templates',
  'work-status',
]);

/** The shape of the process these options describe. */
export function processShape(o: Pick<ControllerOptions, 'agent' | 'sharding'>): ProcessShape {
  return o.agent ? 'agent' : o.sharding ? 'sharded' : 'push';
}
