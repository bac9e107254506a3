// Who writes what about each cluster, as one template reconciler sees it: the members this process works
// on itself (all of them, unless sharded: those this replica owns), the clusters whose binding entry
// someone else writes (a pull cluster's agent, in its Work; sharded, the replica that owns the member), and
// whether this process writes what is about a template rather than a member (always, unless sharded: the
// coordinator). The template, binding and Work reconcilers ask it rather than telling the process shapes
// apart.

import type { ClusterStatus } from './binding.js';
import type { Member } from './member.js';
import type { MemberRegistry } from './members.js';
import type { TemplateIdentity } from './ownership.js';

export interface Sharding {
  owns(member: string): boolean;
  coordinator(): boolean;
  /** This replica's field manager for its members' entries of the bindings' status. */
  entriesManager: string;
}

export interface ReachOptions {
  registry: MemberRegistry;
  /** What others report of a template, by cluster: pull agents (their Works), other shards (the binding's status.clusters). */
  agentEntries(t: TemplateIdentity): ReadonlyMap<string, ClusterStatus>;
  /** Sharded push (shards.ts): which members this replica works on, and whether it is the coordinator. */
  shards?: Sharding | undefined;
}

export class Reach {
  constructor(private readonly o: ReachOptions) {}

  get registry(): MemberRegistry {
    return this.o.registry;
  }

  /** Sharded push: this replica's share; undefined when one process works on every member. */
  get shards(): Sharding | undefined {
    return this.o.shards;
  }

  /** Whether this replica writes what is about the template rather than a member (always, unless sharded). */
  coordinator(): boolean {
    return this.o.shards?.coordinator() ?? true;
  }

  /** The members this replica works on. */
  ownMembers(): Member[] {
    const shards = this.o.shards;
    const all = [...this.o.registry.all()];
    return shards ? all.filter((m) => shards.owns(m.name)) : all;
  }

  /** A cluster whose entry someone else writes: a pull cluster's agent, or (sharded) another replica. */
  remote(cluster: string): boolean {
    const shards = this.o.shards;
    return (
      this.o.registry.isPull(cluster) ||
      (shards !== undefined && this.o.registry.get(cluster) !== undefined && !shards.owns(cluster))
    );
  }

  /** A member this process applies to itself (connected, not a pull cluster, sharded: this replica's). */
  own(cluster: string): boolean {
    return this.o.registry.get(cluster) !== undefined && !this.remote(cluster);
  }

  /** What others report of template `t`, by cluster (pull agents, other replicas). */
  entries(t: TemplateIdentity): ReadonlyMap<string, ClusterStatus> {
    return this.o.agentEntries(t);
  }
}
