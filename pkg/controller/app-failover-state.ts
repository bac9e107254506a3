// Application failover as the template reconciler keeps it (the policy's rules are app-failover.ts's,
// pure): since when each targeted copy has been unhealthy (Applied, its health Progressing), and, once
// that is longer than the policy tolerates, the clusters the template is evicted from for its current
// generation (a new generation is tried everywhere again), with the labels statePreservation keeps for the
// copies on the clusters it goes to instead.

import type { Logger } from '../runtime/log.js';
import { labelNewCopies, preservedLabels } from './app-failover.js';
import type { MemberReport } from './execute.js';
import type { TemplatePlan } from './plan.js';
import { describeKey } from './queue.js';

interface Evicted {
  generation: number | undefined;
  clusters: Set<string>;
  /** The clusters the template was on before failover. */
  before: Set<string>;
  labels: Record<string, string>;
}

export class ApplicationFailover {
  /** Template key → cluster → since when its copy there has been unhealthy. */
  private readonly unhealthySince = new Map<string, Map<string, number>>();
  /** Template key → the clusters application failover evicted it from, for one template generation. */
  private readonly evicted = new Map<string, Evicted>();

  constructor(private readonly logger: Logger) {}

  forget(key: string): void {
    this.unhealthySince.delete(key);
    this.evicted.delete(key);
  }

  /** The clusters the template is evicted from (placement leaves them out). */
  excluded(key: string): ReadonlySet<string> | undefined {
    return this.evicted.get(key)?.clusters;
  }

  /**
   * Before rendering: the clusters whose copy has been unhealthy longer than the last plan's (`previous`)
   * policy tolerates join the template's evicted set. Returns the clusters evicted by this call.
   */
  assess(
    key: string,
    generation: number | undefined,
    now: number,
    previous: TemplatePlan | undefined,
    reports: ReadonlyMap<string, MemberReport> | undefined,
  ): Set<string> {
    let ev = this.evicted.get(key);
    if (ev && ev.generation !== generation) {
      this.evicted.delete(key);
      ev = undefined;
    }
    const out = new Set<string>();
    const app = previous?.appFailover;
    if (!previous || !app) return out;
    for (const [c, since] of this.unhealthySince.get(key) ?? []) {
      if (now - since < app.tolerationMs || !previous.clusters.has(c) || ev?.clusters.has(c)) continue;
      ev ??= { generation, clusters: new Set(), before: new Set(previous.clusters.keys()), labels: {} };
      ev.clusters.add(c);
      Object.assign(ev.labels, preservedLabels(app.rules, reports?.get(c)?.observed?.status));
      this.unhealthySince.get(key)?.delete(c);
      out.add(c);
      this.logger.info('application failover: evicting an unhealthy copy', {
        template: describeKey(key),
        cluster: c,
        unhealthyForMs: now - since,
      });
    }
    if (ev) this.evicted.set(key, ev);
    return out;
  }

  /** statePreservation: the kept labels go onto the copies on clusters the template was not on before failover. */
  preserveState(key: string, p: TemplatePlan): void {
    const ev = this.evicted.get(key);
    if (ev) labelNewCopies(p, ev.labels, ev.before);
  }

  /** When the first unhealthy copy of plan `p` runs out of toleration (Infinity: none). */
  due(key: string, p: TemplatePlan): number {
    const app = p.appFailover;
    return app
      ? Math.min(...[...(this.unhealthySince.get(key)?.values() ?? [])].map((t) => t + app.tolerationMs))
      : Infinity;
  }

  /**
   * A member reported on plan `p`: how long its copy has been unhealthy. Returns after how long to look
   * at the template again when the copy just turned unhealthy.
   */
  observe(key: string, member: string, r: MemberReport, p: TemplatePlan): number | undefined {
    const app = p.appFailover;
    if (!app || !p.clusters.has(member)) return undefined;
    let since = this.unhealthySince.get(key);
    const unhealthy = r.status.state === 'Applied' && r.status.health?.state === 'Progressing';
    if (unhealthy && !since?.has(member)) {
      if (!since) this.unhealthySince.set(key, (since = new Map<string, number>()));
      since.set(member, Date.now());
      return app.tolerationMs + 50;
    }
    if (!unhealthy && r.status.state === 'Applied') since?.delete(member);
    return undefined;
  }
}
