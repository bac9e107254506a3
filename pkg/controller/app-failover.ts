// Application failover (Karmada's `failover.application`): a workload whose copy on a cluster stays
// unhealthy for `decisionConditions.tolerationSeconds` (default 300) is evicted from that cluster and
// placed elsewhere; `purgeMode` (Directly, Gracefully — the default —, Never) and `gracePeriodSeconds`
// (default 600) say what happens to the old copy; `statePreservation.rules` copy fields of the old copy's
// status (`jsonPath`, e.g. `{.replicas}`) onto the new copies as labels (`aliasLabelName`). Pure.

import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { PurgeMode } from '../../api/work/v1alpha1/types.js';

export interface AppFailover {
  tolerationMs: number;
  purgeMode: PurgeMode;
  gracePeriodMs: number;
  rules: Array<{ aliasLabelName: string; jsonPath: string }>;
}

/** The policy's failover.application, read; undefined when it has none. */
export function appFailoverOf(spec: JsonObject): AppFailover | undefined {
  const f = isObject(spec.failover) && isObject(spec.failover.application) ? spec.failover.application : undefined;
  if (!f) return undefined;
  const dc = isObject(f.decisionConditions) ? f.decisionConditions : {};
  const toleration = typeof dc.tolerationSeconds === 'number' && dc.tolerationSeconds >= 0 ? dc.tolerationSeconds : 300;
  const mode = ownString(f, 'purgeMode');
  const grace = typeof f.gracePeriodSeconds === 'number' && f.gracePeriodSeconds > 0 ? f.gracePeriodSeconds : 600;
  const sp = isObject(f.statePreservation) && Array.isArray(f.statePreservation.rules) ? f.statePreservation.rules : [];
  return {
    tolerationMs: toleration * 1000,
    purgeMode: mode === 'Directly' || mode === 'Never' ? mode : 'Gracefully',
    gracePeriodMs: grace * 1000,
    rules: sp
      .filter(isObject)
      .map((r) => ({ aliasLabelName: ownString(r, 'aliasLabelName') ?? '', jsonPath: ownString(r, 'jsonPath') ?? '' }))
      .filter((r) => r.aliasLabelName !== '' && r.jsonPath !== ''),
  };
}

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
export function preservedLabels(rules: AppFailover['rules'], status: unknown): Record<string, string> {
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
