// A collection listed a page at a time (`limit` and `continue`), bounded in pages: for reads that need
// the whole list once (no watch), such as a member's Nodes and Pods or the hub's ResourceBindings at start.

import type { KubeClient } from './client.js';
import { isObject, type JsonObject } from './objects.js';

export interface ListPagesOptions {
  signal: AbortSignal;
  /** Objects per page (default 500). */
  pageSize?: number;
  /** Pages read at the most; past them the answer says `complete: false`. */
  maxPages: number;
  fieldSelector?: string;
}

/** The objects of the collection at `path` (non-objects dropped); `complete` is false when `maxPages` cut it short. */
export async function listPages(
  client: KubeClient,
  path: string,
  o: ListPagesOptions,
): Promise<{ items: JsonObject[]; complete: boolean }> {
  const items: JsonObject[] = [];
  let cont: string | undefined;
  for (let page = 0; page < o.maxPages; page++) {
    const res = await client.requestOk<{ items?: unknown[]; metadata?: { continue?: string } }>({
      method: 'GET',
      path,
      query: { limit: String(o.pageSize ?? 500), continue: cont, fieldSelector: o.fieldSelector },
      signal: o.signal,
    });
    for (const item of res.body?.items ?? []) if (isObject(item)) items.push(item);
    cont = res.body?.metadata?.continue || undefined;
    if (!cont) return { items, complete: true };
  }
  return { items, complete: false };
}
