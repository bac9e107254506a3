// The read model's shapes: what `flotilla status` prints and `flotilla ui` shows. Plain JSON values only
// (no Map, no Date), so `-o json`, `-o yaml` and a server-sent event carry them as they are. Times are
// RFC 3339 strings as the hub wrote them; ages are computed against the `now` the caller passes.

import type { ClusterState } from '../../api/work/v1alpha1/types.js';
import type { JsonObject } from '../kube/objects.js';

import type { ObjectRef, PolicyRef } from '../engine/types.js';

export type { ObjectRef, PolicyRef };

export interface TaintFact {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

/** One resource of a Cluster's `status.resourceSummary`, in milli-units (1 CPU = 1000, 1 byte = 1000). */
export interface CapacityFact {
  resource: string;
  allocatable: number;
  allocated: number;
  allocating: number;
  /** The quantities as the Cluster's status writes them (for display). */
  text: { allocatable?: string; allocated?: string; allocating?: string };
}

/** A pull cluster's agent Lease on the hub. */
export interface LeaseFact {
  /** `namespace/name` of the Lease. */
  lease: string;
  /** Absent: there is no Lease (no agent has joined), or no holder. */
  holder?: string;
  renewTime?: string;
  /** Seconds since renewTime, at `now`. */
  ageSeconds?: number;
  durationSeconds?: number;
  /** renewTime + leaseDurationSeconds is past (or there is no Lease). */
  expired: boolean;
}

export interface ClusterFact {
  name: string;
  /** `cluster.flotilla.io/v1alpha1` or `cluster.karmada.io/v1alpha1`. */
  apiVersion: string;
  syncMode: 'Push' | 'Pull';
  /** The Ready condition's status; `Unknown` when there is none. */
  ready: 'True' | 'False' | 'Unknown';
  readyReason?: string;
  readyMessage?: string;
  readySince?: string;
  /** Pull clusters only. */
  lease?: LeaseFact;
  taints: TaintFact[];
  capacity: CapacityFact[];
  kubernetesVersion?: string;
  /** Distinct API groups in `status.apiEnablements` (the core group counts as one); 0 when not reported. */
  apiGroups: number;
  provider?: string;
  region?: string;
  zones: string[];
  labels: Record<string, string>;
  /** Karmada Cluster fields accepted but not acted upon (api/validation's warnings). */
  notActedUpon: string[];
  createdAt?: string;
}

/**
 * Where a template stands on one cluster. The delivery states are the binding's (api/work/v1alpha1
 * ClusterState); `RequiredBy` is never a cell's `state` — a cell holding a dependency carries `requiredBy`,
 * and the state filter `RequiredBy` selects those cells.
 */
export type CellState = ClusterState;

export const CELL_STATES: readonly CellState[] = [
  'Applied',
  'Pending',
  'Failed',
  'Conflict',
  'Unreachable',
  'Removing',
  'Suspended',
  'Evicting',
];

/** What the state filter takes: a cell state, or RequiredBy. */
export type StateFilter = CellState | 'RequiredBy';
export const STATE_FILTERS: readonly StateFilter[] = [...CELL_STATES, 'RequiredBy'];

export interface EvictionFact {
  purgeMode: string;
  reason?: string;
  producer?: string;
  /** When the eviction task was made. */
  since?: string;
  /** When the kept copy goes at the latest (absent: purgeMode Never, or not known yet). */
  deadline?: string;
}

export interface PlacementCell {
  cluster: string;
  state: CellState;
  message?: string;
  /** Replicas the placement gave this cluster (divided workloads). */
  replicas?: number;
  health?: 'Healthy' | 'Progressing' | 'Unknown';
  healthMessage?: string;
  /** Conflict: who else wrote the object on the member (field managers, an apply set, another template). */
  conflictWith?: string;
  evicting?: EvictionFact;
  /** The workloads that take this template to this cluster (propagateDeps). */
  requiredBy?: ObjectRef[];
  /** Override policies applied to this cluster's copy, in order. */
  overrides?: PolicyRef[];
  /** `binding` (the controller's entry) or `work` (a pull cluster's agent, from its Work). */
  reportedBy: 'binding' | 'work';
}

export interface TemplateRow {
  template: ObjectRef;
  uid?: string;
  /** The ResourceBinding, `namespace/name`. */
  binding: string;
  policy?: PolicyRef;
  requiredBy?: ObjectRef[];
  conflictResolution?: string;
  /** The binding's APPLIED and READY columns (`2/3`). */
  applied: string;
  ready: string;
  /** The binding's Applied condition message when it is not True. */
  problem?: string;
  /** One cell per cluster the binding names, sorted by cluster name. */
  cells: PlacementCell[];
}

export interface MatrixFilter {
  namespace?: string;
  kind?: string;
  /** Policy name, or `namespace/name`, or `Kind/name`. */
  policy?: string;
  cluster?: string;
  state?: StateFilter;
}

export interface PlacementMatrix {
  /** Every cluster known to the hub, and any a binding names that the hub does not (sorted). */
  clusters: string[];
  rows: TemplateRow[];
  /** Rows before filtering. */
  total: number;
}

export interface PolicyFact {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  /** Propagation policies claim templates; override policies override them. */
  role: 'propagation' | 'override';
  /** What the policy selects: `apiVersion Kind namespace/name` or with a label selector, one per selector. */
  selects: string[];
  /** The controller's count (status.templates); absent until it wrote one. */
  templates?: number;
  /** Bindings on the hub naming this policy (propagation policies). */
  bindings: number;
  ready: 'True' | 'False' | 'Unknown';
  readyReason?: string;
  readyMessage?: string;
  /** Karmada fields accepted but not acted upon (admission's warnings, api/validation). */
  notActedUpon: string[];
  /** Admission's other warnings, against the hub's Clusters (e.g. a cluster name no Cluster has). */
  warnings: string[];
  /** What admission would deny now (`field.path: message`); the controller does not use such a policy. */
  errors: string[];
  priority?: number;
  conflictResolution?: string;
}

/** One changed field of a delivered copy, against the template. */
export interface FieldChange {
  /** JSON pointer. */
  path: string;
  op: 'add' | 'replace' | 'remove';
  /** The template's value (absent for add). */
  before?: unknown;
  /** The delivered value (absent for remove). */
  after?: unknown;
  /** The writer, as `flotilla render --explain` says it: `OverridePolicy ns/name spec.overrideRules[0].overriders.imageOverrider[0]`. */
  setBy?: string;
  policy?: PolicyRef;
  /** Earlier writers of the same path, overwritten. */
  overwritten?: string[];
}

export interface ClusterDecision {
  cluster: string;
  chosen: boolean;
  /** Not chosen: the engine's reason. */
  reason?: string;
  cell?: PlacementCell;
  /** The object the engine renders for this cluster from the hub's template, policies and Clusters. */
  delivered?: JsonObject;
  changes: FieldChange[];
  /** The placement explanation as `flotilla render --explain` prints it. */
  explanation?: string;
}

export interface TemplateDetail {
  template: ObjectRef;
  uid?: string;
  /** The template as the hub has it; absent when it could not be read. */
  object?: JsonObject;
  row?: TemplateRow;
  policy?: PolicyRef;
  requiredBy?: ObjectRef[];
  overrides: PolicyRef[];
  clusters: ClusterDecision[];
  /** Render errors and what could not be read. */
  errors: string[];
}

export interface EventFact {
  type: string;
  reason: string;
  message: string;
  count: number;
  firstTime?: string;
  lastTime?: string;
  source?: string;
  involved: ObjectRef;
}
