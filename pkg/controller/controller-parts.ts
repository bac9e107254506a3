// The controller's shape (`flotilla controller`, push and sharded): the template and binding reconcilers
// over every member (template.ts; sharded, this replica's share: shard-replica.ts), the Karmada objects
// they mirror, the namespaces copied to the members, and the member clusters' loop.

import { CONTROLLER_DEFAULTS } from './defaults.js';
import { KarmadaObjects } from './karmada-objects.js';
import { namespaceSync } from './namespaces.js';
import { memberConcurrency, type ControllerOptions } from './options.js';
import { ShardReplica } from './shard-replica.js';
import type { Loop, ShapeDeps, ShapeParts } from './shape-parts.js';
import { TemplateReconciler } from './template.js';

/** `flotilla controller`: the template and binding reconcilers over every member (sharded: this replica's share). */
export function controllerParts(o: ControllerOptions, d: ShapeDeps): ShapeParts {
  if (o.agent) throw new Error('controllerParts: the agent runs agentParts');
  const hubParts = { hub: d.hub, hubWatcher: d.hubWatcher, hubDiscovery: d.hubDiscovery, logger: d.logger };
  const { side, registry, inputs } = d;
  const shard = o.sharding
    ? new ShardReplica({
        ...hubParts,
        sharding: o.sharding,
        namespace: o.namespace,
        inputs,
        registry,
        onChange: (owned, names) => {
          templates.all();
          for (const n of [...names, ...registry.pullNames()]) side.clusterStatus.queue.add(n);
          for (const m of registry.all()) if (owned.includes(m.name)) void side.facts.refresh(m, d.signal());
        },
        bindingChanged: (key) => templates.bindingChanged(key),
      })
    : undefined;
  const templates = new TemplateReconciler({
    ...hubParts,
    agentEntries: (t) => new Map([...d.pull().entries(t), ...(shard?.entries(t) ?? [])]),
    work: (cluster, t) => d.pull().workOf(cluster, t),
    shards: shard?.sharding,
    state: d.state,
    registry,
    events: d.events,
    policyStatus: side.policyStatus,
    policy: (ref) => inputs.policy(ref),
    namespace: o.namespace,
    concurrency: o.concurrency,
    memberConcurrency: memberConcurrency(o),
    cleanupTimeoutMs: o.cleanupTimeoutMs ?? 600_000,
    evictionPurgeMode: o.evictionPurgeMode ?? CONTROLLER_DEFAULTS.evictionPurgeMode,
    gracefulEvictionTimeoutMs: o.gracefulEvictionTimeoutMs ?? CONTROLLER_DEFAULTS.gracefulEvictionTimeoutMs,
    onReconcile: o.onReconcile,
    onMemberResult: o.onMemberResult,
    karmada: new KarmadaObjects({
      ...hubParts,
      events: d.events,
      policy: (ref) => inputs.policy(ref),
      karmadaGroups: o.karmadaGroups,
    }),
  });
  const namespaces = namespaceSync(o, hubParts, inputs, registry, () => d.share());
  const members: Loop = {
    start: () => {
      for (const name of registry.kubeconfigNames()) d.feed().upsertKubeconfigMember(name);
      return {};
    },
    // Health is judged once the hub's Clusters are listed: until then each keeps the taints it carries.
    // Claimed templates of kinds no policy selects now: their bindings say which kinds to watch for them.
    listed: async (signal) => {
      side.health.evaluateAll();
      await d.kinds().seedFromBindings(signal);
    },
  };
  return {
    templates,
    onCluster: (c) => d.feed().onCluster(c),
    ...(shard ? { shard } : {}),
    namespaces,
    reconcilers: { templates, bindings: templates.bindings, namespaces },
    loops: {
      ...(shard ? { 'shard-replica': { start: (signal: AbortSignal) => ({ informers: shard.start(signal) }) } } : {}),
      'member-clusters': members,
    },
  };
}
