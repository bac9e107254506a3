// Sharded push (`flotilla controller --sharding true`): several replicas divide the Push members among
// themselves. Each replica announces itself with its own coordination.k8s.io Lease (labelled with the
// controller's lease name), renewed while it works; a member belongs to the live replica that scores
// highest for it (rendezvous hashing: sha256 of replica and member), so a replica joining or leaving moves
// only the members it wins or held. One replica is the coordinator (the rendezvous winner of the empty
// key): it alone writes what is about a template rather than a member (finalizers, claims, the binding's
// spec and summary, policy and template status, Events).
//
// Fencing. A replica that cannot renew its Lease stops working before the Lease expires (renewDeadline <
// leaseDuration), and the others count it until it has expired, so a dead replica's members are taken
// over only once it has stopped. A replica that joins is counted by the others from acquireTime +
// handoff/2 (they stop working on the members it wins) and by itself from acquireTime + handoff (it
// starts): between the two nobody writes those members, so no member is applied to by two replicas at
// once, whatever their requests in flight.
//
// An expiry is confirmed before it counts. This replica's view is its watch of the Leases, and in a busy
// process the watch can be behind (events waiting in the socket while a timer runs): a replica that still
// renews would look expired, and its members be written by two replicas. So another replica whose Lease
// has expired in this view still counts until the caller has read the Leases from the hub and confirmed it
// (confirmExpired); a renewal read meanwhile replaces the view. Pure: the caller feeds Leases and the clock.

import { createHash } from 'node:crypto';

import { isObject, ownString, type JsonObject } from '../kube/objects.js';

/** The label on every replica's Lease: the controller's --lease-name. */
export const SHARD_LABEL = 'flotilla.io/shard-of';

export interface Shard {
  /** The Lease's name: the replica's identity. */
  name: string;
  /** When the Lease was acquired (ms). */
  acquired: number;
  /** renewTime + leaseDurationSeconds (ms). */
  expires: number;
}

/** A replica's Lease, read; undefined when it has no holder or no readable times (own properties only). */
export function shardOf(lease: JsonObject): Shard | undefined {
  const name = ownString(lease.metadata, 'name');
  const spec = isObject(lease.spec) ? lease.spec : {};
  const holder = ownString(spec, 'holderIdentity');
  const acquired = Date.parse(ownString(spec, 'acquireTime') ?? '');
  const renewed = Date.parse(ownString(spec, 'renewTime') ?? '');
  const seconds = typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds : NaN;
  if (!name || !holder || !Number.isFinite(acquired) || !Number.isFinite(renewed) || !Number.isFinite(seconds))
    return undefined;
  return { name, acquired, expires: renewed + seconds * 1000 };
}

function score(shard: string, key: string): string {
  return createHash('sha256').update(shard).update('\0').update(key).digest('hex');
}

/** The rendezvous winner for `key` among `shards` (highest score; ties broken by name); undefined when none. */
export function rendezvous(key: string, shards: readonly string[]): string | undefined {
  let best: { name: string; s: string } | undefined;
  for (const name of shards) {
    const s = score(name, key);
    if (!best || s > best.s || (s === best.s && name > best.name)) best = { name, s };
  }
  return best?.name;
}

/** The coordinator's key: not a member name (a Cluster name is never empty). */
const COORDINATOR = '';

export class ShardView {
  private readonly shards = new Map<string, Shard>();
  /** Other replicas' expiries confirmed by a read of the hub: name -> the `expires` confirmed. */
  private readonly confirmed = new Map<string, number>();
  /** The live set and each key's owner, as last computed, valid until the next transition or Lease change. */
  private cached: { live: string[]; until: number; from: number; owners: Map<string, string | undefined> } | undefined;

  constructor(
    /** This replica's Lease name. */
    readonly self: string,
    /** How long a joining replica waits before it works (the others stop at half of it). */
    private readonly handoffMs: number,
  ) {}

  /** A replica's Lease was added or changed (undefined: deleted, or no longer held). */
  set(name: string, shard: Shard | undefined): void {
    if (shard) this.shards.set(name, shard);
    else {
      this.shards.delete(name);
      this.confirmed.delete(name);
    }
    this.cached = undefined;
  }

  /** The replicas that count at `now`, from this replica's point of view (sorted). */
  live(now: number): string[] {
    return this.at(now).live;
  }

  /** The live set at `now`, and the owners looked up in it, reused until a Lease changes or a transition passes. */
  private at(now: number): { live: string[]; owners: Map<string, string | undefined> } {
    const c = this.cached;
    if (c && now >= c.from && now < c.until) return c;
    const live = this.computeLive(now);
    this.cached = { live, from: now, until: this.nextChange(now) ?? Infinity, owners: new Map() };
    return this.cached;
  }

  private computeLive(now: number): string[] {
    const out: string[] = [];
    for (const s of this.shards.values()) {
      if (this.gone(s, now)) continue;
      const wait = s.name === this.self ? this.handoffMs : this.handoffMs / 2;
      if (now >= s.acquired + wait) out.push(s.name);
    }
    return out.sort();
  }

  /** Whether this replica works on member `name` now. */
  owns(name: string, now: number): boolean {
    return this.ownerOf(name, now) === this.self;
  }

  isCoordinator(now: number): boolean {
    return this.owns(COORDINATOR, now);
  }

  /** The owner of each member at `now` (undefined: no replica counts yet). */
  ownerOf(name: string, now: number): string | undefined {
    const c = this.at(now);
    if (c.owners.has(name)) return c.owners.get(name);
    const owner = rendezvous(name, c.live);
    // Keys are member names and the coordinator's: bounded by the clusters the hub has.
    if (c.owners.size < 100_000) c.owners.set(name, owner);
    return owner;
  }

  /** When the live set changes next without a Lease event (a handoff wait ends, a Lease expires). */
  nextChange(now: number): number | undefined {
    let next: number | undefined;
    const consider = (t: number) => {
      if (t > now && (next === undefined || t < next)) next = t;
    };
    for (const s of this.shards.values()) {
      consider(s.expires);
      consider(s.acquired + (s.name === this.self ? this.handoffMs : this.handoffMs / 2));
    }
    return next;
  }

  /**
   * Replicas whose Lease has expired at `now`, confirmed (their field managers' entries are cleared by the
   * coordinator).
   */
  expired(now: number): string[] {
    return [...this.shards.values()].filter((s) => this.gone(s, now)).map((s) => s.name);
  }

  /** Other replicas whose Lease has expired in this view at `now`, not yet confirmed: still counted. */
  unconfirmed(now: number): string[] {
    return [...this.shards.values()].filter((s) => s.expires <= now && !this.gone(s, now)).map((s) => s.name);
  }

  /** `s`'s Lease has expired at `now` and counts as such: this replica's own, or another's confirmed. */
  private gone(s: Shard, now: number): boolean {
    return s.expires <= now && (s.name === this.self || this.confirmed.get(s.name) === s.expires);
  }

  /** The hub was read after replica `name`'s expiry: if its Lease (as set since) has expired at `now`, it is. */
  confirmExpired(name: string, now: number): void {
    const s = this.shards.get(name);
    if (!s || s.expires > now) return;
    this.confirmed.set(name, s.expires);
    this.cached = undefined;
  }
}

/** The field manager of a replica's entries in the bindings' status. */
export function shardFieldManager(shard: string): string {
  const full = `flotilla-controller.shard.${shard}`;
  if (full.length <= 128) return full;
  return `${full.slice(0, 119)}.${createHash('sha256').update(shard).digest('hex').slice(0, 8)}`;
}
