// The status reconcilers: the Ready condition of each Cluster (with what cluster-facts.ts read from its
// member: kubernetesVersion, resourceSummary, apiEnablements) and the status of each policy, written on
// the hub with server-side apply (field manager flotilla-controller). Each has its own work queue, so a
// failed write is retried with the queue's backoff, and an unchanged status costs no request.

import { API_VERSION as CLUSTER_API_VERSION } from '../../api/cluster/v1alpha1/types.js';
import { POLICY_GROUP } from '../../api/crds/index.js';
import type { KubeClient } from '../kube/client.js';
import { serverSideApply } from '../kube/delivery.js';
import { isObject, type JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import { WorkQueue, type Result } from '../runtime/queue.js';
import { CONTROLLER_FIELD_MANAGER } from './ownership.js';
import type { PolicyRef } from '../engine/types.js';
import { PolicyStatusBook, parseKey } from './policy-status.js';
import type { ClusterFacts } from './cluster-facts.js';
import { withHealthTaints, type HealthTaint } from './health-taints.js';
import type { EventRecorder } from './events.js';
import { carriedStatus } from './status-carry.js';
import type { Reconciler } from './reconciler.js';

export const POLICY_STORAGE_API_VERSION = `${POLICY_GROUP}/v1beta1`;
const READY = 'Ready';

export interface Condition {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** Writes `body` to a status subresource; throws when the hub refuses or does not answer (the queue retries). */
async function writeStatus(
  hub: KubeClient,
  path: string,
  body: JsonObject,
  fieldManager = CONTROLLER_FIELD_MANAGER,
): Promise<'written' | 'gone'> {
  const res = await serverSideApply(hub, path, body, { fieldManager, force: true });
  if (res.status === 404) return 'gone';
  if (res.status >= 400) throw new Error(`${path}: HTTP ${res.status}`);
  return 'written';
}

/** A condition's lastTransitionTime: kept from `o`'s condition of that type while its status stays, else now. */
export function transitionTime(
  o: JsonObject,
  type: string,
  status: string,
  now: () => Date = () => new Date(),
): string {
  const current = isObject(o.status) ? o.status : {};
  const previous = (Array.isArray(current.conditions) ? current.conditions.filter(isObject) : []).find(
    (x) => x.type === type,
  );
  if (previous && previous.status === status && typeof previous.lastTransitionTime === 'string')
    return previous.lastTransitionTime;
  return now()
    .toISOString()
    .replace(/\.\d+Z$/, 'Z');
}

/** The Cluster's own group-version: cluster.flotilla.io, or cluster.karmada.io on a hub that serves it. */
function clusterApiVersion(cluster: JsonObject): string {
  return typeof cluster.apiVersion === 'string' && cluster.apiVersion !== '' ? cluster.apiVersion : CLUSTER_API_VERSION;
}

/** A work queue of `reconcile` whose failures are logged as `what` (the queue retries them with backoff). */
function retryingQueue(
  reconcile: (key: string) => Promise<Result | void>,
  logger: Logger,
  what: string,
  keyName: string,
): WorkQueue {
  return new WorkQueue<string>(
    { reconcile },
    {
      concurrency: 2,
      onResult: (e) => {
        if (e.outcome === 'error') logger.warn(`${what}; retrying`, { [keyName]: e.key, error: String(e.error) });
      },
    },
  );
}

/** The Ready condition of every Cluster on the hub, from what the member registry says of it. */
export class ClusterStatusReconciler implements Reconciler {
  readonly name = 'cluster-status';
  readonly queue: WorkQueue;
  private readonly written = new Map<string, string>();
  /** The Ready status last written per Cluster (before the first write: the one the Cluster carries). */
  private readonly statuses = new Map<string, string>();

  constructor(
    private readonly hub: KubeClient,
    private readonly o: {
      /** The Cluster as the hub has it, or undefined when there is none. */
      cluster(name: string): JsonObject | undefined;
      /** The condition it should carry now, or undefined when nothing is known yet. */
      condition(name: string): Condition | undefined;
      /** What was last read from the member (version, resource summary, API enablements). */
      facts(name: string): ClusterFacts | undefined;
      /** Default the controller's; a pull agent writes its cluster's facts under its own. */
      fieldManager?: string;
      /** Told when the Ready condition's status changes: ClusterReady / ClusterNotReady, with its message. */
      events?: EventRecorder;
      logger: Logger;
    },
  ) {
    this.queue = retryingQueue(
      (name) => this.reconcile(name),
      o.logger,
      'cannot write the Ready condition of a Cluster',
      'cluster',
    );
  }

  forget(name: string): void {
    this.written.delete(name);
    this.statuses.delete(name);
  }

  async reconcile(name: string): Promise<void> {
    const cluster = this.o.cluster(name);
    const c = this.o.condition(name);
    const facts = this.o.facts(name);
    if (!cluster || (!c && !facts)) return;
    const text = JSON.stringify([c, facts]);
    if (this.written.get(name) === text) return;
    const condition = c && {
      type: READY,
      status: c.status,
      reason: c.reason,
      message: c.message.slice(0, 1024),
      lastTransitionTime: transitionTime(cluster, READY, c.status),
    };
    const api = clusterApiVersion(cluster);
    // What this process has not measured yet is carried as the hub has it (status-carry.ts): the apply
    // changes only what it knows.
    const carried = carriedStatus(cluster, this.o.fieldManager ?? CONTROLLER_FIELD_MANAGER, {
      facts: Object.keys(facts ?? {}),
      condition: condition !== undefined,
    });
    const body = {
      apiVersion: api,
      kind: 'Cluster',
      metadata: { name },
      status: { ...carried, ...facts, ...(condition ? { conditions: [condition] } : {}) },
    };
    const path = `/apis/${api}/clusters/${encodeURIComponent(name)}/status`;
    if ((await writeStatus(this.hub, path, body, this.o.fieldManager)) !== 'written') return;
    this.written.set(name, text);
    if (!c) return;
    const before = this.statuses.get(name) ?? readyStatus(cluster);
    this.statuses.set(name, c.status);
    if (before === c.status) return;
    const meta = isObject(cluster.metadata) ? cluster.metadata : {};
    const uid = typeof meta.uid === 'string' ? meta.uid : '';
    const on = { apiVersion: api, kind: 'Cluster', name, uid };
    if (c.status === 'True') this.o.events?.record(on, 'Normal', 'ClusterReady', c.message);
    else this.o.events?.record(on, 'Warning', 'ClusterNotReady', c.message);
  }
}

/** The status of the Ready condition `cluster` carries, if any. */
function readyStatus(cluster: JsonObject): string | undefined {
  const s = isObject(cluster.status) ? cluster.status : {};
  const found = (Array.isArray(s.conditions) ? s.conditions.filter(isObject) : []).find((x) => x.type === READY);
  return typeof found?.status === 'string' ? found.status : undefined;
}

/** How long a policy's counts may keep changing before they are written all the same (a long burst). */
const POLICY_STATUS_MAX_WAIT_MS = 10_000;

/**
 * The status of every policy, from the PolicyStatusBook the template reconciles record into. A policy
 * whose counts change is written once they have not changed for `intervalMs`, and at the latest
 * POLICY_STATUS_MAX_WAIT_MS after the first change not written (a burst of reconciles is one write).
 */
export class PolicyStatusReconciler implements Reconciler {
  readonly name = 'policy-status';
  readonly queue: WorkQueue;
  readonly book = new PolicyStatusBook();
  private readonly written = new Map<string, string>();
  /** Policy key → when its counts first changed since they were last written, and when they last did. */
  private readonly changes = new Map<string, { first: number; last: number }>();

  constructor(
    private readonly hub: KubeClient,
    private readonly o: {
      policy(ref: PolicyRef): JsonObject | undefined;
      plural(kind: string): string | undefined;
      intervalMs: number;
      logger: Logger;
      /** The clock (tests). */
      now?: () => number;
    },
  ) {
    this.queue = retryingQueue((key) => this.reconcile(key), o.logger, 'cannot write the status of a policy', 'policy');
  }

  /** Queues every policy the book marked since the last call. */
  flush(): void {
    const now = this.now();
    for (const key of this.book.takeDirty()) {
      this.changes.set(key, { first: this.changes.get(key)?.first ?? now, last: now });
      this.queue.addAfter(key, this.o.intervalMs);
    }
  }

  /** The policy was deleted: nothing more is written for it. */
  drop(ref: PolicyRef, key: string): void {
    this.book.drop(ref);
    this.written.delete(key);
    this.changes.delete(key);
  }

  async reconcile(key: string): Promise<Result | void> {
    const change = this.changes.get(key);
    if (change) {
      const now = this.now();
      const still = now - change.last;
      const waited = now - change.first;
      // Still changing: written once the counts settle, or when they have changed for too long.
      if (still < this.o.intervalMs && waited < POLICY_STATUS_MAX_WAIT_MS)
        return { requeueAfter: Math.min(this.o.intervalMs - still, POLICY_STATUS_MAX_WAIT_MS - waited) };
      this.changes.delete(key);
    }
    const ref = parseKey(key);
    const plural = this.o.plural(ref.kind);
    const policy = this.o.policy(ref);
    if (!plural || !policy) return;
    const meta = isObject(policy.metadata) ? policy.metadata : {};
    const generation = typeof meta.generation === 'number' ? meta.generation : undefined;
    const s = this.book.statusOf(key);
    const text = JSON.stringify([generation, s]);
    if (this.written.get(key) === text) return;
    const g = generation === undefined ? {} : { observedGeneration: generation };
    const condition = {
      ...s.condition,
      ...g,
      lastTransitionTime: transitionTime(policy, s.condition.type, s.condition.status),
    };
    // The policy's own group: Flotilla's storage version, or policy.karmada.io/v1alpha1.
    const api =
      policy.apiVersion === 'policy.karmada.io/v1alpha1' ? 'policy.karmada.io/v1alpha1' : POLICY_STORAGE_API_VERSION;
    const path = `/apis/${api}/${ref.namespace ? `namespaces/${encodeURIComponent(ref.namespace)}/` : ''}${plural}/${encodeURIComponent(ref.name)}/status`;
    const body = {
      apiVersion: api,
      kind: ref.kind,
      metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
      status: { ...g, templates: s.templates, failedTemplates: s.failedTemplates, conditions: [condition] },
    };
    if ((await writeStatus(this.hub, path, body)) === 'written') this.written.set(key, text);
  }

  private now(): number {
    return (this.o.now ?? Date.now)();
  }
}

/**
 * The health taints (health-taints.ts) on each hub Cluster's spec.taints, next to the taints people put
 * there (kept as they are). A merge patch carrying the resourceVersion it was computed from: a concurrent
 * edit makes it fail with 409, and the queue retries from the newer object. Unchanged: no request.
 */
export class ClusterTaintReconciler implements Reconciler {
  readonly name = 'cluster-taints';
  readonly queue: WorkQueue;

  constructor(
    private readonly hub: KubeClient,
    private readonly o: {
      cluster(name: string): JsonObject | undefined;
      taints(name: string): readonly HealthTaint[];
      logger: Logger;
    },
  ) {
    this.queue = retryingQueue(
      (name) => this.reconcile(name),
      o.logger,
      'cannot write the health taints of a Cluster',
      'cluster',
    );
  }

  async reconcile(name: string): Promise<void> {
    let cluster = this.o.cluster(name);
    // A conflict (the cache was behind: a status write moved the resourceVersion) reads the Cluster
    // again from the hub and retries at once, as client-go's RetryOnConflict does.
    for (let attempt = 1; cluster; attempt++) {
      const spec = isObject(cluster.spec) ? cluster.spec : {};
      const current: unknown[] = Array.isArray(spec.taints) ? spec.taints : [];
      const want = withHealthTaints(current, this.o.taints(name), Date.now());
      if (JSON.stringify(want) === JSON.stringify(current)) return;
      const meta = isObject(cluster.metadata) ? cluster.metadata : {};
      const path = `/apis/${clusterApiVersion(cluster)}/clusters/${encodeURIComponent(name)}`;
      const res = await this.hub.request({
        method: 'PATCH',
        path,
        contentType: 'application/merge-patch+json',
        body: { metadata: { resourceVersion: meta.resourceVersion }, spec: { taints: want } },
      });
      if (res.status === 404) return;
      if (res.status !== 409 || attempt >= 5) {
        if (res.status >= 400) throw new Error(`Cluster ${name}: HTTP ${res.status}`);
        return;
      }
      const fresh = await this.hub.request<JsonObject>({ method: 'GET', path });
      if (fresh.status === 404) return;
      if (fresh.status >= 400) throw new Error(`Cluster ${name}: HTTP ${fresh.status}`);
      cluster = fresh.body;
    }
  }
}
