// The controller's shared queue helpers: a template reconciler's queue (results told to metrics, failures
// logged and retried with backoff), a queue of one hub write per template key, and the template key
// itself (the engine's: the same string names a template in EngineState and in every queue here).

import { templateKey } from '../engine/state.js';
import type { Logger } from '../runtime/log.js';
import { WorkQueue, type Result } from '../runtime/queue.js';
import { describeTemplate } from './ownership.js';

export { templateKey };

/** What a reconcile asks for next: nothing (done), or to run again after `requeueAfter` ms. */
export type ReconcileResult = Result | undefined;

/** A template reconciler's queue: each result told to onReconcile, a failure logged and retried with backoff. */
export function templateQueue(
  reconcile: (key: string, signal: AbortSignal) => Promise<ReconcileResult>,
  o: { concurrency: number; logger: Logger; onReconcile?: ((durationMs: number, outcome: string) => void) | undefined },
): WorkQueue {
  return new WorkQueue<string>(
    { reconcile },
    {
      concurrency: o.concurrency,
      onResult: (e) => {
        o.onReconcile?.(e.durationMs, e.outcome);
        if (e.outcome === 'error')
          o.logger.warn('reconcile failed; retrying with backoff', {
            template: describeKey(e.key),
            error: e.error instanceof Error ? e.error.message : String(e.error),
          });
      },
    },
  );
}

/** A queue of one write on the hub per template key (a binding, an entry), 4 at once; a failure is logged as `what` and retried. */
export function hubWriteQueue(write: (key: string) => Promise<void>, logger: Logger, what: string): WorkQueue {
  return new WorkQueue<string>(
    { reconcile: write },
    {
      concurrency: 4,
      onResult: (e) => {
        if (e.outcome === 'error')
          logger.warn(`${what}; retrying`, { template: describeKey(e.key), error: String(e.error) });
      },
    },
  );
}

/** A template key as people read it (`apiVersion/Kind namespace/name`), or the key itself when it is not one. */
export function describeKey(key: string): string {
  try {
    const [apiVersion, kind, namespace, name] = JSON.parse(key) as string[];
    return describeTemplate({
      apiVersion: apiVersion ?? '',
      kind: kind ?? '',
      name: name ?? '',
      ...(namespace ? { namespace } : {}),
    });
  } catch {
    return key;
  }
}
