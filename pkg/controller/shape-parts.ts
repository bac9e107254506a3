// What a process shape adds to the manager (manager.ts): its template reconciler, its own reconcilers and
// loops by name (processes.ts).

import type { Informer } from '../kube/informer.js';
import type { JsonObject } from '../kube/objects.js';
import type { MemberWork } from './execute.js';
import type { TemplateSink } from './hub-events.js';
import type { NamespaceSync } from './namespaces.js';
import type { LoopName, ReconcilerName } from './processes.js';
import type { Reconciler } from './reconciler.js';
import type { ShardReplica } from './shard-replica.js';

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
  shard?: ShardReplica;
  namespaces?: NamespaceSync;
  reconcilers: Partial<Record<ReconcilerName, Reconciler>>;
  loops: Partial<Record<LoopName, Loop>>;
}
