// Karmada's objects for one template (pure): its ResourceBinding (ClusterResourceBinding when the template
// is cluster-scoped) and one Work per cluster it is on, in Karmada v1.18's shape, from what the binding
// writer wrote (BindingContent), the claiming policy, the plan's rendered objects and the members' reports.
// Writing them, and the Events, is karmada-objects.ts's business.
//
// What is Karmada's: names (api/work/karmada/names.ts), the permanent-id labels and the binding
// annotations on Works and their manifests, the policy's claim on the binding, spec.clusters with replicas,
// placement, propagateDeps, requiredBy (the workloads' bindings), conflictResolution, suspension,
// preserveResourcesOnDeletion, gracefulEvictionTasks; status.conditions Scheduled and FullyApplied with
// Karmada's reasons and messages and status.aggregatedStatus; a Work's manifest, suspendDispatching, and
// its Applied and Dispatching conditions and manifestStatuses. What is not: the binding's permanent id is
// the template's uid (Karmada's webhook draws a UUID); spec.resource carries no resourceVersion (it would
// rewrite the binding on every template update); a Work's status is reflected from the member's copy as
// the controller last saw it.

import { createHash } from 'node:crypto';

import { karmadaBindingName, karmadaExecutionSpace } from '../../api/work/karmada/names.js';
import {
  BINDING_CLUSTERS_ANNOTATION,
  CRB_PERMANENT_ID_LABEL,
  FULLY_APPLIED,
  FULLY_APPLIED_MESSAGE,
  KARMADA_BINDING,
  KARMADA_CLUSTER_BINDING,
  KARMADA_WORK,
  NOT_FULLY_APPLIED_MESSAGE,
  RB_PERMANENT_ID_LABEL,
  SCHEDULED,
  SCHEDULED_MESSAGE,
  WORK_APPLIED,
} from '../../api/work/karmada/types.js';
import { TEMPLATE_UID_LABEL } from '../../api/work/v1alpha1/types.js';
import { claimMetadata } from '../engine/claim-copy.js';
import { jobReplicas } from '../engine/job-replicas.js';
import { permanentIdOf } from '../engine/match.js';
import { isObject, type JsonObject } from '../kube/objects.js';
import type { BindingContent } from './binding-writer.js';
import type { ClusterStatus } from './binding.js';
import type { MemberReport } from './execute.js';
import { controllerReference, type TemplateIdentity } from './ownership.js';
import type { KarmadaWorkParts } from './karmada-work-shape.js';
import type { TemplatePlan } from './plan.js';

/** Kinds whose replicas Karmada's native interpreter reads (GetReplicas; the GetReplicasSucceed event). */
export const REPLICA_KINDS: ReadonlySet<string> = new Set(['Deployment', 'ReplicaSet', 'StatefulSet', 'Job', 'Pod']);

/** Where a template's Karmada binding lives and what it is called. */
export interface KarmadaBindingRef {
  apiVersion: string;
  kind: 'ResourceBinding' | 'ClusterResourceBinding';
  namespace?: string;
  name: string;
  /** The path of the object on the hub. */
  path: string;
}

export function karmadaBindingRef(t: TemplateIdentity): KarmadaBindingRef {
  const name = karmadaBindingName(t.kind, t.name);
  if (t.namespace) {
    const path = `/apis/${KARMADA_BINDING.apiVersion}/namespaces/${encodeURIComponent(t.namespace)}/${KARMADA_BINDING.plural}/${encodeURIComponent(name)}`;
    return { apiVersion: KARMADA_BINDING.apiVersion, kind: 'ResourceBinding', namespace: t.namespace, name, path };
  }
  const path = `/apis/${KARMADA_CLUSTER_BINDING.apiVersion}/${KARMADA_CLUSTER_BINDING.plural}/${encodeURIComponent(name)}`;
  return { apiVersion: KARMADA_CLUSTER_BINDING.apiVersion, kind: 'ClusterResourceBinding', name, path };
}

export function karmadaWorkPath(cluster: string, name: string): string {
  return `/apis/${KARMADA_WORK.apiVersion}/namespaces/${encodeURIComponent(karmadaExecutionSpace(cluster))}/${KARMADA_WORK.plural}/${encodeURIComponent(name)}`;
}

/** A Work's permanent id: a UUID-shaped digest of the template's uid and the cluster (stable across restarts). */
export function workPermanentId(t: TemplateIdentity, cluster: string): string {
  const h = createHash('sha256').update(`${t.uid}/${cluster}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Everything one template's Karmada objects are made from. */
export interface KarmadaInput {
  t: TemplateIdentity;
  template: JsonObject;
  b: BindingContent;
  /** The claiming policy's object (spec.placement, propagateDeps, its permanent id). */
  policy: JsonObject | undefined;
  plan: TemplatePlan | undefined;
  reports: ReadonlyMap<string, MemberReport> | undefined;
  /** The template's plural resource name on the hub (a manifest status's identifier). */
  resource: string;
  /** When a condition of this object, with this status, was first written (now when new). */
  since(path: string, type: string, status: string): string;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The clusters a Work goes to: targeted and kept evicted copies (listed and other writers' entries). */
export function workClusters(b: BindingContent): ClusterStatus[] {
  const every = [...b.clusters, ...(b.agentClusters ?? [])].filter((c) => c.state !== 'Removing');
  return [...new Map(every.map((c) => [c.name, c])).values()].sort((x, y) => (x.name < y.name ? -1 : 1));
}

/** The target clusters of spec.clusters (a binding only workloads require lists none: its requiredBy does). */
function targetClusters(b: BindingContent): Array<{ name: string; replicas?: number }> {
  if (!b.policy) return [];
  return workClusters(b)
    .filter((c) => c.state !== 'Evicting')
    .map((c) => (c.replicas === undefined ? { name: c.name } : { name: c.name, replicas: c.replicas }));
}

/** `m1:2, m2:0`: Karmada's targetClustersToString, for ScheduleBindingSucceed. */
export function scheduleResult(b: BindingContent): string {
  return targetClusters(b)
    .map((c) => `${c.name}:${c.replicas ?? 0}`)
    .join(', ');
}

/** The template's replicas as Karmada's interpreter reads them (workload kinds only). */
function templateReplicas(kind: string, template: JsonObject): number | undefined {
  if (!REPLICA_KINDS.has(kind)) return undefined;
  const spec = isObject(template.spec) ? template.spec : {};
  if (kind === 'Pod') return 1;
  if (kind === 'Job') return jobReplicas(spec);
  return num(spec.replicas) ?? 1;
}

/** The binding: metadata and spec (its status is written on the subresource). */
export function karmadaBinding(i: KarmadaInput): JsonObject {
  const { t, b } = i;
  const ref = karmadaBindingRef(t);
  const policySpec = i.policy && isObject(i.policy.spec) ? i.policy.spec : {};
  const labels: Record<string, string> = {
    [t.namespace ? RB_PERMANENT_ID_LABEL : CRB_PERMANENT_ID_LABEL]: t.uid,
    [TEMPLATE_UID_LABEL]: t.uid,
  };
  const annotations: Record<string, string> = {
    [BINDING_CLUSTERS_ANNOTATION]: clustersText(workClusters(b).filter((c) => c.state !== 'Evicting')),
  };
  const claim = b.policy
    ? claimMetadata(b.policy.kind, b.policy.namespace ?? t.namespace ?? '', b.policy.name, permanentIdOf(i.policy))
    : undefined;
  Object.assign(labels, claim?.labels);
  Object.assign(annotations, claim?.annotations);
  const resource: JsonObject = { apiVersion: t.apiVersion, kind: t.kind, name: t.name, uid: t.uid };
  if (t.namespace) resource.namespace = t.namespace;
  const spec: JsonObject = { resource };
  if (policySpec.propagateDeps === true) spec.propagateDeps = true;
  const replicas = templateReplicas(t.kind, i.template);
  if (replicas !== undefined) spec.replicas = replicas;
  const clusters = targetClusters(b);
  if (clusters.length > 0) spec.clusters = clusters;
  if (b.policy && isObject(policySpec.placement)) spec.placement = policySpec.placement;
  if (b.evictionTasks && b.evictionTasks.length > 0)
    spec.gracefulEvictionTasks = b.evictionTasks.map((e) => ({
      fromCluster: e.fromCluster,
      purgeMode: e.purgeMode,
      reason: e.reason,
      producer: e.producer,
      ...(e.gracePeriodMs === undefined ? {} : { gracePeriodSeconds: Math.round(e.gracePeriodMs / 1000) }),
      creationTimestamp: e.creationTimestamp,
      ...(e.preservedLabelState ? { preservedLabelState: { ...e.preservedLabelState } } : {}),
      ...(e.clustersBeforeFailover ? { clustersBeforeFailover: [...e.clustersBeforeFailover] } : {}),
    }));
  if (b.requiredBy && b.requiredBy.length > 0)
    spec.requiredBy = b.requiredBy.map((r) => ({
      ...(r.namespace ? { namespace: r.namespace } : {}),
      name: karmadaBindingName(r.kind, r.name),
      clusters: r.clusters.map((name) => ({ name })),
    }));
  if (b.policy)
    spec.schedulerName = typeof policySpec.schedulerName === 'string' ? policySpec.schedulerName : 'default-scheduler';
  if (b.policy && isObject(policySpec.failover)) spec.failover = policySpec.failover;
  spec.conflictResolution = b.conflictResolution === 'Overwrite' ? 'Overwrite' : 'Abort';
  if (b.suspended === 'all') spec.suspension = { dispatching: true };
  else if (b.suspended && b.suspended.size > 0)
    spec.suspension = { dispatchingOnClusters: { clusterNames: [...b.suspended].sort() } };
  spec.preserveResourcesOnDeletion = b.preserveResourcesOnDeletion === true;
  return {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: {
      name: ref.name,
      ...(ref.namespace ? { namespace: ref.namespace } : {}),
      labels,
      annotations,
      ownerReferences: [controllerReference(t)],
    },
    spec,
  };
}

/** `m1,m2,m3` (bounded: the first names, then how many more). */
function clustersText(cs: readonly ClusterStatus[]): string {
  const names = cs.map((c) => c.name);
  let out = '';
  for (let n = 0; n < names.length; n++) {
    const next = out ? `${out},${names[n]}` : (names[n] ?? '');
    if (next.length > 1000) return `${out},+${names.length - n}`;
    out = next;
  }
  return out;
}

/** The binding's status: Scheduled and FullyApplied, and each Work's aggregated status. */
export function karmadaBindingStatus(
  i: KarmadaInput,
  works: readonly KarmadaWorkParts[],
  generation: number | undefined,
): JsonObject {
  const ref = karmadaBindingRef(i.t);
  const aggregatedStatus = works.map((w) => {
    const manifest = Array.isArray(w.status.status && (w.status.status as JsonObject).manifestStatuses)
      ? (((w.status.status as JsonObject).manifestStatuses as JsonObject[])[0] ?? {})
      : {};
    if (w.applied !== true) {
      const c = (((w.status.status as JsonObject).conditions as JsonObject[]) ?? []).find(
        (x) => x.type === WORK_APPLIED,
      );
      return {
        clusterName: w.cluster,
        applied: false,
        ...(c && typeof c.message === 'string' && c.status !== 'True' ? { appliedMessage: c.message } : {}),
        health: 'Unknown',
      };
    }
    return {
      clusterName: w.cluster,
      ...(isObject(manifest.status) ? { status: manifest.status } : {}),
      applied: true,
      health: typeof manifest.health === 'string' ? manifest.health : 'Unknown',
    };
  });
  const placementFailed = i.b.policy !== undefined && i.b.errors.length > 0 && targetClusters(i.b).length === 0;
  const scheduled = placementFailed
    ? { type: SCHEDULED, status: 'False', reason: 'NoClusterFit', message: i.b.errors.join('; ').slice(0, 1024) }
    : { type: SCHEDULED, status: 'True', reason: 'Success', message: SCHEDULED_MESSAGE };
  const fully = works.length > 0 && works.every((w) => w.applied === true);
  const fullyApplied = fully
    ? { type: FULLY_APPLIED, status: 'True', reason: 'FullyAppliedSuccess', message: FULLY_APPLIED_MESSAGE }
    : { type: FULLY_APPLIED, status: 'False', reason: 'FullyAppliedFailed', message: NOT_FULLY_APPLIED_MESSAGE };
  const conditions = [scheduled, fullyApplied].map((c) => ({
    ...c,
    lastTransitionTime: i.since(ref.path, c.type, c.status),
  }));
  const status: JsonObject = { conditions, aggregatedStatus };
  if (scheduled.status === 'True') {
    if (generation !== undefined) status.schedulerObservedGeneration = generation;
    status.lastScheduledTime = i.since(ref.path, 'lastScheduledTime', scheduleResult(i.b));
  }
  return {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
    status,
  };
}
