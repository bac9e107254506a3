// Whether this process's view of the hub is current. Its informers cannot tell: a watch on a hub that
// hangs just goes quiet, and one on a hub that is down retries without a word to the rest. So the hub is
// asked for /readyz every `intervalMs` (its own request, outside the hub client's queue, bounded by
// `timeoutMs`); the view is stale from a failed check (or a failure the Lease watch reports) until a
// check succeeds again. While it is stale no health taint is added (cluster-health.ts), and when it
// comes back every pull cluster's Lease is judged afresh (pull-health.ts): renewals this process could
// not see are not held against the agents.

import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../runtime/log.js';
import { sleep } from '../runtime/clock.js';

export class HubLiveness {
  private staleFlag = false;
  private why = '';
  private okAt = Date.now();

  constructor(
    private readonly o: {
      client: KubeClient;
      intervalMs: number;
      timeoutMs: number;
      /** The view went stale (true) or came back (false). */
      onChange(stale: boolean): void;
      /** Why the view is still behind although the hub answers (a watch still retrying), or undefined. */
      behind?(): string | undefined;
      logger: Logger;
    },
  ) {}

  get stale(): boolean {
    return this.staleFlag;
  }

  /** When the hub last answered a check (ms since the epoch; the start until the first check). */
  get confirmedAt(): number {
    return this.okAt;
  }

  /** Something this process reads from the hub failed (a broken watch): stale until the next good check. */
  fail(why: string): void {
    this.set(true, why);
  }

  /** Checks now, then every intervalMs, until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.check(signal);
      await sleep(this.o.intervalMs, signal);
    }
  }

  private async check(signal: AbortSignal): Promise<void> {
    try {
      const res = await this.o.client.request({
        method: 'GET',
        path: '/readyz',
        unqueued: true,
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.o.timeoutMs)]),
      });
      if (signal.aborted) return;
      if (res.status >= 400) this.set(true, `GET /readyz: HTTP ${res.status}`);
      else {
        // The hub answers; the view is current once the watches that judge health have caught up too.
        const behind = this.o.behind?.();
        if (behind) this.set(true, behind);
        else {
          this.okAt = Date.now();
          this.set(false, '');
        }
      }
    } catch (err: unknown) {
      if (signal.aborted) return;
      this.set(true, err instanceof Error ? err.message : String(err));
    }
  }

  private set(stale: boolean, why: string): void {
    if (stale === this.staleFlag) return;
    this.staleFlag = stale;
    this.why = why;
    if (stale) this.o.logger.warn('the hub does not answer: no cluster is tainted until it does', { error: this.why });
    else this.o.logger.info('the hub answers again: pull clusters are judged afresh from their Leases');
    this.o.onChange(stale);
  }
}
