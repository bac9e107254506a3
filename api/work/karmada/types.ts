// Karmada's work.karmada.io objects, as a hub that serves Karmada's API shows them: ResourceBinding and
// ClusterResourceBinding (v1alpha2), one per claimed template, and Work (v1alpha1), one per template and
// target cluster in the cluster's execution space `karmada-es-<cluster>`. Names, labels and annotations
// are Karmada v1.18's (pkg/apis/work, pkg/util/names); the CRDs are in api/crds/karmada-work.ts.

export const KARMADA_WORK_GROUP = 'work.karmada.io';
/** Karmada's CRD category (`kubectl get karmada-io`). */
export const KARMADA_CATEGORY = 'karmada-io';

const kind = <A extends string, K extends string, P extends string>(apiVersion: A, k: K, plural: P) =>
  ({ apiVersion, kind: k, plural }) as const;

export const KARMADA_BINDING = kind(`${KARMADA_WORK_GROUP}/v1alpha2`, 'ResourceBinding', 'resourcebindings');
export const KARMADA_CLUSTER_BINDING = kind(
  `${KARMADA_WORK_GROUP}/v1alpha2`,
  'ClusterResourceBinding',
  'clusterresourcebindings',
);
export const KARMADA_WORK = kind(`${KARMADA_WORK_GROUP}/v1alpha1`, 'Work', 'works');

/** A binding's own id (Karmada's webhook sets a UUID; here the template's uid, unique per binding). */
export const RB_PERMANENT_ID_LABEL = 'resourcebinding.karmada.io/permanent-id';
export const CRB_PERMANENT_ID_LABEL = 'clusterresourcebinding.karmada.io/permanent-id';
export const WORK_PERMANENT_ID_LABEL = 'work.karmada.io/permanent-id';
/** On a Work and its manifest: the binding it comes from. */
export const RB_NAMESPACE_ANNOTATION = 'resourcebinding.karmada.io/namespace';
export const RB_NAME_ANNOTATION = 'resourcebinding.karmada.io/name';
export const CRB_NAME_ANNOTATION = 'clusterresourcebinding.karmada.io/name';
/** On a Work's manifest: the template's generation, its uid, and conflictResolution in lower case. */
export const TEMPLATE_GENERATION_ANNOTATION = 'resourcetemplate.karmada.io/generation';
export const TEMPLATE_UID_ANNOTATION = 'resourcetemplate.karmada.io/uid';
export const CONFLICT_RESOLUTION_ANNOTATION = 'work.karmada.io/conflict-resolution';
/**
 * Flotilla's addition on a Karmada binding: the target clusters, comma-separated (the CLUSTERS column:
 * a printer column's `.spec.clusters[*].name` shows only the first name).
 */
export const BINDING_CLUSTERS_ANNOTATION = 'flotilla.io/clusters';

export const EXECUTION_SPACE_PREFIX = 'karmada-es-';

/** Karmada's condition types, reasons and messages on bindings and Works. */
export const SCHEDULED = 'Scheduled';
export const FULLY_APPLIED = 'FullyApplied';
export const WORK_APPLIED = 'Applied';
export const WORK_DISPATCHING = 'Dispatching';
export const SCHEDULED_MESSAGE = 'Binding has been scheduled successfully.';
export const FULLY_APPLIED_MESSAGE = 'All works have been successfully applied';
export const NOT_FULLY_APPLIED_MESSAGE = 'Failed to apply all works, see status.aggregatedStatus for details';
export const WORK_APPLIED_MESSAGE = 'Manifest has been successfully applied';
export const WORK_DISPATCHING_MESSAGE = 'Work is being dispatched to member clusters.';
export const WORK_SUSPENDED_MESSAGE = 'Work dispatching is in a suspended state.';

export type ResourceHealth = 'Healthy' | 'Unhealthy' | 'Unknown';
