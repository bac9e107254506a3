// What the long-running commands, `controller` and `agent`, share: checking their numeric and name flags,
// loading their kubeconfigs (a usage error stays one; any other failure is logged and the command exits 1),
// the reconcile metrics, the process identity, giving a burst's memory back once quiet, and holding a
// Lease on the hub while the work runs.

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';

import type { KubeConfig } from '../kube/config.js';

import { runHoldingLease, type HoldingLeaseOptions } from '../controller/leader.js';
import { KubeClient } from '../kube/client.js';
import type { Logger } from '../runtime/log.js';
import { releaseMemoryWhenQuiet } from '../runtime/memory-release.js';
import type { Gauge, Histogram, Registry } from '../runtime/metrics.js';
import { UsageError } from './command.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The flag's value as an integer from `min` to `max`, or a UsageError. */
export function integer(flag: string, value: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max))
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

/** Throws a UsageError unless the flag's value is a DNS label (a namespace's name). */
export function checkDnsLabel(flag: string, value: string): void {
  if (!DNS_LABEL.test(value) || value.length > 63)
    throw new UsageError(`${flag} must be a DNS label, got ${JSON.stringify(value)}`);
}

/**
 * Runs `load`; a UsageError is rethrown (exit 2), any other failure is logged as "cannot load the
 * kubeconfigs" and gives undefined (the caller exits 1).
 */
export async function loadKubeconfigs<T>(logger: Logger, load: () => Promise<T>): Promise<T | undefined> {
  try {
    return await load();
  } catch (e: unknown) {
    if (e instanceof UsageError) throw e;
    logger.error('cannot load the kubeconfigs', { error: e instanceof Error ? e.message : String(e) });
    return undefined;
  }
}

/** `flotilla_<process>_reconcile_duration_seconds` and `flotilla_<process>_queue_depth`, registered in that order. */
export function reconcileMetrics(
  registry: Registry,
  process: 'controller' | 'agent',
): { reconciles: Histogram; depth: Gauge } {
  const reconciles = registry.histogram(
    `flotilla_${process}_reconcile_duration_seconds`,
    'Time to reconcile one template.',
    ['outcome'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  const depth = registry.gauge(`flotilla_${process}_queue_depth`, 'Template keys waiting for a worker.');
  return { reconciles, depth };
}

/**
 * The burst's memory back to the system once the process is quiet (pkg/runtime/memory-release.ts), counted
 * by `flotilla_memory_releases_total`, until `signal` aborts.
 */
export function releaseMemory(registry: Registry, logger: Logger, signal: AbortSignal): void {
  const releases = registry.counter(
    'flotilla_memory_releases_total',
    'Collections run to give memory freed after a burst of work back to the system.',
  );
  releaseMemoryWhenQuiet({ logger, releases }, signal);
}

/** The pod's name where the chart sets POD_NAME, else the host's. */
export function instanceName(env: Readonly<Record<string, string | undefined>>): string {
  return env.POD_NAME || hostname();
}

/** The Lease holder's identity: the instance's name with a suffix that keeps two processes on one host apart. */
export function processIdentity(env: Readonly<Record<string, string | undefined>>): string {
  return `${instanceName(env)}-${randomBytes(4).toString('hex')}`;
}

/** A log line: message and fields. */
type Line = readonly [message: string, fields: Record<string, unknown>];

export interface HeldLeaseOptions extends Omit<
  HoldingLeaseOptions,
  'client' | 'onAcquired' | 'onLost' | 'onError' | 'onReleaseError'
> {
  hub: KubeConfig;
  /** User agent of the Lease client. */
  tooling: string;
  logger: Logger;
  /** 1 while the Lease is held, 0 once it is lost. */
  held: Gauge;
  /** Aborted when the Lease is lost, so the rest of the process stops with the work. */
  stop: AbortController;
  /** Called when the Lease is acquired, before `acquired` is logged and the work starts. */
  onAcquired: () => void;
  /** Logged (info) when the Lease is acquired. */
  acquired: Line;
  /** Logged (error) when the Lease is lost. */
  lost: Line;
  /** Logged (warn) with the error when a renewal fails. */
  renewError: Line;
  /** Logged (warn) with the error when the Lease cannot be released at the end. */
  releaseError: string;
}

/** runHoldingLease with the shared bookkeeping: the gauge, the log lines, and stopping the process when lost. */
export async function holdLease(o: HeldLeaseOptions, signal: AbortSignal): Promise<'lost' | 'stopped'> {
  const { hub, tooling, logger, held, stop, onAcquired, acquired, lost, renewError, releaseError, ...lease } = o;
  return runHoldingLease(
    {
      ...lease,
      client: new KubeClient(hub, { concurrency: 2, userAgent: tooling }),
      onAcquired: () => {
        onAcquired();
        held.set({}, 1);
        logger.info(...acquired);
      },
      onLost: (why) => {
        held.set({}, 0);
        logger.error(lost[0], { ...lost[1], why });
        stop.abort();
      },
      onError: (message) => logger.warn(renewError[0], { ...renewError[1], error: message }),
      onReleaseError: (error) => logger.warn(releaseError, { error }),
    },
    signal,
  );
}
