// The template kinds watched on the hub: those some propagation policy's resourceSelectors name and,
// while any propagation policy says propagateDeps, the kinds a workload can depend on (ConfigMap, Secret,
// ServiceAccount, PersistentVolumeClaim) when the hub lets the controller list and watch them
// (SelfSubjectAccessReview); resolved by discovery, their informers start and stop as policies change. A
// kind no policy selects any more stays watched while templates of it carry the finalizer (held-kinds.ts).
// On each member, the objects of each watched kind the controller applied there are watched too (drift).

import { DEPENDENCY_KINDS } from '../engine/dependencies.js';
import { apiError, type KubeClient } from '../kube/client.js';
import { resourcePath, type Discovery, type ResourceInfo } from '../kube/discovery.js';
import { Informer, listWatchSource, type InformerHandlers } from '../kube/informer.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { Watcher } from '../kube/watch.js';
import type { Logger } from '../runtime/log.js';
import { BINDING_API_VERSION, BINDING_PLURAL } from './binding.js';
import { HeldKinds } from './held-kinds.js';
import type { Member } from './member.js';
import type { MemberRegistry } from './members.js';

interface TemplateKind {
  info: ResourceInfo;
  apiVersion: string;
  informer: Informer;
  stop: AbortController;
}

export interface TemplateKindsOptions {
  hub: KubeClient;
  hubWatcher: Watcher;
  hubDiscovery: Discovery;
  registry: MemberRegistry;
  logger: Logger;
  /** Every propagation policy of a kind (both groups). */
  policies(kind: string): JsonObject[];
  /** Whether this process writes to member `name` (sharded: the members this replica owns). */
  writes(name: string): boolean;
  /** What is done with a template of any watched kind. */
  handlers: InformerHandlers;
}

export class TemplateKinds {
  private readonly kinds = new Map<string, TemplateKind>();
  /** Template kinds no policy selects, watched while templates of them carry the finalizer (held-kinds.ts). */
  private readonly held = new HeldKinds();
  /** Dependency kinds (propagateDeps) the hub does not let this controller read, already logged. */
  private readonly unreadableDependencyKinds = new Set<string>();
  private signal: AbortSignal = new AbortController().signal;

  constructor(private readonly o: TemplateKindsOptions) {}

  /** Claimed templates of kinds no policy selects now: their bindings say which kinds to watch for them. */
  seedFromBindings(signal: AbortSignal): Promise<void> {
    return this.held.seedFromBindings(
      this.o.hub,
      `/apis/${BINDING_API_VERSION}/${BINDING_PLURAL}`,
      signal,
      this.o.logger,
    );
  }

  /** Starts an informer for every template kind a propagation policy names, and stops those no policy names. */
  async sync(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const wanted = new Map<string, { apiVersion: string; kind: string }>();
    /** Kinds watched only because a policy says propagateDeps (no policy selects them). */
    const dependencyOnly = new Set<string>();
    for (const kind of ['PropagationPolicy', 'ClusterPropagationPolicy']) {
      for (const p of this.o.policies(kind)) {
        const spec = isObject(p.spec) ? p.spec : {};
        if (spec.propagateDeps === true)
          for (const k of DEPENDENCY_KINDS) if (!wanted.has(`v1/${k}`)) dependencyOnly.add(`v1/${k}`);
        for (const s of Array.isArray(spec.resourceSelectors) ? spec.resourceSelectors : []) {
          const apiVersion = ownString(s, 'apiVersion');
          const k = ownString(s, 'kind');
          if (apiVersion && k) wanted.set(`${apiVersion}/${k}`, { apiVersion, kind: k });
        }
      }
    }
    for (const id of dependencyOnly) {
      if (wanted.has(id)) dependencyOnly.delete(id);
      else wanted.set(id, { apiVersion: 'v1', kind: id.slice(3) });
    }
    const selected = new Set(wanted.keys());
    for (const [id, { apiVersion, kind }] of this.held.add(wanted)) {
      if (this.kinds.has(id)) continue;
      let info: ResourceInfo;
      try {
        info = await this.o.hubDiscovery.resolve(apiVersion, kind);
        // A dependency kind the controller may not read (Secrets, by default) is left out, once said.
        if (dependencyOnly.has(id) && !(await this.mayWatch(info))) {
          if (!this.unreadableDependencyKinds.has(id))
            this.o.logger.warn(
              'propagateDeps: the controller may not list and watch this kind on the hub; workloads do not take objects of it with them (grant it in the chart value controller.rbac.templateResources)',
              { kind: id },
            );
          this.unreadableDependencyKinds.add(id);
          continue;
        }
      } catch (err: unknown) {
        // Not served (yet): the next policy event or resync tries again.
        this.o.hubDiscovery.forget(apiVersion);
        this.o.logger.warn('template kind not served by the hub', {
          kind: id,
          error: err instanceof Error ? err.message : String(err),
        });
        continue;
      }
      if (this.kinds.has(id) || this.signal.aborted) continue;
      const stop = new AbortController();
      const informer = new Informer({
        name: `hub ${info.resource}.${info.group || 'core'}`,
        source: listWatchSource(this.o.hub, this.o.hubWatcher),
        path: resourcePath(info, undefined),
        apiVersion,
        kind,
        handlers: this.o.handlers,
        // Nothing here reads a template's field sets; they are often the largest part of its metadata.
        transform: withoutManagedFields,
        onError: (err, attempt, retryInMs) =>
          this.o.logger.warn('hub watch failed; retrying', {
            resource: info.resource,
            attempt,
            retryInMs,
            error: err instanceof Error ? err.message : String(err),
          }),
      });
      this.kinds.set(id, { info, apiVersion, informer, stop });
      void informer.start(AbortSignal.any([this.signal, stop.signal]));
      for (const m of this.o.registry.all()) void this.watchMember(m, apiVersion, kind);
    }
    for (const [id, k] of this.kinds) {
      if (this.held.keep(id, selected.has(id), k.informer)) continue;
      // Templates of that kind stay in the state: what was propagated stays until a policy claims them.
      k.stop.abort();
      this.kinds.delete(id);
    }
  }

  /** Waits until every watched kind's informer has listed once. */
  async waitForSync(signal: AbortSignal): Promise<void> {
    await Promise.all([...this.kinds.values()].map((k) => k.informer.waitForSync(signal)));
  }

  /** The watched kinds whose informer has not listed yet. */
  notSynced(): string[] {
    return [...this.kinds.entries()].filter(([, k]) => !k.informer.synced).map(([id]) => id);
  }

  /** Whether template `o`'s deletion may end the need to watch its kind (a held kind: sync again). */
  releasing(o: JsonObject): boolean {
    return this.held.releasing(o);
  }

  /** A member connected: the objects of every watched kind the controller applied there are watched. */
  onConnect(m: Member): void {
    for (const k of this.kinds.values()) void this.watchMember(m, k.apiVersion, k.info.kind);
  }

  /** Whether the hub lets this controller list and watch a resource in every namespace (SelfSubjectAccessReview). */
  private async mayWatch(info: ResourceInfo): Promise<boolean> {
    for (const verb of ['list', 'watch']) {
      const res = await this.o.hub.request({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { group: info.group, resource: info.resource, verb } },
        },
      });
      if (res.status >= 400) throw apiError(res);
      if (!(isObject(res.body) && isObject(res.body.status) && res.body.status.allowed === true)) return false;
    }
    return true;
  }

  /** Watches, on a member, the objects of a template kind the controller applied there (drift). */
  private async watchMember(m: Member, apiVersion: string, kind: string): Promise<void> {
    // Sharded: only the members this replica works on (gaining one queues every template, and the first
    // apply of a kind there starts the watch).
    if (!this.o.writes(m.name)) return;
    try {
      const info = await m.resolve(apiVersion, kind);
      if (info) m.watchOwned(info, apiVersion);
    } catch {
      // Unreachable now: the first apply of that kind starts the watch.
    }
  }
}

/** `o` without metadata.managedFields. */
function withoutManagedFields(o: JsonObject): JsonObject {
  if (!isObject(o.metadata) || !Object.hasOwn(o.metadata, 'managedFields')) return o;
  const { managedFields: _dropped, ...metadata } = o.metadata;
  return { ...o, metadata };
}
