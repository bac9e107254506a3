// Member clusters from a kubeconfig: each context is a member named after the context. What placement
// and override variables need to know about a member (labels, provider, region, zones, taints) comes
// from the Cluster object of the same name among the input documents; a context without one is a member
// with no labels, and a Cluster object whose name no context has is an error naming both.

import type { KubeConfig } from '../kube/config.js';

import { API_VERSION as CLUSTER_API_VERSION } from '../../api/cluster/v1alpha1/types.js';
import {
  KubeClient,
  configForContext,
  contextNames,
  serverOf,
  type ClientOptions,
  type LoadedKubeconfig,
} from '../kube/index.js';

export interface ClusterDocument {
  object: Record<string, unknown>;
  /** Where it was read, for messages (`clusters.yaml (document 2)`). */
  source: string;
}

export interface ContextMember {
  /** The context name. */
  name: string;
  /** A KubeConfig holding this context only. */
  kubeConfig: KubeConfig;
  /** scheme://host:port, for messages. */
  server: string;
}

export interface Fleet {
  /** The members to deliver to: the selected contexts (all by default), in kubeconfig order. */
  members: ContextMember[];
  /**
   * One Cluster object per context of the kubeconfig, selected or not (the input's, or an empty one),
   * for the engine: placement and replica division see the whole fleet, so what a member gets does not
   * depend on which other members one run delivers to.
   */
  clusters: Array<Record<string, unknown>>;
  errors: string[];
}

export { CLUSTER_API_VERSION };

function nameOf(o: Record<string, unknown>): string {
  const meta = o.metadata;
  if (typeof meta !== 'object' || meta === null || !Object.prototype.hasOwnProperty.call(meta, 'name')) return '';
  const name = (meta as Record<string, unknown>).name;
  return typeof name === 'string' ? name : '';
}

/**
 * The members of a kubeconfig: every context is one; `select` (`--context`, repeatable) picks the ones
 * to deliver to. Problems are collected, not thrown.
 */
export function fleetFromKubeconfig(
  loaded: LoadedKubeconfig,
  clusterDocuments: readonly ClusterDocument[],
  select?: readonly string[],
): Fleet {
  const errors: string[] = [];
  const all = contextNames(loaded.config);
  if (all.length === 0) errors.push(`${loaded.description} has no contexts`);
  const known = new Set(all);
  let chosen = all;
  if (select && select.length > 0) {
    chosen = [];
    for (const name of select) {
      if (!known.has(name))
        errors.push(
          `--context ${name}: no such context in ${loaded.description} (contexts: ${all.join(', ') || 'none'})`,
        );
      else if (!chosen.includes(name)) chosen.push(name);
    }
    chosen.sort((a, b) => all.indexOf(a) - all.indexOf(b));
  }
  const byName = new Map<string, ClusterDocument>();
  for (const d of clusterDocuments) {
    const name = nameOf(d.object);
    if (!known.has(name)) {
      errors.push(
        `${d.source}: Cluster ${JSON.stringify(name)} has no context of that name in ${loaded.description} (contexts: ${all.join(', ') || 'none'}); name the context after the Cluster or remove the Cluster`,
      );
      continue;
    }
    if (!byName.has(name)) byName.set(name, d);
  }
  const members: ContextMember[] = [];
  const clusters = all.map(
    (name) =>
      byName.get(name)?.object ?? { apiVersion: CLUSTER_API_VERSION, kind: 'Cluster', metadata: { name }, spec: {} },
  );
  for (const name of chosen) {
    let kubeConfig: KubeConfig;
    try {
      kubeConfig = configForContext(loaded.config, name, loaded.description);
    } catch (err: unknown) {
      errors.push(err instanceof Error ? err.message : String(err));
      continue;
    }
    members.push({ name, kubeConfig, server: serverOf(kubeConfig) });
  }
  return { members, clusters, errors };
}

/** Member name → client; the controller gets its clients through the same interface. */
export interface ClusterFactory {
  client(member: string): KubeClient;
  close(): Promise<void>;
}

/** One keep-alive client per member of a kubeconfig fleet, made on first use. */
export class KubeconfigClusterFactory implements ClusterFactory {
  private readonly members: Map<string, ContextMember>;
  private readonly options: ClientOptions;
  private readonly clients = new Map<string, KubeClient>();

  constructor(members: readonly ContextMember[], options: ClientOptions) {
    this.members = new Map(members.map((m) => [m.name, m]));
    this.options = options;
  }

  client(member: string): KubeClient {
    let c = this.clients.get(member);
    if (!c) {
      const m = this.members.get(member);
      if (!m) throw new RangeError(`no member named ${JSON.stringify(member)}`);
      c = new KubeClient(m.kubeConfig, this.options);
      this.clients.set(member, c);
    }
    return c;
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.close()));
  }
}
