// The read model's facts (pkg/fleet) as the page's JSON (shared/model.ts): only what the page draws,
// cells keyed by cluster, values the page prints as text. Pure.

import type {
  ClusterDecision,
  ClusterFact,
  EventFact,
  FieldChange,
  PlacementCell,
  PolicyFact,
  TemplateDetail,
  TemplateRow,
} from '../fleet/index.js';
import { describeRef } from '../fleet/index.js';
import { writeYaml } from '../yaml/index.js';
import {
  templateId,
  type UiCell,
  type UiCluster,
  type UiClusterCopy,
  type UiDiffLine,
  type UiEvent,
  type UiPolicy,
  type UiTemplateDetail,
  type UiTemplateRow,
} from './shared/model.js';

/** How much of one value a diff line shows (a whole ConfigMap's data can be large). */
const MAX_VALUE_CHARS = 2000;

function text(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}… (${s.length} characters)` : s;
}

export function uiCluster(c: ClusterFact): UiCluster {
  return {
    name: c.name,
    ready: c.ready,
    ...(c.readyMessage ? { readyMessage: c.readyMessage } : {}),
    syncMode: c.syncMode,
    ...(c.lease?.renewTime ? { leaseRenewed: c.lease.renewTime } : {}),
    taints: c.taints.map((t) => ({ ...t })),
    capacity: c.capacity.map((x) => ({ resource: x.resource, allocatable: x.allocatable, allocated: x.allocated })),
    ...(c.kubernetesVersion ? { kubernetesVersion: c.kubernetesVersion } : {}),
    apiGroups: c.apiGroups,
    labels: { ...c.labels },
    ...(c.region ? { region: c.region } : {}),
    ...(c.provider ? { provider: c.provider } : {}),
  };
}

export function uiCell(c: PlacementCell): UiCell {
  return {
    state: c.state,
    ...(c.message ? { message: c.message } : {}),
    ...(c.replicas !== undefined ? { replicas: c.replicas } : {}),
    ...(c.conflictWith ? { writer: c.conflictWith } : {}),
    ...(c.evicting ? { purgeMode: c.evicting.purgeMode } : {}),
    ...(c.evicting?.deadline ? { deadline: c.evicting.deadline } : {}),
    ...(c.requiredBy?.length ? { requiredBy: c.requiredBy.map(describeRef) } : {}),
  };
}

export function uiRow(r: TemplateRow): UiTemplateRow {
  const cells: Record<string, UiCell> = {};
  for (const c of r.cells) cells[c.cluster] = uiCell(c);
  return {
    id: templateId(r.template),
    apiVersion: r.template.apiVersion,
    kind: r.template.kind,
    ...(r.template.namespace ? { namespace: r.template.namespace } : {}),
    name: r.template.name,
    ...(r.policy ? { policy: { ...r.policy } } : {}),
    cells,
  };
}

export function uiPolicy(p: PolicyFact): UiPolicy {
  return {
    kind: p.kind,
    role: p.role,
    selects: p.selects,
    ...(p.namespace ? { namespace: p.namespace } : {}),
    name: p.name,
    claimed: p.templates ?? p.bindings,
    ready: p.ready,
    ...(p.readyMessage ? { readyMessage: p.readyMessage } : {}),
    ignoredFields: p.notActedUpon,
  };
}

function diffLine(f: FieldChange): UiDiffLine {
  const template = text(f.before);
  const delivered = text(f.after);
  return {
    path: f.path,
    op: f.op,
    ...(template !== undefined ? { template } : {}),
    ...(delivered !== undefined ? { delivered } : {}),
    ...(f.setBy ? { setBy: f.setBy } : {}),
  };
}

function copy(d: ClusterDecision): UiClusterCopy {
  return {
    cluster: d.cluster,
    ...(d.cell ? { cell: uiCell(d.cell) } : {}),
    diff: d.changes.map(diffLine),
    ...(d.delivered ? { delivered: writeYaml(d.delivered) } : {}),
  };
}

export function uiEvent(e: EventFact): UiEvent {
  return {
    type: e.type,
    reason: e.reason,
    message: e.message,
    count: e.count,
    ...(e.lastTime ? { lastSeen: e.lastTime } : {}),
    ...(e.source ? { source: e.source } : {}),
  };
}

/** The template view; `row` is the matrix's row for it (the detail's own when it has none). */
export function uiDetail(d: TemplateDetail, events: readonly EventFact[]): UiTemplateDetail {
  const row: UiTemplateRow = d.row
    ? uiRow(d.row)
    : {
        id: templateId(d.template),
        apiVersion: d.template.apiVersion,
        kind: d.template.kind,
        ...(d.template.namespace ? { namespace: d.template.namespace } : {}),
        name: d.template.name,
        cells: {},
      };
  if (d.policy && !row.policy) row.policy = { ...d.policy };
  return {
    row,
    template: d.object ? writeYaml(d.object) : '',
    placement: d.clusters.map((c) => ({
      cluster: c.cluster,
      selected: c.chosen,
      reason: c.chosen ? 'chosen by the placement' : (c.reason ?? ''),
    })),
    copies: d.clusters.filter((c) => c.chosen || c.cell).map(copy),
    events: events.map(uiEvent),
    errors: d.errors,
  };
}
