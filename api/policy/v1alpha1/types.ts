// policy.flotilla.io/v1alpha1: the Karmada-compatible shape (policy.karmada.io/v1alpha1, field for field),
// including the deprecated top-level `targetCluster`/`overriders` of OverrideSpec.
//
// Types describe well-formed objects. Everything that reads user input treats it as `unknown` first and
// validates it (api/validation), so optional fields here are exactly the fields the API leaves optional.

export const GROUP = 'policy.flotilla.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
/** Documents in Karmada's group are read unchanged by the offline commands (the migration path). */
export const KARMADA_API_VERSION = 'policy.karmada.io/v1alpha1';

export const PROPAGATION_POLICY = 'PropagationPolicy';
export const CLUSTER_PROPAGATION_POLICY = 'ClusterPropagationPolicy';
export const OVERRIDE_POLICY = 'OverridePolicy';
export const CLUSTER_OVERRIDE_POLICY = 'ClusterOverridePolicy';
export const POLICY_KINDS = [
  PROPAGATION_POLICY,
  CLUSTER_PROPAGATION_POLICY,
  OVERRIDE_POLICY,
  CLUSTER_OVERRIDE_POLICY,
] as const;
export type PolicyKind = (typeof POLICY_KINDS)[number];

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  finalizers?: string[];
  [key: string]: unknown;
}

// ---- selectors -------------------------------------------------------------------------------------

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  operator: string; // one of LabelSelectorOperator
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface ResourceSelector {
  apiVersion: string;
  kind: string;
  namespace?: string;
  /** When set, the label selector is ignored (Karmada's rule). */
  name?: string;
  labelSelector?: LabelSelector;
}

/** corev1.NodeSelectorRequirement; keys `provider`, `region`, `zone`. */
export interface FieldSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface FieldSelector {
  matchExpressions?: FieldSelectorRequirement[];
}

export interface ClusterAffinity {
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  clusterNames?: string[];
  /** Deny-list; always wins. */
  exclude?: string[];
}

export interface OverflowClusterAffinity extends ClusterAffinity {
  affinityName: string;
}

export interface ClusterAffinityTerm extends ClusterAffinity {
  affinityName: string;
  overflowAffinities?: OverflowClusterAffinity[];
}

// ---- placement -------------------------------------------------------------------------------------

export interface Toleration {
  key?: string;
  operator?: string; // one of 'Exists' | 'Equal'
  value?: string;
  effect?: string; // one of 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute'
  tolerationSeconds?: number;
}

export interface SpreadConstraint {
  spreadByField?: string; // one of 'cluster' | 'region' | 'zone' | 'provider'
  spreadByLabel?: string;
  maxGroups?: number;
  minGroups?: number;
}

export interface StaticClusterWeight {
  targetCluster: ClusterAffinity;
  weight: number;
}

export interface ClusterPreferences {
  staticWeightList?: StaticClusterWeight[];
  dynamicWeight?: string; // one of 'AvailableReplicas'
}

export interface ReplicaSchedulingStrategy {
  replicaSchedulingType?: string; // one of 'Duplicated' | 'Divided'
  replicaDivisionPreference?: string; // one of 'Aggregated' | 'Weighted'
  weightPreference?: ClusterPreferences;
}

export interface WorkloadAffinity {
  affinity?: { groupByLabelKey: string };
  antiAffinity?: { groupByLabelKey: string };
}

export interface Placement {
  clusterAffinity?: ClusterAffinity;
  clusterAffinities?: ClusterAffinityTerm[];
  clusterTolerations?: Toleration[];
  spreadConstraints?: SpreadConstraint[];
  replicaScheduling?: ReplicaSchedulingStrategy;
  workloadAffinity?: WorkloadAffinity;
}

export interface StatePreservationRule {
  aliasLabelName: string;
  jsonPath: string;
}

export interface ApplicationFailoverBehavior {
  decisionConditions: { tolerationSeconds?: number };
  purgeMode?: string; // one of 'Directly' | 'Gracefully' | 'Never'
  gracePeriodSeconds?: number;
  statePreservation?: { rules: StatePreservationRule[] };
}

export interface ClusterFailoverBehavior {
  purgeMode?: string; // one of 'Directly' | 'Gracefully'
  statePreservation?: { rules: StatePreservationRule[] };
}

export interface FailoverBehavior {
  application?: ApplicationFailoverBehavior;
  cluster?: ClusterFailoverBehavior;
}

export interface Suspension {
  dispatching?: boolean;
  dispatchingOnClusters?: { clusterNames?: string[] };
}

export interface SchedulePriority {
  priorityClassSource: string;
  priorityClassName: string;
}

export interface PropagationSpec {
  resourceSelectors: ResourceSelector[];
  /** Deprecated in favour of propagateDeps. */
  association?: boolean;
  propagateDeps?: boolean;
  placement?: Placement;
  /** nil is 0. */
  priority?: number;
  preemption?: string; // one of 'Always' | 'Never'
  dependentOverrides?: string[];
  schedulerName?: string;
  failover?: FailoverBehavior;
  conflictResolution?: string; // one of 'Abort' | 'Overwrite'
  activationPreference?: string; // one of 'Lazy'
  suspension?: Suspension;
  preserveResourcesOnDeletion?: boolean;
  schedulePriority?: SchedulePriority;
}

// ---- overriders ------------------------------------------------------------------------------------

export type OverriderOperator = 'add' | 'remove' | 'replace';

export interface ImagePredicate {
  path: string;
}

export interface ImageOverrider {
  predicate?: ImagePredicate;
  component: string; // one of 'Registry' | 'Repository' | 'Tag'
  operator: string; // one of OverriderOperator
  value?: string;
  /**
   * Flotilla extension: also rewrite `initContainers` when no predicate is given. Off by default, as in
   * Karmada, which never touches initContainers (its issue #4283).
   */
  includeInitContainers?: boolean;
}

export interface CommandArgsOverrider {
  containerName: string;
  operator: string; // one of 'add' | 'remove'
  value?: string[];
}

export interface LabelAnnotationOverrider {
  operator: string; // one of OverriderOperator
  value: Record<string, string>;
  /**
   * Flotilla extension (policy.flotilla.io v1beta1): with `add`, keys already present keep their value,
   * as Gatekeeper's AssignMetadata does.
   */
  onlyIfAbsent?: boolean;
}

/** Flotilla extension: Gatekeeper's pathTests. `subPath` is a prefix of the overrider's path. */
export interface PathTest {
  subPath: string;
  condition: 'MustExist' | 'MustNotExist';
}

/** Admission operations a rule acts on (Flotilla extension, kinitiras's field). */
export const TARGET_OPERATIONS = ['CREATE', 'UPDATE'] as const;

export interface PatchOperation {
  subPath: string;
  operator: string; // one of OverriderOperator
  /** Any JSON. Required for add/replace, forbidden for remove. */
  value?: unknown;
}

export interface FieldOverrider {
  fieldPath: string;
  json?: PatchOperation[];
  yaml?: PatchOperation[];
}

export interface PlaintextOverrider {
  path: string;
  operator: string; // one of OverriderOperator
  value?: unknown;
  /** Flotilla extension: every test must hold for the operation to apply (per list item under a glob). */
  pathTests?: PathTest[];
}

export interface Overriders {
  plaintext?: PlaintextOverrider[];
  imageOverrider?: ImageOverrider[];
  commandOverrider?: CommandArgsOverrider[];
  argsOverrider?: CommandArgsOverrider[];
  labelsOverrider?: LabelAnnotationOverrider[];
  annotationsOverrider?: LabelAnnotationOverrider[];
  fieldOverrider?: FieldOverrider[];
}

export interface RuleWithCluster {
  /** Absent: every cluster. */
  targetCluster?: ClusterAffinity;
  overriders: Overriders;
  /**
   * Flotilla extension: the admission operations the rule acts on at admission time (`flotilla webhook
   * --override`). Absent: CREATE only. Rendering for propagation counts as CREATE.
   */
  targetOperations?: Array<(typeof TARGET_OPERATIONS)[number]>;
}

/**
 * The Flotilla extension fields of override rules, by where they sit. They exist in policy.flotilla.io
 * v1beta1 only; conversion carries them through v1alpha1 in EXTENSIONS_ANNOTATION, and the
 * policy.karmada.io group denies them.
 */
export const EXTENSION_FIELDS = {
  rule: ['targetOperations'],
  plaintext: ['pathTests'],
  labelsOverrider: ['onlyIfAbsent'],
  annotationsOverrider: ['onlyIfAbsent'],
} as const;

export interface OverrideSpec {
  /** Absent or empty: every resource (in the policy's namespace for an OverridePolicy). */
  resourceSelectors?: ResourceSelector[];
  overrideRules?: RuleWithCluster[];
  /** Deprecated: used with `overriders` only when `overrideRules` is empty. */
  targetCluster?: ClusterAffinity;
  /** Deprecated. */
  overriders?: Overriders;
}

export interface PropagationPolicy {
  apiVersion: string;
  kind: typeof PROPAGATION_POLICY | typeof CLUSTER_PROPAGATION_POLICY;
  metadata: ObjectMeta;
  spec: PropagationSpec;
}

export interface OverridePolicy {
  apiVersion: string;
  kind: typeof OVERRIDE_POLICY | typeof CLUSTER_OVERRIDE_POLICY;
  metadata: ObjectMeta;
  spec: OverrideSpec;
}

export type Policy = PropagationPolicy | OverridePolicy;
