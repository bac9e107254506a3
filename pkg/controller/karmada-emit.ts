// Which of Karmada's Events follow a write of a template's Karmada objects (karmada-objects.ts), on which
// object, and when: only where Karmada's controllers emit them, and only when the object they are about
// changed (a skipped or no-op write emits nothing). Messages are karmada-events.ts's.
//
//   a dependency no policy claims   binding: DependencyPolicyConflict, when its spec or the conflict changed
//   whose workloads' policies       (conflictResolution, preserveResourcesOnDeletion)
//   disagree
//   binding spec changed, claimed   template: ApplyPolicySucceed, PreemptPolicySucceed (the prior claiming
//                                   policy still exists and the new one says preemption: Always),
//                                   GetReplicasSucceed (workload kinds), GetDependenciesSucceed and, on the
//                                   binding, SyncScheduleResultToDependenciesSucceed (propagateDeps)
//   target clusters changed         binding and template: ScheduleBindingSucceed (ScheduleBindingFailed)
//   a new eviction task             binding and template: EvictWorkloadFromClusterSucceed
//   a Work's spec changed           template: ApplyOverridePolicySucceed per override policy on that cluster
//   a Work's status changed         Work: WorkDispatching (its Dispatching condition moved); Work and
//                                   template: SyncSucceed (SyncFailed); Work: ReflectStatusSucceed,
//                                   InterpretHealthSucceed (kinds with a health rule)
//   Works written or deleted        binding and template: SyncWorkSucceed
//   aggregatedStatus changed        binding: AggregateStatusSucceed; the template too for kinds Karmada
//                                   aggregates the status of

import { createHash } from 'node:crypto';

import { isObject, type JsonObject } from '../kube/objects.js';
import type { PolicyRef } from './binding.js';
import type { EventRecorder, InvolvedObject } from './events.js';
import {
  aggregatedMessage,
  applyPolicyMessage,
  dependenciesMessage,
  dependencyConflictMessage,
  evictMessage,
  GET_REPLICAS_MESSAGE,
  healthMessage,
  overrideMessage,
  preemptMessage,
  reflectMessage,
  scheduledMessage,
  SYNC_DEPENDENCIES_MESSAGE,
  syncedMessages,
  syncFailedMessages,
  syncWorkMessage,
  TEMPLATE_AGGREGATED_MESSAGE,
} from './karmada-events.js';
import { REPLICA_KINDS, scheduleResult, type KarmadaInput } from './karmada-shape.js';
import { AGGREGATE_KINDS, HEALTH_KINDS, type KarmadaWorkParts } from './karmada-work-shape.js';

/** What the events of a template were last decided from. */
export interface KarmadaTemplateMemory {
  /** The claiming policy last written on its binding. */
  policy?: PolicyRef;
  /** spec.clusters as `name:replicas, …`. */
  schedule?: string;
  /** Clusters with a graceful eviction task. */
  evicted: Set<string>;
  /** Paths of its Works on the hub. */
  works: Set<string>;
  /** Digest of status.aggregatedStatus as last written. */
  aggregated?: string;
  /** The DependencyPolicyConflict message last emitted while the conflict holds. */
  conflict?: string;
}

export interface KarmadaTargets {
  template: InvolvedObject;
  binding: InvolvedObject;
}

const same = (a: PolicyRef, b: PolicyRef) => a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;

/** After the binding's spec was applied (`changed`: it really changed). */
export function bindingEvents(
  events: EventRecorder,
  on: KarmadaTargets,
  i: KarmadaInput,
  memory: KarmadaTemplateMemory,
  changed: boolean,
  policyExists: (p: PolicyRef) => boolean,
): void {
  const { b, t } = i;
  const spec = i.policy && isObject(i.policy.spec) ? i.policy.spec : {};
  const both = (type: 'Normal' | 'Warning', reason: Parameters<EventRecorder['record']>[2], message: string) => {
    events.record(on.binding, type, reason, message);
    events.record(on.template, type, reason, message);
  };
  if (changed && b.policy) {
    events.record(on.template, 'Normal', 'ApplyPolicySucceed', applyPolicyMessage(b.policy));
    const prior = memory.policy;
    if (prior && !same(prior, b.policy) && spec.preemption === 'Always' && policyExists(prior))
      events.record(on.template, 'Normal', 'PreemptPolicySucceed', preemptMessage(b.policy, prior));
    if (REPLICA_KINDS.has(t.kind)) events.record(on.template, 'Normal', 'GetReplicasSucceed', GET_REPLICAS_MESSAGE);
    const { uid: _uid, ...ref } = t;
    const deps = spec.propagateDeps === true ? dependenciesMessage(ref, i.template) : undefined;
    if (deps) {
      events.record(on.template, 'Normal', 'GetDependenciesSucceed', deps);
      events.record(on.binding, 'Normal', 'SyncScheduleResultToDependenciesSucceed', SYNC_DEPENDENCIES_MESSAGE);
    }
  }
  dependencyConflictEvent(events, on, i, memory, changed);
  if (!b.policy) return;
  memory.policy = b.policy;
  const schedule = scheduleResult(b);
  if (schedule !== memory.schedule) {
    if (schedule === '' && b.errors.length > 0) both('Warning', 'ScheduleBindingFailed', b.errors.join('; '));
    else both('Normal', 'ScheduleBindingSucceed', scheduledMessage(!t.namespace, schedule));
  }
  memory.schedule = schedule;
  const tasks = new Set((b.evictionTasks ?? []).map((e) => e.fromCluster));
  for (const c of tasks) if (!memory.evicted.has(c)) both('Normal', 'EvictWorkloadFromClusterSucceed', evictMessage(c));
  memory.evicted = tasks;
}

/**
 * A dependency no policy claims whose workloads' policies disagree (the plan's dependencyConflicts): a
 * Warning on its binding, as Karmada's dependencies distributor writes one each time it updates the
 * attached binding; here when the binding's spec changed or the conflict did, not on every re-apply.
 */
function dependencyConflictEvent(
  events: EventRecorder,
  on: KarmadaTargets,
  i: KarmadaInput,
  memory: KarmadaTemplateMemory,
  changed: boolean,
): void {
  const conflicts = i.b.policy ? [] : (i.plan?.dependencyConflicts ?? []);
  const message = conflicts.length > 0 ? dependencyConflictMessage(conflicts) : undefined;
  if (message && (changed || message !== memory.conflict))
    events.record(on.binding, 'Warning', 'DependencyPolicyConflict', message);
  memory.conflict = message;
}

/** After one Work's spec and status were applied (`before`: its conditions as written before). */
export function workEvents(
  events: EventRecorder,
  on: { template: InvolvedObject; work: InvolvedObject },
  i: KarmadaInput,
  w: KarmadaWorkParts,
  before: readonly JsonObject[] | undefined,
  specChanged: boolean,
  statusChanged: boolean,
): void {
  const entry = [...i.b.clusters, ...(i.b.agentClusters ?? [])].find((c) => c.name === w.cluster);
  if (specChanged)
    for (const p of entry?.overrides ?? [])
      events.record(on.template, 'Normal', 'ApplyOverridePolicySucceed', overrideMessage(p, w.cluster));
  if (!specChanged && !statusChanged) return;
  const status = w.status.status as JsonObject;
  const now = (Array.isArray(status.conditions) ? status.conditions : []).filter(isObject);
  const prev = (type: string) => before?.find((c) => c.type === type);
  const cur = (type: string) => now.find((c) => c.type === type);
  const dispatching = cur('Dispatching');
  if (dispatching && prev('Dispatching')?.status !== dispatching.status)
    events.record(on.work, 'Normal', 'WorkDispatching', String(dispatching.message));
  const applied = cur('Applied');
  const was = prev('Applied');
  const work = { namespace: w.namespace, name: w.name };
  if (w.applied === true && (specChanged || was?.status !== 'True')) {
    const m = syncedMessages(work, w.cluster, w.manifest);
    events.record(on.work, 'Normal', 'SyncSucceed', m.work);
    events.record(on.template, 'Normal', 'SyncSucceed', m.workload);
  } else if (w.applied === false && applied && (specChanged || was?.message !== applied.message)) {
    const m = syncFailedMessages(work, w.cluster, w.manifest, entry?.message ?? String(entry?.state ?? 'failed'));
    events.record(on.work, 'Warning', 'SyncFailed', m.work);
    events.record(on.template, 'Warning', 'SyncFailed', m.workload);
  }
  const manifest = Array.isArray(status.manifestStatuses) ? status.manifestStatuses.filter(isObject)[0] : undefined;
  if (statusChanged && manifest) {
    events.record(on.work, 'Normal', 'ReflectStatusSucceed', reflectMessage(w.manifest));
    if (HEALTH_KINDS.has(w.manifest.kind) && (manifest.health === 'Healthy' || manifest.health === 'Unhealthy'))
      events.record(
        on.work,
        'Normal',
        'InterpretHealthSucceed',
        healthMessage(w.manifest, manifest.health === 'Healthy'),
      );
  }
}

/** After every Work and the binding's status were written. */
export function afterWorksEvents(
  events: EventRecorder,
  on: KarmadaTargets,
  i: KarmadaInput,
  memory: KarmadaTemplateMemory,
  w: { synced: readonly string[]; removed: boolean; aggregated: JsonObject; changed: boolean },
): void {
  const ref = { ...(on.binding.namespace ? { namespace: on.binding.namespace } : {}), name: on.binding.name };
  if (w.synced.length > 0 || w.removed) {
    events.record(on.binding, 'Normal', 'SyncWorkSucceed', syncWorkMessage(ref));
    events.record(on.template, 'Normal', 'SyncWorkSucceed', syncWorkMessage(ref));
  }
  const items = ((w.aggregated.status as JsonObject).aggregatedStatus as JsonObject[] | undefined) ?? [];
  const digest = createHash('sha256').update(JSON.stringify(items)).digest('base64');
  if (w.changed && digest !== memory.aggregated && items.length > 0) {
    events.record(on.binding, 'Normal', 'AggregateStatusSucceed', aggregatedMessage(ref));
    if (AGGREGATE_KINDS.has(i.t.kind) && items.some((s) => isObject(s.status)))
      events.record(on.template, 'Normal', 'AggregateStatusSucceed', TEMPLATE_AGGREGATED_MESSAGE);
  }
  if (w.changed) memory.aggregated = digest;
}
