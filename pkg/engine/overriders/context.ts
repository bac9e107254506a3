// What every overrider gets: the target cluster (for variables), where its changes come from, and a sink
// for provenance. Overriders lower themselves to patch operations and apply them one by one through
// `write`, so every change is recorded the same way whatever produced it.

import { expandValue } from '../../../api/variables/index.js';
import { applyOperation, type PatchOperation } from '../patch.js';
import type { Change, ChangeSource, ClusterInfo } from '../types.js';
import { errorClass } from '../../../api/internal/errors.js';

export class OverrideError extends errorClass('OverrideError', 'OVERRIDE') {}

export interface OverrideContext {
  cluster: ClusterInfo;
  source: Omit<ChangeSource, 'overrider'>;
  /** Provenance sink; undefined when the caller does not want it (the fast path). */
  changes: Change[] | undefined;
  /** Consulted before every addition to a list (admission only; rendering always adds). */
  additions?: AdditionGuard | undefined;
}

/** Decides whether an overrider that appends adds again (admit's AdditionLedger). */
export interface AdditionGuard {
  /**
   * Called before `overrider` adds `values` (in this order) to the list `list` found at `site` (a path
   * that survives reordering); false when this rule item added them there before and they are still in it.
   */
  shouldAdd(ctx: OverrideContext, overrider: string, site: string, values: readonly unknown[], list: unknown): boolean;
}

/** Applies one operation and records it; returns the new root. */
export function write(doc: unknown, op: PatchOperation, ctx: OverrideContext, overrider: string): unknown {
  const res = applyOperation(doc, op);
  ctx.changes?.push({ path: res.pointer, op: op.op as Change['op'], source: { ...ctx.source, overrider } });
  return res.doc;
}

/**
 * Records a change made directly on the object (the overriders that already hold the container or map
 * they edit skip path parsing on the hot path); `pointer` is only built when provenance is wanted.
 */
export function record(ctx: OverrideContext, op: Change['op'], pointer: () => string, overrider: string): void {
  ctx.changes?.push({ path: pointer(), op, source: { ...ctx.source, overrider } });
}

/** Expands per-cluster variables in a value, turning a failure into an OverrideError naming the overrider. */
export function expand<T>(value: T, ctx: OverrideContext, overrider: string): T {
  try {
    return expandValue(value, ctx.cluster);
  } catch (err: unknown) {
    throw new OverrideError(`${overrider}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** Container list locations by kind, as Karmada's image and command/args overriders know them. */
export function containerListPaths(kind: string, includeInit: boolean): string[] {
  let base: string | undefined;
  if (kind === 'Pod') base = '/spec';
  else if (
    kind === 'ReplicaSet' ||
    kind === 'Deployment' ||
    kind === 'DaemonSet' ||
    kind === 'StatefulSet' ||
    kind === 'Job'
  )
    base = '/spec/template/spec';
  if (base === undefined) return [];
  return includeInit ? [`${base}/containers`, `${base}/initContainers`] : [`${base}/containers`];
}
