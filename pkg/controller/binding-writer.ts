// The binding writer: a template's ResourceBinding (binding.ts) from its last plan and what each cluster
// reported — its members' reports, a pull cluster's agent's entry (its Work), sharded another replica's
// entry — with the template's Works (work-writer.ts) and its aggregated status (template-status.ts).
// Keyed by template key; the template reconciler queues a key once every targeted member reported on the
// current plan, or after a short wait when some have not. Spec (with metadata) on the resource, status on
// its subresource, each written only when it changed; sharded, the coordinator writes spec and summary
// and each replica its own members' entries under its own field manager.

import { apiError, METADATA_ACCEPT, type KubeClient } from '../kube/client.js';
import { isObject, type JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import type { WorkQueue } from '../runtime/queue.js';
import {
  BINDING_API_VERSION,
  BINDING_KIND,
  BINDING_PLURAL,
  bindingName,
  bindingNamespace,
  bindingObject,
  type BindingInput,
  type ClusterStatus,
} from './binding.js';
import type { MemberReport } from './execute.js';
import type { HubApplies } from './hub-apply.js';
import type { KarmadaMirror } from './karmada-mirror.js';
import { CONTROLLER_FIELD_MANAGER, type TemplateIdentity } from './ownership.js';
import { allReported, bindingClusters, type TemplatePlan } from './plan.js';
import { hubWriteQueue } from './queue.js';
import type { Reach } from './reach.js';
import type { Reconciler } from './reconciler.js';
import type { TemplateStatusWriter } from './template-status.js';
import type { WorkWriter } from './work-writer.js';

export interface BindingWriterOptions {
  hub: KubeClient;
  applies: HubApplies;
  reach: Reach;
  works: WorkWriter;
  templateStatus: TemplateStatusWriter;
  /** The controller's namespace: bindings of cluster-scoped templates. */
  namespace: string;
  logger: Logger;
  /** A template's last plan, its object on the hub, and its members' reports, by template key. */
  plan(key: string): TemplatePlan | undefined;
  template(key: string): JsonObject | undefined;
  reports(key: string): ReadonlyMap<string, MemberReport> | undefined;
  /** When the hub serves Karmada's API: Karmada's binding, Works and Events follow each binding. */
  karmada?: KarmadaMirror | undefined;
}

/** What a binding says, besides the template it is for. */
export type BindingContent = Omit<BindingInput, 'template' | 'controllerNamespace'>;

export class BindingWriter implements Reconciler {
  readonly name = 'bindings';
  readonly queue: WorkQueue;

  constructor(private readonly o: BindingWriterOptions) {
    this.queue = hubWriteQueue((key) => this.reconcile(key), o.logger, 'cannot write a ResourceBinding');
  }

  /** The binding of the template `key` names, from its last plan and the clusters' reports. */
  async reconcile(key: string): Promise<void> {
    const p = this.o.plan(key);
    const template = this.o.template(key);
    if (!p || !template) return;
    const reach = this.o.reach;
    const registry = reach.registry;
    const every = bindingClusters(p, this.o.reports(key) ?? new Map<string, MemberReport>(), (c) =>
      registry.whyNoAccess(c),
    );
    // A pull cluster's entry is its agent's report in its Work (the replicas are the plan's); sharded, another
    // replica's member's entry is that replica's.
    const entries =
      registry.pullNames().length > 0 || reach.shards ? reach.entries(p.identity) : new Map<string, ClusterStatus>();
    const reported = every
      .filter((c) => reach.remote(c.name) && c.state !== 'Removing' && c.state !== 'Evicting')
      .map((base): ClusterStatus => {
        const e = entries.get(base.name);
        const planned = base.replicas === undefined ? {} : { replicas: base.replicas };
        if (base.state === 'Suspended') return base;
        if (!e)
          return {
            ...base,
            state: 'Pending',
            message: registry.isPull(base.name)
              ? 'waiting for its agent to report (pull mode)'
              : 'waiting for the replica working on it to report (sharded)',
          };
        return { ...e, ...planned, ...(base.overrides ? { overrides: base.overrides } : {}) };
      });
    // A pull cluster's entry is listed by the controller (from the agent's Work); sharded, the coordinator
    // counts the other replicas' and pull agents' entries and each replica lists its own members'.
    // A kept evicted copy (Evicting) is the controller's to say, listed or counted as its cluster's entry is.
    const listed = (c: ClusterStatus) => !reach.shards && registry.isPull(c.name);
    const evicting = every.filter((c) => c.state === 'Evicting' && reach.remote(c.name));
    const clusters = [
      ...every.filter((c) => !reach.remote(c.name)),
      ...reported.filter(listed),
      ...evicting.filter(listed),
    ];
    const agentClusters = [...reported, ...evicting].filter((c) => !listed(c));
    await this.put(p.identity, template, {
      ...(agentClusters.length > 0 ? { agentClusters } : {}),
      ...(p.policy ? { policy: p.policy } : {}),
      ...(p.requiredBy.length > 0 ? { requiredBy: p.requiredBy } : {}),
      ...(p.evictionTasks.length > 0 ? { evictionTasks: p.evictionTasks } : {}),
      ...(p.notChosen.length > 0 ? { notChosen: p.notChosen } : {}),
      conflictResolution: p.conflictResolution,
      suspended: p.suspended,
      ...(p.preserveOnDeletion ? { preserveResourcesOnDeletion: true } : {}),
      clusters,
      errors: p.errors,
    });
    // Sharded, a replica sees its own members' copies only: the template's status is not aggregated. It is
    // written once every member has reported on the plan, not from a part of them.
    const reports = this.o.reports(key);
    if (!reach.shards && allReported(p, reports, (c) => reach.own(c)))
      await this.o.templateStatus.put(key, p, template, reports);
  }

  /** The binding's path on the hub. */
  path(t: TemplateIdentity): string {
    const ns = encodeURIComponent(bindingNamespace(t, this.o.namespace));
    return `/apis/${BINDING_API_VERSION}/namespaces/${ns}/${BINDING_PLURAL}/${encodeURIComponent(bindingName(t.name, t.kind))}`;
  }

  /** Writes template `t`'s binding (and its Works): spec and status, each only when it changed. */
  async put(t: TemplateIdentity, template: JsonObject, b: BindingContent): Promise<void> {
    const meta = isObject(template.metadata) ? template.metadata : {};
    const generation = typeof meta.generation === 'number' ? meta.generation : undefined;
    const body = bindingObject({
      template: { ...t, ...(generation === undefined ? {} : { generation }) },
      controllerNamespace: this.o.namespace,
      ...b,
    });
    const path = this.path(t);
    const applies = this.o.applies;
    const { status, ...main } = body;
    const { clusters: entries, ...summary } = status as JsonObject;
    const id = body.metadata as JsonObject;
    const statusOf = (s: JsonObject) => ({
      apiVersion: body.apiVersion,
      kind: body.kind,
      metadata: { name: id.name, namespace: id.namespace },
      status: s,
    });
    if (!this.o.reach.shards) {
      await applies.apply(path, main, CONTROLLER_FIELD_MANAGER);
      await applies.apply(`${path}/status`, statusOf(status as JsonObject), CONTROLLER_FIELD_MANAGER);
      await this.o.works.put(t, body.spec as JsonObject);
      await this.o.karmada?.put(t, template, b, this.o);
      return;
    }
    if (this.o.reach.coordinator()) {
      await applies.apply(path, main, CONTROLLER_FIELD_MANAGER);
      await applies.apply(`${path}/status`, statusOf(summary), CONTROLLER_FIELD_MANAGER);
      await this.o.works.put(t, body.spec as JsonObject);
      await this.o.karmada?.put(t, template, b, this.o);
    }
    await this.putEntries(t, Array.isArray(entries) ? entries.filter(isObject) : []);
  }

  /** Sharded: this replica's members' entries of the template's binding status (none: its entries go). */
  async putEntries(t: TemplateIdentity, entries: JsonObject[]): Promise<void> {
    const shards = this.o.reach.shards;
    if (!shards) return;
    const at = `${this.path(t)}/status#entries`;
    const body = {
      apiVersion: BINDING_API_VERSION,
      kind: BINDING_KIND,
      metadata: { name: bindingName(t.name, t.kind), namespace: bindingNamespace(t, this.o.namespace) },
      status: { clusters: entries },
    };
    // Nothing written before and nothing to write: no request.
    if (entries.length === 0 && !this.o.applies.has(at)) return;
    await this.o.applies.apply(at, body, shards.entriesManager);
  }

  /**
   * What the binding on the hub says of a template no policy claims and no workload requires: it went to
   * the members only because workloads required it, or it was claimed, or there is no binding.
   */
  async prior(t: TemplateIdentity): Promise<'requiredOnly' | 'other' | 'absent'> {
    const path = this.path(t);
    const res = await this.o.hub.request({ method: 'GET', path });
    if (res.status === 404) {
      this.o.applies.forget(path, `${path}/status`);
      return 'absent';
    }
    if (res.status >= 400) throw apiError(res);
    const spec = isObject(res.body) && isObject(res.body.spec) ? res.body.spec : {};
    return spec.policy === undefined && Array.isArray(spec.requiredBy) && spec.requiredBy.length > 0
      ? 'requiredOnly'
      : 'other';
  }

  /** The binding as the hub has it (undefined: there is none). */
  async read(t: TemplateIdentity): Promise<unknown> {
    const res = await this.o.hub.request({ method: 'GET', path: this.path(t) });
    if (res.status === 404) return undefined;
    if (res.status >= 400) throw apiError(res);
    return res.body;
  }

  /** Deletes template `t`'s binding and its Works (its cleanup is done). */
  async delete(t: TemplateIdentity): Promise<void> {
    const path = this.path(t);
    this.forget(t);
    // The binding's owner reference would have the garbage collector remove it; do not wait for that.
    await this.o.hub.request({ method: 'DELETE', path, accept: METADATA_ACCEPT });
    await this.o.works.deleteAll(t);
    await this.o.karmada?.delete(t);
  }

  /** Forgets what was written of template `t`'s binding. */
  forget(t: TemplateIdentity): void {
    const path = this.path(t);
    this.o.applies.forget(path, `${path}/status`, `${path}/status#entries`);
  }
}
