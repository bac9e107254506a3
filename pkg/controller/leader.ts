// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it: a candidate
// takes the Lease when it is free or it has seen its holder not renew it for leaseDurationSeconds, renews it
// every retryPeriodMs, and stops leading when it could not renew for renewDeadlineMs. Writes are
// conditional on the Lease's resourceVersion, so of two candidates only one wins (409 for the other).
// release() hands the Lease over at once (holder cleared), as ReleaseOnCancel does.
//
// Renewing, as client-go's fast path: the holder writes the Lease it last wrote (its resourceVersion) with a
// new renewTime, one request; only when that fails does it read the Lease again and write (GET + PUT). Each
// request under a loaded hub or a busy process can take seconds: two of them per renewal halve what the
// renew deadline tolerates. A refused write (409) while this candidate holds the Lease is not taken as
// losing it (it may be this candidate's own write, sent again): the next attempt reads the Lease, and only a
// Lease naming another holder stops leading before the deadline.
//
// Fencing. The holder's deadline is measured on its own monotonic clock from when its last successful
// renewal was sent (the renewTime it wrote is the wall time of that moment): renewDeadlineMs after it, a timer
// stops leading whatever requests are still hanging, and aborts the attempt in flight. Every attempt is
// bounded by the renew deadline too (client-go: tryAcquireOrRenew's context times out at RenewDeadline),
// never by the client's own request timeout. renewDeadlineMs < leaseDurationSeconds is required, so the
// holder has stopped before another candidate can see its Lease expired.

import { apiError, type KubeClient } from '../kube/client.js';
import { sleep, systemClock, type Clock, type TimerHandle } from '../runtime/clock.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  /** Labels on the Lease when this candidate creates it. */
  labels?: Record<string, string>;
  leaseDurationSeconds?: number;
  /** Longer than retryPeriodMs, shorter than leaseDurationSeconds. */
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Monotonic time and timers (tests move a fake one). */
  clock?: Clock;
  onStartedLeading(): void;
  /**
   * Called synchronously from the deadline timer (or when another holder is seen): stop writing now. `why`
   * says what was in flight and how late the deadline was seen (a late timer: a busy process).
   */
  onStoppedLeading(why: string): void;
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
  /** Monotonic time the last successful acquire or renewal was sent. */
  private renewedAt = 0;
  private deadline: TimerHandle;
  /** The Lease as last read (resourceVersion and holder), and when (monotonic) it was first read so. */
  private observed: { version: string; at: number } | undefined;
  /** The acquire or renew attempt in flight, aborted when the deadline passes. */
  private attempt: AbortController | undefined;
  /** The Lease as this candidate last wrote it while leading: the next renewal's fast path. */
  private written: JsonObject | undefined;
  /** The request of the attempt in flight, and when (monotonic) it was sent: said when the deadline passes. */
  private inFlight: { what: string; at: number } | undefined;

  constructor(options: LeaderElectionOptions) {
    this.o = {
      leaseDurationSeconds: 15,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      clock: systemClock,
      ...options,
    };
    const { leaseDurationSeconds: lease, renewDeadlineMs: renew, retryPeriodMs: retry } = this.o;
    if (!(Number.isInteger(lease) && lease >= 1))
      throw new RangeError(`leaseDurationSeconds must be a positive integer, got ${lease}`);
    if (!(renew > 0 && renew < lease * 1000))
      throw new RangeError(
        `renewDeadlineMs (${renew}) must be shorter than the lease duration (${lease * 1000} ms): the holder must stop before another candidate takes the Lease`,
      );
    if (!(retry > 0 && retry <= renew))
      throw new RangeError(`retryPeriodMs (${retry}) must be positive and at most renewDeadlineMs (${renew})`);
  }

  isLeader(): boolean {
    return this.leading;
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.o.namespace)}/leases/${encodeURIComponent(this.o.name)}`;
  }

  /** Tries every retry period until `signal` aborts; calls the callbacks as leadership comes and goes. */
  async run(signal: AbortSignal): Promise<void> {
    const clock = this.o.clock;
    try {
      while (!signal.aborted) {
        const attempt = new AbortController();
        this.attempt = attempt;
        // No attempt outlives the renew deadline, whatever the client's own request timeout.
        const bound = clock.setTimeout(
          () => attempt.abort(new Error(`no answer within the renew deadline (${this.o.renewDeadlineMs} ms)`)),
          this.o.renewDeadlineMs,
        );
        const outcome = await this.tryAcquireOrRenew(AbortSignal.any([signal, attempt.signal])).catch((e: unknown) => {
          if (!signal.aborted) this.o.onError?.(e instanceof Error ? e.message : String(e));
          return 'failed' as const;
        });
        clock.clearTimeout(bound);
        this.attempt = undefined;
        // A success that came back after the deadline (or after leading stopped) is not a renewal.
        const inTime =
          typeof outcome === 'number' && !attempt.signal.aborted && clock.now() - outcome < this.o.renewDeadlineMs;
        if (typeof outcome === 'number' && inTime && !signal.aborted) {
          this.renewedAt = outcome;
          this.armDeadline();
          if (!this.leading) {
            this.leading = true;
            this.o.onStartedLeading();
          }
        } else if (outcome === 'taken' && this.leading) {
          // Another candidate holds the Lease now: stop at once rather than at the deadline.
          this.stopLeading('another holder has the Lease');
        }
        await this.pause(this.o.retryPeriodMs, signal);
      }
    } finally {
      clock.clearTimeout(this.deadline);
    }
  }

  private armDeadline(): void {
    const clock = this.o.clock;
    clock.clearTimeout(this.deadline);
    const due = this.renewedAt + this.o.renewDeadlineMs;
    this.deadline = clock.setTimeout(
      () => {
        if (!this.leading) return;
        const now = clock.now();
        const f = this.inFlight;
        this.stopLeading(
          `no renewal within the renew deadline (${this.o.renewDeadlineMs} ms since the last one was sent); ${
            f ? `${f.what} in flight for ${Math.round(now - f.at)} ms` : 'no request in flight'
          }; deadline seen ${Math.round(now - due)} ms late`,
        );
      },
      Math.max(0, due - clock.now()),
    );
  }

  private stopLeading(why: string): void {
    this.o.clock.clearTimeout(this.deadline);
    this.leading = false;
    this.written = undefined;
    this.attempt?.abort(new Error('the renew deadline passed'));
    this.o.onStoppedLeading(why);
  }

  /** A request of the attempt, remembered while in flight. */
  private async send<T>(what: string, req: Parameters<KubeClient['request']>[0]) {
    this.inFlight = { what, at: this.o.clock.now() };
    try {
      return await this.o.client.request<T>(req);
    } finally {
      this.inFlight = undefined;
    }
  }

  private pause(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const clock = this.o.clock;
      const t = clock.setTimeout(done, ms);
      function done() {
        clock.clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Gives the Lease up (when held), so another candidate takes over without waiting for it to expire. */
  async release(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    // Bounded as the renewals are: a hub that does not answer must not hold the process's exit.
    const signal = AbortSignal.timeout(this.o.renewDeadlineMs);
    const res = await this.o.client.request<JsonObject>({ method: 'GET', path: this.path, signal });
    if (res.status !== 200 || !res.body) return;
    const spec = isObject(res.body.spec) ? res.body.spec : {};
    if (ownString(spec, 'holderIdentity') !== this.o.identity) return;
    const put = await this.o.client.request({
      method: 'PUT',
      path: this.path,
      signal,
      body: {
        ...res.body,
        spec: { ...spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(new Date()) },
      },
    });
    if (put.status !== 200) throw new Error(`releasing Lease ${this.o.namespace}/${this.o.name}: HTTP ${put.status}`);
  }

  /**
   * This candidate holds the Lease now: the monotonic time its write was sent (the renewTime it wrote is
   * the wall time of that moment); 'taken': another candidate holds it. Throws when it cannot tell.
   */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<number | 'taken'> {
    const fast = this.leading ? await this.renewWritten(signal) : undefined;
    if (fast !== undefined) return fast;
    const res = await this.send<JsonObject>('GET', { method: 'GET', path: this.path, signal });
    const sentAt = this.o.clock.now();
    const micro = microTime(new Date());
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
      const created = await this.send<JsonObject>('POST', {
        method: 'POST',
        path: this.path.slice(0, this.path.lastIndexOf('/')),
        body,
        signal,
      });
      if (created.status === 201) return this.wrote(created.body, sentAt);
      // Another candidate created it first: it leads. Anything else (no such namespace, forbidden) is said.
      if (created.status === 409) return 'taken';
      throw apiError(created);
    }
    if (res.status !== 200 || !res.body)
      throw new Error(`reading Lease ${this.o.namespace}/${this.o.name}: HTTP ${res.status}`);
    const lease = res.body;
    const spec = isObject(lease.spec) ? lease.spec : {};
    const holder = ownString(spec, 'holderIdentity') ?? '';
    const duration =
      typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds : this.o.leaseDurationSeconds;
    // As client-go: another holder's Lease has expired when this candidate has seen it unchanged for its
    // duration, on this candidate's clock (the holder's renewTime is the holder's clock: skew would move it).
    const version = `${ownString(lease.metadata, 'resourceVersion') ?? ''}|${holder}`;
    if (this.observed?.version !== version) this.observed = { version, at: sentAt };
    const expired = sentAt - this.observed.at > duration * 1000;
    if (holder !== '' && holder !== this.o.identity && !expired) return 'taken';
    const transitions = typeof spec.leaseTransitions === 'number' ? spec.leaseTransitions : 0;
    const next = {
      ...spec,
      holderIdentity: this.o.identity,
      leaseDurationSeconds: this.o.leaseDurationSeconds,
      renewTime: micro,
      ...(holder === this.o.identity ? {} : { acquireTime: micro, leaseTransitions: transitions + 1 }),
    };
    // resourceVersion in the body: a concurrent writer makes this a 409, and the other candidate wins.
    const put = await this.send<JsonObject>('PUT', {
      method: 'PUT',
      path: this.path,
      body: { ...lease, spec: next },
      signal,
    });
    if (put.status === 200) return this.wrote(put.body, sentAt);
    // Refused while holding it: perhaps this candidate's own write sent again; the next read tells.
    if (put.status === 409 && holder === this.o.identity) throw new Error('renewing the Lease: HTTP 409 (conflict)');
    if (put.status === 409) return 'taken';
    throw apiError(put);
  }

  /** Remembers the Lease as written (the next renewal's fast path); returns when it was sent. */
  private wrote(lease: JsonObject | undefined, sentAt: number): number {
    this.written = lease;
    return sentAt;
  }

  /**
   * The fast path: the Lease as last written, with a new renewTime, written back (one request). undefined
   * when it cannot (nothing written yet, or refused: the slow path reads the Lease first).
   */
  private async renewWritten(signal: AbortSignal): Promise<number | undefined> {
    const lease = this.written;
    if (!lease || !isObject(lease.spec) || ownString(lease.spec, 'holderIdentity') !== this.o.identity)
      return undefined;
    const sentAt = this.o.clock.now();
    const put = await this.send<JsonObject>('PUT', {
      method: 'PUT',
      path: this.path,
      body: { ...lease, spec: { ...lease.spec, renewTime: microTime(new Date()) } },
      signal,
    });
    if (put.status === 200) return this.wrote(put.body, sentAt);
    this.written = undefined;
    return undefined;
  }
}

/** How long a holder that lost its Lease waits for its work to wind down before it reports 'lost'. */
const LOST_GRACE_MS = 5_000;

export interface HoldingLeaseOptions extends Omit<LeaderElectionOptions, 'onStartedLeading' | 'onStoppedLeading'> {
  /** Runs while the Lease is held; its signal aborts when the Lease is lost or `signal` aborts. */
  work: (signal: AbortSignal) => Promise<void>;
  /** The Lease was acquired (before `work` starts). */
  onAcquired: () => void;
  /** The Lease could not be renewed (`why`): `work` is being stopped (another holder may be working already). */
  onLost: (why: string) => void;
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
    onStoppedLeading: (why) => {
      lost = true;
      onLost(why);
      work.abort();
      stop.abort();
    },
  });
  await elector.run(AbortSignal.any([signal, stop.signal]));
  work.abort();
  // Lost: the members are fenced already, and what the work still waits for (hub requests, which may hang
  // as the Lease requests did) must not hold the exit back for long.
  if (lost) {
    const ended = new AbortController();
    await Promise.race([running?.finally(() => ended.abort()), sleep(LOST_GRACE_MS, ended.signal)]);
  } else await running;
  if (!lost) await elector.release().catch((e: unknown) => onReleaseError(e instanceof Error ? e.message : String(e)));
  return lost ? 'lost' : 'stopped';
}
