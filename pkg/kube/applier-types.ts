// What the command line's applier (applier.ts) takes and reports, per member.

import type { ParentRef } from './applyset.js';
import type { ConflictResolution } from './delivery.js';
import type { ResourceInfo } from './discovery.js';
import type { JsonObject, ObjectId } from './objects.js';

export type Action = 'created' | 'configured' | 'unchanged' | 'pruned' | 'conflict' | 'failed';
export type ApplyMode = 'apply' | 'dry-run' | 'diff';

export interface DesiredObject {
  object: JsonObject;
  conflictResolution: ConflictResolution;
}

export interface ObjectResult extends ObjectId {
  action: Action;
  /** Why it is a conflict or failed (the apiserver's message when it gave one), or a note. */
  message?: string;
  /** Warnings the apiserver sent with its answer. */
  warnings?: string[];
  /** Failed because the member stopped answering; the member's report says so once. */
  unreachable?: boolean;
  /** diff mode: the live object and the object after apply, without server fields; null when absent. */
  live?: JsonObject | null;
  after?: JsonObject | null;
}

export interface MemberReport {
  member: string;
  /** scheme://host:port */
  server: string;
  results: ObjectResult[];
  /** Problems that are about the member rather than one object (unreachable, ApplySet parent, listing). */
  errors: string[];
  unreachable: boolean;
}

export interface ApplierOptions {
  fieldManager: string;
  parent: ParentRef;
  /** `flotilla/<version>`, written to the parent's tooling annotation. */
  tooling: string;
  mode: ApplyMode;
  prune: boolean;
  /** How long to wait for a CRD to become Established and served. Default 60 s. */
  establishTimeoutMs?: number;
  /** Called once per object as soon as its outcome is known. */
  onResult?: (member: string, result: ObjectResult) => void;
  /** Called once the number of objects to apply is known. */
  onPlan?: (member: string, objects: number) => void;
  signal?: AbortSignal;
}

/** One desired object on its way through the applier (internal to the applier's files). */
export interface Item {
  id: ObjectId;
  group: string;
  body: JsonObject;
  conflictResolution: ConflictResolution;
  info?: ResourceInfo;
  /** The kind is defined by a CRD in this set that the member does not serve yet. */
  deferred?: { crd: string; namespaced: boolean };
  result?: ObjectResult;
}
