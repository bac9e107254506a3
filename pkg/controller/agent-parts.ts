// The agent's shape (`flotilla agent`): its cluster's copies from its Works (agent.ts), its report in their
// status, the Works in its cluster's namespace, and the sweep of copies whose template is gone.

import { sweepOrphans } from './agent-orphans.js';
import { AgentReconciler } from './agent.js';
import type { ControllerOptions } from './options.js';
import type { ShapeDeps, ShapeParts } from './shape-parts.js';
import { executionSpace } from './work.js';

/** `flotilla agent`: its cluster's copies from its Works, and its report in their status. */
export function agentParts(o: ControllerOptions, d: ShapeDeps): ShapeParts {
  if (!o.agent) throw new Error('agentParts: options.agent names the cluster');
  const { cluster } = o.agent;
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
