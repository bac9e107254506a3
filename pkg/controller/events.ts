// Events on templates (core/v1, so `kubectl describe` and `kubectl get events` show them): Applied,
// ApplyFailed, Conflict, OverrideFailed, Pruned, Evicting (an evicted copy kept). One event per reason and reconcile, naming the clusters,
// rather than one per cluster. On Clusters: ClusterNotReady and ClusterReady when the Ready condition's
// status changes, with the condition's message.
//
// Recording never blocks a reconcile and is bounded: at most MAX_PENDING events wait to be sent (more are
// dropped and counted), and the same event (object, reason, message) is sent at most once per
// DEDUP_WINDOW_MS, from a memory of at most MAX_REMEMBERED events, so a failure retried with backoff does
// not fill the hub with copies.

import { randomBytes } from 'node:crypto';

import PQueue from 'p-queue';

import { METADATA_ACCEPT, type KubeClient } from '../kube/client.js';
import type { KarmadaEventReason } from './karmada-events.js';

export type EventType = 'Normal' | 'Warning';
export type EventReason =
  | 'Applied'
  | 'ApplyFailed'
  | 'Conflict'
  | 'OverrideFailed'
  | 'Pruned'
  | 'Suspended'
  | 'Preserved'
  | 'Evicting'
  /** statePreservation found no value in the evicted copy's status for a label it names. */
  | 'StatePreservationFailed'
  | 'ClusterReady'
  | 'ClusterNotReady'
  /** Karmada's, beside its objects when the hub serves Karmada's API (karmada-events.ts). */
  | KarmadaEventReason;

export interface InvolvedObject {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid: string;
}

const MAX_PENDING = 1_000;
const MAX_REMEMBERED = 10_000;
const DEDUP_WINDOW_MS = 10 * 60_000;
const MAX_MESSAGE = 1_024;

export class EventRecorder {
  private readonly client: KubeClient;
  private readonly component: string;
  private readonly instance: string;
  private readonly queue = new PQueue({ concurrency: 4 });
  private readonly sent = new Map<string, number>();
  private droppedCount = 0;
  private readonly now: () => number;

  private readonly disabled: boolean;

  constructor(
    client: KubeClient,
    o: { component: string; instance: string; now?: () => number; /** Record nothing. */ disabled?: boolean },
  ) {
    this.client = client;
    this.disabled = o.disabled === true;
    this.component = o.component;
    this.instance = o.instance;
    this.now = o.now ?? Date.now;
  }

  /** Events not sent because too many were waiting. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Resolves when every queued event has been sent (or failed). */
  async flush(): Promise<void> {
    await this.queue.onIdle();
  }

  record(on: InvolvedObject, type: EventType, reason: EventReason, message: string): void {
    if (this.disabled) return;
    const text = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message;
    const id = JSON.stringify([on.uid, reason, text]);
    const now = this.now();
    const last = this.sent.get(id);
    if (last !== undefined && now - last < DEDUP_WINDOW_MS) return;
    if (this.queue.size + this.queue.pending >= MAX_PENDING) {
      this.droppedCount++;
      return;
    }
    this.sent.delete(id);
    this.sent.set(id, now);
    if (this.sent.size > MAX_REMEMBERED) {
      const oldest = this.sent.keys().next();
      if (!oldest.done) this.sent.delete(oldest.value);
    }
    const namespace = on.namespace ?? 'default';
    const time = new Date(now).toISOString().replace(/\.\d+Z$/, 'Z');
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${on.name.slice(0, 200)}.${now.toString(16)}${randomBytes(4).toString('hex')}`, namespace },
      involvedObject: {
        apiVersion: on.apiVersion,
        kind: on.kind,
        name: on.name,
        uid: on.uid,
        ...(on.namespace ? { namespace: on.namespace } : {}),
      },
      reason,
      message: text,
      type,
      source: { component: this.component },
      reportingComponent: this.component,
      reportingInstance: this.instance.slice(0, 128),
      firstTimestamp: time,
      lastTimestamp: time,
      count: 1,
    };
    void this.queue.add(async () => {
      // An event that cannot be written is not worth a retry: the binding holds the same information.
      await this.client
        .request({
          method: 'POST',
          path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`,
          accept: METADATA_ACCEPT,
          body,
        })
        .catch(() => undefined);
    });
  }
}
