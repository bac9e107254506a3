// The health taints of every cluster, as this process decides them (health-taints.ts), and what holds
// them back: a cluster's taints are those its hub Cluster carries until this process has judged it
// (a restart changes nothing), no taint is added while the hub view is stale (hub-liveness.ts), no
// NoExecute while most clusters are unhealthy at once (disruption.ts) or for a pull cluster whose agent
// never joined. Looks again at each cluster's next threshold, and at every cluster when the disruption
// mode or the hub view changes.

import { KeyedTimers } from '../runtime/clock.js';
import type { Logger } from '../runtime/log.js';
import { disruption, disruptionText, type Disruption } from './disruption.js';
import {
  healthTaints,
  healthTaintsOf,
  nextHealthCheck,
  type HealthTaint,
  type HealthTaintOptions,
} from './health-taints.js';
import type { Readiness } from './member-probe.js';

export interface ClusterHealthOptions extends HealthTaintOptions {
  /** Fraction of judged clusters not ready (more than two) from which nothing is evicted. */
  unhealthyThreshold: number;
  readiness(name: string): Readiness | undefined;
  isPull(name: string): boolean;
  /** A pull cluster whose agent has not joined yet. */
  awaitingAgent(name: string): boolean;
  /** Every cluster whose health is judged (members and pull clusters). */
  names(): Iterable<string>;
  hubStale(): boolean;
  /** The hub's Clusters have been listed (their taints seeded): nothing is judged before. */
  listed(): boolean;
  /** Cluster `name`'s health taints changed: into the engine and onto the hub. */
  onChange(name: string, taints: readonly HealthTaint[]): void;
  logger: Logger;
  now?: () => number;
}

export class ClusterHealth {
  private readonly taints = new Map<string, HealthTaint[]>();
  /** Clusters this process has judged (readiness known): the hub's taints are not taken for them again. */
  private readonly judged = new Set<string>();
  private readonly timers = new KeyedTimers();
  private mode: Disruption['mode'] = 'normal';
  private stale = false;
  /**
   * When a disruption ended or the hub view came back: not-ready time counts from there (kube's node
   * lifecycle controller resets its probe timestamps when it leaves full disruption), so the clusters
   * still down are not evicted the moment the first one comes back.
   */
  private clocksFrom = 0;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly o: ClusterHealthOptions) {
    this.now = o.now ?? Date.now;
  }

  /** The health taints cluster `name` carries now. */
  get(name: string): HealthTaint[] {
    return this.taints.get(name) ?? [];
  }

  /** The hub's Cluster `name` (its spec.taints): kept as they are until this process has judged it. */
  seed(name: string, hubTaints: unknown): void {
    if (this.judged.has(name) || this.taints.has(name)) return;
    const t = healthTaintsOf(hubTaints, this.now());
    if (t.length > 0) this.taints.set(name, t);
  }

  /** Cluster `name`'s readiness may have changed: its taints, and every cluster's if the mode changed. */
  evaluate(name: string): void {
    if (!this.o.listed()) return;
    if (this.updateMode()) this.evaluateAll();
    else this.evaluateOne(name);
  }

  /** The hub view changed, or the mode: every cluster. */
  evaluateAll(): void {
    if (!this.o.listed()) return;
    const stale = this.o.hubStale();
    if (this.stale && !stale) this.clocksFrom = this.now();
    this.stale = stale;
    this.updateMode();
    for (const n of new Set([...this.o.names(), ...this.taints.keys()])) this.evaluateOne(n);
  }

  forget(name: string): void {
    this.timers.clear(name);
    this.taints.delete(name);
    this.judged.delete(name);
  }

  stop(): void {
    this.stopped = true;
    this.timers.clearAll();
  }

  private updateMode(): boolean {
    const judged = [];
    for (const n of this.o.names()) {
      const r = this.o.readiness(n);
      if (r?.ready === undefined || this.o.awaitingAgent(n)) continue;
      judged.push({ ready: r.ready, pull: this.o.isPull(n) });
    }
    const d = disruption(judged, this.o.unhealthyThreshold);
    if (d.mode === this.mode) return false;
    const was = this.mode;
    this.mode = d.mode;
    if (d.mode === 'normal') this.clocksFrom = this.now();
    if (d.mode === 'normal') this.o.logger.info('disruption over: clusters are evicted from again', { was });
    else
      this.o.logger.warn('most clusters unhealthy at once: nothing is evicted', {
        mode: d.mode,
        why: disruptionText(d),
      });
    return true;
  }

  private evaluateOne(name: string): void {
    this.timers.clear(name);
    if (!this.o.listed()) return;
    const known = this.o.readiness(name);
    const r = known && known.since < this.clocksFrom ? { ...known, since: this.clocksFrom } : known;
    const now = this.now();
    if (r?.ready !== undefined) this.judged.add(name);
    const before = this.taints.get(name) ?? [];
    const next = healthTaints(r, now, this.o, before, {
      noNewTaints: this.o.hubStale(),
      noEviction: this.mode !== 'normal' || this.o.awaitingAgent(name),
    });
    if (JSON.stringify(next) !== JSON.stringify(before)) {
      if (next.length > 0) this.taints.set(name, next);
      else this.taints.delete(name);
      this.o.logger.info(next.length > 0 ? 'member tainted by its health' : 'health taints removed from member', {
        cluster: name,
        taints: next.map((t) => `${t.key}:${t.effect}`),
      });
      this.o.onChange(name, next);
    }
    const at = r ? nextHealthCheck(r, now, this.o) : undefined;
    if (at !== undefined && !this.stopped) this.timers.set(name, Math.max(10, at - now), () => this.evaluate(name));
  }
}
