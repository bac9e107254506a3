// Karmada's objects beside each binding, when the hub serves work.karmada.io (the chart's karmadaAPI, or
// Karmada's own CRDs) and Karmada's groups are not turned off: the ResourceBinding or ClusterResourceBinding,
// one Work per cluster in karmada-es-<cluster>, and the Events Karmada's controllers write about them, with
// Karmada's reasons and messages (karmada-events.ts). Shapes are karmada-shape.ts's.
//
// Writes: each object by server-side apply (spec with metadata, then status), only when its body changed;
// an Event only when the object it is about really changed (its resourceVersion moved), so an unchanged
// re-apply after a restart writes no Event. Works of clusters the template left are deleted. A template no
// policy claims and no workload requires keeps its Karmada objects as they are (as Karmada keeps them),
// except the claim: its binding loses the claiming policy's labels and annotations, as Karmada's detector
// removes them when the policy is deleted (one metadata merge patch, sent once).
// Memory per template (bounded by the templates): what was written, and since when each condition holds;
// at a template's first write in this process its binding is read and its Works listed, so the times,
// the prior claim and stale Works are known.

import { createHash } from 'node:crypto';

import {
  KARMADA_BINDING,
  KARMADA_WORK,
  RB_PERMANENT_ID_LABEL,
  CRB_PERMANENT_ID_LABEL,
} from '../../api/work/karmada/types.js';
import { CLAIM_ANNOTATIONS, CLAIM_LABELS } from '../engine/match.js';
import { apiError, METADATA_ACCEPT, type KubeClient } from '../kube/client.js';
import { serverSideApply } from '../kube/delivery.js';
import type { Discovery } from '../kube/discovery.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import type { BindingContent } from './binding-writer.js';
import type { PolicyRef } from './binding.js';
import type { EventRecorder, InvolvedObject } from './events.js';
import { afterWorksEvents, bindingEvents, workEvents, type KarmadaTemplateMemory } from './karmada-emit.js';
import type { BindingSource, KarmadaMirror } from './karmada-mirror.js';
import { karmadaBinding, karmadaBindingRef, karmadaBindingStatus, type KarmadaInput } from './karmada-shape.js';
import { karmadaWorks } from './karmada-work-shape.js';
import { CONTROLLER_FIELD_MANAGER, type TemplateIdentity } from './ownership.js';
import { templateKey } from './queue.js';

export interface KarmadaObjectsOptions {
  hub: KubeClient;
  hubDiscovery: Discovery;
  events: EventRecorder;
  logger: Logger;
  /** A policy's object, as last seen. */
  policy(ref: PolicyRef): JsonObject | undefined;
  /** 'off': Karmada's objects are never written (Karmada itself runs on this hub). */
  karmadaGroups?: 'auto' | 'off' | undefined;
  now?: () => number;
}

const withoutUid = ({ uid: _uid, ...ref }: TemplateIdentity) => ref;

/** A metadata merge patch removing every claim label and annotation (either policy kind's). */
const CLAIM_REMOVAL = {
  metadata: {
    labels: Object.fromEntries(CLAIM_LABELS.map((k) => [k, null])),
    annotations: Object.fromEntries(CLAIM_ANNOTATIONS.map((k) => [k, null])),
  },
};

/** How long a hub found not to serve work.karmada.io is believed before discovery is asked again. */
const NOT_SERVED_MS = 60_000;

interface Written {
  digest?: string;
  rv?: string;
  uid?: string;
  generation?: number;
}

export class KarmadaObjects implements KarmadaMirror {
  private servedUntil = 0;
  private served = false;
  /** Object path → what was last written there; `<path>/status` → the status body's digest. */
  private readonly written = new Map<string, Written>();
  /** Object path → its conditions as last written (the times they hold since). */
  private readonly conditions = new Map<string, JsonObject[]>();
  private readonly templates = new Map<string, KarmadaTemplateMemory>();
  private readonly spaces = new Set<string>();
  /** Times given to conditions taking a new status in the write under way. */
  private readonly stamps = new Map<string, string>();
  private readonly now: () => number;

  constructor(private readonly o: KarmadaObjectsOptions) {
    this.now = o.now ?? Date.now;
  }

  /** Whether the hub serves Karmada's work objects (asked again a minute after a no). */
  async enabled(): Promise<boolean> {
    if (this.o.karmadaGroups === 'off') return false;
    if (this.now() < this.servedUntil) return this.served;
    const d = this.o.hubDiscovery;
    const has = async (apiVersion: string, kind: string) => {
      try {
        await d.resolve(apiVersion, kind);
        return true;
      } catch {
        d.forget(apiVersion);
        return false;
      }
    };
    this.served =
      (await has(KARMADA_BINDING.apiVersion, KARMADA_BINDING.kind)) &&
      (await has(KARMADA_WORK.apiVersion, KARMADA_WORK.kind));
    this.servedUntil = this.served ? Number.POSITIVE_INFINITY : this.now() + NOT_SERVED_MS;
    if (this.served)
      this.o.logger.info("writing Karmada's ResourceBindings, Works and Events (the hub serves work.karmada.io)");
    return this.served;
  }

  async put(t: TemplateIdentity, template: JsonObject, b: BindingContent, source: BindingSource): Promise<void> {
    if (!b.policy && !(b.requiredBy && b.requiredBy.length > 0)) return this.unclaim(t);
    if (!(await this.enabled())) return;
    const memory = await this.memoryOf(t);
    const key = templateKey(withoutUid(t));
    const input: KarmadaInput = {
      t,
      template,
      b,
      policy: b.policy ? this.o.policy(b.policy) : undefined,
      plan: source.plan(key),
      reports: source.reports(key),
      resource: await this.resource(t),
      since: (path, type, status) => this.since(path, type, status),
    };
    const bindingRef = karmadaBindingRef(t);
    const main = await this.apply(bindingRef.path, karmadaBinding(input));
    const on = this.involved(t, bindingRef, main.uid);
    bindingEvents(this.o.events, on, input, memory, main.changed, (p) => this.o.policy(p) !== undefined);
    const works = karmadaWorks(input, (path) => this.conditions.get(path)?.find((c) => c.type === 'Applied'));
    const synced: string[] = [];
    for (const w of works) {
      await this.ensureSpace(w.namespace);
      const spec = await this.apply(w.path, w.object);
      const status = await this.apply(w.path, w.status, 'status');
      const before = this.conditions.get(w.path);
      this.conditions.set(w.path, (w.status.status as JsonObject).conditions as JsonObject[]);
      const work: InvolvedObject = {
        apiVersion: KARMADA_WORK.apiVersion,
        kind: KARMADA_WORK.kind,
        namespace: w.namespace,
        name: w.name,
        uid: spec.uid ?? '',
      };
      workEvents(this.o.events, { template: on.template, work }, input, w, before, spec.changed, status.changed);
      if (spec.changed) synced.push(w.cluster);
    }
    const paths = new Set(works.map((w) => w.path));
    for (const path of memory.works) if (!paths.has(path)) await this.deleteWork(path);
    const removed = [...memory.works].some((p) => !paths.has(p));
    memory.works = paths;
    const statusBody = karmadaBindingStatus(input, works, main.generation);
    const status = await this.apply(bindingRef.path, statusBody, 'status');
    this.conditions.set(bindingRef.path, (statusBody.status as JsonObject).conditions as JsonObject[]);
    this.stamps.clear();
    afterWorksEvents(this.o.events, on, input, memory, {
      synced,
      removed,
      aggregated: statusBody,
      changed: status.changed,
    });
  }

  /**
   * Template `t` is claimed by no policy (its policy was deleted, or selects it no more): its binding keeps
   * spec, status and Works, and loses the claim's labels and annotations, as Karmada's detector leaves it
   * (CleanupResourceBindingClaimMetadata). Nothing is sent once the binding carries no claim.
   */
  private async unclaim(t: TemplateIdentity): Promise<void> {
    if (!(await this.enabled())) return;
    const memory = await this.memoryOf(t);
    if (!memory.policy) return;
    const path = karmadaBindingRef(t).path;
    const patch = { method: 'PATCH', contentType: 'application/merge-patch+json', body: CLAIM_REMOVAL } as const;
    const res = await this.o.hub.request({ ...patch, path, accept: METADATA_ACCEPT });
    if (res.status >= 400 && res.status !== 404) throw apiError(res);
    // The binding is no longer the body last applied: the next claim (the same one too) is applied again.
    if (res.status < 300 && isObject(res.body)) this.remember(path, res.body);
    else this.forget(path);
    delete memory.policy;
  }

  async delete(t: TemplateIdentity): Promise<void> {
    const key = templateKey(withoutUid(t));
    const memory = this.templates.get(key);
    this.templates.delete(key);
    if (!memory || !(await this.enabled())) return;
    for (const path of memory.works) await this.deleteWork(path);
    const bindingPath = karmadaBindingRef(t).path;
    this.forget(bindingPath);
    const res = await this.o.hub.request({ method: 'DELETE', path: bindingPath, accept: METADATA_ACCEPT });
    if (res.status >= 400 && res.status !== 404) throw apiError(res);
  }

  /** What was decided of template `t`'s Karmada objects (read from the hub at its first write in this process). */
  private async memoryOf(t: TemplateIdentity): Promise<KarmadaTemplateMemory> {
    const key = templateKey(withoutUid(t));
    const memory = this.templates.get(key) ?? (await this.seed(t));
    this.templates.set(key, memory);
    return memory;
  }

  /** What the hub has of template `t`'s Karmada objects, at its first write in this process. */
  private async seed(t: TemplateIdentity): Promise<KarmadaTemplateMemory> {
    const memory: KarmadaTemplateMemory = { works: new Set(), evicted: new Set() };
    const bindingPath = karmadaBindingRef(t).path;
    const res = await this.o.hub.request({ method: 'GET', path: bindingPath });
    if (res.status >= 400 && res.status !== 404) throw apiError(res);
    if (res.status < 300 && isObject(res.body)) {
      this.remember(bindingPath, res.body);
      const annotations =
        isObject(res.body.metadata) && isObject(res.body.metadata.annotations) ? res.body.metadata.annotations : {};
      const pp = ownString(annotations, 'propagationpolicy.karmada.io/name');
      const cpp = ownString(annotations, 'clusterpropagationpolicy.karmada.io/name');
      if (pp)
        memory.policy = {
          kind: 'PropagationPolicy',
          name: pp,
          ...(t.namespace
            ? { namespace: ownString(annotations, 'propagationpolicy.karmada.io/namespace') ?? t.namespace }
            : {}),
        };
      else if (cpp) memory.policy = { kind: 'ClusterPropagationPolicy', name: cpp };
      const spec = isObject(res.body.spec) ? res.body.spec : {};
      const tasks = Array.isArray(spec.gracefulEvictionTasks) ? spec.gracefulEvictionTasks.filter(isObject) : [];
      for (const task of tasks) if (typeof task.fromCluster === 'string') memory.evicted.add(task.fromCluster);
      const clusters = Array.isArray(spec.clusters) ? spec.clusters.filter(isObject) : [];
      memory.schedule = clusters
        .map((c) => `${String(c.name)}:${typeof c.replicas === 'number' ? c.replicas : 0}`)
        .join(', ');
    }
    const label = `${t.namespace ? RB_PERMANENT_ID_LABEL : CRB_PERMANENT_ID_LABEL}=${t.uid}`;
    const list = await this.o.hub.request<{ items?: unknown[] }>({
      method: 'GET',
      path: `/apis/${KARMADA_WORK.apiVersion}/${KARMADA_WORK.plural}`,
      query: { labelSelector: label, limit: '500' },
    });
    if (list.status >= 400) throw apiError(list);
    for (const w of list.body?.items ?? []) {
      if (!isObject(w) || !isObject(w.metadata)) continue;
      const ns = ownString(w.metadata, 'namespace');
      const name = ownString(w.metadata, 'name');
      if (!ns || !name) continue;
      const path = `/apis/${KARMADA_WORK.apiVersion}/namespaces/${encodeURIComponent(ns)}/${KARMADA_WORK.plural}/${encodeURIComponent(name)}`;
      this.remember(path, w);
      memory.works.add(path);
      this.spaces.add(ns);
    }
    return memory;
  }

  /** An object as the hub has it: its version and uid, and its conditions' times. */
  private remember(path: string, o: JsonObject): void {
    const meta = isObject(o.metadata) ? o.metadata : {};
    const rv = ownString(meta, 'resourceVersion');
    const uid = ownString(meta, 'uid');
    this.written.set(path, {
      ...(rv ? { rv } : {}),
      ...(uid ? { uid } : {}),
      ...(typeof meta.generation === 'number' ? { generation: meta.generation } : {}),
    });
    const status = isObject(o.status) ? o.status : {};
    if (Array.isArray(status.conditions)) this.conditions.set(path, status.conditions.filter(isObject));
  }

  /** When condition `type` of the object at `path` took `status` (now, when it takes it now). */
  private since(path: string, type: string, status: string): string {
    const prior = this.conditions.get(path)?.find((c) => c.type === type);
    if (prior && prior.status === status && typeof prior.lastTransitionTime === 'string')
      return prior.lastTransitionTime;
    const key = `${path}#${type}#${status}`;
    let stamp = this.stamps.get(key);
    if (!stamp) {
      stamp = new Date(this.now()).toISOString().replace(/\.\d+Z$/, 'Z');
      this.stamps.set(key, stamp);
    }
    return stamp;
  }

  /**
   * One server-side apply of `body` at `path` (its status subresource with `sub`), skipped when the body is
   * the one last written there. `changed`: the object's resourceVersion moved (a no-op apply leaves it).
   */
  private async apply(
    path: string,
    body: JsonObject,
    sub?: 'status',
  ): Promise<{ changed: boolean; uid?: string; generation?: number }> {
    const at = sub ? `${path}/${sub}` : path;
    const digest = createHash('sha256').update(JSON.stringify(body)).digest('base64');
    const object = this.written.get(path) ?? {};
    const place = sub ? (this.written.get(at) ?? {}) : object;
    if (place.digest === digest) return { changed: false, ...this.ids(object) };
    const res = await serverSideApply(this.o.hub, at, body, { fieldManager: CONTROLLER_FIELD_MANAGER, force: true });
    if (res.status >= 400) throw apiError(res);
    const meta = isObject(res.body) && isObject(res.body.metadata) ? res.body.metadata : {};
    const rv = ownString(meta, 'resourceVersion');
    const next: Written = { ...object, ...(rv ? { rv } : {}) };
    const uid = ownString(meta, 'uid');
    if (uid) next.uid = uid;
    if (typeof meta.generation === 'number') next.generation = meta.generation;
    if (!sub) next.digest = digest;
    this.written.set(path, next);
    if (sub) this.written.set(at, { digest });
    return { changed: object.rv === undefined || rv !== object.rv, ...this.ids(next) };
  }

  private ids(w: Written): { uid?: string; generation?: number } {
    return { ...(w.uid ? { uid: w.uid } : {}), ...(w.generation === undefined ? {} : { generation: w.generation }) };
  }

  private forget(path: string): void {
    this.written.delete(path);
    this.written.delete(`${path}/status`);
    this.conditions.delete(path);
  }

  private async deleteWork(path: string): Promise<void> {
    this.forget(path);
    const res = await this.o.hub.request({ method: 'DELETE', path, accept: METADATA_ACCEPT });
    if (res.status >= 400 && res.status !== 404) throw apiError(res);
  }

  /** A cluster's execution space, created once when missing (Karmada's cluster controller makes it at join). */
  private async ensureSpace(name: string): Promise<void> {
    if (this.spaces.has(name)) return;
    const res = await this.o.hub.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      accept: METADATA_ACCEPT,
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'karmada.io/managed': 'true' } } },
    });
    if (res.status >= 400 && res.status !== 409) throw apiError(res);
    this.spaces.add(name);
  }

  /** The template's plural resource on the hub (a Work's manifest identifier). */
  private async resource(t: TemplateIdentity): Promise<string> {
    try {
      return (await this.o.hubDiscovery.resolve(t.apiVersion, t.kind)).resource;
    } catch {
      return `${t.kind.toLowerCase()}s`;
    }
  }

  private involved(t: TemplateIdentity, ref: ReturnType<typeof karmadaBindingRef>, uid: string | undefined) {
    return {
      template: {
        apiVersion: t.apiVersion,
        kind: t.kind,
        ...(t.namespace ? { namespace: t.namespace } : {}),
        name: t.name,
        uid: t.uid,
      },
      binding: {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        ...(ref.namespace ? { namespace: ref.namespace } : {}),
        name: ref.name,
        uid: uid ?? '',
      },
    };
  }
}
