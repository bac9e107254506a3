// What the ui server sends to the page: plain JSON, the same shape in Node and in the browser. Pure types
// and constants; no imports, so the page can load the compiled module as is.

/** A template's state on one cluster, as its ResourceBinding (or the cluster's Work) says. */
export const CELL_STATES = [
  'Applied',
  'Pending',
  'Failed',
  'Conflict',
  'Unreachable',
  'Removing',
  'Suspended',
  'Evicting',
] as const;
export type CellState = (typeof CELL_STATES)[number];

/** What the state filter takes: a cell state, or RequiredBy (cells a dependency brought there). */
export const STATE_FILTERS = [...CELL_STATES, 'RequiredBy'] as const;
export type StateFilter = (typeof STATE_FILTERS)[number];

export interface ObjectRef {
  kind: string;
  namespace?: string;
  name: string;
}

/** One cell of the placement matrix. */
export interface UiCell {
  state: CellState;
  message?: string;
  /** Replicas the placement gave this cluster (divided workloads). */
  replicas?: number;
  /** Conflict: the field manager (or other owner) that holds the object on the member. */
  writer?: string;
  /** Evicting: the purge mode and when the kept copy goes at the latest (RFC 3339). */
  purgeMode?: string;
  deadline?: string;
  /** The workloads whose propagateDeps bring this template to this cluster. */
  requiredBy?: string[];
}

/** One row of the matrix: a template and its cells keyed by cluster name. */
export interface UiTemplateRow {
  /** templateId(): the row's key in changes and URLs. */
  id: string;
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  policy?: ObjectRef;
  cells: Record<string, UiCell>;
}

export interface UiTaint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export interface UiCapacity {
  resource: string;
  allocatable: number;
  allocated: number;
}

export interface UiCluster {
  name: string;
  ready: 'True' | 'False' | 'Unknown';
  readyMessage?: string;
  syncMode: string;
  /** When the agent (Pull) or the controller's probe last renewed this cluster's Lease (RFC 3339). */
  leaseRenewed?: string;
  taints: UiTaint[];
  capacity: UiCapacity[];
  kubernetesVersion?: string;
  apiGroups?: number;
  labels: Record<string, string>;
  region?: string;
  provider?: string;
}

export interface UiPolicy {
  kind: string;
  role: 'propagation' | 'override';
  /** What it selects, one line per resource selector. */
  selects: string[];
  namespace?: string;
  name: string;
  /** Templates the policy claims. */
  claimed: number;
  ready: 'True' | 'False' | 'Unknown';
  readyMessage?: string;
  /** Karmada fields the policy sets that Flotilla accepts and does not act upon. */
  ignoredFields: string[];
}

/** Everything the matrix, clusters and policies views show. `seq` orders it against later changes. */
export interface UiSnapshot {
  seq: number;
  clusters: UiCluster[];
  templates: UiTemplateRow[];
  policies: UiPolicy[];
}

/** One change after a snapshot: an object put (added or changed) or deleted, by id (policies: kind/ns/name). */
export type UiChange =
  | { seq: number; type: 'template'; id: string; row?: UiTemplateRow }
  | { seq: number; type: 'cluster'; id: string; cluster?: UiCluster }
  | { seq: number; type: 'policy'; id: string; policy?: UiPolicy };

/** Why a cluster was chosen or not for a template (the engine's placement explanation). */
export interface UiPlacementReason {
  cluster: string;
  selected: boolean;
  reason: string;
}

/** One changed field of a cluster's copy against the template, with the override rule that set it. */
export interface UiDiffLine {
  path: string;
  op: 'add' | 'remove' | 'replace';
  template?: string;
  delivered?: string;
  /** The override rule that set this field, as `render --explain` names it; absent: not an override. */
  setBy?: string;
}

export interface UiClusterCopy {
  cluster: string;
  cell?: UiCell;
  diff: UiDiffLine[];
  /** The object as delivered (rendered for this cluster), as YAML. */
  delivered?: string;
}

export interface UiEvent {
  type: string;
  reason: string;
  message: string;
  count: number;
  lastSeen?: string;
  source?: string;
}

/** The template view: its policy, the placement explanation, each cluster's copy and recent Events. */
export interface UiTemplateDetail {
  row: UiTemplateRow;
  template: string;
  placement: UiPlacementReason[];
  copies: UiClusterCopy[];
  events: UiEvent[];
  errors: string[];
}

/** The row id of a template: apiVersion, kind, namespace ('' when cluster-scoped) and name. */
export function templateId(t: { apiVersion: string; kind: string; namespace?: string; name: string }): string {
  return [t.apiVersion, t.kind, t.namespace ?? '', t.name].join('|');
}

/** The key of a policy (see UiChange). */
export function policyId(p: ObjectRef): string {
  return `${p.kind}/${p.namespace ?? ''}/${p.name}`;
}
