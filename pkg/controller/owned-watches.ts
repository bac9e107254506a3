// A member's watches of the objects the controller applied there, one per kind (label-selected on the
// template-uid label, ownership.ts): their events bring drift and status changes back to the controller
// (onOwnedEvent), their caches say what is there now — each object kept as owned-copy.ts cuts it down,
// with a digest of the controller's fields — an index says which objects carry each template's uid, and
// for each object this process applied, a digest of what it applied and of the fields as the apiserver
// answered says whether the cache still shows that write (no drift, nothing newer of ours in flight).

import type { KubeClient } from '../kube/client.js';
import { resourcePath, type ResourceInfo } from '../kube/discovery.js';
import { Informer, listWatchSource, objectKey } from '../kube/informer.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import { keptCopy, copyChanged, sharedString } from './owned-copy.js';
import type { Watcher } from '../kube/watch.js';
import { TEMPLATE_UID_LABEL } from './ownership.js';

interface OwnedWatch {
  informer: Informer;
  stop: AbortController;
  info: ResourceInfo;
}

export interface OwnedWatchesOptions {
  /** The member's name, in the informers' names. */
  name: string;
  client: KubeClient;
  watcher: Watcher;
  /** A change or deletion of an object the controller applied here (drift, status). */
  onOwnedEvent(object: JsonObject): void;
  onWatchError(resource: string, err: unknown, attempt: number): void;
}

export class OwnedWatches {
  private readonly watches = new Map<string, OwnedWatch>();
  /** Per watch: template uid → keys of the objects carrying it (one key, or a set), kept from the watch's events. */
  private readonly owned = new Map<string, Map<string, string | Set<string>>>();
  /** Per watch: object key → digest of what this process last applied there and of the apiserver's answer (owned-copy.ts). */
  private readonly lastApplied = new Map<string, Map<string, string>>();
  /** Object (by watch and key) → what waits for its next event (nextEvent). */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly o: OwnedWatchesOptions) {}

  /** Starts (once per kind) the watch of the objects of this kind the controller applied here, until `signal` aborts. */
  start(info: ResourceInfo, apiVersion: string, signal: AbortSignal): void {
    const id = watchId(info);
    if (this.watches.has(id) || signal.aborted) return;
    const stop = new AbortController();
    const resource = `${info.resource}${info.group ? `.${info.group}` : ''}`;
    const informer = new Informer({
      name: `${this.o.name} ${resource}`,
      source: listWatchSource(this.o.client, this.o.watcher),
      path: resourcePath(info, undefined),
      apiVersion,
      kind: info.kind,
      labelSelector: TEMPLATE_UID_LABEL,
      transform: (o) => keptCopy(o, apiVersion, info.kind),
      // Every member's watch caches a template's copy under the same key: one string for all of them.
      cacheKey: sharedString,
      handlers: {
        onAdd: (o) => {
          this.index(id, o, true);
          this.wake(id, o);
          // First seen with a status (a list after this process applied it, or after the watch was away):
          // the status may be newer than what the last apply reported, which no update event will bring.
          if (hasStatus(o)) this.o.onOwnedEvent(o);
        },
        onUpdate: (o, old) => {
          this.index(id, old, false);
          this.index(id, o, true);
          this.wake(id, o);
          // A new resourceVersion that changes nothing kept (managedFields' times, fields of others) is no event.
          if (copyChanged(o, old)) this.o.onOwnedEvent(o);
        },
        onDelete: (o) => {
          this.index(id, o, false);
          this.lastApplied.get(id)?.delete(objectKey(o));
          this.wake(id, o);
          this.o.onOwnedEvent(o);
        },
      },
      backoff: { baseMs: 1_000, maxMs: 30_000 },
      onError: (err, attempt) => this.o.onWatchError(resource, err, attempt),
    });
    this.watches.set(id, { informer, stop, info });
    void informer.start(AbortSignal.any([signal, stop.signal]));
  }

  /** Forgets every watch (the member was closed: their signal aborted). */
  clear(): void {
    this.watches.clear();
  }

  /** The objects carrying a template's labels, from the watches that have listed once; `synced` false while any has not. */
  objects(): { synced: boolean; objects: Array<{ info: ResourceInfo; object: JsonObject }> } {
    const objects: Array<{ info: ResourceInfo; object: JsonObject }> = [];
    let synced = true;
    for (const w of this.watches.values()) {
      if (!w.informer.synced) synced = false;
      else for (const object of w.informer.values()) objects.push({ info: w.info, object });
    }
    return { synced, objects };
  }

  /** The kinds watched, as `group/Kind` ('' for the core group). */
  kinds(): Set<string> {
    return new Set([...this.watches.values()].map((w) => `${w.info.group}/${w.info.kind}`));
  }

  /** Whether the kind's watch has listed once. */
  synced(info: ResourceInfo): boolean {
    return this.watches.get(watchId(info))?.informer.synced === true;
  }

  /** The object at `key` as the kind's watch last saw it (whether or not it has listed). */
  get(info: ResourceInfo, key: string): JsonObject | undefined {
    return this.watches.get(watchId(info))?.informer.get(key);
  }

  /** The keys of the objects of the kind carrying template uid `uid` (known once the watch has listed). */
  keysOf(info: ResourceInfo, uid: string): Iterable<string> {
    const keys = this.owned.get(watchId(info))?.get(uid);
    return keys === undefined ? [] : typeof keys === 'string' ? [keys] : keys;
  }

  /** The digest this process recorded when it last applied at `key` (Member.apply). */
  applied(info: ResourceInfo, key: string): string | undefined {
    return this.lastApplied.get(watchId(info))?.get(key);
  }

  setApplied(info: ResourceInfo, key: string, hash: string | undefined): void {
    const id = watchId(info);
    let byKey = this.lastApplied.get(id);
    if (hash === undefined) byKey?.delete(key);
    else {
      if (!byKey) this.lastApplied.set(id, (byKey = new Map<string, string>()));
      // Members that answered an apply of the same copy alike remember the same digest: one string.
      byKey.set(sharedString(key), sharedString(hash));
    }
  }

  /**
   * Resolves at the kind's next event for the object at `key` (added, changed or deleted): true; false
   * after `timeoutMs` or when `signal` aborts.
   */
  nextEvent(info: ResourceInfo, key: string, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    const id = `${watchId(info)}|${key}`;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const done = (seen: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', aborted);
        const rest = (this.waiting.get(id) ?? []).filter((w) => w !== woken);
        if (rest.length > 0) this.waiting.set(id, rest);
        else this.waiting.delete(id);
        resolve(seen);
      };
      const woken = () => done(true);
      const aborted = () => done(false);
      const timer = setTimeout(aborted, timeoutMs);
      signal.addEventListener('abort', aborted, { once: true });
      this.waiting.set(id, [...(this.waiting.get(id) ?? []), woken]);
    });
  }

  private wake(id: string, o: JsonObject): void {
    for (const w of this.waiting.get(`${id}|${objectKey(o)}`) ?? []) w();
  }

  private index(id: string, o: JsonObject, add: boolean): void {
    const uid = ownString(isObject(o.metadata) ? o.metadata.labels : undefined, TEMPLATE_UID_LABEL);
    if (!uid) return;
    const key = sharedString(objectKey(o));
    let byUid = this.owned.get(id);
    if (!byUid) this.owned.set(id, (byUid = new Map<string, string | Set<string>>()));
    // Nearly every template has one object of a kind on a member: a string, a set only for more.
    const keys = byUid.get(uid);
    if (add) {
      if (keys === undefined || keys === key) byUid.set(uid, key);
      else if (typeof keys === 'string') byUid.set(uid, new Set([keys, key]));
      else keys.add(key);
    } else if (keys === key) {
      byUid.delete(uid);
    } else if (keys !== undefined && typeof keys !== 'string') {
      keys.delete(key);
      if (keys.size === 1) byUid.set(uid, [...keys][0] ?? key);
    }
  }
}

function watchId(info: ResourceInfo): string {
  return `${info.group}/${info.kind}`;
}

/** Whether a kept copy carries a status with anything in it (a copy just created has none). */
function hasStatus(o: JsonObject): boolean {
  return isObject(o.status) && Object.keys(o.status).length > 0;
}
