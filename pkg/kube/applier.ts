// The applier: brings one member cluster to a set of desired objects with server-side apply, records the
// set in an ApplySet parent (applyset.ts) and, when asked, prunes what the set held and no longer does.
// It is the command line's shell around the delivery core (delivery.ts), which holds the rules every
// writer shares; what is the command line's own is the ApplySet: membership marks an object as ours.
//
// Contract, per member:
//   - Every desired object is server-side applied with the given field manager and labelled
//     applyset.kubernetes.io/part-of=<id>. The field manager owns exactly what it last applied, so a
//     field dropped from the desired object (an override removed) is removed from the live object, or
//     goes back to what the remaining owners say.
//   - An object in this set is ours: it is applied with force, so a field someone changed on the member
//     (`kubectl set image`, `kubectl edit`) is put back. An object that exists on the member and is not in
//     this set is left alone and reported as a `conflict` naming whose it is, unless its
//     conflictResolution is Overwrite: then it is applied with force and joins the set.
//   - CustomResourceDefinitions and Namespaces go first; custom resources of a CRD in the same set wait
//     until it is Established and served. A namespace a desired object needs and the member lacks is
//     created, outside the set (it is never pruned: pruning a namespace deletes everything in it).
//   - Prune deletes objects labelled with this set's id, of the kinds and in the namespaces the parent
//     recorded or this run applies, that are not desired now; nothing without the label is ever deleted.
//     Namespaces and CRDs of the set are deleted after everything else.
//   - Cost: a few requests per member (parent, discovery per group-version, one metadata LIST per
//     kind and namespace), then one request per object. Created, configured or unchanged is told from
//     the PATCH's answer (201, or the resourceVersion before and after).
//   - A member that stops answering fails the rest of its work at once with one message; other members
//     are not affected (each has its own applier and client).
//   - Modes: `apply` writes; `dry-run` asks the apiserver to check every write (dryRun=All) and writes
//     nothing; `diff` also writes nothing and returns each object before and after.

import { TransportError, UnknownKindError } from './errors.js';
import {
  PART_OF_LABEL,
  ParentError,
  applySetId,
  groupKindString,
  parentObject,
  parseGroupKind,
  readParent,
  type ParentRef,
  type ParentState,
} from './applyset.js';
import { apiError, type KubeClient } from './client.js';
import {
  DeliveryCore,
  createdFor,
  liveMetaOf,
  scopeObject,
  serverSideApply,
  type ApplyOutcome,
  type ConflictResolution,
  type LiveMeta,
  type OwnerMark,
} from './delivery.js';
import { Discovery, resourcePath, splitApiVersion, type ResourceInfo } from './discovery.js';
import {
  deepClone,
  deepEqual,
  isObject,
  metadataOf,
  ownString,
  withoutServerFields,
  type JsonObject,
  type ObjectId,
} from './objects.js';
import { sleep } from '../runtime/clock.js';

export type { ConflictResolution } from './delivery.js';

export type Action = 'created' | 'configured' | 'unchanged' | 'pruned' | 'conflict' | 'failed';
export type ApplyMode = 'apply' | 'dry-run' | 'diff';

export interface DesiredObject {
  object: JsonObject;
  conflictResolution: ConflictResolution;
}

export interface ObjectResult extends ObjectId {
  action: Action;
  /** Why it is a conflict or failed (the apiserver's message when it gave one), or a note. */
  message?: string;
  /** Warnings the apiserver sent with its answer. */
  warnings?: string[];
  /** Failed because the member stopped answering; the member's report says so once. */
  unreachable?: boolean;
  /** diff mode: the live object and the object after apply, without server fields; null when absent. */
  live?: JsonObject | null;
  after?: JsonObject | null;
}

export interface MemberReport {
  member: string;
  /** scheme://host:port */
  server: string;
  results: ObjectResult[];
  /** Problems that are about the member rather than one object (unreachable, ApplySet parent, listing). */
  errors: string[];
  unreachable: boolean;
}

export interface ApplierOptions {
  fieldManager: string;
  parent: ParentRef;
  /** `flotilla/<version>`, written to the parent's tooling annotation. */
  tooling: string;
  mode: ApplyMode;
  prune: boolean;
  /** How long to wait for a CRD to become Established and served. Default 60 s. */
  establishTimeoutMs?: number;
  /** Called once per object as soon as its outcome is known. */
  onResult?: (member: string, result: ObjectResult) => void;
  /** Called once the number of objects to apply is known. */
  onPlan?: (member: string, objects: number) => void;
  signal?: AbortSignal;
}

const CRD_GROUP = 'apiextensions.k8s.io';
/** Most pages of one LIST followed (500 objects each); an apiserver that keeps going is an error. */
const MAX_LIST_PAGES = 10_000;
const META_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const LIST_PAGE = 500;

interface Item {
  id: ObjectId;
  group: string;
  body: JsonObject;
  conflictResolution: ConflictResolution;
  info?: ResourceInfo;
  /** The kind is defined by a CRD in this set that the member does not serve yet. */
  deferred?: { crd: string; namespaced: boolean };
  result?: ObjectResult;
}

interface Listing {
  items: Map<string, LiveMeta>;
}

class Unreachable extends Error {}

/**
 * The command line's mark: membership of the ApplySet `id`. A namespace the applier created for the set's
 * objects (CREATED_BY_LABEL=<id>) is not in the set — pruning a namespace deletes everything in it — but
 * when the input later names it, it joins the set without a conflict: it was this set's doing.
 */
export function applySetMark(id: string, o: { namespaceAdoption?: boolean } = {}): OwnerMark {
  const mark: OwnerMark = {
    namespaceMark: id,
    ours: 'part of this apply set',
    mark(object) {
      const meta = metadataOf(object);
      const labels = isObject(meta.labels) ? meta.labels : (meta.labels = {});
      labels[PART_OF_LABEL] = id;
    },
    owns: (live) =>
      ownString(live.labels, PART_OF_LABEL) === id || (o.namespaceAdoption === true && createdFor(live, mark)),
  };
  return mark;
}

export class MemberApplier {
  readonly member: string;
  private readonly client: KubeClient;
  private readonly o: ApplierOptions;
  private readonly discovery: Discovery;
  private readonly id: string;
  private readonly results: ObjectResult[] = [];
  private readonly errors: string[] = [];
  private unreachable: TransportError | undefined;
  private readonly listings = new Map<string, Promise<Listing>>();
  private readonly core: DeliveryCore;
  private readonly mark: OwnerMark;
  private readonly namespaceMark: OwnerMark;
  /** Namespaces known to exist (or to be created by this run). */
  private readonly namespaces = new Map<string, Promise<boolean>>();

  constructor(member: string, client: KubeClient, options: ApplierOptions) {
    this.member = member;
    this.client = client;
    this.o = options;
    this.discovery = new Discovery(client);
    this.id = applySetId(options.parent);
    this.core = new DeliveryCore(client, { fieldManager: options.fieldManager });
    this.mark = applySetMark(this.id);
    this.namespaceMark = applySetMark(this.id, { namespaceAdoption: true });
  }

  /** The ApplySet id this applier labels objects with. */
  get applySetId(): string {
    return this.id;
  }

  /** Never rejects: every problem ends up in the report. */
  async run(desired: readonly DesiredObject[]): Promise<MemberReport> {
    try {
      await this.runSteps(desired);
    } catch (err: unknown) {
      if (err instanceof TransportError) this.markUnreachable(err);
      else if (!(err instanceof Unreachable) && !this.o.signal?.aborted)
        this.errors.push(err instanceof Error ? err.message : String(err));
    }
    if (this.unreachable) this.errors.unshift(`unreachable: ${this.unreachable.message}`);
    if (this.o.signal?.aborted) this.errors.push('interrupted: the remaining work was not done');
    return {
      member: this.member,
      server: this.client.server,
      results: this.results,
      errors: this.errors,
      unreachable: this.unreachable !== undefined,
    };
  }

  private async runSteps(desired: readonly DesiredObject[]): Promise<void> {
    const items = desired.map((d) => this.prepare(d));
    const [parent] = await Promise.all([this.readParent(), this.resolveKinds(items)]);
    this.o.onPlan?.(this.member, items.length);
    const live = items.filter((i) => !i.result);
    const applied = new Set<string>(live.map((i) => groupKindString(i.group, i.id.kind)));
    const appliedNamespaces = new Set<string>(
      live.map((i) => i.id.namespace).filter((n): n is string => n !== undefined),
    );

    const writes = this.o.mode === 'apply';
    const touch = items.length > 0 || parent.exists;
    if (writes && touch) {
      // Record the union first: an interrupted run then still knows every kind and namespace to prune.
      await this.writeParent(parent, [...parent.groupKinds, ...applied], [...parent.namespaces, ...appliedNamespaces]);
    }

    // CRDs and Namespaces first, then wait for the CRDs before custom resources of their kinds.
    const first = live.filter((i) => isFirst(i));
    await Promise.all(first.map((i) => this.applyItem(i)));
    await this.awaitCRDs(items);
    const rest = live.filter((i) => !isFirst(i) && !i.result);
    await this.ensureNamespaces(rest);
    await Promise.all(rest.filter((i) => !i.result).map((i) => this.applyItem(i)));

    if (this.o.prune && touch) {
      const complete = await this.prune(items, parent, applied, appliedNamespaces);
      if (writes && complete && !this.unreachable)
        await this.writeParent(parent, applied, [this.o.parent.namespace, ...appliedNamespaces]);
    }
  }

  // ---- preparation ----------------------------------------------------------------------------------

  private prepare(d: DesiredObject): Item {
    const body = deepClone(d.object);
    const meta = metadataOf(body);
    const id: ObjectId = {
      apiVersion: ownString(body, 'apiVersion') ?? '',
      kind: ownString(body, 'kind') ?? '',
      name: ownString(meta, 'name') ?? '',
    };
    const ns = ownString(meta, 'namespace');
    if (ns) id.namespace = ns;
    const item: Item = {
      id,
      group: splitApiVersion(id.apiVersion).group,
      body,
      conflictResolution: d.conflictResolution,
    };
    if (!id.apiVersion || !id.kind || !id.name) {
      this.finish(item, 'failed', 'apiVersion, kind and metadata.name are required');
      return item;
    }
    const labels = isObject(meta.labels) ? meta.labels : (meta.labels = {});
    const existing = ownString(labels, PART_OF_LABEL);
    if (existing !== undefined && existing !== this.id) {
      this.finish(
        item,
        'failed',
        `metadata.labels: ${PART_OF_LABEL} is set in the input (${existing}); it is the apply set's own label`,
      );
      return item;
    }
    return item;
  }

  private async readParent(): Promise<ParentState> {
    const ref = this.o.parent;
    const res = await this.client.request({
      method: 'GET',
      path: `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets/${encodeURIComponent(ref.name)}`,
    });
    if (res.status === 404) return readParent(undefined, ref, this.id);
    if (res.status >= 400)
      throw new Error(`cannot read the ApplySet parent Secret ${ref.namespace}/${ref.name}: ${apiError(res).message}`);
    try {
      return readParent(res.body, ref, this.id);
    } catch (err: unknown) {
      if (err instanceof ParentError) throw new Error(err.message);
      throw err;
    }
  }

  /** Writes the parent unless it already records exactly this (same tooling, kinds and namespaces). */
  private async writeParent(
    current: ParentState,
    groupKinds: Iterable<string>,
    namespaces: Iterable<string>,
  ): Promise<void> {
    const ref = this.o.parent;
    const kinds = new Set(groupKinds);
    const spaces = new Set([...namespaces, ref.namespace]);
    const same = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));
    if (
      current.exists &&
      current.tooling === this.o.tooling &&
      same(kinds, current.groupKinds) &&
      same(spaces, current.namespaces)
    )
      return;
    if (!(await this.ensureNamespace(ref.namespace)))
      throw new Error(`cannot write the ApplySet parent: namespace ${ref.namespace} does not exist`);
    const body = parentObject(ref, this.id, this.o.tooling, kinds, spaces);
    const path = `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets/${encodeURIComponent(ref.name)}`;
    const res = await serverSideApply(this.client, path, body, {
      fieldManager: this.o.fieldManager,
      force: true,
      signal: this.o.signal,
    });
    if (res.status >= 400)
      throw new Error(`cannot write the ApplySet parent Secret ${ref.namespace}/${ref.name}: ${apiError(res).message}`);
    Object.assign(current, { exists: true, tooling: this.o.tooling, groupKinds: kinds, namespaces: spaces });
  }

  /** Resource and scope of every item; kinds of CRDs in this set that the member lacks wait for phase two. */
  private async resolveKinds(items: Item[]): Promise<void> {
    const crdKinds = new Map<string, { crd: string; namespaced: boolean }>();
    for (const i of items) {
      if (i.result || i.group !== CRD_GROUP || i.id.kind !== 'CustomResourceDefinition') continue;
      const spec = isObject(i.body.spec) ? i.body.spec : {};
      const names = isObject(spec.names) ? spec.names : {};
      const group = ownString(spec, 'group');
      const kind = ownString(names, 'kind');
      if (group && kind)
        crdKinds.set(groupKindString(group, kind), {
          crd: i.id.name,
          namespaced: ownString(spec, 'scope') !== 'Cluster',
        });
    }
    await Promise.all(
      items.map(async (i) => {
        if (i.result) return;
        try {
          i.info = await this.discovery.resolve(i.id.apiVersion, i.id.kind);
          this.fixScope(i, i.info.namespaced);
        } catch (err: unknown) {
          if (!(err instanceof UnknownKindError)) throw err;
          const fromSet = crdKinds.get(groupKindString(i.group, i.id.kind));
          if (fromSet) {
            i.deferred = fromSet;
            this.fixScope(i, fromSet.namespaced);
          } else {
            this.finish(i, 'failed', `unknown kind: ${err.message}`);
          }
        }
      }),
    );
  }

  private fixScope(i: Item, namespaced: boolean): void {
    const ns = scopeObject(i.body, { group: i.group, version: '', kind: i.id.kind, resource: '', namespaced });
    if (ns === undefined) delete i.id.namespace;
    else i.id.namespace = ns;
  }

  // ---- applying ---------------------------------------------------------------------------------------

  private async applyItem(i: Item): Promise<void> {
    if (i.result) return;
    if (!i.info) {
      // A custom resource whose CRD is new in this set: in dry-run and diff it cannot be checked.
      this.finish(
        i,
        'created',
        `not checked by the server: its CustomResourceDefinition ${i.deferred?.crd ?? ''} is not on the member yet`,
        { live: null, after: withoutServerFields(i.body) },
      );
      return;
    }
    const info = i.info;
    try {
      this.checkGoing();
      if (i.id.namespace && !(await this.ensureNamespace(i.id.namespace))) {
        const after = withoutServerFields(i.body);
        this.finish(
          i,
          'created',
          `not checked by the server: namespace ${i.id.namespace} does not exist yet (apply creates it)`,
          { live: null, after },
        );
        return;
      }
      const existing = (await this.listing(info, i.id.namespace, false)).items.get(i.id.name) ?? null;
      const mark = i.group === '' && i.id.kind === 'Namespace' ? this.namespaceMark : this.mark;
      const request = {
        info,
        object: i.body,
        mark,
        conflictResolution: i.conflictResolution,
        live: existing,
        signal: this.o.signal,
      };
      if (this.o.mode === 'apply') return this.finishApply(i, await this.core.apply(request));
      const path = resourcePath(info, i.id.namespace, i.id.name);
      const [liveRes, out] = await Promise.all([
        existing
          ? this.client.request<JsonObject>({ method: 'GET', path, signal: this.o.signal })
          : Promise.resolve(undefined),
        this.core.apply({ ...request, dryRun: true, answer: 'object' }),
      ]);
      if (liveRes && liveRes.status >= 400 && liveRes.status !== 404)
        return this.finish(i, 'failed', apiError(liveRes).message);
      const live = liveRes?.status === 200 && liveRes.body ? withoutServerFields(liveRes.body) : null;
      if (out.action === 'conflict' && this.o.mode === 'diff' && existing) {
        // Someone else's object: show what taking it over would change.
        const forced = await this.core.apply({
          ...request,
          object: deepClone(i.body),
          conflictResolution: 'Overwrite',
          dryRun: true,
          answer: 'object',
        });
        const after = forced.answer ? withoutServerFields(forced.answer) : null;
        return this.finish(
          i,
          'conflict',
          `${out.message ?? ''}; with conflictResolution: Overwrite it would make the change shown`,
          { live, after },
        );
      }
      if (out.action === 'conflict' || out.action === 'failed') return this.finishApply(i, out);
      const after = out.answer ? withoutServerFields(out.answer) : null;
      const action: Action = live === null ? 'created' : deepEqual(live, after) ? 'unchanged' : 'configured';
      this.finish(i, action, undefined, this.o.mode === 'diff' ? { live, after } : {}, out.warnings);
    } catch (err: unknown) {
      this.finishThrown(i, err);
    }
  }

  private finishApply(i: Item, out: ApplyOutcome): void {
    if (out.unreachable) {
      this.markUnreachable(new TransportError(out.message ?? 'unreachable', undefined));
      return this.finish(i, 'failed', 'not done: the member is unreachable', { unreachable: true });
    }
    this.finish(i, out.action, out.message, {}, out.warnings);
  }

  /** Waits for the set's CRDs to be Established and their kinds served, then resolves the waiting items. */
  private async awaitCRDs(items: Item[]): Promise<void> {
    const waiting = items.filter((i) => i.deferred && !i.result);
    if (waiting.length === 0 || this.o.mode !== 'apply') return;
    const crds = new Map<string, Item | undefined>();
    for (const i of waiting) {
      const name = i.deferred?.crd ?? '';
      crds.set(
        name,
        items.find((c) => c.group === CRD_GROUP && c.id.kind === 'CustomResourceDefinition' && c.id.name === name),
      );
    }
    const deadline = Date.now() + (this.o.establishTimeoutMs ?? 60_000);
    await Promise.all(
      [...crds].map(async ([name, crd]) => {
        const mine = waiting.filter((i) => i.deferred?.crd === name);
        if (
          !crd ||
          (crd.result?.action !== 'created' &&
            crd.result?.action !== 'configured' &&
            crd.result?.action !== 'unchanged')
        ) {
          for (const i of mine) this.finish(i, 'failed', `its CustomResourceDefinition ${name} was not applied`);
          return;
        }
        try {
          const why = await this.untilEstablished(name, deadline);
          if (why) {
            for (const i of mine) this.finish(i, 'failed', `CustomResourceDefinition ${name} is not ready: ${why}`);
            return;
          }
          for (const i of mine) {
            const reason = await this.untilServed(i, deadline);
            if (reason) this.finish(i, 'failed', `CustomResourceDefinition ${name} is Established but ${reason}`);
          }
        } catch (err: unknown) {
          for (const i of mine) this.finishThrown(i, err);
        }
      }),
    );
  }

  /** '' once Established, else the last reason seen when the deadline passed. */
  private async untilEstablished(name: string, deadline: number): Promise<string> {
    for (;;) {
      this.checkGoing();
      const res = await this.client.request<{
        status?: { conditions?: Array<{ type?: string; status?: string; message?: string }> };
      }>({
        method: 'GET',
        path: `/apis/${CRD_GROUP}/v1/customresourcedefinitions/${encodeURIComponent(name)}`,
      });
      let why = `HTTP ${res.status}`;
      if (res.status === 200) {
        const conditions = res.body?.status?.conditions ?? [];
        if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return '';
        const names = conditions.find((c) => c.type === 'NamesAccepted' && c.status === 'False');
        why = names?.message ? `names not accepted: ${names.message}` : 'not Established yet';
      }
      if (Date.now() > deadline) return `${why} after ${this.o.establishTimeoutMs ?? 60_000} ms`;
      await sleep(200, this.o.signal);
    }
  }

  private async untilServed(i: Item, deadline: number): Promise<string> {
    for (;;) {
      this.checkGoing();
      this.discovery.forget(i.id.apiVersion);
      try {
        i.info = await this.discovery.resolve(i.id.apiVersion, i.id.kind);
        this.fixScope(i, i.info.namespaced);
        return '';
      } catch (err: unknown) {
        if (!(err instanceof UnknownKindError)) throw err;
        if (Date.now() > deadline) return err.message;
      }
      await sleep(200, this.o.signal);
    }
  }

  /** Creates (in apply mode) the namespaces of these items that the member lacks. */
  private async ensureNamespaces(items: Item[]): Promise<void> {
    const names = new Set(
      items.filter((i) => !i.result && i.info?.namespaced && i.id.namespace).map((i) => i.id.namespace as string),
    );
    await Promise.all([...names].map((n) => this.ensureNamespace(n).catch(() => false)));
  }

  /** True when the namespace exists (or was created now); false when it is missing in dry-run/diff. */
  private ensureNamespace(name: string): Promise<boolean> {
    let p = this.namespaces.get(name);
    if (!p) {
      p = this.ensureNamespaceOnce(name);
      this.namespaces.set(name, p);
    }
    return p;
  }

  private async ensureNamespaceOnce(name: string): Promise<boolean> {
    const state = await this.core.ensureNamespace(name, this.mark, {
      create: this.o.mode === 'apply',
      signal: this.o.signal,
    });
    if (state === 'created') {
      this.emit({
        apiVersion: 'v1',
        kind: 'Namespace',
        name,
        action: 'created',
        message: 'created for the objects in it; not part of the apply set, never pruned',
      });
    }
    return state !== 'missing';
  }

  // ---- listing and pruning -----------------------------------------------------------------------------

  /** Metadata of the objects of one kind in one namespace ('' for cluster-scoped), all or only this set's. */
  private listing(info: ResourceInfo, namespace: string | undefined, onlySet: boolean): Promise<Listing> {
    const ns = info.namespaced ? (namespace ?? '') : '';
    const all = this.listings.get(`${info.group}/${info.kind}|${ns}|all`);
    if (all) return all;
    const key = `${info.group}/${info.kind}|${ns}|${onlySet ? 'set' : 'all'}`;
    let p = this.listings.get(key);
    if (!p) {
      p = this.fetchListing(info, ns, onlySet);
      this.listings.set(key, p);
    }
    return p;
  }

  private async fetchListing(info: ResourceInfo, namespace: string, onlySet: boolean): Promise<Listing> {
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
        signal: this.o.signal,
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

  /** Deletes (or, in dry-run/diff, reports) this set's objects that are no longer desired. True when complete. */
  private async prune(
    items: Item[],
    parent: ParentState,
    applied: Set<string>,
    appliedNamespaces: Set<string>,
  ): Promise<boolean> {
    if (this.unreachable) return false;
    const keep = new Set(
      items.filter((i) => i.info || i.deferred).map((i) => keyOf(i.group, i.id.kind, i.id.namespace, i.id.name)),
    );
    // Items that failed before their kind was known still count as desired: never delete what the input names.
    const keepNames = new Set(
      items.filter((i) => !i.info && !i.deferred).map((i) => `${i.id.kind}|${i.id.namespace ?? ''}|${i.id.name}`),
    );
    const kinds = new Set([...parent.groupKinds, ...applied]);
    const namespaces = new Set([...parent.namespaces, ...appliedNamespaces, this.o.parent.namespace]);
    let complete = true;
    const candidates: Array<{ info: ResourceInfo; namespace: string | undefined; meta: LiveMeta }> = [];
    await Promise.all(
      [...kinds].map(async (gk) => {
        const { group, kind } = parseGroupKind(gk);
        let info: ResourceInfo;
        try {
          info = await this.discovery.resolveGroupKind(group, kind);
        } catch (err: unknown) {
          if (err instanceof UnknownKindError) return; // the kind is gone from the member, and its objects with it
          throw err;
        }
        const scopes = info.namespaced ? [...namespaces] : [undefined];
        await Promise.all(
          scopes.map(async (ns) => {
            try {
              const listing = await this.listing(info, ns, true);
              for (const meta of listing.items.values()) {
                if (ownString(meta.labels, PART_OF_LABEL) !== this.id || meta.deleting) continue;
                if (
                  keep.has(keyOf(info.group, info.kind, ns, meta.name)) ||
                  keepNames.has(`${info.kind}|${ns ?? ''}|${meta.name}`)
                )
                  continue;
                candidates.push({ info, namespace: ns, meta });
              }
            } catch (err: unknown) {
              if (err instanceof TransportError) throw err;
              complete = false;
              this.errors.push(`prune: ${err instanceof Error ? err.message : String(err)}`);
            }
          }),
        );
      }),
    );
    const order = (c: { info: ResourceInfo }) =>
      c.info.group === CRD_GROUP && c.info.kind === 'CustomResourceDefinition'
        ? 1
        : c.info.group === '' && c.info.kind === 'Namespace'
          ? 2
          : 0;
    for (const stage of [0, 1, 2]) {
      const now = candidates.filter((c) => order(c) === stage);
      const outcomes = await Promise.all(now.map((c) => this.pruneOne(c.info, c.namespace, c.meta)));
      if (outcomes.includes(false)) complete = false;
    }
    return complete;
  }

  private async pruneOne(info: ResourceInfo, namespace: string | undefined, meta: LiveMeta): Promise<boolean> {
    const id: ObjectId = {
      apiVersion: info.group ? `${info.group}/${info.version}` : info.version,
      kind: info.kind,
      name: meta.name,
    };
    if (namespace) id.namespace = namespace;
    const path = resourcePath(info, namespace, meta.name);
    try {
      this.checkGoing();
      if (this.o.mode === 'diff') {
        const res = await this.client.request<JsonObject>({ method: 'GET', path });
        if (res.status === 404) return true;
        if (res.status >= 400) throw apiError(res);
        this.emit({ ...id, action: 'pruned', live: res.body ? withoutServerFields(res.body) : null, after: null });
        return true;
      }
      // Gone, or replaced meanwhile by an object that is not this one: nothing of the set's to delete.
      const { result } = await this.core.remove(info, namespace, meta.name, meta.uid, {
        dryRun: this.o.mode === 'dry-run',
        signal: this.o.signal,
      });
      if (result === 'deleted') this.emit({ ...id, action: 'pruned' });
      return true;
    } catch (err: unknown) {
      if (err instanceof TransportError) this.markUnreachable(err);
      const f = this.failure(err);
      this.emit({ ...id, action: 'failed', ...f, message: f.unreachable ? f.message : `prune: ${f.message}` });
      return false;
    }
  }

  // ---- outcomes ---------------------------------------------------------------------------------------

  private checkGoing(): void {
    if (this.unreachable) throw new Unreachable();
    if (this.o.signal?.aborted) throw new Error('interrupted');
  }

  /** A transport failure means the member is gone, unless it is this run being cancelled. */
  private markUnreachable(err: TransportError): void {
    if (this.o.signal?.aborted) return;
    this.unreachable ??= err;
  }

  private failure(err: unknown): { message: string; unreachable?: boolean } {
    if (this.o.signal?.aborted) return { message: 'interrupted' };
    if (err instanceof Unreachable || err instanceof TransportError)
      return { message: 'not done: the member is unreachable', unreachable: true };
    return { message: err instanceof Error ? err.message : String(err) };
  }

  private finishThrown(i: Item, err: unknown): void {
    if (err instanceof TransportError) this.markUnreachable(err);
    const f = this.failure(err);
    this.finish(i, 'failed', f.message, f.unreachable ? { unreachable: true } : {});
  }

  private finish(
    i: Item,
    action: Action,
    message?: string,
    extra: Partial<ObjectResult> = {},
    warnings: string[] = [],
  ): void {
    const r: ObjectResult = {
      ...i.id,
      action,
      ...(message !== undefined ? { message } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
      ...extra,
    };
    i.result = r;
    this.emit(r);
  }

  private emit(r: ObjectResult): void {
    this.results.push(r);
    this.o.onResult?.(this.member, r);
  }
}

function isFirst(i: Item): boolean {
  return (
    (i.group === CRD_GROUP && i.id.kind === 'CustomResourceDefinition') || (i.group === '' && i.id.kind === 'Namespace')
  );
}

function keyOf(group: string, kind: string, namespace: string | undefined, name: string): string {
  return `${group}|${kind}|${namespace ?? ''}|${name}`;
}
