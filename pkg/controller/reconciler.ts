// What every reconciler of the manager is: a name (how a process shape lists it), a queue of keys, and
// reconcile(key) → what to do next. A key names one object of the reconciler's concern: a template key
// (queue.ts) for the template, binding and Work reconcilers; a Cluster's name for the cluster status and
// taint reconcilers; a policy key (policy-status.ts) for policy status. The manager starts each one's
// queues with run() and stops them with the process's signal.

import type { WorkQueue } from '../runtime/queue.js';
import type { ReconcileResult } from './queue.js';

export interface Reconciler {
  /** Its name in a process shape's list (processes.ts), in logs. */
  readonly name: string;
  /** Where its keys wait; adding a key asks for a reconcile of it. */
  readonly queue: WorkQueue;
  /** Brings what `key` names to what it should be; throws to be retried with the queue's backoff. */
  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void>;
  /** Runs its queues until `signal` aborts (the default: its one queue). */
  run?(signal: AbortSignal): Promise<void>;
}

/** Runs reconciler `r`'s queues until `signal` aborts. */
export function runReconciler(r: Reconciler, signal: AbortSignal): Promise<void> {
  return r.run ? r.run(signal) : r.queue.start(signal);
}
