// One template's row of the placement matrix, from its ResourceBinding (the controller's record) and the
// Works of its pull clusters (each agent's report). Pure.
//
// Per cluster, the cell comes from the binding's status entry (written by the controller for push
// clusters), else from the cluster's Work status (written by its agent), else — the binding targets the
// cluster and nobody reported yet — Pending. The binding's spec adds what the entries leave out: the
// replicas each cluster got, the eviction tasks (purge mode, reason) and the workloads that require the
// template (propagateDeps).

import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import {
  CELL_STATES,
  type CellState,
  type ObjectRef,
  type PlacementCell,
  type PolicyRef,
  type TemplateRow,
} from './types.js';

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const list = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isObject) : []);

export function refOf(v: unknown): ObjectRef | undefined {
  const apiVersion = ownString(v, 'apiVersion');
  const kind = ownString(v, 'kind');
  const name = ownString(v, 'name');
  if (!apiVersion || !kind || !name) return undefined;
  const namespace = ownString(v, 'namespace');
  return { apiVersion, kind, ...(namespace ? { namespace } : {}), name };
}

export function policyRefOf(v: unknown): PolicyRef | undefined {
  const kind = ownString(v, 'kind');
  const name = ownString(v, 'name');
  if (!kind || !name) return undefined;
  const namespace = ownString(v, 'namespace');
  return { kind, ...(namespace ? { namespace } : {}), name };
}

/**
 * Who else wrote an object a Conflict is about, from the delivery core's message (pkg/kube delivery.ts
 * describeOwner, or the apiserver's 409 `conflict with "manager"`). Undefined when the message does not say.
 */
export function conflictWriter(message: string | undefined): string | undefined {
  if (!message) return undefined;
  const written = /it was written by ([^;)]+)/.exec(message)?.[1];
  if (written) return written.trim();
  const set = /it belongs to apply set ([^\s;)]+)/.exec(message)?.[1];
  if (set) return `apply set ${set}`;
  const copy = /it is the flotilla controller's copy of ([^;)]+)/.exec(message)?.[1];
  if (copy) return `flotilla-controller (${copy.trim()})`;
  const managers = [...message.matchAll(/conflict(?:s)? with "([^"]+)"/g)].map((m) => m[1]);
  if (managers.length > 0) return [...new Set(managers)].join(', ');
  return undefined;
}

const isState = (s: unknown): s is CellState => typeof s === 'string' && (CELL_STATES as readonly string[]).includes(s);

/** A cell from a status entry (binding status.clusters[i], or a Work's status with the cluster's name). */
function cellOf(cluster: string, entry: JsonObject, reportedBy: PlacementCell['reportedBy']): PlacementCell {
  const state: CellState = isState(entry.state) ? entry.state : 'Pending';
  const cell: PlacementCell = { cluster, state, reportedBy };
  const message = ownString(entry, 'message');
  if (message) cell.message = message;
  const h = isObject(entry.health) ? entry.health : undefined;
  const hs = ownString(h, 'state');
  if (hs === 'Healthy' || hs === 'Progressing' || hs === 'Unknown') cell.health = hs;
  const hm = ownString(h, 'message');
  if (hm) cell.healthMessage = hm;
  const overrides = list(entry.overrides)
    .map(policyRefOf)
    .filter((p): p is PolicyRef => p !== undefined);
  if (overrides.length > 0) cell.overrides = overrides;
  if (state === 'Conflict') {
    const writer = conflictWriter(message);
    if (writer) cell.conflictWith = writer;
  }
  const keptUntil = ownString(entry, 'keptUntil');
  if (state === 'Evicting') cell.evicting = { purgeMode: 'Gracefully', ...(keptUntil ? { deadline: keptUntil } : {}) };
  return cell;
}

/** The cluster a Work's namespace belongs to, given a function from cluster names to execution spaces. */
export interface WorkIndex {
  /** The Works of one template (by the template's uid), with their cluster. */
  worksOf(uid: string): ReadonlyArray<{ cluster: string; work: JsonObject }>;
}

/** The matrix row of one binding; undefined when the object is not a readable binding. */
export function templateRow(binding: JsonObject, works: WorkIndex): TemplateRow | undefined {
  const spec = isObject(binding.spec) ? binding.spec : {};
  const status = isObject(binding.status) ? binding.status : {};
  const template = refOf(spec.resource);
  if (!template) return undefined;
  const meta = isObject(binding.metadata) ? binding.metadata : {};
  const uid = ownString(spec.resource, 'uid');
  const row: TemplateRow = {
    template,
    ...(uid ? { uid } : {}),
    binding: `${ownString(meta, 'namespace') ?? ''}/${ownString(meta, 'name') ?? ''}`,
    applied: ownString(status, 'applied') ?? '0/0',
    ready: ownString(status, 'ready') ?? '0/0',
    cells: [],
  };
  const policy = policyRefOf(spec.policy);
  if (policy) row.policy = policy;
  const conflictResolution = ownString(spec, 'conflictResolution');
  if (conflictResolution) row.conflictResolution = conflictResolution;
  const applied = list(status.conditions).find((c) => c.type === 'Applied');
  if (applied && applied.status !== 'True') {
    const m = ownString(applied, 'message');
    if (m) row.problem = m;
  }

  const cells = new Map<string, PlacementCell>();
  for (const e of list(status.clusters)) {
    const name = ownString(e, 'name');
    if (name && !cells.has(name)) cells.set(name, cellOf(name, e, 'binding'));
  }
  for (const { cluster, work } of uid ? works.worksOf(uid) : []) {
    if (cells.has(cluster)) continue;
    const ws = isObject(work.status) ? work.status : undefined;
    if (ws && typeof ws.state === 'string') cells.set(cluster, cellOf(cluster, ws, 'work'));
  }
  for (const c of list(spec.clusters)) {
    const name = ownString(c, 'name');
    if (!name) continue;
    let cell = cells.get(name);
    if (!cell) cells.set(name, (cell = { cluster: name, state: 'Pending', reportedBy: 'binding' }));
    const replicas = num(c.replicas);
    if (replicas !== undefined) cell.replicas = replicas;
  }
  for (const t of list(spec.gracefulEvictionTasks)) {
    const from = ownString(t, 'fromCluster');
    if (!from) continue;
    let cell = cells.get(from);
    if (!cell) cells.set(from, (cell = { cluster: from, state: 'Evicting', reportedBy: 'binding' }));
    if (cell.state !== 'Evicting') continue;
    const purgeMode = ownString(t, 'purgeMode') ?? 'Gracefully';
    const reason = ownString(t, 'reason');
    const producer = ownString(t, 'producer');
    const since = ownString(t, 'creationTimestamp');
    cell.evicting = {
      purgeMode,
      ...(reason ? { reason } : {}),
      ...(producer ? { producer } : {}),
      ...(since ? { since } : {}),
      ...(cell.evicting?.deadline ? { deadline: cell.evicting.deadline } : {}),
    };
  }
  const required: ObjectRef[] = [];
  for (const r of list(spec.requiredBy)) {
    const ref = refOf(r);
    if (!ref) continue;
    required.push(ref);
    for (const c of list(r.clusters)) {
      const cell = cells.get(ownString(c, 'name') ?? '');
      if (cell) (cell.requiredBy ??= []).push(ref);
    }
  }
  if (required.length > 0) row.requiredBy = required;
  row.cells = [...cells.values()].sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
  return row;
}

export function describeRef(r: { kind: string; namespace?: string; name: string }): string {
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
}
