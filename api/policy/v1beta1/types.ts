// policy.flotilla.io/v1beta1: the storage version and the hub of conversion. It is the v1alpha1 shape with
// the deprecated forms folded away, so every stored object has exactly one way to say each thing:
//
// - OverridePolicy/ClusterOverridePolicy have no top-level `targetCluster`/`overriders`; a v1alpha1 object
//   that uses them is stored as the single rule Karmada would synthesise from them (`overrideRules[0]`).
// - PropagationPolicy/ClusterPropagationPolicy have no `association`: Karmada deprecated it for
//   `propagateDeps` and no longer reads it, so it carries no meaning a stored object needs.
//
// What v1alpha1 can say and v1beta1 cannot rides in the annotation named by CONVERSION_ANNOTATION and is
// restored on the way back (api/conversion). Every sub-type is v1alpha1's: the two versions share them.

import type {
  ObjectMeta,
  PropagationSpec as V1alpha1PropagationSpec,
  ResourceSelector,
  RuleWithCluster,
} from '../v1alpha1/types.js';

export type {
  ClusterAffinity,
  ClusterAffinityTerm,
  LabelSelector,
  ObjectMeta,
  Overriders,
  Placement,
  ResourceSelector,
  RuleWithCluster,
} from '../v1alpha1/types.js';

export {
  POLICY_KINDS,
  PROPAGATION_POLICY,
  CLUSTER_PROPAGATION_POLICY,
  OVERRIDE_POLICY,
  CLUSTER_OVERRIDE_POLICY,
} from '../v1alpha1/types.js';
export type { PolicyKind } from '../v1alpha1/types.js';

export const GROUP = 'policy.flotilla.io';
export const VERSION = 'v1beta1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/**
 * Annotation holding, as JSON, the parts of a v1alpha1 object that v1beta1 has no field for. Written by
 * the v1alpha1 → v1beta1 conversion, consumed (and removed) by v1beta1 → v1alpha1. Reserved: its content
 * is owned by the conversion.
 */
export const CONVERSION_ANNOTATION = 'policy.flotilla.io/v1alpha1-fields';

export type PropagationSpec = Omit<V1alpha1PropagationSpec, 'association'>;

export interface OverrideSpec {
  /** Absent or empty: every resource (in the policy's namespace for an OverridePolicy). */
  resourceSelectors?: ResourceSelector[];
  /** Applied in order; absent or empty: the policy changes nothing. */
  overrideRules?: RuleWithCluster[];
}

export interface PropagationPolicy {
  apiVersion: typeof API_VERSION;
  kind: 'PropagationPolicy' | 'ClusterPropagationPolicy';
  metadata: ObjectMeta;
  spec: PropagationSpec;
}

export interface OverridePolicy {
  apiVersion: typeof API_VERSION;
  kind: 'OverridePolicy' | 'ClusterOverridePolicy';
  metadata: ObjectMeta;
  spec: OverrideSpec;
}

export type Policy = PropagationPolicy | OverridePolicy;
