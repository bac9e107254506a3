// The FleetView of a real hub: pkg/fleet's read model (informers on the hub with the user's own
// credentials), turned into the page's JSON. Each hub change schedules one recompute (coalesced: at most
// one per `settleMs`, so a burst of watch events costs one pass); the recompute compares every row,
// cluster and policy with the last one sent and emits a change for each that differs. There is no
// polling: nothing runs while the hub is quiet.

import type { Fleet } from '../fleet/index.js';
import { uiCluster, uiDetail, uiPolicy, uiRow } from './convert.js';
import { policyId, type UiChange, type UiSnapshot } from './shared/model.js';
import type { FleetView } from './view.js';

export interface HubFleetViewOptions {
  /** How long changes are gathered before one recompute (default 250 ms: a busy hub costs at most four a second). */
  settleMs?: number;
  /** Called with a failure to read or compute (the view keeps the last good state). */
  onError?: (err: unknown) => void;
}

type Kind = UiChange['type'];

/** What the view reads of pkg/fleet's Fleet. */
export type FleetReader = Pick<
  Fleet,
  'start' | 'waitForSync' | 'subscribe' | 'clusters' | 'matrix' | 'policies' | 'template' | 'events'
>;

export class HubFleetView implements FleetView {
  private seq = 0;
  private current: UiSnapshot = { seq: 0, clusters: [], templates: [], policies: [] };
  /** What was last sent, per `type:id`, as JSON (to tell what changed). */
  private readonly sent = new Map<string, string>();
  private readonly listeners = new Set<(c: UiChange) => void>();
  private timer: NodeJS.Timeout | undefined;
  private readonly settleMs: number;

  constructor(
    private readonly fleet: FleetReader,
    private readonly options: HubFleetViewOptions = {},
  ) {
    this.settleMs = options.settleMs ?? 250;
  }

  /**
   * Starts the hub's informers, waits (at most `syncTimeoutMs`) until they have listed, computes the
   * first snapshot, and recomputes on each change until `signal` aborts.
   */
  async start(signal: AbortSignal, syncTimeoutMs = 30_000): Promise<void> {
    const unsubscribe = this.fleet.subscribe(() => this.schedule());
    signal.addEventListener(
      'abort',
      () => {
        unsubscribe();
        clearTimeout(this.timer);
      },
      { once: true },
    );
    const running = this.fleet.start(signal);
    running.catch((err: unknown) => this.options.onError?.(err));
    await this.fleet.waitForSync(signal, syncTimeoutMs);
    this.recompute();
  }

  snapshot(): UiSnapshot {
    return this.current;
  }

  subscribe(listener: (change: UiChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async templateDetail(id: string): Promise<ReturnType<typeof uiDetail> | undefined> {
    const row = this.current.templates.find((r) => r.id === id);
    if (!row) return undefined;
    const ref = {
      apiVersion: row.apiVersion,
      kind: row.kind,
      ...(row.namespace ? { namespace: row.namespace } : {}),
      name: row.name,
    };
    const [detail, events] = await Promise.all([this.fleet.template(ref), this.fleet.events(ref).catch(() => [])]);
    return uiDetail(detail, events);
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.recompute();
    }, this.settleMs);
  }

  private recompute(): void {
    let next: Omit<UiSnapshot, 'seq'>;
    try {
      next = {
        clusters: this.fleet.clusters().map(uiCluster),
        templates: this.fleet.matrix().rows.map(uiRow),
        policies: this.fleet.policies().map(uiPolicy),
      };
    } catch (err: unknown) {
      this.options.onError?.(err);
      return;
    }
    const changes: UiChange[] = [];
    const seen = new Set<string>();
    const put = (type: Kind, id: string, value: object) => {
      const key = `${type}:${id}`;
      seen.add(key);
      const json = JSON.stringify(value);
      if (this.sent.get(key) === json) return;
      this.sent.set(key, json);
      changes.push(this.change(type, id, value));
    };
    for (const c of next.clusters) put('cluster', c.name, c);
    for (const r of next.templates) put('template', r.id, r);
    for (const p of next.policies) put('policy', policyId(p), p);
    for (const key of [...this.sent.keys()]) {
      if (seen.has(key)) continue;
      this.sent.delete(key);
      const colon = key.indexOf(':');
      changes.push(this.change(key.slice(0, colon) as Kind, key.slice(colon + 1)));
    }
    this.current = { seq: this.seq, ...next };
    for (const c of changes) for (const l of this.listeners) l(c);
  }

  /** A change with the next sequence number; `value` absent: deleted. */
  private change(type: Kind, id: string, value?: object): UiChange {
    const seq = ++this.seq;
    if (type === 'template') return value ? { seq, type, id, row: value as never } : { seq, type, id };
    if (type === 'cluster') return value ? { seq, type, id, cluster: value as never } : { seq, type, id };
    return value ? { seq, type, id, policy: value as never } : { seq, type, id };
  }
}
