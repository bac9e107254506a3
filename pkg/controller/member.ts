// One member cluster as the controller reaches it: a client, discovery, a readiness probe, and a watch per
// kind of the objects the controller applied there (those carrying its template-uid label, see
// ownership.ts). The watches serve twice: their events bring drift (an edit or a delete on the member) back
// to the controller, and their caches answer "what is there now" so a reconcile that changes nothing costs
// no request on the member.
//
// apply(object, template) — server-side apply with field manager `flotilla`, as `flotilla apply` does:
//   - an object that is the template's (by the cache, else by one GET) and unchanged since this process
//     last applied it (the applied-hash annotation and managedFields, pkg/kube/ownership.ts) is left as it
//     is: no request;
//   - an object that is the template's is applied with force: a field someone changed on the member is
//     taken back (the hub is the source of truth for what the controller owns);
//   - an object that exists and is not the template's is a conflict under Abort and taken with force
//     under Overwrite;
//   - an object that does not exist is created with a non-forced apply, so one created in the meantime by
//     someone else with other values is a conflict, not overwritten.
// removeAll(template, kind, keep) deletes what the template has on the member (its uid label decides, with
// the object's uid as a precondition), and nothing else: every object of the kind carrying the template's
// uid label (an override may have renamed it, or moved it to another namespace) but the one at `keep`.

import type { KubeConfig } from '@kubernetes/client-node';

import { apiError, KubeClient, METADATA_ACCEPT } from '../kube/client.js';
import { Discovery, resourcePath, type ResourceInfo } from '../kube/discovery.js';
import { TransportError, UnknownKindError } from '../kube/errors.js';
import { Informer, listWatchSource, objectKey } from '../kube/informer.js';
import { deepClone, isObject, ownString, type JsonObject } from '../kube/objects.js';
import { stampAppliedHash, unchangedSinceApply, type ManagedFieldsEntry } from '../kube/ownership.js';
import { Watcher } from '../kube/watch.js';
import { sleep } from '../runtime/clock.js';
import { memberHealth, type MemberHealth } from './binding.js';
import { MEMBER_FIELD_MANAGER, TEMPLATE_UID_LABEL, ownerTemplate, type TemplateIdentity } from './ownership.js';

export type ApplyOutcome =
  | { state: 'Applied'; changed: boolean; health: MemberHealth; /** `namespace/name` (or `name`) of the object on the member. */ key: string }
  | { state: 'Conflict' | 'Failed'; message: string }
  | { state: 'Unreachable'; message: string };

/** Label on a namespace the controller created on a member for the objects it applies (never deleted). */
export const CREATED_NAMESPACE_LABEL = 'flotilla.io/created-by';
/** Namespaces remembered as existing; past this many the memory is dropped and rebuilt as objects are applied. */
const MAX_KNOWN_NAMESPACES = 10_000;

export interface Readiness {
  /** undefined until the first probe. */
  ready: boolean | undefined;
  message?: string;
  /** Consecutive failed probes. */
  failures: number;
  /** When `ready` last changed (ms since the epoch). */
  since: number;
}

export interface MemberOptions {
  name: string;
  /** Holds the member's context as its current context. */
  kubeConfig: KubeConfig;
  userAgent: string;
  /** Requests in flight to this member. */
  concurrency: number;
  /** A change or deletion of an object the controller applied here (drift, status). */
  onOwnedEvent(object: JsonObject): void;
  onWatchError(resource: string, err: unknown, attempt: number): void;
}

/** Whether a live object on a member is the controller's copy of template `t`. */
export function ownedBy(live: JsonObject, t: TemplateIdentity): boolean {
  const meta = isObject(live.metadata) ? live.metadata : {};
  const uid = ownString(meta.labels, TEMPLATE_UID_LABEL);
  if (uid === undefined) return false;
  if (uid === t.uid) return true;
  // A template deleted and created again under its name has a new uid: its old copy is still its own.
  const o = ownerTemplate(live);
  return o !== undefined && o.apiVersion.split('/')[0] === t.apiVersion.split('/')[0] && o.kind === t.kind && o.name === t.name && (o.namespace ?? '') === (t.namespace ?? '');
}

interface OwnedWatch {
  informer: Informer;
  stop: AbortController;
}

export class Member {
  readonly name: string;
  readonly client: KubeClient;
  readonly discovery: Discovery;
  readonly readiness: Readiness = { ready: undefined, failures: 0, since: Date.now() };
  private readonly o: MemberOptions;
  private readonly watcher: Watcher;
  private readonly watches = new Map<string, OwnedWatch>();
  /** Per watch: template uid → keys of the objects carrying it, kept from the watch's events. */
  private readonly owned = new Map<string, Map<string, Set<string>>>();
  private readonly namespaces = new Set<string>();
  /** Object (by watch and key) → hash of what this process last applied there: a cache older than our own write is not trusted. */
  private readonly lastApplied = new Map<string, string>();
  private readonly stopAll = new AbortController();
  private signal: AbortSignal;

  constructor(options: MemberOptions) {
    this.o = options;
    this.name = options.name;
    this.client = new KubeClient(options.kubeConfig, { concurrency: options.concurrency, userAgent: options.userAgent });
    this.watcher = new Watcher(options.kubeConfig, { userAgent: options.userAgent });
    this.discovery = new Discovery(this.client);
    this.signal = this.stopAll.signal;
  }

  /** scheme://host:port of its apiserver. */
  get server(): string {
    return this.client.server;
  }

  /** Aborts when the member is closed. */
  get closed(): AbortSignal {
    return this.stopAll.signal;
  }

  /** Watches started from now on stop when `signal` aborts, or at close(). */
  bind(signal: AbortSignal): void {
    this.signal = AbortSignal.any([signal, this.stopAll.signal]);
  }

  /** Stops the watches and releases the connections (a member whose credentials changed or went away). */
  async close(): Promise<void> {
    this.stopAll.abort();
    this.watches.clear();
    this.watcher.close();
    await this.client.close();
  }

  /** GET /readyz within `timeoutMs`; updates `readiness` and returns true when it changed. */
  async probe(timeoutMs: number): Promise<boolean> {
    const before = this.readiness.ready;
    let message: string | undefined;
    try {
      const res = await this.client.request({ method: 'GET', path: '/readyz', accept: 'text/plain', signal: AbortSignal.any([this.signal, AbortSignal.timeout(timeoutMs)]) });
      if (res.status !== 200) message = `/readyz answered HTTP ${res.status}`;
    } catch (err: unknown) {
      if (this.signal.aborted) return false;
      message = err instanceof Error && err.name === 'TimeoutError' ? `/readyz did not answer within ${timeoutMs} ms` : err instanceof Error ? err.message : String(err);
    }
    if (message === undefined) {
      this.readiness.ready = true;
      this.readiness.failures = 0;
      delete this.readiness.message;
    } else {
      this.readiness.ready = false;
      this.readiness.failures++;
      this.readiness.message = message;
    }
    if (before === this.readiness.ready) return false;
    this.readiness.since = Date.now();
    return true;
  }

  /** Resource and scope of a kind on this member, or undefined when the member does not serve it. */
  async resolve(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    try {
      return await this.discovery.resolve(apiVersion, kind);
    } catch (err: unknown) {
      if (!(err instanceof UnknownKindError)) throw err;
      // A CRD may be installed on the member later: ask again next time.
      this.discovery.forget(apiVersion);
      return undefined;
    }
  }

  /** Starts (once per kind) the watch of the objects of this kind the controller applied here. */
  watchOwned(info: ResourceInfo, apiVersion: string): void {
    const id = watchId(info);
    if (this.watches.has(id) || this.signal.aborted) return;
    const stop = new AbortController();
    const resource = `${info.resource}${info.group ? `.${info.group}` : ''}`;
    const informer = new Informer({
      name: `${this.name} ${resource}`,
      source: listWatchSource(this.client, this.watcher),
      path: resourcePath(info, undefined),
      apiVersion,
      kind: info.kind,
      labelSelector: TEMPLATE_UID_LABEL,
      handlers: {
        onAdd: (o) => this.index(id, o, true),
        onUpdate: (o, old) => {
          this.index(id, old, false);
          this.index(id, o, true);
          this.o.onOwnedEvent(o);
        },
        onDelete: (o) => {
          this.index(id, o, false);
          this.lastApplied.delete(`${id}|${objectKey(o)}`);
          this.o.onOwnedEvent(o);
        },
      },
      backoff: { baseMs: 1_000, maxMs: 30_000 },
      onError: (err, attempt) => this.o.onWatchError(resource, err, attempt),
    });
    this.watches.set(id, { informer, stop });
    void informer.start(AbortSignal.any([this.signal, stop.signal]));
  }

  private index(id: string, o: JsonObject, add: boolean): void {
    const uid = ownString(isObject(o.metadata) ? o.metadata.labels : undefined, TEMPLATE_UID_LABEL);
    if (!uid) return;
    const key = objectKey(o);
    let byUid = this.owned.get(id);
    if (!byUid) this.owned.set(id, (byUid = new Map<string, Set<string>>()));
    const keys = byUid.get(uid);
    if (add) {
      if (keys) keys.add(key);
      else byUid.set(uid, new Set([key]));
    } else if (keys) {
      keys.delete(key);
      if (keys.size === 0) byUid.delete(uid);
    }
  }

  /** Server-side applies `object` (already stamped with the template's labels) for template `t`. Never rejects. */
  async apply(object: JsonObject, t: TemplateIdentity, conflictResolution: 'Abort' | 'Overwrite', signal: AbortSignal): Promise<ApplyOutcome> {
    try {
      return await this.applyOnce(object, t, conflictResolution, signal);
    } catch (err: unknown) {
      if (err instanceof TransportError) return { state: 'Unreachable', message: err.message };
      return { state: 'Failed', message: err instanceof Error ? err.message : String(err) };
    }
  }

  private async applyOnce(object: JsonObject, t: TemplateIdentity, conflictResolution: 'Abort' | 'Overwrite', signal: AbortSignal): Promise<ApplyOutcome> {
    const body = deepClone(object);
    const apiVersion = ownString(body, 'apiVersion') ?? '';
    const kind = ownString(body, 'kind') ?? '';
    const meta = isObject(body.metadata) ? body.metadata : (body.metadata = {});
    const name = ownString(meta, 'name') ?? '';
    const info = await this.resolve(apiVersion, kind);
    if (!info) return { state: 'Failed', message: `the member does not serve ${apiVersion} ${kind}` };
    this.watchOwned(info, apiVersion);
    let namespace: string | undefined;
    if (info.namespaced) {
      namespace = ownString(meta, 'namespace') || 'default';
      meta.namespace = namespace;
      await this.ensureNamespace(namespace, signal);
    } else {
      delete meta.namespace;
    }
    const hash = stampAppliedHash(body);
    const key = namespace ? `${namespace}/${name}` : name;
    const id = `${watchId(info)}|${key}`;
    const path = resourcePath(info, namespace, name);

    const watch = this.watches.get(watchId(info));
    let live: JsonObject | undefined;
    let ours: boolean;
    const cached = watch?.informer.synced ? watch.informer.get(key) : undefined;
    if (cached && ownedBy(cached, t)) {
      live = cached;
      ours = true;
    } else {
      // Not in the cache: absent, not ours, or the cache has not caught up. One read tells, from the
      // apiserver's watch cache (resourceVersion 0: no etcd read). An object created by someone else a
      // moment ago and not seen here is caught by the non-forced apply below (409).
      const res = await this.client.request<JsonObject>({ method: 'GET', path, query: { resourceVersion: '0' }, accept: METADATA_ACCEPT, signal });
      if (res.status >= 400 && res.status !== 404) throw apiError(res);
      live = res.status === 404 ? undefined : res.body;
      ours = live !== undefined && ownedBy(live, t);
      if (live && !ours && conflictResolution === 'Abort') {
        const uid = ownString(isObject(live.metadata) ? live.metadata.labels : undefined, TEMPLATE_UID_LABEL);
        const whose = uid ? `it belongs to another template (${TEMPLATE_UID_LABEL}=${uid})` : `it has no ${TEMPLATE_UID_LABEL} label`;
        return { state: 'Conflict', message: `${kind} ${key} already exists on the member and is not the controller's (${whose}); left alone — set conflictResolution: Overwrite on the claiming policy to take it over` };
      }
    }
    const liveMeta = live && isObject(live.metadata) ? live.metadata : undefined;
    if (liveMeta && ownString(liveMeta, 'deletionTimestamp')) return { state: 'Failed', message: `${kind} ${key} is being deleted on the member; it is applied again once it is gone` };
    if (cached && ours && liveMeta && (this.lastApplied.get(id) ?? hash) === hash) {
      const managedFields = Array.isArray(liveMeta.managedFields) ? (liveMeta.managedFields.filter(isObject) as ManagedFieldsEntry[]) : [];
      const annotations = isObject(liveMeta.annotations) ? liveMeta.annotations : {};
      if (unchangedSinceApply({ annotations, managedFields }, body, MEMBER_FIELD_MANAGER)) return { state: 'Applied', changed: false, health: memberHealth(cached), key };
    }
    const force = live !== undefined && (ours || conflictResolution === 'Overwrite');
    // The answer's metadata is all that is read: health comes from the status last seen (the watch brings the new one).
    const res = await this.client.request<JsonObject>({
      method: 'PATCH',
      path,
      query: { fieldManager: MEMBER_FIELD_MANAGER, force: force ? 'true' : 'false', fieldValidation: 'Strict' },
      contentType: 'application/apply-patch+yaml',
      accept: METADATA_ACCEPT,
      body,
      signal,
    });
    if (res.status === 409 && !force) return { state: 'Conflict', message: `${kind} ${key} was created on the member by someone else meanwhile: ${apiError(res).message}` };
    if (res.status >= 400) {
      // The namespace may have been deleted on the member since it was seen.
      if (res.status === 404 && namespace) this.namespaces.delete(namespace);
      return { state: 'Failed', message: apiError(res).message };
    }
    this.lastApplied.set(id, hash);
    const before = liveMeta ? ownString(liveMeta, 'resourceVersion') : undefined;
    const answered = res.body && isObject(res.body.metadata) ? res.body.metadata : {};
    const after = ownString(answered, 'resourceVersion');
    // What is there now: the spec just applied, the generation the apiserver gave it, the status last seen.
    const seen = watch?.informer.get(key);
    const now: JsonObject = { kind, spec: body.spec, metadata: { generation: answered.generation }, ...(seen && seen.status !== undefined ? { status: seen.status } : {}) };
    return { state: 'Applied', changed: before !== after, health: memberHealth(now), key };
  }

  /**
   * Deletes template `t`'s objects of kind `at.apiVersion`/`at.kind` from this member, except the one at
   * `keep` (`namespace/name`, or `name`). With the kind's watch synced: every object carrying the
   * template's uid label, and its copy under the template's own name (a template deleted and created
   * again has a new uid); before that, the object under the template's own name only. An object that is
   * not the template's is left. Throws on transport and API errors; returns the keys deleted.
   */
  async removeAll(t: TemplateIdentity, at: { apiVersion: string; kind: string; namespace?: string; name: string }, keep: string | undefined, signal: AbortSignal): Promise<string[]> {
    const info = await this.resolve(at.apiVersion, at.kind);
    if (!info) return [];
    const id = watchId(info);
    const namespace = info.namespaced ? at.namespace || 'default' : undefined;
    const own = namespace ? `${namespace}/${at.name}` : at.name;
    const keys = new Set<string>([own]);
    if (this.watches.get(id)?.informer.synced) for (const k of this.owned.get(id)?.get(t.uid) ?? []) keys.add(k);
    const removed: string[] = [];
    for (const key of keys) {
      if (key !== keep && (await this.removeKey(t, info, key, signal))) removed.push(key);
    }
    return removed;
  }

  /** Deletes the object at `key` when it is template `t`'s; whether something was deleted. */
  private async removeKey(t: TemplateIdentity, info: ResourceInfo, key: string, signal: AbortSignal): Promise<boolean> {
    const slash = info.namespaced ? key.indexOf('/') : -1;
    const namespace = slash >= 0 ? key.slice(0, slash) : undefined;
    const name = slash >= 0 ? key.slice(slash + 1) : key;
    const watch = this.watches.get(watchId(info));
    // A synced cache that does not hold it: nothing of ours is there (no request).
    if (watch?.informer.synced && !watch.informer.get(key)) return false;
    const path = resourcePath(info, namespace, name);
    const res = await this.client.request<JsonObject>({ method: 'GET', path, accept: METADATA_ACCEPT, signal });
    if (res.status === 404) return false;
    if (res.status >= 400) throw apiError(res);
    const live = res.body ?? {};
    if (!ownedBy(live, t)) return false;
    const uid = ownString(live.metadata, 'uid');
    const del = await this.client.request({
      method: 'DELETE',
      path,
      body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', ...(uid ? { preconditions: { uid } } : {}) },
      signal,
    });
    if (del.status === 404 || del.status === 409) return false; // gone, or replaced by another object meanwhile
    if (del.status >= 400) throw apiError(del);
    this.lastApplied.delete(`${watchId(info)}|${key}`);
    return true;
  }

  private async ensureNamespace(ns: string, signal: AbortSignal): Promise<void> {
    if (this.namespaces.has(ns)) return;
    const path = `/api/v1/namespaces/${encodeURIComponent(ns)}`;
    const res = await this.client.request({ method: 'GET', path, accept: METADATA_ACCEPT, signal });
    if (res.status === 404) {
      const created = await this.client.request({
        method: 'POST',
        path: '/api/v1/namespaces',
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { [CREATED_NAMESPACE_LABEL]: 'flotilla-controller' } } },
        signal,
      });
      if (created.status >= 400 && created.status !== 409) throw new Error(`cannot create namespace ${ns} on the member: ${apiError(created).message}`);
    } else if (res.status >= 400) {
      throw new Error(`cannot read namespace ${ns} on the member: ${apiError(res).message}`);
    }
    if (this.namespaces.size >= MAX_KNOWN_NAMESPACES) this.namespaces.clear();
    this.namespaces.add(ns);
  }
}

function watchId(info: ResourceInfo): string {
  return `${info.group}/${info.kind}`;
}

/** Probes `member` until `signal` aborts: every `intervalMs` while ready, with backoff (1 s doubling to `intervalMs`, ±20%) while not. */
export async function probeLoop(member: Member, o: { intervalMs: number; timeoutMs: number; onChange(member: Member): void; random?: () => number }, signal: AbortSignal): Promise<void> {
  const random = o.random ?? Math.random;
  while (!signal.aborted) {
    if (await member.probe(o.timeoutMs)) o.onChange(member);
    const failing = member.readiness.ready === false;
    const base = failing ? Math.min(o.intervalMs, 1_000 * 2 ** Math.min(member.readiness.failures - 1, 10)) : o.intervalMs;
    await sleep(Math.round(base * (0.8 + 0.4 * random())), signal);
  }
}
