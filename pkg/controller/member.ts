// One member cluster as the controller reaches it: a client, discovery, the delivery core, a readiness
// probe, and a watch per kind of the objects the controller applied there (those carrying its
// template-uid label, see ownership.ts). The watches serve twice: their events bring drift (an edit or a
// delete on the member) back to the controller, and their caches answer "what is there now" so a
// reconcile that changes nothing costs no request on the member.
//
// apply(object, template) hands the object to the delivery core (pkg/kube/delivery.ts), with the
// template's labels as the mark of ownership and, when the watch cache holds the object, its metadata as
// what is there now (otherwise the core reads it: one metadata GET from the apiserver's watch cache).
// The watch keeps each object cut down to a digest of the controller's fields (owned-copy.ts): an apply
// changes nothing, and is not sent, when that digest is the one recorded from the apiserver's answer to
// this process's last apply of the same body (before any apply here, after a restart: the body's own).
// The rules are the core's: ours is applied with force (drift put back), someone else's is a conflict
// unless the policy says Overwrite, an absent object is created with a non-forced apply.
// removeAll(template, kind, keep) deletes what the template has on the member (its uid label decides, with
// the object's uid as a precondition), and nothing else: every object of the kind carrying the template's
// uid label (an override may have renamed it, or moved it to another namespace) but the one at `keep`.

import type { KubeConfig } from '../kube/config.js';

import { apiError, KubeClient, METADATA_ACCEPT } from '../kube/client.js';
import {
  DeliveryCore,
  failureOf,
  liveMetaOf,
  resolveKind,
  scopeObject,
  type ConflictResolution,
  type LiveMeta,
} from '../kube/delivery.js';
import { Discovery, resourcePath, type ResourceInfo } from '../kube/discovery.js';
import { deepClone, isObject, ownString, type JsonObject } from '../kube/objects.js';
import { appliedDigest, digestOf, ownedDigest } from '../kube/field-digest.js';
import { stampAppliedHash } from '../kube/ownership.js';
import type { Transport } from '../kube/transport.js';
import { Watcher } from '../kube/watch.js';
import { memberHealth, type MemberHealth } from './binding.js';
import { probeReadyz, type Readiness } from './member-probe.js';
import { copyDigest, fromPreviousManager } from './owned-copy.js';
import { OwnedWatches } from './owned-watches.js';
import { retainReplicas } from './retain.js';
import {
  CONTROLLER_FIELD_MANAGER,
  PREVIOUS_MEMBER_FIELD_MANAGERS,
  RELEASED_ANNOTATIONS,
  RELEASED_LABELS,
  ownedBy,
  templateMark,
  type TemplateIdentity,
} from './ownership.js';

export type ApplyOutcome =
  | {
      state: 'Applied';
      changed: boolean;
      health: MemberHealth;
      /** `namespace/name` (or `name`) of the object on the member. */ key: string;
      /** spec.replicas was left as the member has it (retain: a scaler there owns it), and why. */
      retained?: { replicas: number; why: string };
      /** The member copy's generation and status as last seen, for the template's aggregated status. */
      observed: { generation?: number; status?: JsonObject };
    }
  | { state: 'Conflict' | 'Failed'; message: string }
  | { state: 'Unreachable'; message: string };

function observedOf(o: JsonObject | undefined): { generation?: number; status?: JsonObject } {
  const meta = o && isObject(o.metadata) ? o.metadata : {};
  return {
    ...(typeof meta.generation === 'number' ? { generation: meta.generation } : {}),
    ...(o && isObject(o.status) ? { status: o.status } : {}),
  };
}

export interface MemberOptions {
  name: string;
  /** Holds the member's context as its current context. */
  kubeConfig: KubeConfig;
  /** Requests go here instead of to the KubeConfig's server (tests); watches too, when it streams them (else they are not started). */
  transport?: Transport;
  userAgent: string;
  /** Requests in flight to this member. */
  concurrency: number;
  /** A change or deletion of an object the controller applied here (drift, status). */
  onOwnedEvent(object: JsonObject): void;
  onWatchError(resource: string, err: unknown, attempt: number): void;
}

export class Member {
  readonly name: string;
  readonly client: KubeClient;
  readonly discovery: Discovery;
  readonly core: DeliveryCore;
  readonly readiness: Readiness = { ready: undefined, failures: 0, since: Date.now() };
  private readonly o: MemberOptions;
  private readonly watcher: Watcher;
  /** The watches of what the controller applied here, their caches and index (owned-watches.ts). */
  private readonly watches: OwnedWatches;
  private readonly stopAll = new AbortController();
  private signal: AbortSignal;

  constructor(options: MemberOptions) {
    this.o = options;
    this.name = options.name;
    this.client = new KubeClient(options.transport ?? options.kubeConfig, {
      concurrency: options.concurrency,
      userAgent: options.userAgent,
    });
    this.watcher = new Watcher(options.transport ?? options.kubeConfig, { userAgent: options.userAgent });
    this.discovery = new Discovery(this.client);
    this.core = new DeliveryCore(this.client, {
      fieldManager: CONTROLLER_FIELD_MANAGER,
      previousManagers: PREVIOUS_MEMBER_FIELD_MANAGERS,
    });
    this.watches = new OwnedWatches({ ...options, client: this.client, watcher: this.watcher });
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

  /**
   * Watches started from now on stop when `signal` aborts, or at close(); the client is fenced on it: when
   * the run stops (a Lease holder past its deadline), no request to the member is sent any more and those
   * in flight are abandoned.
   */
  bind(signal: AbortSignal): void {
    this.signal = AbortSignal.any([signal, this.stopAll.signal]);
    this.client.fence(signal);
  }

  /** Stops the watches and releases the connections (a member whose credentials changed or went away). */
  async close(): Promise<void> {
    this.stopAll.abort();
    this.watches.clear();
    this.watcher.close();
    await this.client.close();
  }

  /** GET /readyz within `timeoutMs`; updates `readiness` and returns true when it changed. */
  probe(timeoutMs: number): Promise<boolean> {
    return probeReadyz(this.client, this.readiness, timeoutMs, this.signal);
  }

  /** Resource and scope of a kind on this member, or undefined when the member does not serve it. */
  resolve(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    return resolveKind(this.discovery, apiVersion, kind);
  }

  /** Starts (once per kind) the watch of the objects of this kind the controller applied here. */
  watchOwned(info: ResourceInfo, apiVersion: string): void {
    if (this.o.transport && !this.o.transport.watch) return;
    this.watches.start(info, apiVersion, this.signal);
  }

  /**
   * The objects carrying a template's labels here, from the watches that have listed once; `synced` is
   * false while any watch has not (what it holds is not known yet).
   */
  ownedObjects(): { synced: boolean; objects: Array<{ info: ResourceInfo; object: JsonObject }> } {
    return this.watches.objects();
  }

  /** The kinds whose copies here are watched, as `group/Kind`. */
  ownedKinds(): Set<string> {
    return this.watches.kinds();
  }

  /**
   * Server-side applies `object` for template `t` by the delivery core's rules. Never rejects. `planned`:
   * the object's applied hash as its plan computed it (plan.ts), stamped as it is when the object is sent
   * unchanged (its namespace as given, its replicas not retained) instead of serialising it again.
   */
  async apply(
    object: JsonObject,
    t: TemplateIdentity,
    conflictResolution: ConflictResolution,
    signal: AbortSignal,
    planned?: string,
  ): Promise<ApplyOutcome> {
    const body = deepClone(object);
    const apiVersion = ownString(body, 'apiVersion') ?? '';
    const kind = ownString(body, 'kind') ?? '';
    const name = ownString(body.metadata, 'name') ?? '';
    const given = ownString(body.metadata, 'namespace');
    const mark = templateMark(t);
    let info: ResourceInfo | undefined;
    let namespace: string | undefined;
    try {
      info = await this.resolve(apiVersion, kind);
      if (!info) return { state: 'Failed', message: `the member does not serve ${apiVersion} ${kind}` };
      this.watchOwned(info, apiVersion);
      namespace = scopeObject(body, info);
      if (namespace) await this.core.ensureNamespace(namespace, mark, { create: true, signal });
    } catch (err: unknown) {
      return failed(err);
    }
    const key = namespace ? `${namespace}/${name}` : name;
    mark.mark(body);
    const cached = this.watches.synced(info) ? this.watches.get(info, key) : undefined;
    // The cache is what is there now when it holds the template's object; a cache older than this
    // process's last write there is not trusted to say "unchanged".
    const live: LiveMeta | undefined = cached ? liveMetaOf(cached) : undefined;
    // Someone else's object, or one whose previous manager's entry is to be taken over: the core reads it whole.
    const known = live && cached && ownedBy(live, t) && !fromPreviousManager(cached) ? live : undefined;
    const retained = known && cached ? retainReplicas(body, cached) : undefined;
    const hash = stampAppliedHash(body, !retained && given === namespace ? planned : undefined);
    if (known && !known.deleting && this.unchanged(info, key, body, hash, copyDigest(cached)))
      return {
        state: 'Applied',
        changed: false,
        health: memberHealth(cached),
        key,
        observed: observedOf(cached),
        ...(retained ? { retained } : {}),
      };
    const out = await this.core.apply({
      info,
      object: body,
      mark,
      hash,
      conflictResolution,
      ...(known ? { live: known } : {}),
      // Decided above from the digests (the cached copy carries no field sets).
      mayBeUnchanged: false,
      answer: 'object',
      signal,
    });
    if (out.action === 'conflict') return { state: 'Conflict', message: `${kind} ${key} ${out.message ?? ''}` };
    if (out.action === 'failed')
      return out.unreachable
        ? { state: 'Unreachable', message: out.message ?? '' }
        : { state: 'Failed', message: `${kind} ${key}: ${out.message ?? ''}` };
    const ours = out.answer ? ownedDigest(out.answer, CONTROLLER_FIELD_MANAGER) : undefined;
    this.watches.setApplied(info, key, ours === undefined ? undefined : appliedMemory(hash, ours));
    const answered = out.answer && isObject(out.answer.metadata) ? out.answer.metadata : {};
    // What is there now: the spec just applied, the generation the apiserver gave it, the status last seen.
    const seen = this.watches.get(info, key);
    const now: JsonObject = {
      kind,
      spec: body.spec,
      metadata: { generation: answered.generation },
      ...(seen && seen.status !== undefined ? { status: seen.status } : {}),
    };
    return {
      state: 'Applied',
      changed: out.action !== 'unchanged',
      health: memberHealth(now),
      key,
      observed: observedOf(now),
      ...(retained ? { retained } : {}),
    };
  }

  /**
   * Whether applying `body` (hash `hash`) at `key` would change nothing, from `digest`, the controller's
   * fields in the cached copy: it must be the digest recorded from the answer to this process's last apply
   * there, when that apply sent this same body; before any apply here (a restart), the body's own digest.
   */
  private unchanged(
    info: ResourceInfo,
    key: string,
    body: JsonObject,
    hash: string,
    digest: string | undefined,
  ): boolean {
    if (digest === undefined) return false;
    const remembered = this.watches.applied(info, key);
    return remembered !== undefined ? remembered === appliedMemory(hash, digest) : digest === appliedDigest(body);
  }

  /**
   * Deletes template `t`'s objects of kind `at.apiVersion`/`at.kind` from this member, except the one at
   * `keep` (`namespace/name`, or `name`). With the kind's watch synced: every object carrying the
   * template's uid label, and its copy under the template's own name (a template deleted and created
   * again has a new uid); before that, the object under the template's own name only. An object that is
   * not the template's is left. Throws on transport and API errors; returns the keys deleted.
   */
  async removeAll(
    t: TemplateIdentity,
    at: { apiVersion: string; kind: string; namespace?: string; name: string },
    keep: string | undefined,
    signal: AbortSignal,
  ): Promise<string[]> {
    const found = await this.templateKeys(t, at);
    if (!found) return [];
    const removed: string[] = [];
    for (const key of found.keys) {
      if (key !== keep && (await this.removeKey(t, found.info, key, signal))) removed.push(key);
    }
    return removed;
  }

  /**
   * Where template `t`'s objects of kind `at` may be: its copy under the template's own name and, with the
   * kind's watch synced, every object carrying the template's uid label.
   */
  private async templateKeys(
    t: TemplateIdentity,
    at: { apiVersion: string; kind: string; namespace?: string; name: string },
  ): Promise<{ info: ResourceInfo; keys: Set<string> } | undefined> {
    const info = await this.resolve(at.apiVersion, at.kind);
    if (!info) return undefined;
    const namespace = info.namespaced ? at.namespace || 'default' : undefined;
    const keys = new Set<string>([namespace ? `${namespace}/${at.name}` : at.name]);
    if (this.watches.synced(info)) for (const k of this.watches.keysOf(info, t.uid)) keys.add(k);
    return { info, keys };
  }

  /**
   * The object at `key` when it is template `t`'s. With the kind's watch synced, from its cache (the caller
   * writes with the uid and resourceVersion seen as preconditions, so a cache behind the apiserver costs a
   * conflict and a read, never a wrong write); a cache that lacks what this process applied there is
   * behind that apply, and its next event is waited for (at most CATCH_UP_MS) before the apiserver is
   * asked. `fresh`: from the apiserver.
   */
  private async ownedAt(
    t: TemplateIdentity,
    info: ResourceInfo,
    key: string,
    signal: AbortSignal,
    fresh = false,
  ): Promise<Owned | undefined> {
    const slash = info.namespaced ? key.indexOf('/') : -1;
    const namespace = slash >= 0 ? key.slice(0, slash) : undefined;
    const name = slash >= 0 ? key.slice(slash + 1) : key;
    const path = resourcePath(info, namespace, name);
    if (!fresh && this.watches.synced(info)) {
      const applied = () => this.watches.applied(info, key) !== undefined;
      if (!this.watches.get(info, key) && applied()) await this.watches.nextEvent(info, key, CATCH_UP_MS, signal);
      const cached = this.watches.get(info, key);
      const live = cached ? liveMetaOf(cached) : undefined;
      if (live && ownedBy(live, t)) return { path, namespace, name, live, cached: true };
      // Not there, or not the template's, and nothing of this process's in flight there.
      if (!applied()) return undefined;
    }
    const res = await this.client.request<JsonObject>({ method: 'GET', path, accept: METADATA_ACCEPT, signal });
    if (res.status === 404) return undefined;
    if (res.status >= 400) throw apiError(res);
    const live = liveMetaOf(res.body);
    return ownedBy(live, t) ? { path, namespace, name, live, cached: false } : undefined;
  }

  /**
   * preserveResourcesOnDeletion: the template's objects stay on the member, without the labels and
   * annotations that mark them as the template's, so nothing adopts or removes them later. Returns the
   * keys released.
   */
  async releaseAll(
    t: TemplateIdentity,
    at: { apiVersion: string; kind: string; namespace?: string; name: string },
    signal: AbortSignal,
  ): Promise<string[]> {
    const found = await this.templateKeys(t, at);
    if (!found) return [];
    const released: string[] = [];
    for (const key of found.keys) if (await this.releaseKey(t, found.info, key, signal)) released.push(key);
    return released;
  }

  /** Releases the object at `key` when it is template `t`'s; whether something was released. */
  private releaseKey(t: TemplateIdentity, info: ResourceInfo, key: string, signal: AbortSignal): Promise<boolean> {
    // Every mark is removed (a merge patch's null for a label not there changes nothing): the cache keeps
    // only some of them.
    const released = (keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, null]));
    return this.onOwned(t, info, key, signal, async (owned) => {
      const patched = await this.client.request({
        method: 'PATCH',
        path: owned.path,
        accept: METADATA_ACCEPT,
        contentType: 'application/merge-patch+json',
        // The uid precondition: a replacement object of the same name is not touched; seen in the cache,
        // the resourceVersion too.
        body: {
          metadata: {
            uid: owned.live.uid,
            ...(owned.cached ? { resourceVersion: owned.live.resourceVersion } : {}),
            labels: released(RELEASED_LABELS),
            annotations: released(RELEASED_ANNOTATIONS),
          },
        },
        signal,
      });
      if (patched.status === 409) return 'refused';
      if (patched.status === 404) return 'none';
      if (patched.status >= 400) throw apiError(patched);
      return 'done';
    });
  }

  /** Deletes the object at `key` when it is template `t`'s; whether something was deleted. */
  private removeKey(t: TemplateIdentity, info: ResourceInfo, key: string, signal: AbortSignal): Promise<boolean> {
    return this.onOwned(t, info, key, signal, async (owned) => {
      const { result } = await this.core.remove(info, owned.namespace, owned.name, owned.live.uid, {
        signal,
        ...(owned.cached ? { resourceVersion: owned.live.resourceVersion } : {}),
      });
      // Gone, or replaced meanwhile by an object that is not this one: nothing deleted.
      return result === 'deleted' ? 'done' : result === 'replaced' ? 'refused' : 'none';
    });
  }

  /**
   * `act` on template `t`'s object at `key`, if there is one (ownedAt); refused on what the watch showed
   * (a precondition failed: the object changed since), it is tried again on what the apiserver says.
   * Whether it was done.
   */
  private async onOwned(
    t: TemplateIdentity,
    info: ResourceInfo,
    key: string,
    signal: AbortSignal,
    act: (owned: Owned) => Promise<'done' | 'refused' | 'none'>,
  ): Promise<boolean> {
    for (const fresh of [false, true]) {
      const owned = await this.ownedAt(t, info, key, signal, fresh);
      if (!owned) return false;
      const out = await act(owned);
      if (out === 'refused' && owned.cached) continue;
      if (out !== 'done') return false;
      this.watches.setApplied(info, key, undefined);
      return true;
    }
    return false;
  }
}

/** Template `t`'s object at a key, as ownedAt found it: from the watch's cache, or from the apiserver. */
interface Owned {
  path: string;
  namespace: string | undefined;
  name: string;
  live: LiveMeta;
  cached: boolean;
}

/** How long a cleanup waits for a member's watch to show this process's last apply there before asking the apiserver. */
const CATCH_UP_MS = 5_000;

/** What Member.apply remembers of one apply: the body's hash and the digest of the controller's fields in the answer. */
function appliedMemory(hash: string, answered: string): string {
  return digestOf(`${hash} ${answered}`);
}

function failed(err: unknown): ApplyOutcome {
  const f = failureOf(err);
  return f.unreachable ? { state: 'Unreachable', message: f.message } : { state: 'Failed', message: f.message };
}
