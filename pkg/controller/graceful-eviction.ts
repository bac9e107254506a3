// Graceful eviction, as the template reconciler keeps it (the rules are eviction.ts's, pure): each
// template's eviction tasks, one per cluster a NoExecute taint or application failover took it off, made,
// kept and ended with each plan; a kept copy's cluster gets a `keep` step and an Evicting entry, and the
// copy on the cluster the template moved to the labels failover.cluster.statePreservation kept. A
// starting controller reads the tasks back from the template's binding before its first plan of it, so a
// restart keeps them, their timeouts and their preserved labels.

import { isObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import type { ClusterStatus, EvictionTask, PurgeMode } from './binding.js';
import { labelNewCopies } from './app-failover.js';
import { assessEvictions, bindingTasks, injectedState, placementHealthy } from './eviction.js';
import type { EventRecorder } from './events.js';
import type { TemplateIdentity } from './ownership.js';
import type { TemplatePlan } from './plan.js';
import { describeKey } from './queue.js';

export interface GracefulEvictionOptions {
  events: EventRecorder;
  logger: Logger;
  /** How an evicted cluster's copy goes when the policy's spec.failover.cluster.purgeMode does not say. */
  purgeMode: PurgeMode;
  /** How long a Gracefully evicted copy is kept at most. */
  timeoutMs: number;
  /** The template's binding on the hub (undefined: none). */
  readBinding(t: TemplateIdentity): Promise<unknown>;
}

/** What the members said of a template, for a plan's evictions. */
export interface EvictionView {
  /** The clusters application failover evicted by this plan. */
  byApplication: ReadonlySet<string>;
  /** What cluster `c` last said of the template (its binding entry). */
  statusOf(cluster: string): ClusterStatus | undefined;
  /** The status of the template's copy on cluster `c`, as last reported (statePreservation reads it). */
  observed(cluster: string): unknown;
}

export class GracefulEviction {
  /** Template key → cluster → the eviction task of a cluster the template was taken off. */
  private readonly tasks = new Map<string, Map<string, EvictionTask>>();

  constructor(private readonly o: GracefulEvictionOptions) {}

  has(key: string): boolean {
    return this.tasks.has(key);
  }

  forget(key: string): void {
    this.tasks.delete(key);
  }

  /** Reads the template's eviction tasks back from its binding on the hub (a restart keeps them, and their timeouts). */
  async restore(key: string, t: TemplateIdentity): Promise<void> {
    const body = await this.o.readBinding(t);
    // Only this template's: a binding left by an earlier template of the same name says nothing of it.
    const resource = isObject(body) && isObject(body.spec) ? body.spec.resource : undefined;
    if (!isObject(resource) || resource.uid !== t.uid) return;
    const tasks = bindingTasks(body);
    if (tasks.size > 0) this.tasks.set(key, tasks);
  }

  /**
   * The template's tasks after plan `p` (`previous` the plan before it): a kept copy's cluster gets a `keep`
   * step and an Evicting entry, the new copy the preserved labels. Returns when the next task expires.
   */
  evict(
    key: string,
    p: TemplatePlan,
    previous: TemplatePlan | undefined,
    now: number,
    view: EvictionView,
  ): number | undefined {
    const targets = [...p.clusters.keys()];
    const app = p.appFailover;
    const rules = p.clusterStatePreservation;
    const out = assessEvictions({
      tasks: this.tasks.get(key) ?? new Map<string, EvictionTask>(),
      targets,
      evicted: [...p.evicted],
      wasTargeted: (c) => previous?.steps.has(c) === true,
      before: [...(previous?.clusters.keys() ?? [])],
      statePreservation: rules ? { rules, status: (c) => view.observed(c) } : undefined,
      purgeMode: p.clusterPurgeMode ?? this.o.purgeMode,
      application: app ? { clusters: view.byApplication, failover: app } : undefined,
      reasons: new Map(p.notChosen.map((n) => [n.cluster, n.reason])),
      healthy: placementHealthy(targets, (c) => view.statusOf(c)),
      now,
      timeoutMs: this.o.timeoutMs,
    });
    for (const [c, entry] of out.kept) p.steps.set(c, { action: 'keep', message: entry.message ?? 'evicted' });
    const preserved = injectedState(out.tasks, targets);
    if (preserved) labelNewCopies(p, preserved.labels, preserved.before);
    for (const [c, labels] of out.unpreserved) {
      const message = `statePreservation: the status last reported from ${c} has no value for ${labels.join(', ')}; the new copy goes without`;
      this.o.events.record(p.identity, 'Warning', 'StatePreservationFailed', message);
      this.o.logger.warn(message, { template: describeKey(key) });
    }
    const kept = out.created.flatMap((c) =>
      out.kept.has(c) ? [`${c}: ${out.kept.get(c)!.message ?? 'evicted'}`] : [],
    );
    if (kept.length > 0) {
      this.o.events.record(p.identity, 'Normal', 'Evicting', kept.join('; '));
      this.o.logger.info('evicted; the copy is kept', { template: describeKey(key), clusters: kept });
    }
    if (out.tasks.length > 0) this.tasks.set(key, new Map(out.tasks.map((t) => [t.fromCluster, t])));
    else this.tasks.delete(key);
    p.evictionTasks = out.tasks;
    p.evicting = [...out.kept.values()];
    return out.due;
  }
}
