// A template's Works in Karmada's shape (pure; karmada-shape.ts has the binding): one per cluster it is on,
// in karmada-es-<cluster>, named as Karmada names them, carrying the plan's rendered object for that
// cluster with Karmada's labels and annotations, and a status from the member's report: the Dispatching
// and Applied conditions and the manifest's reflected status and health, as Karmada's execution and work
// status controllers write them.

import { karmadaExecutionSpace, karmadaWorkName } from '../../api/work/karmada/names.js';
import {
  CONFLICT_RESOLUTION_ANNOTATION,
  CRB_NAME_ANNOTATION,
  CRB_PERMANENT_ID_LABEL,
  KARMADA_WORK,
  RB_NAME_ANNOTATION,
  RB_NAMESPACE_ANNOTATION,
  RB_PERMANENT_ID_LABEL,
  TEMPLATE_GENERATION_ANNOTATION,
  TEMPLATE_UID_ANNOTATION,
  WORK_APPLIED,
  WORK_APPLIED_MESSAGE,
  WORK_DISPATCHING,
  WORK_DISPATCHING_MESSAGE,
  WORK_PERMANENT_ID_LABEL,
  WORK_SUSPENDED_MESSAGE,
  type ResourceHealth,
} from '../../api/work/karmada/types.js';
import { TEMPLATE_UID_LABEL } from '../../api/work/v1alpha1/types.js';
import { splitApiVersion } from '../kube/discovery.js';
import { isObject, type JsonObject } from '../kube/objects.js';
import type { ClusterStatus } from './binding.js';
import type { MemberReport } from './execute.js';
import {
  karmadaBindingRef,
  karmadaWorkPath,
  workClusters,
  workPermanentId,
  type KarmadaInput,
} from './karmada-shape.js';

/** Kinds Karmada's native interpreter judges the health of (others count as healthy). */
export const HEALTH_KINDS: ReadonlySet<string> = new Set([
  'Deployment',
  'StatefulSet',
  'ReplicaSet',
  'DaemonSet',
  'Service',
  'Ingress',
  'PersistentVolumeClaim',
  'Pod',
  'PodDisruptionBudget',
]);
/** Kinds whose template status Karmada aggregates from its members (the template's AggregateStatusSucceed). */
export const AGGREGATE_KINDS: ReadonlySet<string> = new Set([
  'Deployment',
  'ReplicaSet',
  'Service',
  'Ingress',
  'Job',
  'CronJob',
  'DaemonSet',
  'StatefulSet',
  'Pod',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'PodDisruptionBudget',
  'HorizontalPodAutoscaler',
]);

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Whether a cluster's copy counts as applied (true), failed (false) or not known yet (undefined). */
export function appliedState(c: ClusterStatus): boolean | undefined {
  if (c.state === 'Applied' || c.state === 'Evicting') return true;
  if (c.state === 'Failed' || c.state === 'Conflict') return false;
  return undefined;
}

function health(c: ClusterStatus, kind: string): ResourceHealth {
  if (!HEALTH_KINDS.has(kind)) return 'Healthy';
  const s = c.health?.state;
  return s === 'Healthy' ? 'Healthy' : s === 'Progressing' ? 'Unhealthy' : 'Unknown';
}

/** The member copy's status as Karmada's status reflection keeps it (a Deployment's counts; else the whole status). */
function reflectedStatus(kind: string, c: ClusterStatus, r: MemberReport | undefined): JsonObject | undefined {
  const status = r?.observed?.status;
  if (!status || Object.keys(status).length === 0) return undefined;
  if (kind !== 'Deployment') return status;
  const out: JsonObject = {};
  for (const k of ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas'])
    if (num(status[k]) !== undefined) out[k] = status[k]!;
  if (num(status.observedGeneration) !== undefined) out.observedGeneration = status.observedGeneration!;
  if (r?.observed?.generation !== undefined) out.generation = r.observed.generation;
  if (c.observedGeneration !== undefined) out.resourceTemplateGeneration = c.observedGeneration;
  return out;
}

/** The object a Work carries for `cluster`: the plan's rendered object there, else the template as given. */
function manifestBase(i: KarmadaInput, cluster: string): JsonObject {
  const step = i.plan?.steps.get(cluster);
  if (step?.action === 'apply') return structuredClone(step.object);
  const meta = isObject(i.template.metadata) ? i.template.metadata : {};
  const { status: _status, metadata: _metadata, ...rest } = i.template;
  const keep: JsonObject = { name: i.t.name };
  if (i.t.namespace) keep.namespace = i.t.namespace;
  if (isObject(meta.labels)) keep.labels = meta.labels;
  if (isObject(meta.annotations)) keep.annotations = meta.annotations;
  return { ...structuredClone(rest), metadata: keep };
}

export interface KarmadaWorkParts {
  cluster: string;
  path: string;
  name: string;
  namespace: string;
  /** Metadata and spec. */
  object: JsonObject;
  /** The status subresource's body. */
  status: JsonObject;
  applied: boolean | undefined;
  /** The manifest's kind, namespace and name (Karmada's event messages). */
  manifest: { kind: string; namespace?: string; name: string };
}

/** One Work per cluster the template is on. `previous` gives a Work's last Applied condition, kept while the cluster is not reached. */
export function karmadaWorks(i: KarmadaInput, previous: (path: string) => JsonObject | undefined): KarmadaWorkParts[] {
  const { t, b } = i;
  const ref = karmadaBindingRef(t);
  const bindingId = { [t.namespace ? RB_PERMANENT_ID_LABEL : CRB_PERMANENT_ID_LABEL]: t.uid };
  const bindingAnnotations: Record<string, string> = t.namespace
    ? { [RB_NAMESPACE_ANNOTATION]: t.namespace, [RB_NAME_ANNOTATION]: ref.name }
    : { [CRB_NAME_ANNOTATION]: ref.name };
  const generation = num(isObject(i.template.metadata) ? i.template.metadata.generation : undefined);
  return workClusters(b).map((c) => {
    const manifest = manifestBase(i, c.name);
    const meta = isObject(manifest.metadata) ? manifest.metadata : {};
    meta.labels = { ...(isObject(meta.labels) ? meta.labels : {}), ...bindingId };
    meta.annotations = {
      ...(isObject(meta.annotations) ? meta.annotations : {}),
      ...(generation === undefined ? {} : { [TEMPLATE_GENERATION_ANNOTATION]: String(generation) }),
      [TEMPLATE_UID_ANNOTATION]: t.uid,
      ...bindingAnnotations,
      [CONFLICT_RESOLUTION_ANNOTATION]: b.conflictResolution === 'Overwrite' ? 'overwrite' : 'abort',
    };
    manifest.metadata = meta;
    const mKind = typeof manifest.kind === 'string' ? manifest.kind : t.kind;
    const mName = typeof meta.name === 'string' ? meta.name : t.name;
    const mNamespace = typeof meta.namespace === 'string' ? meta.namespace : undefined;
    const name = karmadaWorkName(mKind, mName, mNamespace);
    const path = karmadaWorkPath(c.name, name);
    const suspended = c.state === 'Suspended' || b.suspended === 'all' || (b.suspended?.has(c.name) ?? false);
    const object: JsonObject = {
      apiVersion: KARMADA_WORK.apiVersion,
      kind: KARMADA_WORK.kind,
      metadata: {
        name,
        namespace: karmadaExecutionSpace(c.name),
        labels: { ...bindingId, [WORK_PERMANENT_ID_LABEL]: workPermanentId(t, c.name), [TEMPLATE_UID_LABEL]: t.uid },
        annotations: bindingAnnotations,
      },
      spec: {
        workload: { manifests: [manifest] },
        ...(suspended ? { suspendDispatching: true } : {}),
        ...(b.preserveResourcesOnDeletion ? { preserveResourcesOnDeletion: true } : {}),
      },
    };
    const applied = appliedState(c);
    const conditions: JsonObject[] = [];
    const dispatching = suspended
      ? { type: WORK_DISPATCHING, status: 'False', reason: 'SuspendDispatching', message: WORK_SUSPENDED_MESSAGE }
      : { type: WORK_DISPATCHING, status: 'True', reason: 'Dispatching', message: WORK_DISPATCHING_MESSAGE };
    conditions.push({ ...dispatching, lastTransitionTime: i.since(path, dispatching.type, dispatching.status) });
    if (applied === true)
      conditions.push({
        type: WORK_APPLIED,
        status: 'True',
        reason: 'AppliedSuccessful',
        message: WORK_APPLIED_MESSAGE,
        lastTransitionTime: i.since(path, WORK_APPLIED, 'True'),
      });
    else if (applied === false)
      conditions.push({
        type: WORK_APPLIED,
        status: 'False',
        reason: 'AppliedFailed',
        message: `Failed to apply all manifests (0/1): ${c.message ?? c.state}`.slice(0, 1024),
        lastTransitionTime: i.since(path, WORK_APPLIED, 'False'),
      });
    else {
      const kept = previous(path);
      if (kept) conditions.push(kept);
    }
    const status: JsonObject = { conditions };
    const reflected = applied === true ? reflectedStatus(mKind, c, i.reports?.get(c.name)) : undefined;
    if (applied === true) {
      const gv = splitApiVersion(typeof manifest.apiVersion === 'string' ? manifest.apiVersion : t.apiVersion);
      status.manifestStatuses = [
        {
          identifier: {
            ordinal: 0,
            ...(gv.group ? { group: gv.group } : {}),
            version: gv.version,
            kind: mKind,
            resource: i.resource,
            ...(mNamespace ? { namespace: mNamespace } : {}),
            name: mName,
          },
          ...(reflected ? { status: reflected } : {}),
          health: health(c, mKind),
        },
      ];
    }
    return {
      cluster: c.name,
      path,
      name,
      namespace: karmadaExecutionSpace(c.name),
      object,
      status: {
        apiVersion: KARMADA_WORK.apiVersion,
        kind: KARMADA_WORK.kind,
        metadata: { name, namespace: karmadaExecutionSpace(c.name) },
        status,
      },
      applied,
      manifest: { kind: mKind, ...(mNamespace ? { namespace: mNamespace } : {}), name: mName },
    };
  });
}
