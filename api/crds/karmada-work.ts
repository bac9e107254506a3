// Karmada's work.karmada.io CRDs for a hub that serves Karmada's API without running Karmada: ResourceBinding
// and ClusterResourceBinding (v1alpha2) and Work (v1alpha1), with Karmada's names, short names (rb, crb,
// wk), category and printer columns (SCHEDULED, FULLYAPPLIED; a Work's WORKLOAD-KIND and APPLIED), plus a
// CLUSTERS column. The schemas type what the controller writes and what Karmada's tools read (spec.clusters,
// conditions, aggregatedStatus, the Work's manifests and status); nested policy shapes (placement,
// failover) are kept as given. Types and names are in api/work/karmada.

import {
  BINDING_CLUSTERS_ANNOTATION,
  KARMADA_CATEGORY,
  KARMADA_BINDING,
  KARMADA_CLUSTER_BINDING,
  KARMADA_WORK,
  KARMADA_WORK_GROUP,
} from '../work/karmada/types.js';
import type { CustomResourceDefinition, JSONSchemaProps, PrinterColumn } from './props.js';
import { AGE, CONDITIONS, int, objectReference, singleVersionCRD, str, topLevel } from './props.js';

const ANY_OBJECT: JSONSchemaProps = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
const bool = (): JSONSchemaProps => ({ type: 'boolean' });
const list = (items: JSONSchemaProps): JSONSchemaProps => ({ type: 'array', items });

/** metav1.Condition as Karmada's CRDs require it (every field but observedGeneration). */
const CONDITION_LIST: JSONSchemaProps = {
  ...CONDITIONS,
  items: { ...CONDITIONS.items, required: ['lastTransitionTime', 'message', 'reason', 'status', 'type'] },
};

const TARGET_CLUSTER: JSONSchemaProps = {
  type: 'object',
  required: ['name'],
  properties: {
    name: str(),
    replicas: { type: 'integer', format: 'int32' },
    components: list({ type: 'object', required: ['name', 'replicas'], properties: { name: str(), replicas: int() } }),
  },
};

function bindingSpec(): JSONSchemaProps {
  return {
    type: 'object',
    required: ['resource'],
    properties: {
      resource: objectReference(undefined, { uid: str(), resourceVersion: str() }),
      propagateDeps: bool(),
      replicaRequirements: ANY_OBJECT,
      replicas: { type: 'integer', format: 'int32' },
      components: list(ANY_OBJECT),
      clusters: list(TARGET_CLUSTER),
      placement: ANY_OBJECT,
      gracefulEvictionTasks: list({
        type: 'object',
        required: ['fromCluster', 'producer', 'reason'],
        properties: {
          fromCluster: str(),
          purgeMode: str(),
          replicas: { type: 'integer', format: 'int32' },
          reason: str(),
          message: str(),
          producer: str(),
          gracePeriodSeconds: { type: 'integer', format: 'int32' },
          suppressDeletion: bool(),
          preservedLabelState: { type: 'object', additionalProperties: str() },
          creationTimestamp: { type: 'string', format: 'date-time' },
          clustersBeforeFailover: list(str()),
        },
      }),
      requiredBy: list({
        type: 'object',
        required: ['name'],
        properties: { namespace: str(), name: str(), clusters: list(TARGET_CLUSTER) },
      }),
      schedulerName: str(),
      failover: ANY_OBJECT,
      conflictResolution: { type: 'string', enum: ['Overwrite', 'Abort'] },
      rescheduleTriggeredAt: { type: 'string', format: 'date-time' },
      suspension: {
        type: 'object',
        properties: {
          dispatching: bool(),
          dispatchingOnClusters: { type: 'object', properties: { clusterNames: list(str()) } },
          scheduling: bool(),
        },
      },
      preserveResourcesOnDeletion: bool(),
      schedulePriority: ANY_OBJECT,
      workloadAffinityGroups: ANY_OBJECT,
    },
  };
}

function bindingStatus(): JSONSchemaProps {
  return {
    type: 'object',
    properties: {
      schedulerObservedGeneration: int(),
      schedulerObservingAffinityName: str(),
      lastScheduledTime: { type: 'string', format: 'date-time' },
      conditions: CONDITION_LIST,
      aggregatedStatus: list({
        type: 'object',
        required: ['clusterName'],
        properties: {
          clusterName: str(),
          status: ANY_OBJECT,
          applied: bool(),
          appliedMessage: str(),
          health: { type: 'string', enum: ['Healthy', 'Unhealthy', 'Unknown'] },
        },
      }),
    },
  };
}

const BINDING_COLUMNS: PrinterColumn[] = [
  { name: 'Scheduled', type: 'string', jsonPath: '.status.conditions[?(@.type=="Scheduled")].status' },
  { name: 'FullyApplied', type: 'string', jsonPath: '.status.conditions[?(@.type=="FullyApplied")].status' },
  // Flotilla's addition: every target cluster (a list path would print the first one only).
  {
    name: 'Clusters',
    type: 'string',
    jsonPath: `.metadata.annotations.${BINDING_CLUSTERS_ANNOTATION.replace(/\./g, '\\.')}`,
  },
  AGE,
];

function karmadaCRD(
  kind: { kind: string; plural: string; apiVersion: string },
  shortName: string,
  scope: 'Namespaced' | 'Cluster',
  spec: JSONSchemaProps,
  status: JSONSchemaProps,
  columns: PrinterColumn[],
): CustomResourceDefinition {
  const schema = topLevel(spec, { specRequired: true, status });
  return singleVersionCRD({
    group: KARMADA_WORK_GROUP,
    version: kind.apiVersion.split('/')[1] ?? 'v1alpha1',
    kind: kind.kind,
    plural: kind.plural,
    names: { singular: kind.kind.toLowerCase(), shortNames: [shortName] },
    categories: [KARMADA_CATEGORY],
    scope,
    schema,
    columns,
  });
}

/** Karmada's ResourceBinding, ClusterResourceBinding and Work CRDs. */
export function karmadaWorkCRDs(): CustomResourceDefinition[] {
  const work: JSONSchemaProps = {
    type: 'object',
    properties: {
      workload: {
        type: 'object',
        properties: { manifests: list({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) },
      },
      suspendDispatching: bool(),
      preserveResourcesOnDeletion: bool(),
    },
  };
  const workStatus: JSONSchemaProps = {
    type: 'object',
    properties: {
      conditions: CONDITION_LIST,
      manifestStatuses: list({
        type: 'object',
        required: ['identifier'],
        properties: {
          identifier: {
            type: 'object',
            required: ['kind', 'name', 'ordinal', 'resource', 'version'],
            properties: {
              ordinal: { type: 'integer' },
              group: str(),
              version: str(),
              kind: str(),
              resource: str(),
              namespace: str(),
              name: str(),
            },
          },
          status: ANY_OBJECT,
          health: { type: 'string', enum: ['Healthy', 'Unhealthy', 'Unknown'] },
        },
      }),
    },
  };
  return [
    karmadaCRD(KARMADA_BINDING, 'rb', 'Namespaced', bindingSpec(), bindingStatus(), BINDING_COLUMNS),
    karmadaCRD(KARMADA_CLUSTER_BINDING, 'crb', 'Cluster', bindingSpec(), bindingStatus(), BINDING_COLUMNS),
    karmadaCRD(KARMADA_WORK, 'wk', 'Namespaced', work, workStatus, [
      { name: 'Workload-Kind', type: 'string', jsonPath: '.spec.workload.manifests[*].kind' },
      { name: 'Applied', type: 'string', jsonPath: '.status.conditions[?(@.type=="Applied")].status' },
      AGE,
    ]),
  ];
}
