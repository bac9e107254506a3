// One template in detail: the policy that claims it, why each cluster was chosen or not, and per chosen
// cluster the copy the engine renders from what the hub holds (the template, both groups' policies and
// Clusters), as a field diff against the template with the override policy and rule behind each change.
// Pure: the caller reads the template (and the workloads that require it) from the hub.
//
// The delivered copy is rendered, not read from the member: the read model reads the hub only, with the
// user's own credentials. It is what the controller applies, placed as the binding placed it (its
// clusters stay placed under a NoSchedule taint, as in the controller).

import { describePolicy, describeSource, explainPlacement, formatExplanation } from '../engine/explain.js';
import { pruneServerFields } from '../engine/copy.js';
import { renderDetailed, type DetailedPlacement } from '../engine/render.js';
import type { ObjectRef as EngineRef } from '../engine/types.js';
import { isObject, type JsonObject } from '../kube/objects.js';
import { annotate, fieldChanges } from './field-diff.js';
import type { HubSnapshot } from './hub.js';
import { templateRows } from './matrix.js';
import { describeRef } from './rows.js';
import type { ClusterDecision, ObjectRef, PolicyRef, TemplateDetail, TemplateRow } from './types.js';

const sameRef = (a: EngineRef, b: ObjectRef) =>
  a.apiVersion === b.apiVersion &&
  a.kind === b.kind &&
  (a.namespace ?? '') === (b.namespace ?? '') &&
  a.name === b.name;

export interface DetailInput {
  ref: ObjectRef;
  /** The template as the hub has it; undefined when it is gone or could not be read. */
  template: JsonObject | undefined;
  /** The workloads the binding says require it (propagateDeps), as the hub has them. */
  workloads?: readonly JsonObject[];
  /** templateRows(snapshot), when the caller has them. */
  rows?: readonly TemplateRow[];
  snapshot: HubSnapshot;
  /** ms since the epoch, for NoExecute tolerationSeconds. */
  now: number;
  /** Why the template could not be read, when it could not. */
  readError?: string;
}

function decisionOf(p: DetailedPlacement, template: JsonObject, row: TemplateRow | undefined): ClusterDecision {
  const policies = new Map<string, PolicyRef>();
  for (const c of p.changes) policies.set(describeSource(c), c.source.policy);
  const base = pruneServerFields(structuredClone(template));
  const changes = annotate(fieldChanges(base, p.object), explainPlacement(p), (s) => policies.get(s));
  const cell = row?.cells.find((c) => c.cluster === p.cluster);
  return {
    cluster: p.cluster,
    chosen: true,
    ...(cell ? { cell } : {}),
    delivered: p.object,
    changes,
    explanation: explanationOf(p),
  };
}

/**
 * The placement explanation as `flotilla render --explain` prints it: the engine's text, whose second line
 * names the workloads instead of a claiming policy when the template is there because they require it.
 */
function explanationOf(p: DetailedPlacement): string {
  const text = formatExplanation(p);
  if (!p.requiredBy) return text;
  const lines = text.split('\n');
  lines[1] = `#   required by ${p.requiredBy.map(describePolicy).join(', ')} (propagateDeps)`;
  return lines.join('\n');
}

export function templateDetail(input: DetailInput): TemplateDetail {
  const { ref, snapshot } = input;
  const rows = input.rows ?? templateRows(snapshot);
  const row = rows.find((r) => sameRef(r.template, ref));
  const detail: TemplateDetail = {
    template: ref,
    ...(row?.uid ? { uid: row.uid } : {}),
    ...(input.template ? { object: input.template } : {}),
    ...(row ? { row } : {}),
    ...(row?.policy ? { policy: row.policy } : {}),
    ...(row?.requiredBy ? { requiredBy: row.requiredBy } : {}),
    overrides: [],
    clusters: [],
    errors: [...(input.readError ? [input.readError] : [])],
  };
  const decisions = new Map<string, ClusterDecision>();
  if (input.template) {
    // Placed as the bindings placed it and the workloads that require it: a NoSchedule taint added since
    // keeps nothing off a cluster it is on, an eviction keeps it off one (the controller's rules).
    const rowOf = (t: EngineRef) => (sameRef(t, ref) ? row : rows.find((r) => sameRef(r.template, t)));
    const cellsOf = (t: EngineRef, keep: (state: string) => boolean) => {
      const r = rowOf(t);
      return r ? new Set(r.cells.filter((c) => keep(c.state)).map((c) => c.cluster)) : undefined;
    };
    const result = renderDetailed(
      { objects: [input.template, ...(input.workloads ?? []), ...snapshot.policies, ...snapshot.clusters] },
      {
        explain: true,
        now: input.now,
        scheduled: (t) => cellsOf(t, (s) => s !== 'Evicting' && s !== 'Removing'),
        excluded: (t) => cellsOf(t, (s) => s === 'Evicting'),
      },
    );
    const overrides = new Map<string, PolicyRef>();
    for (const p of result.placements) {
      if (!sameRef(p.template, ref)) continue;
      if (!p.requiredBy) detail.policy ??= p.policy;
      if (p.requiredBy && !detail.requiredBy) detail.requiredBy = p.requiredBy;
      for (const o of p.overrides) overrides.set(describeRef(o), o);
      decisions.set(p.cluster, decisionOf(p, input.template, row));
    }
    detail.overrides = [...overrides.values()];
    for (const s of result.skipped ?? []) {
      if (!sameRef(s.template, ref) || decisions.has(s.cluster)) continue;
      decisions.set(s.cluster, { cluster: s.cluster, chosen: false, reason: s.reason, changes: [] });
    }
    for (const e of result.errors)
      if (sameRef(e.object, ref)) detail.errors.push(`${e.cluster ? `on ${e.cluster}: ` : ''}${e.message}`);
    if (result.unmatched.some((u) => sameRef(u, ref)))
      detail.errors.push('no PropagationPolicy or ClusterPropagationPolicy on the hub claims it');
  }
  // Cells the render does not explain (an evicted copy kept, a copy being removed): what the binding says.
  for (const cell of row?.cells ?? []) {
    const d = decisions.get(cell.cluster);
    if (d) {
      d.cell ??= cell;
      continue;
    }
    decisions.set(cell.cluster, {
      cluster: cell.cluster,
      chosen: false,
      reason:
        cell.state === 'Evicting'
          ? 'evicted; its copy is kept until the eviction ends'
          : `the binding says ${cell.state}`,
      cell,
      changes: [],
    });
  }
  detail.clusters = [...decisions.values()].sort((a, b) =>
    a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0,
  );
  return detail;
}

/** The workloads a binding names in spec.requiredBy (to read with the template). */
export function requiredWorkloads(row: TemplateRow | undefined): ObjectRef[] {
  return row?.requiredBy ?? [];
}

/** Whether `v` reads as a Kubernetes object (for what a GET returned). */
export function isKubeObject(v: unknown): v is JsonObject {
  return isObject(v) && typeof v.kind === 'string' && isObject(v.metadata);
}
