// work.flotilla.io/v1alpha1: what the controller decided and what happened, as the hub stores it.
//
//   ResourceBinding  one per template, in its namespace (cluster-scoped templates: the controller's),
//                    written by the controller: the claim, the target clusters, the eviction tasks, and
//                    per cluster the delivery state read back from the members.
//   Work             a pull cluster's share of one binding, in the cluster's execution space on the hub:
//                    the controller writes the spec, the cluster's agent the status (one entry).
//
// The labels below mark what belongs to a template: its binding and Works on the hub, its copies on the
// members. The CRDs are in api/crds (work.ts).

import type { ObjectMeta, Suspension } from '../../policy/v1alpha1/types.js';

export const GROUP = 'work.flotilla.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** The ResourceBinding kind the controller writes: one per template. */
export const BINDING = {
  group: GROUP,
  version: VERSION,
  apiVersion: API_VERSION,
  kind: 'ResourceBinding',
  plural: 'resourcebindings',
} as const;

/** The Work kind: a pull cluster's share of a binding, in the cluster's namespace on the hub. */
export const WORK = {
  group: GROUP,
  version: VERSION,
  apiVersion: API_VERSION,
  kind: 'Work',
  plural: 'works',
} as const;

/** The template's uid on the hub: on its binding, its Works and its copies on the members. */
export const TEMPLATE_UID_LABEL = 'flotilla.io/template-uid';
/** On member copies: Kind.group of the template (`Deployment.apps`, `ConfigMap`). */
export const TEMPLATE_KIND_LABEL = 'flotilla.io/template-kind';
/** On member copies: the template's namespace (absent for cluster-scoped templates). */
export const TEMPLATE_NAMESPACE_LABEL = 'flotilla.io/template-namespace';
/** On member copies: the template's name, when it fits a label value (<= 63 characters). */
export const TEMPLATE_NAME_LABEL = 'flotilla.io/template-name';
/** On member copies: `apiVersion/Kind namespace/name`, always, whatever the name's length. */
export const TEMPLATE_ANNOTATION = 'flotilla.io/template';

export interface PolicyRef {
  kind: string;
  namespace?: string;
  name: string;
}

/** Where the template stands on one cluster. */
export type ClusterState =
  /** The member holds the rendered object. */
  | 'Applied'
  /** The apiserver refused it, or rendering failed for this cluster (message says which). */
  | 'Failed'
  /** An object of that name exists on the member and is not the controller's; conflictResolution is Abort. */
  | 'Conflict'
  /** Not done yet: the member is not ready, or its cache is not synced. */
  | 'Pending'
  /** The member does not answer. */
  | 'Unreachable'
  /** No longer targeted; the object is still on the member (unreachable) and will be removed. */
  | 'Removing'
  /** The claiming policy suspends dispatching to this cluster: nothing is written there. */
  | 'Suspended'
  /** Evicted (not targeted), its copy kept by a graceful eviction task until `keptUntil`. */
  | 'Evicting';

export interface MemberHealth {
  /** Healthy: as many ready replicas as wanted (or, for kinds without replicas, the object exists). */
  state: 'Healthy' | 'Progressing' | 'Unknown';
  replicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  message?: string;
}

/** One entry of a binding's status.clusters (a Work's status is its cluster's entry, without the name). */
export interface ClusterStatus {
  name: string;
  state: ClusterState;
  message?: string;
  /** Replicas the placement gave this cluster (workloads only). */
  replicas?: number;
  /** The template generation last applied to this cluster. */
  observedGeneration?: number;
  /** Override policies applied for this cluster, in order. */
  overrides?: PolicyRef[];
  health?: MemberHealth;
  /** Evicting: when the kept copy goes at the latest (RFC 3339; absent: purgeMode Never). */
  keptUntil?: string;
}

export interface RequiredBy {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  clusters: string[];
}

export type PurgeMode = 'Directly' | 'Gracefully' | 'Never';

/** Karmada's GracefulEvictionTask, as a binding's spec lists it. */
export interface GracefulEvictionTask {
  fromCluster: string;
  purgeMode: PurgeMode;
  reason: string;
  producer: string;
  /** How long a Gracefully evicted copy is kept at most (application failover's gracePeriodSeconds). */
  gracePeriodSeconds?: number;
  creationTimestamp: string;
  /** statePreservation: labels taken from the evicted copy's status, for the copy on the cluster the template moves to. */
  preservedLabelState?: Record<string, string>;
  /** The clusters the template was on before the eviction (they get no preserved labels). */
  clustersBeforeFailover?: string[];
}

export interface ObjectReference {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
}

export interface TargetCluster {
  name: string;
  replicas?: number;
}

/** What the controller decided for the template. */
export interface ResourceBindingSpec {
  resource: ObjectReference;
  /** The claiming policy; absent when none does (what was propagated stays). */
  policy?: PolicyRef;
  /** The workloads that take this template with them (propagateDeps), each with its clusters. */
  requiredBy?: Array<Omit<RequiredBy, 'clusters'> & { clusters: Array<{ name: string }> }>;
  gracefulEvictionTasks?: GracefulEvictionTask[];
  /** From the claiming policy: Abort or Overwrite. */
  conflictResolution?: string;
  /**
   * From the claiming policy, in its shape: dispatching suspended to every cluster or to those named. A
   * Work says `dispatching: true` when its cluster is one of them, and nothing otherwise.
   */
  suspension?: Suspension;
  /** From the claiming policy (set only when true). */
  preserveResourcesOnDeletion?: boolean;
  clusters: TargetCluster[];
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

export interface ResourceBindingStatus {
  observedGeneration?: number;
  /** Target clusters holding the copy / target clusters (kubectl's APPLIED column). */
  applied?: string;
  /** Ready clusters / target clusters (kubectl's READY column). */
  ready?: string;
  errors?: string[];
  notChosen?: Array<{ name: string; reason?: string }>;
  conditions?: Condition[];
  clusters?: ClusterStatus[];
}

export interface ResourceBinding {
  apiVersion: typeof API_VERSION;
  kind: typeof BINDING.kind;
  metadata: ObjectMeta;
  spec: ResourceBindingSpec;
  status?: ResourceBindingStatus;
}

/** The binding's spec as far as it concerns the Work's cluster. */
export type WorkSpec = Partial<ResourceBindingSpec>;

export interface Work {
  apiVersion: typeof API_VERSION;
  kind: typeof WORK.kind;
  metadata: ObjectMeta;
  spec: WorkSpec;
  /** Written by the cluster's agent; empty or null: it holds no copy. */
  status?: Omit<ClusterStatus, 'name'> | null;
}
