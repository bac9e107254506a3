// Metadata LISTs of one member for the command line's applier: what exists of a kind in a namespace (all
// objects, or only this ApplySet's), fetched once per run and paged; an "all" listing also answers "set".

import { PART_OF_LABEL, groupKindString } from './applyset.js';
import { apiError, type KubeClient } from './client.js';
import { liveMetaOf, type LiveMeta } from './delivery.js';
import { resourcePath, type ResourceInfo } from './discovery.js';
import { ownString, type JsonObject } from './objects.js';

/** Most pages of one LIST followed (500 objects each); an apiserver that keeps going is an error. */
const MAX_LIST_PAGES = 10_000;
const META_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const LIST_PAGE = 500;

export interface Listing {
  items: Map<string, LiveMeta>;
}

export class SetListings {
  private readonly listings = new Map<string, Promise<Listing>>();

  constructor(
    private readonly client: KubeClient,
    private readonly id: string,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** Metadata of the objects of one kind in one namespace ('' for cluster-scoped), all or only this set's. */
  get(info: ResourceInfo, namespace: string | undefined, onlySet: boolean): Promise<Listing> {
    const ns = info.namespaced ? (namespace ?? '') : '';
    const all = this.listings.get(`${info.group}/${info.kind}|${ns}|all`);
    if (all) return all;
    const key = `${info.group}/${info.kind}|${ns}|${onlySet ? 'set' : 'all'}`;
    let p = this.listings.get(key);
    if (!p) {
      p = this.fetch(info, ns, onlySet);
      this.listings.set(key, p);
    }
    return p;
  }

  private async fetch(info: ResourceInfo, namespace: string, onlySet: boolean): Promise<Listing> {
    const items = new Map<string, LiveMeta>();
    let cont: string | undefined;
    let pages = 0;
    do {
      if (++pages > MAX_LIST_PAGES)
        throw new Error(
          `listing ${groupKindString(info.group, info.kind)}${namespace ? ` in namespace ${namespace}` : ''}: more than ${MAX_LIST_PAGES} pages`,
        );
      const res = await this.client.request<{
        metadata?: { continue?: string };
        items?: Array<{ metadata?: JsonObject }>;
      }>({
        method: 'GET',
        path: resourcePath(info, namespace || undefined),
        query: {
          limit: String(LIST_PAGE),
          continue: cont,
          labelSelector: onlySet ? `${PART_OF_LABEL}=${this.id}` : undefined,
        },
        accept: META_LIST_ACCEPT,
        signal: this.signal,
      });
      if (res.status >= 400)
        throw new Error(
          `cannot list ${groupKindString(info.group, info.kind)}${namespace ? ` in namespace ${namespace}` : ''}: ${apiError(res).message}`,
        );
      for (const it of res.body?.items ?? []) {
        const m = it.metadata ?? {};
        const name = ownString(m, 'name');
        if (!name) continue;
        items.set(name, liveMetaOf(it));
      }
      cont = res.body?.metadata?.continue || undefined;
    } while (cont);
    return { items };
  }
}
