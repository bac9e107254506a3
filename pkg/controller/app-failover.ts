// Application failover (Karmada's `failover.application`): a workload whose copy on a cluster stays
// unhealthy for `decisionConditions.tolerationSeconds` (default 300) is evicted from that cluster and
// placed elsewhere; `purgeMode` (Directly, Gracefully — the default —, Never) and `gracePeriodSeconds`
// (default 600) say what happens to the old copy; `statePreservation.rules` copy fields of the old copy's
// status (`jsonPath`, e.g. `{.replicas}`) onto the new copies as labels (`aliasLabelName`). The engine reads
// those settings from the claiming policy (pkg/engine/dispatch.ts); this file reads the old copy's status
// and puts the labels on the new copies, for application failover and for cluster failover's
// statePreservation (eviction.ts) alike. Pure.

import type { ApplicationFailover, StatePreservationRule } from '../engine/dispatch.js';
import { isObject } from '../kube/objects.js';
import type { TemplatePlan } from './plan.js';

/** The policy's failover.application, as the engine read it (pkg/engine/dispatch.ts). */
export type AppFailover = ApplicationFailover;

const SEGMENT = /^([^.[\]]+)((?:\[\d+\])*)$/;

/**
 * A Kubernetes JSONPath of the simple form Karmada's examples use (`{.a.b}`, `{.list[0].c}`, braces
 * optional) on `status`; undefined when the path is not of that form or leads nowhere. Scalars only.
 */
export function readStatusPath(status: unknown, jsonPath: string): string | undefined {
  let path = jsonPath.trim();
  if (path.startsWith('{') && path.endsWith('}')) path = path.slice(1, -1).trim();
  if (!path.startsWith('.') || path.length > 256) return undefined;
  let v: unknown = status;
  for (const part of path.slice(1).split('.')) {
    const m = SEGMENT.exec(part);
    if (!m) return undefined;
    v = isObject(v) && Object.hasOwn(v, m[1] as string) ? v[m[1] as string] : undefined;
    for (const idx of (m[2] ?? '').match(/\d+/g) ?? []) v = Array.isArray(v) ? v[Number(idx)] : undefined;
  }
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** The labels statePreservation keeps from the evicted copy's status (a label value is at most 63 characters). */
export function preservedLabels(rules: readonly StatePreservationRule[], status: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of rules) {
    const v = readStatusPath(status, r.jsonPath);
    if (v !== undefined)
      Object.defineProperty(out, r.aliasLabelName, {
        value: v.slice(0, 63),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return out;
}

/** The preserved labels go onto plan `p`'s copies on the clusters not in `before` (the clusters the template was on before failover). */
export function labelNewCopies(
  p: TemplatePlan,
  labels: Readonly<Record<string, string>>,
  before: ReadonlySet<string>,
): void {
  if (Object.keys(labels).length === 0) return;
  for (const [c, step] of p.steps) {
    if (step.action !== 'apply' || before.has(c)) continue;
    // The object may be shared with other members' steps (plan.ts): a copy of it gets the labels, and
    // no applied hash (the shared one is the unlabelled object's; the member computes the copy's).
    const meta = isObject(step.object.metadata) ? step.object.metadata : {};
    const merged = { ...(isObject(meta.labels) ? meta.labels : {}), ...labels };
    p.steps.set(c, { action: 'apply', object: { ...step.object, metadata: { ...meta, labels: merged } } });
  }
}
