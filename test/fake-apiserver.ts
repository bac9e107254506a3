// An in-memory apiserver behind the Transport seam (pkg/kube/transport.ts), for unit tests of the code
// that talks to apiservers: the delivery core, the applier, the controller's reconcilers. It keeps just
// enough of the real server's behaviour for the rules those tests are about:
//   - server-side apply with field ownership: each leaf field (a scalar, or a list as a whole) has the
//     set of managers that own it; a non-forced apply that changes a field another manager owns is a 409
//     Conflict naming that manager; force takes the field; a field the applier owned alone and no longer
//     sends is removed; managedFields are written in the fieldsV1 form (`f:` keys) pkg/kube/ownership.ts reads;
//   - Update-style edits by another manager (`edit`), as `kubectl set image` makes them;
//   - GET (whole object or PartialObjectMetadata), LIST (one namespace or all) with a label selector
//     (existence or `k=v`) and a field selector (`path=v`, `path!=v`), with the store's resourceVersion,
//     POST create (409 AlreadyExists), DELETE with a uid precondition (409 Conflict), merge patches,
//     status subresources (status only, generation unchanged), discovery of the kinds it is given;
//   - finalizers: DELETE of an object that has some sets deletionTimestamp; the write that empties them
//     removes it;
//   - requests held (`hold`) before the store answers them, until the test releases them: a write in
//     flight that has reached the server but not been carried out yet;
//   - watches (`watch`, the Transport's streaming side, as a Watcher uses it): ADDED / MODIFIED / DELETED
//     from the resourceVersion asked for (every change is kept), with the list's selectors, delivered in
//     order after the write that made them; an old resourceVersion is 410 Gone only after `compact()`.
// A request it has no answer for (no route, an unsupported method, content type or JSON patch) is kept in
// `unserved`, so a caller can fail loudly rather than take a 404 for an answer.
// It is not an apiserver: no validation, defaulting, admission or strategic merge. Integration
// tests (test/integration) run the real one.

import { ApiError, TransportError } from '../pkg/kube/errors.js';
import type { Transport, TransportRequest, TransportResponse } from '../pkg/kube/transport.js';
import type { WatchEvent, WatchRequest } from '../pkg/kube/watch.js';

export type Obj = Record<string, unknown>;

export interface FakeKind {
  group: string;
  version: string;
  kind: string;
  resource: string;
  namespaced: boolean;
}

export const CORE_KINDS: FakeKind[] = [
  { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true },
  { group: '', version: 'v1', kind: 'Secret', resource: 'secrets', namespaced: true },
  { group: '', version: 'v1', kind: 'Namespace', resource: 'namespaces', namespaced: false },
  { group: '', version: 'v1', kind: 'Event', resource: 'events', namespaced: true },
  { group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', namespaced: true },
  {
    group: 'work.flotilla.io',
    version: 'v1alpha1',
    kind: 'ResourceBinding',
    resource: 'resourcebindings',
    namespaced: true,
  },
  { group: 'cluster.flotilla.io', version: 'v1alpha1', kind: 'Cluster', resource: 'clusters', namespaced: false },
  {
    group: 'policy.flotilla.io',
    version: 'v1beta1',
    kind: 'PropagationPolicy',
    resource: 'propagationpolicies',
    namespaced: true,
  },
  {
    group: 'policy.flotilla.io',
    version: 'v1beta1',
    kind: 'OverridePolicy',
    resource: 'overridepolicies',
    namespaced: true,
  },
];

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string | undefined;
  body: unknown;
}

interface Stored {
  object: Obj;
  /** Leaf path (JSON of the key list) → managers owning it. */
  owners: Map<string, Set<string>>;
  /** Manager → operation (Apply or Update). */
  managers: Map<string, string>;
}

interface Route {
  kind: FakeKind;
  namespace: string | undefined;
  name: string | undefined;
  status: boolean;
}

/** One change, as watches see it. */
interface Change {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: string;
  object: Obj;
}

interface Subscriber {
  prefix: string;
  selectors: { label: string | null; field: string | null };
  deliver(c: Change): void;
}

/** A hook may answer a request instead of the store (errors, slowness); undefined lets the store answer. */
export type Hook = (req: RecordedRequest) => { status: number; body?: unknown } | 'unreachable' | undefined;

/** Requests held before the store answers them (FakeApiserver.hold). */
export interface Held {
  /** The requests held so far, as sent. */
  readonly requests: RecordedRequest[];
  /** Resolves with the first request held. */
  readonly reached: Promise<RecordedRequest>;
  /** The held requests go on to the store, and later ones are not held. */
  release(): void;
}

interface Hold {
  match: (req: RecordedRequest) => boolean;
  gate: Promise<void>;
  requests: RecordedRequest[];
  first: (req: RecordedRequest) => void;
}

export class FakeApiserver implements Transport {
  readonly server: string;
  readonly requests: RecordedRequest[] = [];
  /** Requests it could not serve (a path it has no route for, an unsupported method or patch), as `METHOD path: why`. */
  readonly unserved: string[] = [];
  hook: Hook | undefined;
  private readonly holds = new Set<Hold>();
  /** False: `requests` stays empty (a long run over HTTP, test/fake-apiserver-server.ts, counts them itself). */
  private readonly record: boolean;
  private readonly kinds: FakeKind[];
  private readonly store = new Map<string, Stored>();
  /** Every change since the start (or the last compact()), oldest first. */
  private changes: Change[] = [];
  private compactedTo = 0;
  private readonly subscribers = new Set<Subscriber>();
  private version = 1;
  private uids = 0;

  constructor(o: { server?: string; kinds?: FakeKind[]; record?: boolean } = {}) {
    this.server = o.server ?? 'https://fake.test:6443';
    this.kinds = o.kinds ?? CORE_KINDS;
    this.record = o.record ?? true;
  }

  close(): void {}

  /** Holds each request `match` picks (recorded, not answered) until release(). */
  hold(match: (req: RecordedRequest) => boolean): Held {
    let open = () => {};
    let first = (_req: RecordedRequest) => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const reached = new Promise<RecordedRequest>((resolve) => (first = resolve));
    const h: Hold = { match, gate, requests: [], first };
    this.holds.add(h);
    return {
      requests: h.requests,
      reached,
      release: () => {
        this.holds.delete(h);
        open();
      },
    };
  }

  /** Requests of this method (and whose path contains `path`, when given), in order. */
  sent(method: string, path?: string): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && (path === undefined || r.path.includes(path)));
  }

  /** The stored object (a copy, with managedFields), or undefined. */
  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): Obj | undefined {
    const k = this.kindOf(apiVersion, kind);
    const s = this.store.get(storeKey(k, namespace, name));
    return s ? this.output(s) : undefined;
  }

  /** The stored objects of a kind (in one namespace, when given), copies with managedFields, by key order. */
  objects(apiVersion: string, kind: string, namespace?: string): Obj[] {
    const prefix = collectionPrefix(this.kindOf(apiVersion, kind), namespace);
    return [...this.store]
      .filter(([key]) => key.startsWith(prefix))
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
      .map(([, st]) => this.output(st));
  }

  /** How many objects of a kind it holds (in one namespace, when given), without copying them. */
  count(apiVersion: string, kind: string, namespace?: string): number {
    const prefix = collectionPrefix(this.kindOf(apiVersion, kind), namespace);
    let n = 0;
    for (const key of this.store.keys()) if (key.startsWith(prefix)) n++;
    return n;
  }

  /** Creates or replaces an object as `manager` (an Update: it owns every field it set). */
  put(object: Obj, manager = 'someone-else'): Obj {
    const meta = (object.metadata ?? {}) as Obj;
    const k = this.kindOf(String(object.apiVersion), String(object.kind));
    const key = storeKey(k, k.namespaced ? str(meta.namespace, 'default') : undefined, str(meta.name));
    const s: Stored = { object: structuredClone(object), owners: new Map(), managers: new Map([[manager, 'Update']]) };
    for (const leaf of leaves(object)) if (!isServerField(leaf)) s.owners.set(JSON.stringify(leaf), new Set([manager]));
    this.stamp(s, undefined);
    if (typeof meta.generation === 'number') (s.object.metadata as Obj).generation = meta.generation;
    const existed = this.store.has(key);
    this.store.set(key, s);
    this.changed(existed ? 'MODIFIED' : 'ADDED', key, s);
    return this.output(s);
  }

  /** Deletes an object as another writer would (finalizers hold it, as on a real server); false if absent. */
  delete(apiVersion: string, kind: string, namespace: string | undefined, name: string): boolean {
    const k = this.kindOf(apiVersion, kind);
    const r: Route = { kind: k, namespace: k.namespaced ? namespace : undefined, name, status: false };
    return this.remove(r, undefined).status === 200;
  }

  /** Forgets the changes made so far: a watch from an older resourceVersion is answered 410 Gone. */
  compact(): void {
    this.compactedTo = this.version;
    this.changes = [];
  }

  /** Open watches. */
  get watches(): number {
    return this.subscribers.size;
  }

  /**
   * Streams one watch (the Transport's streaming side; pkg/kube/watch.ts hands watches here): the changes
   * after `resourceVersion` (none given: from now), then each new one, until the signal aborts. An event
   * the handler throws on ends the watch with that error.
   */
  watch(req: WatchRequest, onEvent: (e: WatchEvent) => void): Promise<void> {
    const url = new URL(req.path, 'https://fake.test');
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query)) if (v !== undefined) query.set(k, v);
    if (this.record)
      this.requests.push({
        method: 'WATCH',
        path: url.pathname,
        query,
        contentType: undefined,
        body: undefined,
      });
    const route = this.route(url.pathname);
    if (!route || route.name !== undefined || route.status) {
      this.unserved.push(`WATCH ${url.pathname}: no such collection`);
      return Promise.reject(new ApiError(404, 'NotFound', `${NO_ROUTE} (${url.pathname})`));
    }
    const from = Number(req.query.resourceVersion ?? this.version);
    if (from < this.compactedTo)
      return Promise.reject(new ApiError(410, 'Expired', `too old resource version: ${from}`));
    return new Promise<void>((resolve, reject) => {
      const pending: Change[] = [];
      let scheduled = false;
      let done = false;
      const finish = (err?: Error) => {
        if (done) return;
        done = true;
        this.subscribers.delete(sub);
        req.signal.removeEventListener('abort', onAbort);
        if (err === undefined) resolve();
        else reject(err);
      };
      const flush = () => {
        scheduled = false;
        for (const c of pending.splice(0)) {
          if (done) return;
          try {
            onEvent({ type: c.type, object: structuredClone<WatchEvent['object']>(c.object) });
          } catch (err: unknown) {
            finish(err instanceof Error ? err : new Error('the watch handler threw a non-Error'));
            return;
          }
        }
      };
      const sub: Subscriber = {
        prefix: collectionPrefix(route.kind, route.namespace),
        selectors: { label: req.query.labelSelector ?? null, field: req.query.fieldSelector ?? null },
        deliver: (c) => {
          if (done || c.rv <= from) return;
          pending.push(c);
          if (!scheduled) {
            scheduled = true;
            setImmediate(flush);
          }
        },
      };
      const onAbort = () => finish();
      if (req.signal.aborted) return finish();
      req.signal.addEventListener('abort', onAbort, { once: true });
      this.subscribers.add(sub);
      for (const c of this.changes) if (this.wants(sub, c)) sub.deliver(c);
    });
  }

  private wants(sub: Subscriber, c: Change): boolean {
    return (
      c.key.startsWith(sub.prefix) &&
      (!sub.selectors.label || matches(c.object, sub.selectors.label)) &&
      (!sub.selectors.field || fieldMatches(c.object, sub.selectors.field))
    );
  }

  /** Records a change of the object at `key` (its state now; the last state for DELETED) and tells the watches. */
  private changed(type: Change['type'], key: string, s: Stored): void {
    const object = this.output(s);
    if (type === 'DELETED') (object.metadata as Obj).resourceVersion = String(++this.version);
    const c: Change = { rv: Number((object.metadata as Obj).resourceVersion), type, key, object };
    this.changes.push(c);
    for (const sub of this.subscribers) if (this.wants(sub, c)) sub.deliver(c);
  }

  /** After a write to a deleting object: gone once no finalizer holds it. */
  private settle(key: string, s: Stored): void {
    const meta = (s.object.metadata ?? {}) as Obj;
    const finalizers = Array.isArray(meta.finalizers) ? meta.finalizers : [];
    if (typeof meta.deletionTimestamp !== 'string' || finalizers.length > 0) {
      this.changed('MODIFIED', key, s);
      return;
    }
    this.store.delete(key);
    this.changed('DELETED', key, s);
  }

  /** Another writer's edit (`kubectl set image`, `kubectl edit`): `change` mutates the object; changed leaves move to `manager`. */
  edit(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
    manager: string,
    change: (o: Obj) => void,
  ): void {
    const k = this.kindOf(apiVersion, kind);
    const s = this.store.get(storeKey(k, namespace, name));
    if (!s) throw new Error(`fake apiserver: no ${kind} ${namespace ?? ''}/${name} to edit`);
    const before = new Map(leaves(s.object).map((l) => [JSON.stringify(l), JSON.stringify(at(s.object, l))]));
    change(s.object);
    for (const leaf of leaves(s.object)) {
      const key = JSON.stringify(leaf);
      if (isServerField(leaf) || before.get(key) === JSON.stringify(at(s.object, leaf))) continue;
      s.owners.set(key, new Set([manager]));
    }
    s.managers.set(manager, 'Update');
    this.stamp(s, s.object);
    this.settle(storeKey(k, namespace, name), s);
  }

  async send(req: TransportRequest): Promise<TransportResponse> {
    const url = new URL(req.path, 'https://fake.test');
    const headers = req.headers as Record<string, string | number | undefined>;
    const contentType = typeof headers['Content-Type'] === 'string' ? headers['Content-Type'] : undefined;
    const body: unknown = req.body ? JSON.parse(req.body.toString('utf8')) : undefined;
    const recorded: RecordedRequest = {
      method: req.method,
      path: url.pathname,
      query: url.searchParams,
      contentType,
      body,
    };
    if (this.record) this.requests.push(recorded);
    await Promise.resolve();
    for (const h of [...this.holds])
      if (h.match(recorded)) {
        h.requests.push(recorded);
        h.first(recorded);
        await h.gate;
      }
    const hooked = this.hook?.(recorded);
    if (hooked === 'unreachable') throw new TransportError(`${this.server}: connect ECONNREFUSED`, 'ECONNREFUSED');
    const answer = hooked ?? this.answer(recorded, String(headers.Accept ?? ''));
    if (!hooked && (answer.status === 405 || answer.status === 415 || unrouted(answer)))
      this.unserved.push(`${req.method} ${url.pathname}: ${(answer.body as { message?: string }).message ?? ''}`);
    return {
      status: answer.status,
      warnings: [],
      body: Buffer.from(answer.body === undefined ? '' : JSON.stringify(answer.body)),
    };
  }

  private answer(req: RecordedRequest, accept: string): { status: number; body?: unknown } {
    if (req.path === '/readyz') return { status: 200, body: 'ok' };
    if (req.path === '/version') return { status: 200, body: { major: '1', minor: '33', gitVersion: 'v1.33.0' } };
    if (req.path === '/api') return { status: 200, body: { kind: 'APIVersions', versions: ['v1'] } };
    if (req.path === '/apis') return { status: 200, body: this.groupList() };
    const discovery = this.discovery(req.path);
    if (discovery) return discovery;
    const route = this.route(req.path);
    if (!route) return status(404, 'NotFound', `${NO_ROUTE} (${req.path})`);
    const metadataOnly = accept.includes('as=PartialObjectMetadata');
    switch (req.method) {
      case 'GET':
        return route.name === undefined ? this.list(route, req.query, metadataOnly) : this.read(route, metadataOnly);
      case 'POST':
        return this.create(route, req.body as Obj);
      case 'PATCH':
        if (req.contentType === 'application/apply-patch+yaml')
          return this.apply(route, req.body as Obj, req.query, metadataOnly);
        if (req.contentType === 'application/merge-patch+json')
          return this.mergePatch(route, req.body as Obj, metadataOnly);
        if (req.contentType === 'application/json-patch+json') return this.managedFieldsPatch(route, req.body as Obj[]);
        return status(415, 'UnsupportedMediaType', `fake apiserver: ${req.contentType ?? 'no content type'}`);
      case 'DELETE':
        return this.remove(route, req.body as Obj | undefined);
      default:
        return status(405, 'MethodNotAllowed', req.method);
    }
  }

  private read(r: Route, metadataOnly: boolean): { status: number; body?: unknown } {
    const s = this.store.get(storeKey(r.kind, r.namespace, r.name ?? ''));
    if (!s) return status(404, 'NotFound', `${r.kind.resource} "${r.name ?? ''}" not found`);
    return { status: 200, body: this.view(s, metadataOnly) };
  }

  private list(r: Route, query: URLSearchParams, metadataOnly: boolean): { status: number; body?: unknown } {
    const selector = query.get('labelSelector');
    const fields = query.get('fieldSelector');
    const items: unknown[] = [];
    for (const [key, s] of this.store) {
      if (!key.startsWith(collectionPrefix(r.kind, r.namespace))) continue;
      if (selector && !matches(s.object, selector)) continue;
      if (fields && !fieldMatches(s.object, fields)) continue;
      items.push(this.view(s, metadataOnly));
    }
    return {
      status: 200,
      body: {
        kind: metadataOnly ? 'PartialObjectMetadataList' : `${r.kind.kind}List`,
        metadata: { resourceVersion: String(this.version) },
        items,
      },
    };
  }

  private create(r: Route, body: Obj): { status: number; body?: unknown } {
    const meta = (body.metadata ?? {}) as Obj;
    const name = str(meta.name);
    const key = storeKey(r.kind, r.namespace, name);
    if (this.store.has(key)) return status(409, 'AlreadyExists', `${r.kind.resource} "${name}" already exists`);
    const object = structuredClone(body);
    if (r.kind.namespaced) (object.metadata as Obj).namespace = r.namespace;
    return { status: 201, body: this.put(object, 'creator') };
  }

  private apply(
    r: Route,
    body: Obj,
    query: URLSearchParams,
    metadataOnly: boolean,
  ): { status: number; body?: unknown } {
    const manager = query.get('fieldManager');
    if (!manager) return status(400, 'BadRequest', 'PATCH requests of type apply require a fieldManager');
    const force = query.get('force') === 'true';
    const dryRun = query.get('dryRun') === 'All';
    const key = storeKey(r.kind, r.namespace, r.name ?? '');
    const existing = this.store.get(key);
    if (r.status && !existing) return status(404, 'NotFound', `${r.kind.resource} "${r.name ?? ''}" not found`);
    const current: Stored = existing
      ? {
          object: structuredClone(existing.object),
          owners: cloneOwners(existing.owners),
          managers: new Map(existing.managers),
        }
      : { object: {}, owners: new Map(), managers: new Map() };
    const sent = r.status ? { status: body.status } : structuredClone(body);
    const sentLeaves = leaves(sent).filter((l) => !isServerField(l) && (!r.status || l[0] === 'status'));
    const sentKeys = new Set(sentLeaves.map((l) => JSON.stringify(l)));
    const conflicts: string[] = [];
    for (const leaf of sentLeaves) {
      const key2 = JSON.stringify(leaf);
      const owners = current.owners.get(key2);
      const others = [...(owners ?? [])].filter((m) => m !== manager);
      if (others.length === 0) continue;
      if (JSON.stringify(at(current.object, leaf)) === JSON.stringify(at(sent, leaf))) continue;
      if (!force) conflicts.push(`conflict with "${others[0] ?? ''}": .${leaf.join('.')}`);
    }
    if (conflicts.length > 0) {
      return status(
        409,
        'Conflict',
        `Apply failed with ${conflicts.length} conflict${conflicts.length > 1 ? 's' : ''}: ${conflicts.join('; ')}`,
      );
    }
    // Fields the manager owned alone and no longer sends are removed (of the part this request writes: an
    // apply to the resource leaves status alone, one to the status subresource everything else).
    for (const [key2, owners] of [...current.owners]) {
      if (!owners.has(manager) || sentKeys.has(key2)) continue;
      if (((JSON.parse(key2) as string[])[0] === 'status') !== r.status) continue;
      owners.delete(manager);
      if (owners.size === 0) {
        current.owners.delete(key2);
        if (!r.status || (JSON.parse(key2) as string[])[0] === 'status')
          removeAt(current.object, JSON.parse(key2) as string[]);
      }
    }
    for (const leaf of sentLeaves) {
      const key2 = JSON.stringify(leaf);
      const same = JSON.stringify(at(current.object, leaf)) === JSON.stringify(at(sent, leaf));
      const owners = force || !same ? new Set<string>() : (current.owners.get(key2) ?? new Set<string>());
      owners.add(manager);
      current.owners.set(key2, owners);
      setAt(current.object, leaf, structuredClone(at(sent, leaf)));
    }
    for (const k of ['apiVersion', 'kind']) if (!r.status) current.object[k] = body[k];
    const meta = (current.object.metadata ??= {}) as Obj;
    meta.name = r.name;
    if (r.kind.namespaced) meta.namespace = r.namespace;
    current.managers.set(manager, 'Apply');
    for (const m of [...current.managers.keys()])
      if (![...current.owners.values()].some((o) => o.has(m))) current.managers.delete(m);
    const before = existing ? JSON.stringify(stripMeta(existing.object)) : undefined;
    const changed = before !== JSON.stringify(stripMeta(current.object));
    if (!changed && existing && sameOwners(existing, current))
      return { status: 200, body: this.view(existing, metadataOnly) };
    if (dryRun)
      return {
        status: existing ? 200 : 201,
        body: this.view({ ...current, object: this.stampCopy(current, existing) }, metadataOnly),
      };
    this.stamp(current, existing?.object, r.status);
    this.store.set(key, current);
    if (existing) this.settle(key, current);
    else this.changed('ADDED', key, current);
    if (!this.store.has(key)) return { status: 200, body: this.view(current, metadataOnly) };
    return { status: existing ? 200 : 201, body: this.view(current, metadataOnly) };
  }

  private mergePatch(r: Route, patch: Obj, metadataOnly: boolean): { status: number; body?: unknown } {
    const s = this.store.get(storeKey(r.kind, r.namespace, r.name ?? ''));
    if (!s) return status(404, 'NotFound', `${r.kind.resource} "${r.name ?? ''}" not found`);
    // metadata.uid and metadata.resourceVersion in a merge patch are preconditions, as on a real server.
    const want = (patch.metadata ?? {}) as Obj;
    const have = (s.object.metadata ?? {}) as Obj;
    for (const k of ['uid', 'resourceVersion'])
      if (typeof want[k] === 'string' && want[k] !== have[k])
        return status(409, 'Conflict', `Precondition failed: ${k} in the patch: ${String(want[k])}`);
    const before = structuredClone(s.object);
    mergeInto(s.object, patch);
    // A patch that changes nothing is no write (no new resourceVersion, no watch event), as on a real server.
    if (JSON.stringify(before) === JSON.stringify(s.object)) return { status: 200, body: this.view(s, metadataOnly) };
    this.stamp(s, before);
    this.settle(storeKey(r.kind, r.namespace, r.name ?? ''), s);
    return { status: 200, body: this.view(s, metadataOnly) };
  }

  /** JSON patches of the form the delivery core sends: test the resourceVersion, replace managedFields. */
  private managedFieldsPatch(r: Route, ops: Obj[]): { status: number; body?: unknown } {
    const s = this.store.get(storeKey(r.kind, r.namespace, r.name ?? ''));
    if (!s) return status(404, 'NotFound', `${r.kind.resource} "${r.name ?? ''}" not found`);
    for (const op of ops) {
      if (op.op === 'test' && op.path === '/metadata/resourceVersion') {
        if (op.value !== ((s.object.metadata ?? {}) as Obj).resourceVersion)
          return status(409, 'Conflict', 'the object has been modified');
      } else if (op.op === 'replace' && op.path === '/metadata/managedFields' && Array.isArray(op.value)) {
        const keep = new Set((op.value as Obj[]).map((e) => str(e.manager)).filter((m) => m !== ''));
        for (const m of [...s.managers.keys()]) if (!keep.has(m)) s.managers.delete(m);
        for (const [k, owners] of [...s.owners]) {
          for (const m of [...owners]) if (!keep.has(m)) owners.delete(m);
          if (owners.size === 0) s.owners.delete(k);
        }
      } else return status(422, 'Invalid', `fake apiserver: unsupported JSON patch ${JSON.stringify(op)}`);
    }
    this.stamp(s, s.object);
    this.settle(storeKey(r.kind, r.namespace, r.name ?? ''), s);
    return { status: 200, body: this.view(s, true) };
  }

  private remove(r: Route, options: Obj | undefined): { status: number; body?: unknown } {
    const key = storeKey(r.kind, r.namespace, r.name ?? '');
    const s = this.store.get(key);
    if (!s) return status(404, 'NotFound', `${r.kind.resource} "${r.name ?? ''}" not found`);
    const pre = (options?.preconditions ?? {}) as Obj;
    const uid = ((s.object.metadata ?? {}) as Obj).uid;
    if (typeof pre.uid === 'string' && pre.uid !== uid) {
      return status(
        409,
        'Conflict',
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(uid)}`,
      );
    }
    const rv = ((s.object.metadata ?? {}) as Obj).resourceVersion;
    if (typeof pre.resourceVersion === 'string' && pre.resourceVersion !== rv)
      return status(409, 'Conflict', `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}`);
    const meta = (s.object.metadata ?? {}) as Obj;
    if (Array.isArray(meta.finalizers) && meta.finalizers.length > 0) {
      if (typeof meta.deletionTimestamp !== 'string') {
        meta.deletionTimestamp = '2026-01-01T00:00:01Z';
        this.stamp(s, s.object);
        this.changed('MODIFIED', key, s);
      }
      return { status: 200, body: this.output(s) };
    }
    this.store.delete(key);
    this.changed('DELETED', key, s);
    return { status: 200, body: { kind: 'Status', status: 'Success' } };
  }

  /** resourceVersion, uid, creationTimestamp, generation (when anything but metadata and status changed). */
  private stamp(s: Stored, before: Obj | undefined, statusOnly = false): void {
    const meta = (s.object.metadata ??= {}) as Obj;
    const old = (before?.metadata ?? {}) as Obj;
    meta.uid = old.uid ?? `uid-${++this.uids}`;
    meta.creationTimestamp = old.creationTimestamp ?? '2026-01-01T00:00:00Z';
    meta.resourceVersion = String(++this.version);
    const gen = typeof old.generation === 'number' ? old.generation : 0;
    const specChanged =
      !before || JSON.stringify(withoutMetaAndStatus(before)) !== JSON.stringify(withoutMetaAndStatus(s.object));
    meta.generation = statusOnly || !specChanged ? gen || 1 : gen + 1;
  }

  private stampCopy(s: Stored, existing: Stored | undefined): Obj {
    const copy: Stored = { object: structuredClone(s.object), owners: s.owners, managers: s.managers };
    const saved = this.version;
    this.stamp(copy, existing?.object);
    this.version = saved;
    return copy.object;
  }

  private output(s: Stored): Obj {
    const o = structuredClone(s.object);
    const meta = (o.metadata ??= {}) as Obj;
    meta.managedFields = [...s.managers].map(([manager, operation]) => ({
      manager,
      operation,
      apiVersion: str(o.apiVersion),
      fieldsType: 'FieldsV1',
      fieldsV1: fieldsOf([...s.owners].filter(([, m]) => m.has(manager)).map(([k]) => JSON.parse(k) as string[])),
    }));
    return o;
  }

  private view(s: Stored, metadataOnly: boolean): Obj {
    const o = this.output(s);
    return metadataOnly ? { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: o.metadata } : o;
  }

  private kindOf(apiVersion: string, kind: string): FakeKind {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    const k = this.kinds.find((x) => x.group === group && x.version === version && x.kind === kind);
    if (!k) throw new Error(`fake apiserver: kind ${apiVersion} ${kind} is not served`);
    return k;
  }

  private route(path: string): Route | undefined {
    const parts = path
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent);
    const [root, ...rest] = parts;
    let group = '';
    let version: string | undefined;
    if (root === 'api') version = rest.shift();
    else if (root === 'apis') {
      group = rest.shift() ?? '';
      version = rest.shift();
    } else return undefined;
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      rest.splice(0, 2);
    }
    const [resource, name, sub] = rest;
    const kind = this.kinds.find((k) => k.group === group && k.version === version && k.resource === resource);
    if (!kind || (sub !== undefined && sub !== 'status')) return undefined;
    return { kind, namespace: kind.namespaced ? namespace : undefined, name, status: sub === 'status' };
  }

  private discovery(path: string): { status: number; body: unknown } | undefined {
    const m = /^\/api\/(v1)$|^\/apis\/([^/]+)\/([^/]+)$/.exec(path);
    if (!m) return undefined;
    const group = m[1] ? '' : (m[2] ?? '');
    const version = m[1] ?? m[3] ?? '';
    const kinds = this.kinds.filter((k) => k.group === group && k.version === version);
    if (kinds.length === 0) return status(404, 'NotFound', `${path} not found`);
    const resources = kinds.flatMap((k) => [
      { name: k.resource, kind: k.kind, namespaced: k.namespaced },
      { name: `${k.resource}/status`, kind: k.kind, namespaced: k.namespaced },
    ]);
    return {
      status: 200,
      body: { kind: 'APIResourceList', groupVersion: group ? `${group}/${version}` : version, resources },
    };
  }

  private groupList(): unknown {
    const groups = [...new Set(this.kinds.filter((k) => k.group !== '').map((k) => k.group))].map((name) => {
      const versions = [...new Set(this.kinds.filter((k) => k.group === name).map((k) => k.version))];
      return {
        name,
        versions: versions.map((version) => ({ groupVersion: `${name}/${version}`, version })),
        preferredVersion: { version: versions[0] },
      };
    });
    return { kind: 'APIGroupList', groups };
  }
}

/** The answer to a path no route serves (or a JSON patch it cannot apply): the fake, not the object, is missing something. */
function unrouted(answer: { status: number; body?: unknown }): boolean {
  const message = (answer.body as { message?: unknown } | undefined)?.message;
  return (
    (answer.status === 404 && typeof message === 'string' && message.startsWith(NO_ROUTE)) ||
    (answer.status === 422 && typeof message === 'string' && message.startsWith('fake apiserver:'))
  );
}

const NO_ROUTE = 'the server could not find the requested resource';

function status(code: number, reason: string, message: string): { status: number; body: unknown } {
  return { status: code, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code } };
}

function storeKey(k: FakeKind, namespace: string | undefined, name: string): string {
  return `${k.group}/${k.kind}|${k.namespaced ? (namespace ?? '') : ''}|${name}`;
}

/** The store keys' prefix of a collection: one namespace's, or (namespace undefined) every namespace's. */
function collectionPrefix(k: FakeKind, namespace: string | undefined): string {
  return k.namespaced && namespace === undefined ? `${k.group}/${k.kind}|` : storeKey(k, namespace, '');
}

const SERVER_FIELDS = new Set([
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'deletionTimestamp',
]);

function isServerField(leaf: string[]): boolean {
  if (leaf[0] === 'apiVersion' || leaf[0] === 'kind') return true;
  return leaf[0] === 'metadata' && (SERVER_FIELDS.has(leaf[1] ?? '') || leaf[1] === 'name' || leaf[1] === 'namespace');
}

/** Paths of the scalar and list leaves of a JSON value (maps are walked, lists are atomic). */
function leaves(v: unknown, prefix: string[] = []): string[][] {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return prefix.length > 0 ? [prefix] : [];
  const out: string[][] = [];
  for (const [k, x] of Object.entries(v as Obj)) out.push(...leaves(x, [...prefix, k]));
  if (out.length === 0 && prefix.length > 0) out.push(prefix);
  return out;
}

function at(o: unknown, path: string[]): unknown {
  let cur = o;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Obj)[k];
  }
  return cur;
}

function setAt(o: Obj, path: string[], value: unknown): void {
  let cur = o;
  for (const k of path.slice(0, -1)) {
    const next = cur[k];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[k] = {};
    cur = cur[k] as Obj;
  }
  const last = path[path.length - 1];
  if (last !== undefined) cur[last] = value;
}

function removeAt(o: Obj, path: string[]): void {
  const parents: Obj[] = [];
  let cur: unknown = o;
  for (const k of path.slice(0, -1)) {
    if (cur === null || typeof cur !== 'object') return;
    parents.push(cur as Obj);
    cur = (cur as Obj)[k];
  }
  if (cur === null || typeof cur !== 'object') return;
  delete (cur as Obj)[path[path.length - 1] ?? ''];
  // Empty maps left behind go too.
  for (let i = path.length - 2; i >= 0; i--) {
    const parent = parents[i];
    const child = parent?.[path[i] ?? ''];
    if (parent && child && typeof child === 'object' && Object.keys(child).length === 0) delete parent[path[i] ?? ''];
  }
}

function fieldsOf(paths: string[][]): Obj {
  const root: Obj = {};
  for (const p of paths) {
    let cur = root;
    for (const k of p) cur = (cur[`f:${k}`] ??= {}) as Obj;
  }
  return root;
}

function cloneOwners(m: Map<string, Set<string>>): Map<string, Set<string>> {
  return new Map([...m].map(([k, v]) => [k, new Set(v)]));
}

function sameOwners(a: Stored, b: Stored): boolean {
  const text = (s: Stored) => JSON.stringify([...s.owners].map(([k, v]) => [k, [...v].sort()]).sort());
  return text(a) === text(b) && JSON.stringify([...a.managers].sort()) === JSON.stringify([...b.managers].sort());
}

function stripMeta(o: Obj): Obj {
  const meta = { ...((o.metadata ?? {}) as Obj) };
  for (const k of SERVER_FIELDS) delete meta[k];
  return { ...o, metadata: meta };
}

function withoutMetaAndStatus(o: Obj): Obj {
  const { metadata: _m, status: _s, ...rest } = o;
  return rest;
}

function mergeInto(target: Obj, patch: Obj): void {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete target[k];
    else if (typeof v === 'object' && !Array.isArray(v)) {
      const cur = target[k];
      if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) target[k] = {};
      mergeInto(target[k] as Obj, v as Obj);
    } else target[k] = structuredClone(v);
  }
}

/** `key` (exists) or `key=value`, comma-separated. */
function matches(o: Obj, selector: string): boolean {
  const labels = (((o.metadata ?? {}) as Obj).labels ?? {}) as Record<string, unknown>;
  return selector.split(',').every((term) => {
    const eq = term.indexOf('=');
    if (eq < 0) return Object.prototype.hasOwnProperty.call(labels, term);
    return labels[term.slice(0, eq)] === term.slice(eq + 1);
  });
}

/** `path=value`, `path==value` or `path!=value` on dotted field paths (metadata.name, involvedObject.kind), comma-separated. */
function fieldMatches(o: Obj, selector: string): boolean {
  return selector.split(',').every((term) => {
    const m = /^([\w.]+)(!=|==|=)(.*)$/.exec(term);
    if (!m) throw new Error(`fake apiserver: unreadable field selector ${term}`);
    const value = at(o, (m[1] ?? '').split('.'));
    const equal = (typeof value === 'string' || typeof value === 'number' ? String(value) : '') === m[3];
    return m[2] === '!=' ? !equal : equal;
  });
}

function str(v: unknown, fallback = ''): string {
  return typeof v === 'string' ? v : fallback;
}
