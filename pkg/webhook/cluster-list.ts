// The hub's Clusters the webhook warns against: cluster.flotilla.io and, where the hub serves Karmada's API,
// cluster.karmada.io, as the controller places on both (one pool; a name in both is one cluster). A hub
// that does not serve a group answers 404: no Clusters from it (a Karmada user's hub may serve
// cluster.karmada.io alone). One that serves cluster.karmada.io but does not let
// the webhook list them answers 403: said once in the log, and the Flotilla group's Clusters are used
// alone rather than keeping a list that never refreshes. Any other failure fails the list (the inventory
// keeps its last good one).

import type { Logger } from '../runtime/log.js';
import type { ClusterInfo } from './validating.js';

export const CLUSTER_GROUPS = [
  { group: 'cluster.flotilla.io', version: 'v1alpha1' },
  { group: 'cluster.karmada.io', version: 'v1alpha1' },
] as const;

/** Lists a group's Clusters (the CLI: one GET through a KubeClient; tests: a stub). */
export interface ClusterObjectsApi {
  listClusterCustomObject(p: { group: string; version: string; plural: string }): Promise<unknown>;
}

export interface ClusterListOptions {
  /** The HTTP status of a failed call (an ApiError's status). */
  status(e: unknown): number | undefined;
  /** A readable message for a failed call. */
  describe(e: unknown): string;
  logger?: Logger | undefined;
}

function items(list: unknown): ClusterInfo[] {
  const raw = typeof list === 'object' && list !== null ? (list as { items?: unknown }).items : undefined;
  return Array.isArray(raw) ? raw.filter((i): i is ClusterInfo => typeof i === 'object' && i !== null) : [];
}

/** A `list` for PollingInventory: the Clusters of both groups, Flotilla's first; by name, Flotilla's wins. */
export function clusterLister(api: ClusterObjectsApi, o: ClusterListOptions): () => Promise<ClusterInfo[]> {
  let forbiddenSaid = false;
  return async () => {
    const out: ClusterInfo[] = [];
    const names = new Set<string>();
    const unserved: string[] = [];
    for (const [i, g] of CLUSTER_GROUPS.entries()) {
      let listed: ClusterInfo[];
      try {
        listed = items(await api.listClusterCustomObject({ ...g, plural: 'clusters' }));
      } catch (e: unknown) {
        const code = o.status(e);
        if (code !== 404 && (i === 0 || code !== 403)) throw new Error(`${g.group}: ${o.describe(e)}`, { cause: e });
        if (code === 404) unserved.push(`${g.group}: ${o.describe(e)}`);
        if (code === 403 && !forbiddenSaid)
          o.logger?.warn('may not list cluster.karmada.io Clusters; warnings know the cluster.flotilla.io ones only', {
            error: o.describe(e),
          });
        forbiddenSaid ||= code === 403;
        continue;
      }
      for (const c of listed) {
        const name = c.metadata?.name;
        if (typeof name === 'string' && names.has(name)) continue;
        if (typeof name === 'string') names.add(name);
        out.push(c);
      }
    }
    if (unserved.length === CLUSTER_GROUPS.length)
      throw new Error(`the hub serves no Clusters: ${unserved.join('; ')}`);
    return out;
  };
}
