// A member's API enablements (Karmada's Cluster status.apiEnablements), read each status round and kept
// cheap. A member that serves aggregated discovery (apidiscovery.k8s.io v2, or v2beta1; Kubernetes 1.27
// on by default) answers /api and /apis with every group version and its resources: two requests a round.
// Any other answers with the group-version lists only (the same two requests, asked for either form);
// the resources of each group version (one request each) are read again only when that list changed, or
// every LEGACY_FULL_EVERY rounds (a new kind in a group version that already existed).
// A group version that does not answer (an aggregated API that is down: 503, or `Stale` in aggregated
// discovery) is left out that round.

import type { KubeClient } from '../kube/client.js';
import { isObject } from '../kube/objects.js';
import { apiEnablements, type APIEnablement } from './cluster-summary.js';

/** Aggregated discovery first (v2, then v2beta1), the plain lists otherwise: one request either way. */
export const DISCOVERY_ACCEPT = [
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
  'application/json',
].join(',');

const LEGACY_FULL_EVERY = 10;
const MAX_GROUP_VERSIONS = 500;
const GROUP_VERSION = /^[a-z0-9.-]+\/[a-z0-9]+$/;

type ResourceList = { groupVersion: string; resources: unknown };

/** `/api` and `/apis` as one member answered them: aggregated (resources included) or plain. */
type Top =
  | { aggregated: true; lists: ResourceList[] }
  | { aggregated: false; groupVersions: Array<{ gv: string; path: string }> };

/**
 * The resource lists of an APIGroupDiscoveryList (apidiscovery.k8s.io v2/v2beta1), in the legacy shape
 * apiEnablements() reads; undefined when `body` is not one. Stale versions are left out.
 */
export function aggregatedLists(body: unknown): ResourceList[] | undefined {
  if (!isObject(body) || body.kind !== 'APIGroupDiscoveryList' || !Array.isArray(body.items)) return undefined;
  const out: ResourceList[] = [];
  for (const g of body.items) {
    if (!isObject(g) || !Array.isArray(g.versions)) continue;
    const group = isObject(g.metadata) && typeof g.metadata.name === 'string' ? g.metadata.name : '';
    for (const v of g.versions) {
      if (!isObject(v) || typeof v.version !== 'string' || v.freshness === 'Stale') continue;
      const groupVersion = group === '' ? v.version : `${group}/${v.version}`;
      if (group !== '' && !GROUP_VERSION.test(groupVersion)) continue;
      const resources = (Array.isArray(v.resources) ? v.resources : []).flatMap((r) =>
        isObject(r) &&
        typeof r.resource === 'string' &&
        isObject(r.responseKind) &&
        typeof r.responseKind.kind === 'string'
          ? [{ name: r.resource, kind: r.responseKind.kind }]
          : [],
      );
      out.push({ groupVersion, resources });
    }
  }
  return out;
}

async function readTop(client: KubeClient, signal: AbortSignal): Promise<Top> {
  const get = (path: string) => client.requestOk<unknown>({ method: 'GET', path, accept: DISCOVERY_ACCEPT, signal });
  const [core, groups] = await Promise.all([get('/api'), get('/apis')]);
  const coreLists = aggregatedLists(core.body);
  const groupLists = aggregatedLists(groups.body);
  if (coreLists && groupLists) return { aggregated: true, lists: [...coreLists, ...groupLists] };
  const versions = isObject(core.body) && Array.isArray(core.body.versions) ? core.body.versions : [];
  const groupList = isObject(groups.body) && Array.isArray(groups.body.groups) ? groups.body.groups : [];
  const groupVersions = [
    ...versions.filter((v): v is string => typeof v === 'string').map((v) => ({ gv: v, path: `/api/${v}` })),
    ...groupList.flatMap((g) =>
      (isObject(g) && Array.isArray(g.versions) ? g.versions : [])
        .map((v) => (isObject(v) ? v.groupVersion : undefined))
        .filter((gv): gv is string => typeof gv === 'string' && GROUP_VERSION.test(gv))
        .map((gv) => ({ gv, path: `/apis/${gv}` })),
    ),
  ].slice(0, MAX_GROUP_VERSIONS);
  return { aggregated: false, groupVersions };
}

async function readEach(
  client: KubeClient,
  signal: AbortSignal,
  groupVersions: ReadonlyArray<{ gv: string; path: string }>,
): Promise<ResourceList[]> {
  const lists: ResourceList[] = [];
  for (const { gv, path } of groupVersions) {
    const res = await client.request<{ resources?: unknown }>({ method: 'GET', path, signal });
    // An aggregated API that is down answers 503: it is left out this round, the rest is still listed.
    if (res.status < 300) lists.push({ groupVersion: gv, resources: res.body?.resources });
  }
  return lists;
}

/** Reads a member's API enablements in full now. Throws on a failed read of /api or /apis. */
export async function readAPIEnablements(client: KubeClient, signal: AbortSignal): Promise<APIEnablement[]> {
  const top = await readTop(client, signal);
  return apiEnablements(top.aggregated ? top.lists : await readEach(client, signal, top.groupVersions));
}

/** One member's discovery, round after round: what `read` needs to skip work that would find nothing new. */
export class MemberDiscovery {
  private rounds = 0;
  /** The group-version list last read in full (members without aggregated discovery). */
  private listed: string | undefined;

  /** The member's API enablements, or undefined when they cannot have changed since the last read. */
  async read(client: KubeClient, signal: AbortSignal): Promise<APIEnablement[] | undefined> {
    const round = this.rounds++;
    const top = await readTop(client, signal);
    if (top.aggregated) return apiEnablements(top.lists);
    const listed = JSON.stringify(top.groupVersions.map((g) => g.gv));
    if (listed === this.listed && round % LEGACY_FULL_EVERY !== 0) return undefined;
    const lists = await readEach(client, signal, top.groupVersions);
    // A group version that did not answer is asked again next round.
    this.listed = lists.length === top.groupVersions.length ? listed : undefined;
    return apiEnablements(lists);
  }
}
