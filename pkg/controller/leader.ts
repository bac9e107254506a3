// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it: a candidate
// takes the Lease when it is free or its holder has not renewed it within leaseDurationSeconds, renews it
// every retryPeriodMs, and stops leading when it could not renew for renewDeadlineMs. Writes are
// conditional on the Lease's resourceVersion, so of two candidates only one wins (409 for the other).
// release() hands the Lease over at once (holder cleared), as ReleaseOnCancel does.

import { apiError, type KubeClient } from '../kube/client.js';
import { sleep } from '../runtime/clock.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  /** Labels on the Lease when this candidate creates it. */
  labels?: Record<string, string>;
  leaseDurationSeconds?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
  onError?(message: string): void;
}

/** metav1.MicroTime: RFC 3339 with microseconds, as the apiserver parses it. */
function microTime(d: Date): string {
  return d.toISOString().replace('Z', '000Z');
}

export class LeaderElector {
  private readonly o: Required<Omit<LeaderElectionOptions, 'onError' | 'labels'>> &
    Pick<LeaderElectionOptions, 'onError' | 'labels'>;
  private leading = false;
  private lastRenew = 0;

  constructor(options: LeaderElectionOptions) {
    this.o = { leaseDurationSeconds: 15, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...options };
  }

  isLeader(): boolean {
    return this.leading;
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.o.namespace)}/leases/${encodeURIComponent(this.o.name)}`;
  }

  /** Tries every retry period until `signal` aborts; calls the callbacks as leadership comes and goes. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const ok = await this.tryAcquireOrRenew().catch((e: unknown) => {
        this.o.onError?.(e instanceof Error ? e.message : String(e));
        return false;
      });
      const now = Date.now();
      if (ok) {
        this.lastRenew = now;
        if (!this.leading) {
          this.leading = true;
          this.o.onStartedLeading();
        }
      } else if (this.leading && now - this.lastRenew > this.o.renewDeadlineMs) {
        this.leading = false;
        this.o.onStoppedLeading();
      }
      await sleep(this.o.retryPeriodMs, signal);
    }
  }

  /** Gives the Lease up (when held), so another candidate takes over without waiting for it to expire. */
  async release(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    const res = await this.o.client.request<JsonObject>({ method: 'GET', path: this.path });
    if (res.status !== 200 || !res.body) return;
    const spec = isObject(res.body.spec) ? res.body.spec : {};
    if (ownString(spec, 'holderIdentity') !== this.o.identity) return;
    const put = await this.o.client.request({
      method: 'PUT',
      path: this.path,
      body: {
        ...res.body,
        spec: { ...spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(new Date()) },
      },
    });
    if (put.status !== 200) throw new Error(`releasing Lease ${this.o.namespace}/${this.o.name}: HTTP ${put.status}`);
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    const micro = microTime(now);
    const res = await this.o.client.request<JsonObject>({ method: 'GET', path: this.path });
    if (res.status === 404) {
      const body = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: this.o.name,
          namespace: this.o.namespace,
          ...(this.o.labels ? { labels: this.o.labels } : {}),
        },
        spec: {
          holderIdentity: this.o.identity,
          leaseDurationSeconds: this.o.leaseDurationSeconds,
          acquireTime: micro,
          renewTime: micro,
          leaseTransitions: 0,
        },
      };
      const created = await this.o.client.request({
        method: 'POST',
        path: this.path.slice(0, this.path.lastIndexOf('/')),
        body,
      });
      if (created.status === 201) return true;
      // Another candidate created it first: it leads. Anything else (no such namespace, forbidden) is said.
      if (created.status === 409) return false;
      throw apiError(created);
    }
    if (res.status !== 200 || !res.body)
      throw new Error(`reading Lease ${this.o.namespace}/${this.o.name}: HTTP ${res.status}`);
    const lease = res.body;
    const spec = isObject(lease.spec) ? lease.spec : {};
    const holder = ownString(spec, 'holderIdentity') ?? '';
    const renew = Date.parse(ownString(spec, 'renewTime') ?? '');
    const duration =
      typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds : this.o.leaseDurationSeconds;
    const expired = !Number.isFinite(renew) || renew + duration * 1000 < now.getTime();
    if (holder !== '' && holder !== this.o.identity && !expired) return false;
    const transitions = typeof spec.leaseTransitions === 'number' ? spec.leaseTransitions : 0;
    const next = {
      ...spec,
      holderIdentity: this.o.identity,
      leaseDurationSeconds: this.o.leaseDurationSeconds,
      renewTime: micro,
      ...(holder === this.o.identity ? {} : { acquireTime: micro, leaseTransitions: transitions + 1 }),
    };
    // resourceVersion in the body: a concurrent writer makes this a 409, and the other candidate wins.
    const put = await this.o.client.request({ method: 'PUT', path: this.path, body: { ...lease, spec: next } });
    if (put.status === 200) return true;
    if (put.status === 409) return false;
    throw apiError(put);
  }
}

export interface HoldingLeaseOptions extends Omit<LeaderElectionOptions, 'onStartedLeading' | 'onStoppedLeading'> {
  /** Runs while the Lease is held; its signal aborts when the Lease is lost or `signal` aborts. */
  work: (signal: AbortSignal) => Promise<void>;
  /** The Lease was acquired (before `work` starts). */
  onAcquired: () => void;
  /** The Lease could not be renewed: `work` is being stopped (another holder may be working already). */
  onLost: () => void;
  /** Releasing the Lease at the end failed (it expires on its own). */
  onReleaseError: (message: string) => void;
}

/**
 * Holds a Lease and runs `work` only while it is held, as every Lease holder here does (the leader, a
 * shard replica, a pull agent): lost, the work stops at once and the result is 'lost' (the caller exits,
 * so the pod restarts and waits); `signal` aborted, the work finishes and the Lease is released.
 */
export async function runHoldingLease(o: HoldingLeaseOptions, signal: AbortSignal): Promise<'lost' | 'stopped'> {
  const { work: run, onAcquired, onLost, onReleaseError, ...election } = o;
  const work = new AbortController();
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  let lost = false;
  const elector = new LeaderElector({
    ...election,
    onStartedLeading: () => {
      onAcquired();
      running = run(AbortSignal.any([signal, work.signal]));
    },
    onStoppedLeading: () => {
      lost = true;
      onLost();
      work.abort();
      stop.abort();
    },
  });
  await elector.run(AbortSignal.any([signal, stop.signal]));
  work.abort();
  await running;
  if (!lost) await elector.release().catch((e: unknown) => onReleaseError(e instanceof Error ? e.message : String(e)));
  return lost ? 'lost' : 'stopped';
}
