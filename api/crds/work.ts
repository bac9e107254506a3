// The work.flotilla.io CRDs: ResourceBinding (one per template, written by the controller) and Work (a pull
// cluster's share of one binding, in its namespace on the hub). Their types are in api/work/v1alpha1.

import { BINDING, GROUP as WORK_GROUP, WORK } from '../work/v1alpha1/types.js';
import {
  AGE,
  CONDITIONS,
  int,
  objectList,
  objectReference,
  singleVersionCRD,
  str,
  time,
  topLevel,
  type CustomResourceDefinition,
  type JSONSchemaProps,
  type PrinterColumn,
} from './props.js';

const POLICY_REF: JSONSchemaProps = {
  type: 'object',
  required: ['kind', 'name'],
  properties: { kind: str(), namespace: str(), name: str() },
};

/** work.flotilla.io ResourceBinding: one per template, written by the controller only. */
export function bindingCRD(): CustomResourceDefinition {
  const spec = bindingSpec();
  const status: JSONSchemaProps = {
    type: 'object',
    description: 'Delivery to each cluster, read back from the members.',
    properties: {
      observedGeneration: int('The template generation this status is about.'),
      applied: str(
        'Target clusters that hold the copy (state Applied) / target clusters, e.g. 2/3: the APPLIED column.',
      ),
      ready: str('Ready clusters (Applied and healthy) / target clusters, e.g. 3/3: the READY column.'),
      errors: { type: 'array', items: str(), description: 'Render errors about the template as a whole (placement).' },
      notChosen: objectList(
        ['name'],
        { name: str(), reason: str() },
        'Known clusters the template does not go to, and why (the first 50).',
      ),
      conditions: CONDITIONS,
      clusters: {
        type: 'array',
        description:
          "One entry per cluster, keyed by name: the controller writes its members' entries and those its pull agents report; sharded, each replica its own members' (server-side apply, each under its own field manager).",
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', required: ['name', 'state'], properties: { name: str(), ...clusterEntry() } },
      },
    },
  };
  return workGroupCRD(BINDING, { singular: 'resourcebinding', shortNames: ['frb'] }, spec, status, [
    { name: 'Kind', type: 'string', jsonPath: '.spec.resource.kind' },
    { name: 'Policy', type: 'string', jsonPath: '.spec.policy.name' },
    // Counts written by the controller: a jsonPath list such as .spec.clusters[*].name shows its first item only.
    { name: 'Applied', type: 'string', jsonPath: '.status.applied' },
    { name: 'Ready', type: 'string', jsonPath: '.status.ready' },
    { name: 'Message', type: 'string', jsonPath: '.status.conditions[?(@.type=="Applied")].message', priority: 1 },
  ]);
}

/**
 * work.flotilla.io Work: a pull cluster's share of one ResourceBinding, in the cluster's own namespace on
 * the hub (its execution space). The controller writes the spec, the cluster's agent the status: an agent
 * reads and writes only its namespace, so what one agent does never reaches another.
 */
export function workCRD(): CustomResourceDefinition {
  const spec: JSONSchemaProps = {
    ...bindingSpec(),
    description:
      "The template's ResourceBinding spec as far as it concerns this cluster: the cluster (with its replicas) when placed there, its graceful eviction task, the claim.",
  };
  const status: JSONSchemaProps = {
    type: 'object',
    description: "Written by the cluster's agent: delivery of the template to the cluster. Empty: it holds no copy.",
    // An agent clears its status with an apply that owns none of its fields, which leaves `status: null`.
    nullable: true,
    properties: clusterEntry(),
  };
  // A status subresource: the agent may write status and nothing else.
  return workGroupCRD(WORK, { singular: 'work' }, spec, status, [
    { name: 'Kind', type: 'string', jsonPath: '.spec.resource.kind' },
    { name: 'Template-Namespace', type: 'string', jsonPath: '.spec.resource.namespace' },
    { name: 'Template', type: 'string', jsonPath: '.spec.resource.name' },
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Health', type: 'string', jsonPath: '.status.health.state' },
    { name: 'Message', type: 'string', jsonPath: '.status.message', priority: 1 },
  ]);
}

/** A namespaced work.flotilla.io kind: one version, v1alpha1, with a status subresource. */
function workGroupCRD(
  kind: { kind: string; plural: string },
  names: { singular: string; shortNames?: string[] },
  spec: JSONSchemaProps,
  status: JSONSchemaProps,
  columns: PrinterColumn[],
): CustomResourceDefinition {
  return singleVersionCRD({
    group: WORK_GROUP,
    version: 'v1alpha1',
    ...kind,
    names,
    categories: ['flotilla'],
    scope: 'Namespaced',
    schema: topLevel(spec, { specRequired: false, status }),
    columns: [...columns, AGE],
  });
}

/** A ResourceBinding's spec (a Work's is the same, cut down to its cluster). */
function bindingSpec(): JSONSchemaProps {
  return {
    type: 'object',
    description: 'What the controller decided for the template.',
    properties: {
      resource: objectReference('The resource template.', { uid: str() }),
      policy: {
        ...POLICY_REF,
        description:
          'The propagation policy that claims the template; absent when none does (what was propagated stays).',
      },
      requiredBy: {
        type: 'array',
        description:
          'The workloads that take this template with them (propagateDeps), each with the clusters it is scheduled to.',
        'x-kubernetes-list-type': 'atomic',
        items: objectReference(undefined, { clusters: objectList(['name'], { name: str() }) }),
      },
      gracefulEvictionTasks: objectList(
        ['fromCluster', 'purgeMode'],
        {
          fromCluster: str(),
          purgeMode: { type: 'string', enum: ['Directly', 'Gracefully', 'Never'] },
          reason: str(),
          producer: str(),
          gracePeriodSeconds: int(),
          creationTimestamp: time(),
          preservedLabelState: {
            type: 'object',
            additionalProperties: str(),
            description:
              "statePreservation: the labels taken from the evicted copy's status, for the copy on the cluster the template moves to.",
          },
          clustersBeforeFailover: {
            type: 'array',
            'x-kubernetes-list-type': 'atomic',
            items: str(),
            description: 'The clusters the template was on before the eviction (they get no preserved labels).',
          },
        },
        "Clusters a NoExecute taint evicted the template from, while their copies are being dealt with (Karmada's graceful eviction).",
      ),
      conflictResolution: str('Abort or Overwrite, from the claiming policy.'),
      suspension: {
        type: 'object',
        description:
          "From the claiming policy: dispatching suspended to every cluster, or to those named. A Work's says dispatching: true when its cluster is one of them.",
        properties: {
          dispatching: { type: 'boolean' },
          dispatchingOnClusters: {
            type: 'object',
            properties: { clusterNames: { type: 'array', 'x-kubernetes-list-type': 'atomic', items: str() } },
          },
        },
      },
      preserveResourcesOnDeletion: {
        type: 'boolean',
        description: 'From the claiming policy: the members keep their copies when the template is deleted.',
      },
      clusters: objectList(
        ['name'],
        { name: str(), replicas: int() },
        'Target clusters, with the replicas placement gave each (workloads).',
      ),
    },
  };
}

/** What a binding's status says of one cluster (a Work's status says it of its own). */
function clusterEntry(): Record<string, JSONSchemaProps> {
  return {
    state: {
      type: 'string',
      enum: ['Applied', 'Failed', 'Conflict', 'Pending', 'Unreachable', 'Removing', 'Suspended', 'Evicting'],
    },
    message: str(
      "Why it is not Applied: the apiserver's message, the render error, the conflict; Evicting: why the evicted copy is kept.",
    ),
    keptUntil: time(
      'Evicting: when the kept copy goes at the latest (the graceful eviction timeout), unless the new placement is healthy first; absent for purgeMode Never.',
    ),
    replicas: int(),
    observedGeneration: int('The template generation last applied to this cluster.'),
    overrides: {
      type: 'array',
      'x-kubernetes-list-type': 'atomic',
      items: POLICY_REF,
      description: 'Override policies applied for this cluster, in order.',
    },
    health: {
      type: 'object',
      description:
        "The member object's status: replicas for Deployments, StatefulSets, DaemonSets and Jobs; presence for other kinds.",
      properties: {
        state: { type: 'string', enum: ['Healthy', 'Progressing', 'Unknown'] },
        replicas: int(),
        readyReplicas: int(),
        availableReplicas: int(),
        message: str(),
      },
    },
  };
}
