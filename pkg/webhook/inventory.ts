// The hub's Cluster list for validation warnings, refreshed by polling. Warnings tolerate a list that is a
// poll interval old, and polling has no watch to restart: a failed list keeps the last good one.

import type { ClusterInfo, Inventory } from './validating.js';
import type { Logger } from '../runtime/log.js';

export interface PollingInventoryOptions {
  /** Lists the Cluster objects (a KubeClient in the CLI; a stub in tests). */
  list: () => Promise<ClusterInfo[]>;
  /** Default 30 s. */
  intervalMs?: number;
  logger?: Logger;
}

export class PollingInventory implements Inventory {
  private known: ClusterInfo[] | undefined;

  constructor(private readonly opts: PollingInventoryOptions) {}

  /** Undefined until the first list succeeds: no cluster warnings rather than false ones. */
  clusters(): ReadonlyArray<ClusterInfo> | undefined {
    return this.known;
  }

  /** Lists once now, then every interval until `signal` aborts. Resolves after the first attempt. */
  async start(signal: AbortSignal): Promise<void> {
    await this.refresh();
    if (signal.aborted) return;
    const timer = setInterval(() => void this.refresh(), this.opts.intervalMs ?? 30_000);
    timer.unref();
    signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  }

  async refresh(): Promise<void> {
    try {
      this.known = await this.opts.list();
    } catch (e: unknown) {
      this.opts.logger?.error('listing clusters failed; keeping the last list', {
        error: e instanceof Error ? e.message : String(e),
      });
    }
  }
}
