// The agent's shape (`flotilla agent`): its cluster's copies from its Works (agent.ts), its report in their
// status, the Works in its cluster's namespace, and the sweep of copies whose template is gone.

import type { EngineState } from '../engine/state.js';
import type { Discovery } from '../kube/discovery.js';
import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../runtime/log.js';
import { sweepOrphans } from './agent-orphans.js';
import { AgentReconciler } from './agent.js';
import type { EventRecorder } from './events.js';
import type { HubEvents } from './hub-events.js';
import type { HubInputs } from './hub-inputs.js';
import type { MemberRegistry } from './members.js';
import type { ControllerOptions } from './options.js';
import type { PullClusters } from './pull-clusters.js';
import type { ShapeParts } from './shape-parts.js';
import { executionSpace } from './work.js';

/** What the agent's parts use of the manager; `pull` and `feed` are made after the parts, so read late. */
export interface AgentPartsDeps {
  hub: KubeClient;
  hubDiscovery: Discovery;
  logger: Logger;
  state: EngineState;
  registry: MemberRegistry;
  inputs: HubInputs;
  events: EventRecorder;
  pull(): PullClusters;
  feed(): HubEvents;
}

/** `flotilla agent`: its cluster's copies from its Works, and its report in their status. */
export function agentParts(o: ControllerOptions, cluster: string, d: AgentPartsDeps): ShapeParts {
  const templates = new AgentReconciler({
    hub: d.hub,
    state: d.state,
    member: () => d.registry.get(cluster),
    cluster,
    clusterObject: () => d.inputs.cluster(cluster),
    work: (name) => d.pull().works?.get(`${executionSpace(cluster)}/${name}`),
    namespace: o.namespace,
    concurrency: o.concurrency,
    events: d.events,
    logger: o.logger,
    onReconcile: o.onReconcile,
    onMemberResult: o.onMemberResult,
  });
  const { hub, hubDiscovery, logger } = d;
  const sweep = (signal: AbortSignal, waitMs: number) =>
    void sweepOrphans(
      {
        hub,
        hubDiscovery,
        logger,
        member: () => d.registry.get(cluster),
        templates: templates.templates,
        work: templates.work,
      },
      signal,
      waitMs,
    );
  return {
    templates,
    onCluster: (c) => d.feed().onAgentCluster(c, cluster),
    reconcilers: { 'agent-templates': templates, 'work-status': templates.status },
    loops: {
      // Where the hub placed each template: the Works in this cluster's namespace.
      'agent-works': {
        start: () => {
          d.pull().startWorks();
          const works = d.pull().works;
          return { informers: works ? [works] : [] };
        },
      },
      'orphan-sweep': { synced: (signal) => sweep(signal, 30_000), resync: (signal) => sweep(signal, 0) },
    },
  };
}
