// Graceful eviction (Karmada's gracefulEvictionTasks): what happens to a template's copy on a cluster it
// was evicted from, and what the binding says about it. Pure; the template reconciler (template.ts)
// keeps the tasks between plans and carries out the result.
//
// The rules are Karmada's taint manager and graceful eviction controller:
//   - a cluster the last plan targeted that an untolerated NoExecute taint (or a run-out
//     tolerationSeconds, or application failover) now keeps the template off gets a task, purge mode
//     from the policy's failover.cluster.purgeMode, else the controller's --eviction-purge-mode
//     (application failover: failover.application's purgeMode and gracePeriodSeconds);
//   - Directly: the copy goes now;
//   - Gracefully: the copy stays until every cluster of the new placement reports the template applied
//     and healthy, or until the task's timeout (gracePeriodSeconds, else --graceful-eviction-timeout)
//     has passed since it was created. When no cluster can take the template, only the timeout ends it:
//     Karmada judges the new placement's health only once scheduling succeeded
//     (status.schedulerObservedGeneration), which a scheduling that finds no cluster does not set;
//   - Never: the copy stays until the cluster takes the template again;
//   - a cluster targeted again drops its task (Karmada keeps a cluster with a task out of scheduling
//     until the task ends, then places the template there anew);
//   - statePreservation (failover.cluster's, Karmada's StatefulFailoverInjection): a taint eviction's task
//     keeps the labels its rules take from the evicted copy's status as last reported
//     (preservedLabelState) and the clusters the template was on (clustersBeforeFailover); while that
//     task is the newest, its purge mode Directly and the template on one cluster, the copy there gets
//     the labels unless it was there before (Karmada's binding controller, injectReservedLabelState).
// While a copy is kept, the binding lists its cluster as Evicting, with the time it is kept until, and
// an Evicting condition says why. The tasks live in the binding's spec, as Karmada's do: a controller
// that starts reads them back (bindingTasks) before its first plan of a template, so a restart neither ends
// a task nor restarts its timeout.

import type { JsonObject } from '../kube/objects.js';
import { isObject, ownString } from '../kube/objects.js';
import type { StatePreservationRule } from '../engine/dispatch.js';
import { stringMap } from '../engine/json.js';
import { preservedLabels, type AppFailover } from './app-failover.js';
import type { ClusterStatus, PurgeMode } from '../../api/work/v1alpha1/types.js';
import type { EvictionTask } from './binding.js';

/** A time as the binding writes it (RFC 3339, to the second). */
export function timestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** When a task ends by time (undefined: Never, which no time ends). */
export function taskExpires(t: EvictionTask, timeoutMs: number): number | undefined {
  return t.purgeMode === 'Never' ? undefined : t.created + (t.gracePeriodMs ?? timeoutMs);
}

/**
 * Whether the new placement is healthy for a graceful eviction: every targeted cluster reports the
 * template applied and healthy. False when nothing is targeted (scheduling found no cluster).
 */
export function placementHealthy(
  targets: readonly string[],
  statusOf: (cluster: string) => ClusterStatus | undefined,
): boolean {
  if (targets.length === 0) return false;
  return targets.every((c) => {
    const s = statusOf(c);
    return s?.state === 'Applied' && s.health?.state === 'Healthy';
  });
}

export interface EvictionInput {
  /** The template's tasks from before this plan, by cluster. */
  tasks: ReadonlyMap<string, EvictionTask>;
  /** The clusters this plan targets. */
  targets: readonly string[];
  /** The clusters placement evicted the template from (NoExecute taints, application failover). */
  evicted: readonly string[];
  /** Whether the previous plan targeted the cluster (only a cluster taken off the template gets a task). */
  wasTargeted(cluster: string): boolean;
  /**
   * The purge mode of a taint eviction (Karmada's taint manager): the policy's spec.failover.cluster.purgeMode
   * (Gracefully when failover.cluster says none), else — no failover.cluster — --eviction-purge-mode.
   */
  purgeMode: PurgeMode;
  /** The clusters the previous plan targeted (a new task's clustersBeforeFailover). */
  before: readonly string[];
  /** failover.cluster.statePreservation's rules, and the status each cluster's copy last reported. */
  statePreservation?: { rules: readonly StatePreservationRule[]; status(cluster: string): unknown } | undefined;
  /** Application failover: the clusters it evicted by this plan, and the policy's rules. */
  application?: { clusters: ReadonlySet<string>; failover: AppFailover } | undefined;
  /** Why placement left each cluster out (the engine's first reason). */
  reasons: ReadonlyMap<string, string>;
  /** Whether the new placement is healthy (placementHealthy). */
  healthy: boolean;
  now: number;
  /** --graceful-eviction-timeout, for tasks without their own grace period. */
  timeoutMs: number;
}

export interface EvictionOutcome {
  /** The tasks that remain, in the order they were made. */
  tasks: EvictionTask[];
  /** The clusters whose copies are kept, with the binding entry saying so. */
  kept: Map<string, ClusterStatus>;
  /** When the next task ends by time. */
  due?: number;
  /** The clusters whose tasks this plan made. */
  created: string[];
  /** Clusters whose new task lacks a label statePreservation names (the status did not have it), with those labels. */
  unpreserved: Map<string, string[]>;
}

/** The template's eviction tasks after a new plan, and the copies they keep (see the file comment). */
export function assessEvictions(i: EvictionInput): EvictionOutcome {
  const targeted = new Set(i.targets);
  const tasks = new Map([...i.tasks].filter(([c]) => !targeted.has(c)));
  const out: EvictionOutcome = { tasks: [], kept: new Map(), created: [], unpreserved: new Map() };
  for (const c of i.evicted) {
    if (targeted.has(c) || tasks.has(c) || !i.wasTargeted(c)) continue;
    const app = i.application?.clusters.has(c) ? i.application.failover : undefined;
    const sp = app ? undefined : i.statePreservation;
    const labels = sp ? preservedLabels(sp.rules, sp.status(c)) : {};
    const missing = (sp?.rules ?? []).map((r) => r.aliasLabelName).filter((l) => !Object.hasOwn(labels, l));
    if (missing.length > 0) out.unpreserved.set(c, missing);
    tasks.set(c, {
      fromCluster: c,
      purgeMode: app ? app.purgeMode : i.purgeMode,
      reason: app ? 'ApplicationFailure' : 'TaintUntolerated',
      producer: app ? 'ApplicationFailover' : 'TaintManager',
      creationTimestamp: timestamp(i.now),
      created: i.now,
      ...(app ? { gracePeriodMs: app.gracePeriodMs } : {}),
      ...(Object.keys(labels).length > 0
        ? { preservedLabelState: labels, clustersBeforeFailover: [...i.before].sort() }
        : {}),
    });
    out.created.push(c);
  }
  for (const [c, t] of tasks) {
    const expires = taskExpires(t, i.timeoutMs);
    if (expires !== undefined && (i.now >= expires || i.healthy)) continue;
    out.tasks.push(t);
    if (expires !== undefined) out.due = Math.min(out.due ?? Infinity, expires);
    if (t.purgeMode !== 'Directly') out.kept.set(c, evictingEntry(t, i.targets, i.reasons.get(c), i.timeoutMs));
  }
  return out;
}

/**
 * statePreservation's labels for plan targets `targets`, from the newest task (Karmada's binding controller):
 * only when the template is on one cluster and that task's purge mode is Directly; the clusters the template
 * was on before that eviction get none. Undefined: no labels.
 */
export function injectedState(
  tasks: readonly EvictionTask[],
  targets: readonly string[],
): { labels: Record<string, string>; before: ReadonlySet<string> } | undefined {
  const last = tasks.at(-1);
  if (targets.length !== 1 || last?.purgeMode !== 'Directly' || !last.preservedLabelState) return undefined;
  return { labels: last.preservedLabelState, before: new Set(last.clustersBeforeFailover) };
}

/** The binding entry of a cluster whose evicted copy is kept: Evicting, until when, and why. */
export function evictingEntry(
  t: EvictionTask,
  targets: readonly string[],
  why: string | undefined,
  timeoutMs: number,
): ClusterStatus {
  const evicted = why ?? (t.reason === 'ApplicationFailure' ? 'evicted by application failover' : 'evicted');
  const expires = taskExpires(t, timeoutMs);
  if (expires === undefined)
    return {
      name: t.fromCluster,
      state: 'Evicting',
      message: `${evicted}; the copy is kept until the cluster takes the template again (purgeMode ${t.purgeMode})`,
    };
  const until = timestamp(expires);
  return {
    name: t.fromCluster,
    state: 'Evicting',
    keptUntil: until,
    message:
      targets.length === 0
        ? `${evicted}; the copy is kept until ${until} (purgeMode ${t.purgeMode}): no other cluster can take the template`
        : `${evicted}; the copy is kept until ${until}, or until ${targets.join(', ')} report the template healthy (purgeMode ${t.purgeMode})`,
  };
}

/**
 * The binding's Evicting condition: which evicted copies are kept and why. Reason NoOtherCluster when
 * nothing else is targeted, WaitingForHealthyPlacement when the new clusters are not all healthy yet,
 * PurgeModeNever when only the cluster's return ends it. Undefined when no copy is kept.
 */
export function evictingCondition(entries: readonly ClusterStatus[], targeted: number): JsonObject | undefined {
  const evicting = entries.filter((c) => c.state === 'Evicting');
  if (evicting.length === 0) return undefined;
  const reason =
    targeted === 0
      ? 'NoOtherCluster'
      : evicting.some((c) => c.keptUntil !== undefined)
        ? 'WaitingForHealthyPlacement'
        : 'PurgeModeNever';
  return {
    type: 'Evicting',
    status: 'True',
    reason,
    message: evicting.map((c) => `${c.name}: ${c.message ?? 'evicted; its copy is kept'}`).join('; '),
  };
}

/** At most this many tasks are read back from a binding (one per cluster; a fleet is smaller). */
const MAX_TASKS = 1_000;

/**
 * The eviction tasks a binding's spec.gracefulEvictionTasks lists (as this controller writes them), by
 * cluster; an entry without a cluster, a known purge mode or a readable creationTimestamp is left out.
 */
export function bindingTasks(binding: unknown): Map<string, EvictionTask> {
  const out = new Map<string, EvictionTask>();
  const spec = isObject(binding) && isObject(binding.spec) ? binding.spec : undefined;
  const list = spec && Array.isArray(spec.gracefulEvictionTasks) ? spec.gracefulEvictionTasks : [];
  for (const e of list.slice(0, MAX_TASKS)) {
    if (!isObject(e)) continue;
    const cluster = ownString(e, 'fromCluster');
    const mode = ownString(e, 'purgeMode');
    const at = ownString(e, 'creationTimestamp');
    const created = at === undefined ? NaN : Date.parse(at);
    if (!cluster || (mode !== 'Directly' && mode !== 'Gracefully' && mode !== 'Never') || !Number.isFinite(created))
      continue;
    const grace = Object.hasOwn(e, 'gracePeriodSeconds') ? e.gracePeriodSeconds : undefined;
    const labels = labelState(Object.hasOwn(e, 'preservedLabelState') ? e.preservedLabelState : undefined);
    const before = Object.hasOwn(e, 'clustersBeforeFailover') ? e.clustersBeforeFailover : undefined;
    out.set(cluster, {
      fromCluster: cluster,
      purgeMode: mode,
      reason: ownString(e, 'reason') ?? 'TaintUntolerated',
      producer: ownString(e, 'producer') ?? 'TaintManager',
      creationTimestamp: timestamp(created),
      created,
      ...(typeof grace === 'number' && Number.isFinite(grace) && grace > 0 ? { gracePeriodMs: grace * 1000 } : {}),
      ...(labels
        ? {
            preservedLabelState: labels,
            clustersBeforeFailover: (Array.isArray(before) ? before : [])
              .slice(0, MAX_TASKS)
              .filter((c): c is string => typeof c === 'string'),
          }
        : {}),
    });
  }
  return out;
}

/** At most this many labels are read back from a task's preservedLabelState. */
const MAX_LABELS = 64;

/** preservedLabelState as written (own properties, string values, at most MAX_LABELS); undefined when empty. */
function labelState(v: unknown): Record<string, string> | undefined {
  const labels = stringMap(v, MAX_LABELS);
  return Object.keys(labels).length > 0 ? labels : undefined;
}
