// Karmada's Event reasons and messages (pkg/events and the controllers that emit them, v1.18), for the
// events written beside Karmada's objects (karmada-objects.ts). Pure: each function is one of Karmada's
// message formats; who gets which event, and when, is the writer's.

import { dependenciesOf, hasDependencies } from '../engine/dependencies.js';
import type { DispatchConflict } from '../engine/dispatch.js';
import type { ObjectRef } from '../engine/types.js';
import type { JsonObject } from '../kube/objects.js';
import type { PolicyRef } from './binding.js';

export type KarmadaEventReason =
  | 'ApplyPolicySucceed'
  | 'PreemptPolicySucceed'
  | 'GetReplicasSucceed'
  | 'GetDependenciesSucceed'
  | 'ScheduleBindingSucceed'
  | 'ScheduleBindingFailed'
  | 'SyncScheduleResultToDependenciesSucceed'
  | 'SyncWorkSucceed'
  | 'ApplyOverridePolicySucceed'
  | 'SyncSucceed'
  | 'SyncFailed'
  | 'WorkDispatching'
  | 'ReflectStatusSucceed'
  | 'InterpretHealthSucceed'
  | 'AggregateStatusSucceed'
  | 'EvictWorkloadFromClusterSucceed'
  | 'DependencyPolicyConflict';

const nsName = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

/** The detector's, on the template, once a policy is applied to it. */
export function applyPolicyMessage(p: PolicyRef): string {
  return p.kind === 'ClusterPropagationPolicy'
    ? `Apply cluster policy(${p.name}) succeed`
    : `Apply policy(${nsName(p.namespace, p.name)}) succeed`;
}

/** The detector's, on the template, when policy `next` took it from `prior`. */
export function preemptMessage(next: PolicyRef, prior: PolicyRef): string {
  if (next.kind === 'ClusterPropagationPolicy')
    return `Cluster propagation policy(${next.name}) preempted cluster propagation policy(${prior.name}) successfully`;
  const by = `Propagation policy(${nsName(next.namespace, next.name)})`;
  return prior.kind === 'ClusterPropagationPolicy'
    ? `${by} preempted cluster propagation policy(${prior.name}) successfully`
    : `${by} preempted propagation policy(${nsName(prior.namespace, prior.name)}) successfully`;
}

export const GET_REPLICAS_MESSAGE = 'Get replicas of resource template successfully.';
export const SYNC_DEPENDENCIES_MESSAGE = 'Sync schedule results to dependencies succeed.';
export const TEMPLATE_AGGREGATED_MESSAGE = 'Update Resource with AggregatedStatus successfully.';

/**
 * The dependencies distributor's, on a workload whose policy says propagateDeps: Go's `%+v` of its
 * DependentObjectReference list. Undefined for kinds that name no dependencies.
 */
export function dependenciesMessage(ref: ObjectRef, template: JsonObject): string | undefined {
  if (!hasDependencies(ref.apiVersion, ref.kind)) return undefined;
  const items = dependenciesOf(ref, template).map(
    (d) =>
      `{APIVersion:${d.ref.apiVersion} Kind:${d.ref.kind} Namespace:${d.ref.namespace ?? ''} Name:${d.ref.name} LabelSelector:<nil>}`,
  );
  return `Get dependencies([${items.join(' ')}]) succeed.`;
}

/** The scheduler's, on the binding and the template (a ClusterResourceBinding's has no colon after Result). */
export function scheduledMessage(clusterScoped: boolean, result: string): string {
  return `Binding has been scheduled successfully.${clusterScoped ? ' Result {' : ' Result: {'}${result}}`;
}

/** The binding controller's, on the binding and the template, once its Works are written. */
export function syncWorkMessage(b: { namespace?: string; name: string }): string {
  return b.namespace
    ? `Sync work of ResourceBinding(${b.namespace}/${b.name}) successful.`
    : `Sync work of ClusterResourceBinding(${b.name}) successful.`;
}

/** The override manager's, on the template, for each override policy applied on a cluster. */
export function overrideMessage(p: PolicyRef, cluster: string): string {
  return p.kind === 'ClusterOverridePolicy'
    ? `Apply cluster override policy(${p.name}) for cluster(${cluster}) succeed.`
    : `Apply override policy(${nsName(p.namespace, p.name)}) for cluster(${cluster}) succeed.`;
}

/** The execution controller's, on the Work (`work`) and on the template (`workload`), after a sync. */
export function syncedMessages(
  work: { namespace: string; name: string },
  cluster: string,
  manifest: { namespace?: string; name: string },
): { work: string; workload: string } {
  return {
    work: `Sync work(${work.namespace}/${work.name}) to cluster(${cluster}) successful.`,
    workload: `Successfully applied resource(${nsName(manifest.namespace, manifest.name)}) to cluster ${cluster}`,
  };
}

export function syncFailedMessages(
  work: { namespace: string; name: string },
  cluster: string,
  manifest: { namespace?: string; name: string },
  err: string,
): { work: string; workload: string } {
  return {
    work: `Failed to sync work(${work.namespace}/${work.name}) to cluster(${cluster}), err: ${err}`,
    workload: `Failed to create or update resource(${nsName(manifest.namespace, manifest.name)}) in member cluster(${cluster}): ${err}`,
  };
}

/** The work status controller's, on the Work, when it reflected the member's copy and judged its health. */
export function reflectMessage(m: { kind: string; namespace?: string; name: string }): string {
  return `Reflect status for object(${m.kind}/${m.namespace ?? ''}/${m.name}) succeed.`;
}

export function healthMessage(m: { kind: string; namespace?: string; name: string }, healthy: boolean): string {
  return `Interpret health of object(${m.kind}/${m.namespace ?? ''}/${m.name}) as ${healthy ? 'healthy' : 'unhealthy'}.`;
}

/** The binding status controller's, on the binding, when its aggregatedStatus changed. */
export function aggregatedMessage(b: { namespace?: string; name: string }): string {
  return b.namespace
    ? `Update ResourceBinding(${b.namespace}/${b.name}) with AggregatedStatus successfully.`
    : `Update ClusterResourceBinding(${b.name}) with AggregatedStatus successfully.`;
}

/** The taint manager's and failover's, on the binding and the template, when a cluster's copy is evicted. */
export function evictMessage(cluster: string): string {
  return `Evict from cluster ${cluster} succeed.`;
}

const CONFLICT_TEXT: Readonly<Record<DispatchConflict, string>> = {
  ConflictResolution: 'ConflictResolution conflicted (Overwrite vs Abort)',
  PreserveResourcesOnDeletion: 'PreserveResourcesOnDeletion conflicted (true vs false)',
};

/** The dependencies distributor's, on a dependency's binding, when its workloads' policies disagree. */
export function dependencyConflictMessage(conflicts: readonly DispatchConflict[]): string {
  const order: DispatchConflict[] = ['ConflictResolution', 'PreserveResourcesOnDeletion'];
  const reasons = order.filter((c) => conflicts.includes(c)).map((c) => CONFLICT_TEXT[c]);
  return `Dependency policy conflict detected: ${reasons.join('; ')}.`;
}
