// A pull cluster's health over time, from its agent's Lease on the hub, judged as Kubernetes' node lifecycle
// controller judges a kubelet's: from when THIS process observed each renewal, on its own clock, not
// from the renewTime the agent wrote (another clock, and a Lease this process could not read for a while
// looks stale without being so). A cluster is ready from an observed renewal until its Lease duration
// has passed on this clock without another. At first sight (start) a Lease whose renewTime looks current
// counts as a renewal; one that does not gets a full duration to be renewed before any verdict. While
// the hub view is stale nothing is judged (pause); when it comes back every observation starts again,
// with twice the Lease duration (an agent that stopped meanwhile waits out its Lease before it renews).
// A cluster with no Lease at all whose agent has never joined (no Lease ever, no Ready condition from
// one on its Cluster) is waiting for its agent, not expired: no NoExecute taint for it (cluster-health.ts).

import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import { KeyedTimers } from '../runtime/clock.js';
import { agentLeaseVerdict } from './pull-health.js';

export type AgentState = 'ready' | 'expired' | 'awaiting';

export interface AgentLeasesOptions {
  namespace: string;
  /** The Lease `namespace/name` as the informer has it. */
  lease(key: string): JsonObject | undefined;
  /** The Lease informer has listed once. */
  synced(): boolean;
  /** The hub's Cluster says its agent joined before (a Ready condition set from its Lease). */
  joinedBefore(name: string): boolean;
  set(name: string, state: AgentState, message: string): void;
  /** When the hub last answered this process (hub-liveness.ts): no expiry is judged from an older view. */
  confirmedAt?(): number;
  now?: () => number;
}

interface Seen {
  holder: string;
  renewTime: string;
  observedAt: number;
  /** How long after observedAt without a renewal the cluster is not ready. */
  windowMs: number;
  durationMs: number;
}

const RECHECK_MS = 500;

/** Ready conditions that only a Lease gives: the cluster's agent joined at some time. */
const LEASE_REASONS = ['AgentLeaseRenewed', 'AgentLeaseExpired'];

/** Whether a hub Cluster's Ready condition was set from its agent's Lease (it joined before). */
export function joinedBefore(cluster: JsonObject | undefined): boolean {
  const status = cluster && isObject(cluster.status) ? cluster.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isObject) : [];
  const ready = conditions.find((c) => c.type === 'Ready');
  return ready !== undefined && LEASE_REASONS.includes(String(ready.reason));
}

export class AgentLeases {
  private readonly seen = new Map<string, Seen>();
  private readonly joined = new Set<string>();
  private readonly timers = new KeyedTimers();
  private paused = false;
  private readonly now: () => number;

  constructor(private readonly o: AgentLeasesOptions) {
    this.now = o.now ?? Date.now;
  }

  /** Whether cluster `name`'s agent has not joined yet (no Lease ever seen). */
  awaiting(name: string): boolean {
    return !this.joined.has(name) && !this.seen.has(name) && !this.o.joinedBefore(name);
  }

  /** The Lease of pull cluster `name` changed (or its Cluster did, or a timer is due): judge it. */
  observe(name: string): void {
    this.timers.clear(name);
    if (this.paused || !this.o.synced()) return;
    const ns = this.o.namespace;
    const lease = this.o.lease(`${ns}/${name}`);
    const now = this.now();
    // The sentence and the wall-clock verdict of the Lease as it is (pull-health.ts).
    const v = agentLeaseVerdict(lease, ns, name, now);
    if (!lease) {
      this.seen.delete(name);
      if (this.awaiting(name))
        this.o.set(name, 'awaiting', `waiting for its agent: no agent has taken Lease ${ns}/${name} yet`);
      else this.o.set(name, 'expired', v.message);
      return;
    }
    this.joined.add(name);
    const spec = isObject(lease.spec) ? lease.spec : {};
    const holder = ownString(spec, 'holderIdentity');
    const renewTime = ownString(spec, 'renewTime');
    const seconds = spec.leaseDurationSeconds;
    if (!holder || renewTime === undefined || typeof seconds !== 'number' || !(seconds > 0)) {
      // Released, never renewed, or without a duration: nothing to observe.
      this.seen.delete(name);
      this.o.set(name, 'expired', v.message);
      return;
    }
    const durationMs = seconds * 1000;
    let s = this.seen.get(name);
    if (!s || s.holder !== holder || s.renewTime !== renewTime) {
      // First sight: a Lease that looks current counts as a renewal; a stale one waits for one.
      const renewal = s !== undefined || v.ready;
      s = { holder, renewTime, observedAt: now, windowMs: durationMs, durationMs };
      this.seen.set(name, s);
      if (renewal) this.o.set(name, 'ready', `its agent ${holder} renews Lease ${ns}/${name}`);
    }
    const due = s.observedAt + s.windowMs;
    // Due, but the hub has not answered since: a renewal may be on its way; look again shortly.
    const confirmed = this.o.confirmedAt?.() ?? now;
    if (now >= due && confirmed >= due) {
      this.o.set(
        name,
        'expired',
        `its agent ${holder} has not renewed Lease ${ns}/${name} since ${renewTime} (none seen for ${Math.round((now - s.observedAt) / 1000)}s, leaseDurationSeconds ${seconds})`,
      );
      return;
    }
    const at = now >= due ? now + RECHECK_MS : due;
    this.timers.set(name, at - now + 50, () => this.observe(name));
  }

  /** The hub view is stale: nothing is judged until resume(). */
  pause(): void {
    this.paused = true;
    this.timers.clearAll();
  }

  /** The hub view is back: every observation starts now, with twice its Lease duration; then judge `names`. */
  resume(names: Iterable<string>): void {
    this.paused = false;
    const now = this.now();
    for (const s of this.seen.values()) {
      s.observedAt = now;
      s.windowMs = 2 * s.durationMs;
    }
    for (const n of names) this.observe(n);
  }

  forget(name: string): void {
    this.timers.clear(name);
    this.seen.delete(name);
    this.joined.delete(name);
  }

  stop(): void {
    this.pause();
  }
}
