// The delivery core: how every writer of Flotilla's — `flotilla apply`/`diff`, the controller, the agent —
// puts an object on a cluster and takes it away. One rule for all of them:
//
//   an object that is ours is enforced: applied with force, so a field someone changed (drift) is put
//   back and the command or reconcile succeeds; an object that is not ours is a conflict and is left
//   alone, unless the claiming policy says conflictResolution: Overwrite (then it is taken with force).
//
// What differs between the writers is only how an object is marked as theirs (an OwnerMark): ApplySet
// membership on the command line (applyset.ts), labels naming the template in the controller
// (pkg/controller/ownership.ts). Each writer has its own field manager (`flotilla`, `flotilla-controller`,
// `flotilla-agent`), so two writers on one object meet as a visible conflict naming the other, never as
// one silently dropping the other's labels.
//
// Every server-side apply in the project is built by serverSideApply() below: member objects, the
// ApplySet parent, ResourceBindings, and status on the hub.

// The controller's template annotation is named here only to say whose an object is in a conflict message.
import { TEMPLATE_ANNOTATION } from '../../api/work/v1alpha1/types.js';
import { PART_OF_LABEL } from './applyset.js';
import { apiError, METADATA_ACCEPT, type KubeClient, type KubeResponse } from './client.js';
import { resourcePath, type Discovery, type ResourceInfo } from './discovery.js';
import { TransportError, UnknownKindError } from './errors.js';
import { isObject, ownString, type JsonObject } from './objects.js';
import { stampAppliedHash, unchangedSinceApply, type ManagedFieldsEntry } from './ownership.js';

export type ConflictResolution = 'Abort' | 'Overwrite';

/** Label on a namespace a writer created for its objects: the writer's OwnerMark.namespaceMark. */
export const CREATED_BY_LABEL = 'flotilla.io/created-by';
/** The label the command line put on namespaces it created, before CREATED_BY_LABEL; still read. */
const LEGACY_CREATED_FOR_LABEL = 'flotilla.io/created-for-applyset';
/** Namespaces remembered as existing per member; past this many the memory is dropped and rebuilt. */
const MAX_KNOWN_NAMESPACES = 10_000;

/** How one writer marks an object as its own. */
export interface OwnerMark {
  /** Stamps the desired object (in place) with the labels that make it ours. */
  mark(object: JsonObject): void;
  /** Whether a live object (its metadata) is ours. */
  owns(live: LiveMeta): boolean;
  /** Value of CREATED_BY_LABEL on namespaces created for our objects. */
  readonly namespaceMark: string;
  /** What "ours" means, for messages: `part of this apply set`, `the controller's`. */
  readonly ours: string;
}

/** What the core needs to know of a live object: its metadata. */
export interface LiveMeta {
  name: string;
  uid: string;
  resourceVersion: string;
  labels: Readonly<Record<string, unknown>>;
  annotations: Readonly<Record<string, unknown>>;
  managedFields: ManagedFieldsEntry[];
  deleting: boolean;
}

export function liveMetaOf(object: unknown): LiveMeta {
  const m = isObject(object) && isObject(object.metadata) ? object.metadata : {};
  return {
    name: ownString(m, 'name') ?? '',
    uid: ownString(m, 'uid') ?? '',
    resourceVersion: ownString(m, 'resourceVersion') ?? '',
    labels: isObject(m.labels) ? m.labels : {},
    annotations: isObject(m.annotations) ? m.annotations : {},
    managedFields: Array.isArray(m.managedFields) ? m.managedFields.filter(isObject) : [],
    deleting: ownString(m, 'deletionTimestamp') !== undefined,
  };
}

/** Whose a live object is, in words, for a conflict message. */
export function describeOwner(live: LiveMeta): string {
  const set = ownString(live.labels, PART_OF_LABEL);
  if (set) return `it belongs to apply set ${set} (flotilla apply)`;
  const template = ownString(live.annotations, TEMPLATE_ANNOTATION);
  if (template) return `it is the flotilla controller's copy of ${template}`;
  const writers = [...new Set(live.managedFields.map((e) => e.manager).filter((m): m is string => Boolean(m)))];
  return writers.length > 0 ? `it was written by ${writers.slice(0, 3).join(', ')}` : 'it is not marked as ours';
}

export type ApplyAction = 'created' | 'configured' | 'unchanged' | 'conflict' | 'failed';

export interface ApplyRequest {
  info: ResourceInfo;
  /** The desired object, with its namespace set for a namespaced kind; marked and hashed by apply(). */
  object: JsonObject;
  mark: OwnerMark;
  /** The applied hash the caller has already stamped on `object`, marked: apply() does not compute it again. */
  hash?: string;
  conflictResolution: ConflictResolution;
  /** What is there now, from a cache or a listing; null when known to be absent; undefined: apply() reads it. */
  live?: LiveMeta | null;
  /** False when the caller knows `live` may predate its own last write (no skipping on it). Default true. */
  mayBeUnchanged?: boolean;
  /** Have the apiserver check everything and store nothing (dryRun=All). */
  dryRun?: boolean;
  /** The answer wanted: the object's metadata (default) or the whole object (diff). */
  answer?: 'metadata' | 'object';
  signal?: AbortSignal | undefined;
}

export interface ApplyOutcome {
  action: ApplyAction;
  /** Why it is a conflict or failed: the apiserver's message when it gave one. */
  message?: string;
  /** The member did not answer: the member is unreachable, not the object at fault. */
  unreachable?: boolean;
  warnings: string[];
  /** What was there before (null: absent). */
  live: LiveMeta | null;
  /** The apiserver's answer when a write was sent and succeeded. */
  answer?: JsonObject;
  /** The applied-hash annotation of the object sent. */
  hash: string;
}

export interface RemoveOutcome {
  /** deleted; absent (nothing there); replaced (another object under that name now: 409 on the uid precondition). */
  result: 'deleted' | 'absent' | 'replaced';
}

/** Options of one server-side apply; `force` takes fields other managers own. */
export interface SsaOptions {
  fieldManager: string;
  force: boolean;
  dryRun?: boolean;
  /** Unknown fields fail the request (Strict, default) or come back as warnings (Warn). */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /** The answer wanted: metadata only (default) or the whole object. */
  answer?: 'metadata' | 'object';
  signal?: AbortSignal | undefined;
}

/** The one place a server-side apply request is built. `path` is the object's (or its status subresource's). */
export function serverSideApply<T = JsonObject>(
  client: KubeClient,
  path: string,
  body: JsonObject,
  o: SsaOptions,
): Promise<KubeResponse<T>> {
  return client.request<T>({
    method: 'PATCH',
    path,
    query: {
      fieldManager: o.fieldManager,
      force: o.force ? 'true' : 'false',
      fieldValidation: o.fieldValidation ?? 'Strict',
      ...(o.dryRun ? { dryRun: 'All' } : {}),
    },
    contentType: 'application/apply-patch+yaml',
    ...(o.answer === 'object' ? {} : { accept: METADATA_ACCEPT }),
    body,
    signal: o.signal,
  });
}

/**
 * The resource serving a kind on this cluster, or undefined when it serves none. A kind it does not serve
 * is asked about again next time (a CRD may be installed meanwhile); transport errors are thrown.
 */
export async function resolveKind(
  discovery: Discovery,
  apiVersion: string,
  kind: string,
): Promise<ResourceInfo | undefined> {
  try {
    return await discovery.resolve(apiVersion, kind);
  } catch (err: unknown) {
    if (!(err instanceof UnknownKindError)) throw err;
    discovery.forget(apiVersion);
    return undefined;
  }
}

/** Sets or removes the namespace of `object` by the kind's scope; returns the namespace (namespaced kinds default to `default`). */
export function scopeObject(object: JsonObject, info: ResourceInfo): string | undefined {
  const meta = isObject(object.metadata) ? object.metadata : (object.metadata = {});
  if (!info.namespaced) {
    delete meta.namespace;
    return undefined;
  }
  const ns = ownString(meta, 'namespace') || 'default';
  meta.namespace = ns;
  return ns;
}

/** A failure in words, and whether it means the member is unreachable. */
export function failureOf(err: unknown): { message: string; unreachable: boolean } {
  return { message: err instanceof Error ? err.message : String(err), unreachable: err instanceof TransportError };
}

/** One writer's access to one cluster: apply, remove, namespaces. Holds what it learnt of namespaces. */
export class DeliveryCore {
  readonly client: KubeClient;
  readonly fieldManager: string;
  /** Managers this writer used before (its objects applied under them are taken over when next applied). */
  private readonly previousManagers: readonly string[];
  private readonly namespaces = new Set<string>();

  constructor(client: KubeClient, o: { fieldManager: string; previousManagers?: readonly string[] }) {
    this.client = client;
    this.fieldManager = o.fieldManager;
    this.previousManagers = o.previousManagers ?? [];
  }

  /** The metadata of the object at `info`/`namespace`/`name`, from the apiserver's watch cache; null when absent. */
  async readMeta(
    info: ResourceInfo,
    namespace: string | undefined,
    name: string,
    signal?: AbortSignal,
  ): Promise<LiveMeta | null> {
    const res = await this.client.request<JsonObject>({
      method: 'GET',
      path: resourcePath(info, namespace, name),
      query: { resourceVersion: '0' },
      accept: METADATA_ACCEPT,
      signal,
    });
    if (res.status === 404) return null;
    if (res.status >= 400) throw apiError(res);
    return liveMetaOf(res.body);
  }

  /** Applies one object by the rule at the top of this file. Never rejects. */
  async apply(req: ApplyRequest): Promise<ApplyOutcome> {
    const body = req.object;
    req.mark.mark(body);
    const hash = req.hash ?? stampAppliedHash(body);
    const name = ownString(body.metadata, 'name') ?? '';
    const namespace = req.info.namespaced ? ownString(body.metadata, 'namespace') : undefined;
    let live: LiveMeta | null = null;
    try {
      live = req.live === undefined ? await this.readMeta(req.info, namespace, name, req.signal) : req.live;
      if (live?.deleting)
        return {
          action: 'failed',
          message: 'is being deleted on the member; it is applied again once it is gone',
          warnings: [],
          live,
          hash,
        };
      const ours = live !== null && req.mark.owns(live);
      if (live && !ours && req.conflictResolution === 'Abort') {
        const message = `already exists on the member and is not ${req.mark.ours} (${describeOwner(live)}); left alone — set conflictResolution: Overwrite on the claiming policy to take it over`;
        return { action: 'conflict', message, warnings: [], live, hash };
      }
      if (
        live &&
        ours &&
        !req.dryRun &&
        req.mayBeUnchanged !== false &&
        unchangedSinceApply(live, body, this.fieldManager)
      ) {
        return { action: 'unchanged', warnings: [], live, hash };
      }
      if (live && ours && !req.dryRun) await this.takeOver(req.info, namespace, name, live, req.signal);
      const force = live !== null && (ours || req.conflictResolution === 'Overwrite');
      const res = await serverSideApply(this.client, resourcePath(req.info, namespace, name), body, {
        fieldManager: this.fieldManager,
        force,
        ...(req.dryRun ? { dryRun: true } : {}),
        ...(req.answer ? { answer: req.answer } : {}),
        signal: req.signal,
      });
      if (res.status === 409 && !force) {
        // Absent when looked at, there now: someone created it meanwhile with other values.
        return {
          action: 'conflict',
          message: `was created on the member by someone else meanwhile: ${apiError(res).message}`,
          warnings: res.warnings,
          live,
          hash,
        };
      }
      if (res.status >= 400) {
        if (res.status === 404 && namespace) this.namespaces.delete(namespace); // deleted on the member since it was seen
        return { action: 'failed', message: apiError(res).message, warnings: res.warnings, live, hash };
      }
      const after = ownString(isObject(res.body) ? res.body.metadata : undefined, 'resourceVersion');
      const action: ApplyAction =
        res.status === 201 || live === null ? 'created' : after === live.resourceVersion ? 'unchanged' : 'configured';
      return { action, warnings: res.warnings, live, ...(res.body ? { answer: res.body } : {}), hash };
    } catch (err: unknown) {
      const f = failureOf(err);
      return {
        action: 'failed',
        message: f.message,
        ...(f.unreachable ? { unreachable: true } : {}),
        warnings: [],
        live,
        hash,
      };
    }
  }

  /**
   * Deletes the object at `info`/`namespace`/`name` if it is still the one with `uid` (a precondition, so
   * an object created again under that name meanwhile is never deleted) and, given `resourceVersion`, still
   * that version of it (a decision made from a cache). Throws on transport and API errors.
   */
  async remove(
    info: ResourceInfo,
    namespace: string | undefined,
    name: string,
    uid: string,
    o: { dryRun?: boolean; signal?: AbortSignal; resourceVersion?: string | undefined } = {},
  ): Promise<RemoveOutcome> {
    const res = await this.client.request({
      method: 'DELETE',
      path: resourcePath(info, namespace, name),
      query: o.dryRun ? { dryRun: 'All' } : {},
      accept: METADATA_ACCEPT,
      body: {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        propagationPolicy: 'Background',
        ...(uid
          ? { preconditions: { uid, ...(o.resourceVersion ? { resourceVersion: o.resourceVersion } : {}) } }
          : {}),
      },
      signal: o.signal,
    });
    if (res.status === 404) return { result: 'absent' };
    if (res.status === 409) return { result: 'replaced' };
    if (res.status >= 400) throw apiError(res);
    return { result: 'deleted' };
  }

  /**
   * Makes sure namespace `name` exists: 'exists', 'created' (labelled CREATED_BY_LABEL=<mark>), or
   * 'missing' when `create` is false and it does not exist. Throws when it cannot be read or created.
   */
  async ensureNamespace(
    name: string,
    mark: OwnerMark,
    o: { create: boolean; signal?: AbortSignal | undefined },
  ): Promise<'exists' | 'created' | 'missing'> {
    if (this.namespaces.has(name)) return 'exists';
    const path = `/api/v1/namespaces/${encodeURIComponent(name)}`;
    const got = await this.client.request({
      method: 'GET',
      path,
      query: { resourceVersion: '0' },
      accept: METADATA_ACCEPT,
      signal: o.signal,
    });
    let outcome: 'exists' | 'created' = 'exists';
    if (got.status === 404) {
      if (!o.create) return 'missing';
      const created = await this.client.request({
        method: 'POST',
        path: '/api/v1/namespaces',
        accept: METADATA_ACCEPT,
        body: {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name, labels: { [CREATED_BY_LABEL]: mark.namespaceMark } },
        },
        signal: o.signal,
      });
      if (created.status >= 400 && created.status !== 409)
        throw new Error(`cannot create namespace ${name}: ${apiError(created).message}`);
      if (created.status < 400) outcome = 'created';
    } else if (got.status >= 400) {
      throw new Error(`cannot read namespace ${name}: ${apiError(got).message}`);
    }
    if (this.namespaces.size >= MAX_KNOWN_NAMESPACES) this.namespaces.clear();
    this.namespaces.add(name);
    return outcome;
  }

  /** Forgets that a namespace exists (it was deleted on the member). */
  forgetNamespace(name: string): void {
    this.namespaces.delete(name);
  }

  /**
   * An object of ours still carrying an Apply entry of a manager this writer used before: that entry is
   * dropped, so the forced apply that follows owns every field it sets alone and a field dropped later
   * is removed. Skipped when the object is also in an ApplySet (`flotilla apply` applies as `flotilla` too).
   */
  private async takeOver(
    info: ResourceInfo,
    namespace: string | undefined,
    name: string,
    live: LiveMeta,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if (this.previousManagers.length === 0 || ownString(live.labels, PART_OF_LABEL)) return;
    const kept = live.managedFields.filter(
      (e) => !(e.operation === 'Apply' && e.manager && this.previousManagers.includes(e.manager)),
    );
    if (kept.length === live.managedFields.length) return;
    const res = await this.client.request({
      method: 'PATCH',
      path: resourcePath(info, namespace, name),
      contentType: 'application/json-patch+json',
      accept: METADATA_ACCEPT,
      body: [
        { op: 'test', path: '/metadata/resourceVersion', value: live.resourceVersion },
        // An empty list would leave managedFields as they are; one entry with nothing in it clears them.
        { op: 'replace', path: '/metadata/managedFields', value: kept.length > 0 ? kept : [{}] },
      ],
      signal,
    });
    if (res.status >= 400 && res.status !== 409 && res.status !== 422) throw apiError(res);
  }
}

/** Whether a namespace on the member was created for objects marked by `mark` (the new label, or the one before it). */
export function createdFor(live: LiveMeta, mark: OwnerMark): boolean {
  return (
    ownString(live.labels, CREATED_BY_LABEL) === mark.namespaceMark ||
    ownString(live.labels, LEGACY_CREATED_FOR_LABEL) === mark.namespaceMark
  );
}
