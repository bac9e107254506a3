// What a process shape adds to the manager (manager.ts): its template reconciler, its own reconcilers and
// loops by name (processes.ts). A shape's parts are made by its factory (controller-parts.ts: push and
// sharded; agent-parts.ts: the agent), which the process's command passes to the Controller: an agent
// loads none of the controller's template reconciler, Karmada objects or sharding.

import type { EngineState } from '../engine/state.js';
import type { KubeClient } from '../kube/client.js';
import type { Discovery } from '../kube/discovery.js';
import type { Informer } from '../kube/informer.js';
import type { JsonObject } from '../kube/objects.js';
import type { Watcher } from '../kube/watch.js';
import type { Logger } from '../runtime/log.js';
import type { ClusterSide } from './cluster-side.js';
import type { EventRecorder } from './events.js';
import type { MemberWork } from './execute.js';
import type { HubEvents, TemplateSink } from './hub-events.js';
import type { HubInputs } from './hub-inputs.js';
import type { MemberRegistry } from './members.js';
import type { NamespaceSync } from './namespaces.js';
import type { ControllerOptions } from './options.js';
import type { LoopName, ReconcilerName } from './processes.js';
import type { PullClusters } from './pull-clusters.js';
import type { Reconciler } from './reconciler.js';
import type { TemplateKinds } from './template-kinds.js';

/** What of the clusters this process writes: all (push, agent), or a sharded replica's share (shard-replica.ts). */
export interface Share {
  /** Whether this process writes cluster `name`'s status and taints (and, for a member, applies there). */
  writesCluster(name: string): boolean;
  /** Whether this process writes what is about a template or a policy rather than a member. */
  coordinator(): boolean;
}

/** An unsharded process: it writes every cluster and every template's binding. */
export const WHOLE: Share = { writesCluster: () => true, coordinator: () => true };

/** A loop of a process shape: what it starts, and what it does once the hub is listed, synced, resynced. */
export interface Loop {
  /** Starts it; returns the informers the caches wait for, and what runs until the signal aborts. */
  start?(signal: AbortSignal): { informers?: Informer[]; running?: Promise<void> };
  /** The hub's Clusters and policies are listed (before the template kinds are). */
  listed?(signal: AbortSignal): Promise<void> | void;
  synced?(signal: AbortSignal): void;
  resync?(signal: AbortSignal): void;
}

/** The process's template reconciler: the controller's, or the agent's. */
export type Templates = TemplateSink &
  Reconciler & {
    readonly work: MemberWork;
    /** A Work changed on the hub. */
    onWork(o: JsonObject, old?: JsonObject): void;
    /** An object applied for template `key` changed on member `member` (else the template is queued). */
    ownedChanged?(member: string, key: string): void;
  };

/** What a process shape adds to the manager: its template reconciler, and its own reconcilers and loops. */
export interface ShapeParts {
  templates: Templates;
  /** What a Cluster on the hub is to this process (the agent reads its own only). */
  onCluster(o: JsonObject): void;
  /** A sharded replica's share; recomputed when a member comes or goes. */
  shard?: Share & { reshard(): void };
  namespaces?: NamespaceSync;
  reconcilers: Partial<Record<ReconcilerName, Reconciler>>;
  loops: Partial<Record<LoopName, Loop>>;
}

/** What the manager gives a shape's factory; what is made after the parts is read late. */
export interface ShapeDeps {
  hub: KubeClient;
  hubWatcher: Watcher;
  hubDiscovery: Discovery;
  logger: Logger;
  state: EngineState;
  registry: MemberRegistry;
  inputs: HubInputs;
  events: EventRecorder;
  side: ClusterSide;
  pull(): PullClusters;
  feed(): HubEvents;
  kinds(): TemplateKinds;
  share(): Share;
  signal(): AbortSignal;
}

/** Makes a process shape's parts: controllerParts (controller-parts.ts) or agentParts (agent-parts.ts). */
export type ShapeFactory = (o: ControllerOptions, d: ShapeDeps) => ShapeParts;
