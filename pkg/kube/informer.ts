// An informer: a cache of one collection (one kind, optionally one namespace, label and field selector)
// kept current by list-then-watch, with client-go's guarantees where they matter to a controller:
//   - list (paged), then watch from the list's resourceVersion with bookmarks; the resourceVersion is an
//     opaque string, only ever handed back to the server;
//   - a watch the server ends (timeoutSeconds) or that goes idle is resumed from the last resourceVersion
//     seen, without a relist and without counting as a failure;
//   - 410 Gone (an HTTP answer or an ERROR event: the resourceVersion was compacted away) relists at once;
//     the relist is diffed against the cache, so handlers see the adds, updates and deletes they missed;
//   - any other failure (connection refused, 403, a bad answer) is retried after an exponential backoff
//     with jitter, for as long as the informer runs: client-node's informer stops on those instead;
//   - the cache is updated before handlers run; handlers get objects to treat as immutable, and what a
//     handler throws is reported to onError and does not stop the informer.
// start(signal) runs until the signal aborts.

import { sleep } from '../runtime/clock.js';
import { TransportError, ApiError } from './errors.js';
import { isObject, ownString, type JsonObject } from './objects.js';
import type { KubeClient } from './client.js';
import type { WatchEvent, WatchRequest, Watcher } from './watch.js';

/** What an informer needs from a cluster: a paged LIST and a streaming watch (KubeClient and Watcher provide them). */
export interface ListWatchSource {
  list(
    path: string,
    query: Readonly<Record<string, string | undefined>>,
    signal: AbortSignal,
  ): Promise<{ items: JsonObject[]; resourceVersion: string; continue?: string }>;
  watch(req: WatchRequest, onEvent: (e: WatchEvent) => void): Promise<void>;
}

export interface InformerHandlers {
  onAdd?(obj: JsonObject): void;
  onUpdate?(obj: JsonObject, old: JsonObject): void;
  onDelete?(obj: JsonObject): void;
}

export interface InformerOptions {
  /** For messages: `hub deployments.apps`. */
  name: string;
  source: ListWatchSource;
  /** Collection path (all namespaces, or one). */
  path: string;
  /** Written onto listed items, which the apiserver sends without them. */
  apiVersion: string;
  kind: string;
  labelSelector?: string;
  fieldSelector?: string;
  handlers?: InformerHandlers;
  /** A failure (the informer carries on after a backoff); `attempt` counts consecutive failures. */
  onError?(err: unknown, attempt: number, retryInMs: number): void;
  /** Backoff after consecutive failures: base, doubling, capped; ±20% jitter. Default 500 ms to 30 s. */
  backoff?: { baseMs: number; maxMs: number };
  /** Server-side watch timeout; default a random 5 to 10 minutes per watch (client-go's spread). */
  watchTimeoutSeconds?: () => number;
  /** Applied to every object before it is cached and handed on (e.g. to drop what nobody reads). */
  transform?(o: JsonObject): JsonObject;
  /** The key an object is cached under, given its `namespace/name` (e.g. one string shared with other caches). */
  cacheKey?(key: string): string;
  /** Page size of the LIST. Default 500. */
  pageSize?: number;
  random?: () => number;
}

/** The watch reported 410 Gone: relist. */
class Gone extends Error {}

const MAX_PAGES = 10_000;

export function objectKey(obj: JsonObject): string {
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  const ns = ownString(meta, 'namespace');
  const name = ownString(meta, 'name') ?? '';
  return ns ? `${ns}/${name}` : name;
}

export function resourceVersionOf(obj: JsonObject): string | undefined {
  return ownString(obj.metadata, 'resourceVersion');
}

export class Informer {
  readonly name: string;
  private readonly o: InformerOptions;
  private readonly cache = new Map<string, JsonObject>();
  private syncedFlag = false;
  private readonly syncWaiters: Array<() => void> = [];
  private lastError: string | undefined;
  private running = false;

  constructor(options: InformerOptions) {
    this.name = options.name;
    this.o = options;
  }

  /** True once the first list has been loaded (stays true across relists and outages). */
  get synced(): boolean {
    return this.syncedFlag;
  }

  /** The last failure's message, until the next successful list or watch event. */
  get error(): string | undefined {
    return this.lastError;
  }

  get size(): number {
    return this.cache.size;
  }

  /** `name` for cluster-scoped objects, `namespace/name` otherwise. */
  get(key: string): JsonObject | undefined {
    return this.cache.get(key);
  }

  values(): IterableIterator<JsonObject> {
    return this.cache.values();
  }

  /** Resolves true once synced, false if `signal` aborts first. */
  waitForSync(signal: AbortSignal): Promise<boolean> {
    if (this.syncedFlag) return Promise.resolve(true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      });
    });
  }

  /** Runs until `signal` aborts; never rejects. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error(`informer ${this.name} is already running`);
    this.running = true;
    let rv: string | undefined;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (rv === undefined) rv = await this.relist(signal);
        const watched = rv;
        const timeout = this.timeoutSeconds();
        const began = Date.now();
        let seen = false;
        await this.o.source.watch(
          {
            path: this.o.path,
            query: {
              resourceVersion: watched,
              allowWatchBookmarks: 'true',
              timeoutSeconds: String(timeout),
              labelSelector: this.o.labelSelector,
              fieldSelector: this.o.fieldSelector,
            },
            idleTimeoutMs: (timeout + 60) * 1000,
            signal,
          },
          (e) => {
            const next = this.onEvent(e);
            if (next !== undefined) rv = next;
            if (!seen) {
              seen = true;
              failures = 0;
              this.lastError = undefined;
            }
          },
        );
        // A watch the server ends at once with nothing in it is not progress: do not spin on it.
        if (!seen && Date.now() - began < 1000) await sleep(this.backoff(1), signal);
      } catch (err: unknown) {
        if (signal.aborted) break;
        if (err instanceof Gone || (err instanceof ApiError && err.status === 410)) {
          rv = undefined;
          continue;
        }
        failures++;
        const delay = this.backoff(failures);
        this.lastError = err instanceof Error ? err.message : String(err);
        this.report(err, failures, delay);
        await sleep(delay, signal);
      }
    }
    this.running = false;
  }

  private timeoutSeconds(): number {
    return this.o.watchTimeoutSeconds?.() ?? Math.floor(300 + (this.o.random ?? Math.random)() * 300);
  }

  private backoff(failures: number): number {
    const { baseMs, maxMs } = this.o.backoff ?? { baseMs: 500, maxMs: 30_000 };
    const exp = Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 30));
    return Math.round(Math.min(maxMs, exp * (0.8 + 0.4 * (this.o.random ?? Math.random)())));
  }

  private report(err: unknown, attempt: number, delay: number): void {
    try {
      this.o.onError?.(err, attempt, delay);
    } catch {
      // a reporter's failure is its own
    }
  }

  /** Lists every page, replaces the cache (telling handlers the difference) and returns the list's resourceVersion. */
  private async relist(signal: AbortSignal): Promise<string> {
    const items = new Map<string, JsonObject>();
    let cont: string | undefined;
    let rv = '';
    for (let page = 1; ; page++) {
      if (page > MAX_PAGES) throw new TransportError(`${this.name}: list: more than ${MAX_PAGES} pages`, 'ETOOBIG');
      const res = await this.o.source.list(
        this.o.path,
        {
          limit: String(this.o.pageSize ?? 500),
          continue: cont,
          labelSelector: this.o.labelSelector,
          fieldSelector: this.o.fieldSelector,
        },
        signal,
      );
      for (const item of res.items) {
        const listed: JsonObject = { apiVersion: this.o.apiVersion, kind: this.o.kind, ...item };
        const obj = this.o.transform ? this.o.transform(listed) : listed;
        items.set(this.cached(objectKey(obj)), obj);
      }
      rv = res.resourceVersion;
      cont = res.continue || undefined;
      if (!cont) break;
    }
    const old = new Map(this.cache);
    this.cache.clear();
    for (const [k, v] of items) this.cache.set(k, v);
    for (const [k, v] of items) {
      const prev = old.get(k);
      if (!prev) this.call((h) => h.onAdd?.(v));
      else if (resourceVersionOf(prev) !== resourceVersionOf(v)) this.call((h) => h.onUpdate?.(v, prev));
    }
    for (const [k, v] of old) if (!items.has(k)) this.call((h) => h.onDelete?.(v));
    this.lastError = undefined;
    if (!this.syncedFlag) {
      this.syncedFlag = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
    return rv;
  }

  /** Applies one event; returns the resourceVersion to resume from. */
  private onEvent(e: WatchEvent): string | undefined {
    if (e.type === 'ERROR') {
      const code = e.object.code;
      if (code === 410) throw new Gone();
      const message = typeof e.object.message === 'string' ? e.object.message : JSON.stringify(e.object);
      throw new ApiError(
        typeof code === 'number' ? code : 500,
        typeof e.object.reason === 'string' ? e.object.reason : '',
        message,
      );
    }
    const rv = resourceVersionOf(e.object);
    if (e.type === 'BOOKMARK') return rv;
    const key = objectKey(e.object);
    const prev = this.cache.get(key);
    if (e.type === 'DELETED') {
      this.cache.delete(key);
      this.call((h) => h.onDelete?.(e.object));
    } else if (e.type === 'ADDED' || e.type === 'MODIFIED') {
      const obj = this.o.transform ? this.o.transform(e.object) : e.object;
      // An object cached before keeps its key (a Map keeps the key it was first given).
      this.cache.set(prev ? key : this.cached(key), obj);
      if (prev) this.call((h) => h.onUpdate?.(obj, prev));
      else this.call((h) => h.onAdd?.(obj));
    }
    return rv;
  }

  /** The key an object whose `namespace/name` is `key` is cached under. */
  private cached(key: string): string {
    return this.o.cacheKey ? this.o.cacheKey(key) : key;
  }

  private call(fn: (h: InformerHandlers) => void): void {
    if (!this.o.handlers) return;
    try {
      fn(this.o.handlers);
    } catch (err: unknown) {
      this.report(err, 0, 0);
    }
  }
}

/** An informer source over a request client and a watcher of the same cluster. */
export function listWatchSource(client: KubeClient, watcher: Watcher): ListWatchSource {
  return {
    async list(path, query, signal) {
      const res = await client.requestOk<{
        items?: unknown[];
        metadata?: { resourceVersion?: unknown; continue?: unknown };
      }>({ method: 'GET', path, query, signal });
      const items = (res.body?.items ?? []).filter(isObject);
      const rv = res.body?.metadata?.resourceVersion;
      const cont = res.body?.metadata?.continue;
      return {
        items,
        resourceVersion: typeof rv === 'string' ? rv : '',
        ...(typeof cont === 'string' && cont !== '' ? { continue: cont } : {}),
      };
    },
    watch: (req, onEvent) => watcher.watch(req, onEvent),
  };
}
