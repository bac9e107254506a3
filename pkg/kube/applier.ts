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
  readParent,
  type ParentState,
} from './applyset.js';
import { apiError, type KubeClient } from './client.js';
import { DeliveryCore, scopeObject, serverSideApply, type ApplyOutcome, type OwnerMark } from './delivery.js';
import { Discovery, resourcePath, splitApiVersion } from './discovery.js';
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
import type { Action, ApplierOptions, DesiredObject, Item, MemberReport, ObjectResult } from './applier-types.js';
import { applySetMark } from './applyset-mark.js';
import { CRD_GROUP, awaitSetCRDs } from './crd-wait.js';
import { SetListings } from './set-listing.js';
import { SetPruner, keyOf } from './set-prune.js';
import { RunLog, Unreachable, type Outcome } from './applier-run.js';

export type { ConflictResolution } from './delivery.js';
export type { Action, ApplierOptions, ApplyMode, DesiredObject, MemberReport, ObjectResult } from './applier-types.js';
export { applySetMark } from './applyset-mark.js';

export class MemberApplier {
  readonly member: string;
  private readonly client: KubeClient;
  private readonly o: ApplierOptions;
  private readonly discovery: Discovery;
  private readonly id: string;
  private readonly log: RunLog;
  private readonly listings: SetListings;
  private readonly pruner: SetPruner;
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
    this.listings = new SetListings(client, this.id, options.signal);
    this.log = new RunLog(member, options.signal, options.onResult);
    this.pruner = new SetPruner({
      client,
      core: this.core,
      discovery: this.discovery,
      listings: this.listings,
      log: this.log,
      id: this.id,
      mode: options.mode,
      signal: options.signal,
    });
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
        this.log.errors.push(err instanceof Error ? err.message : String(err));
    }
    const log = this.log;
    if (log.unreachable) log.errors.unshift(`unreachable: ${log.unreachable.message}`);
    if (this.o.signal?.aborted) log.errors.push('interrupted: the remaining work was not done');
    return {
      member: this.member,
      server: this.client.server,
      results: log.results,
      errors: log.errors,
      unreachable: log.unreachable !== undefined,
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
    if (this.o.mode === 'apply') {
      await awaitSetCRDs(items, {
        client: this.client,
        discovery: this.discovery,
        timeoutMs: this.o.establishTimeoutMs ?? 60_000,
        signal: this.o.signal,
        checkGoing: () => this.checkGoing(),
        served: (i, info) => {
          i.info = info;
          this.fixScope(i, info.namespaced);
        },
        fail: (i, message) => this.finish(i, 'failed', message),
        failThrown: (i, err) => this.finishThrown(i, err),
      });
    }
    const rest = live.filter((i) => !isFirst(i) && !i.result);
    await this.ensureNamespaces(rest);
    await Promise.all(rest.filter((i) => !i.result).map((i) => this.applyItem(i)));

    if (this.o.prune && touch) {
      const complete = await this.prune(items, parent, applied, appliedNamespaces);
      if (writes && complete && !this.log.unreachable)
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
      const existing = (await this.listings.get(info, i.id.namespace, false)).items.get(i.id.name) ?? null;
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

  /** Deletes (or, in dry-run/diff, reports) this set's objects that are no longer desired. True when complete. */
  private async prune(
    items: Item[],
    parent: ParentState,
    applied: Set<string>,
    appliedNamespaces: Set<string>,
  ): Promise<boolean> {
    if (this.log.unreachable) return false;
    const keep = new Set(
      items.filter((i) => i.info || i.deferred).map((i) => keyOf(i.group, i.id.kind, i.id.namespace, i.id.name)),
    );
    // Items that failed before their kind was known still count as desired: never delete what the input names.
    const keepNames = new Set(
      items.filter((i) => !i.info && !i.deferred).map((i) => `${i.id.kind}|${i.id.namespace ?? ''}|${i.id.name}`),
    );
    const kinds = new Set([...parent.groupKinds, ...applied]);
    const namespaces = new Set([...parent.namespaces, ...appliedNamespaces, this.o.parent.namespace]);
    return this.pruner.prune(keep, keepNames, kinds, namespaces);
  }

  // ---- outcomes ---------------------------------------------------------------------------------------

  private checkGoing(): void {
    this.log.checkGoing();
  }

  private markUnreachable(err: TransportError): void {
    this.log.markUnreachable(err);
  }

  private finishThrown(i: Item, err: unknown): void {
    if (err instanceof TransportError) this.log.markUnreachable(err);
    const f = this.log.failure(err);
    this.finish(i, 'failed', f.message, f.unreachable ? { unreachable: true } : {});
  }

  private finish(i: Item, ...outcome: Outcome): void {
    i.result = this.log.result(i.id, ...outcome);
  }

  private emit(r: ObjectResult): void {
    this.log.emit(r);
  }
}

function isFirst(i: Item): boolean {
  return (
    (i.group === CRD_GROUP && i.id.kind === 'CustomResourceDefinition') || (i.group === '' && i.id.kind === 'Namespace')
  );
}
