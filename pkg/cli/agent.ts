// `flotilla agent`: the pull-mode agent (pkg/controller, ControllerOptions.agent), configured from flags.
// Its flags and help are in commands.ts. It holds the Lease <--lease-namespace>/<cluster> on the hub
// while it works (one agent per cluster; the controller reads the Lease for the Cluster's Ready
// condition), and stops when it loses it.

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';

import { Controller, runHoldingLease, serveOps } from '../controller/index.js';
import { KubeClient } from '../kube/client.js';
import { loadContext } from '../kube/kubeconfig.js';
import { createLogger } from '../runtime/log.js';
import { Registry } from '../runtime/metrics.js';
import { UsageError, type CommandIO } from './command.js';
import type { AgentFlags } from './commands.js';
import { loadKubeConfigFor } from './kubeflags.js';
import { readVersion } from './version.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function integer(flag: string, value: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max))
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

export async function run(values: AgentFlags, io: CommandIO): Promise<number> {
  const cluster = values['cluster-name'];
  if (!DNS_SUBDOMAIN.test(cluster) || cluster.length > 253)
    throw new UsageError(`--cluster-name must be a Cluster's name (a DNS subdomain), got ${JSON.stringify(cluster)}`);
  const concurrency = integer('--concurrency', values.concurrency, 1, 1000);
  const metricsPort = integer('--metrics-port', values['metrics-port'], 0, 65535);
  const namespace = values.namespace ?? (io.env.POD_NAMESPACE || 'flotilla-system');
  for (const [flag, ns] of [
    ['--namespace', namespace],
    ['--lease-namespace', values['lease-namespace']],
  ] as const)
    if (!DNS_LABEL.test(ns) || ns.length > 63)
      throw new UsageError(`${flag} must be a DNS label, got ${JSON.stringify(ns)}`);
  // The Lease says whole seconds; the renew deadline (when this agent stops writing) is shorter than that.
  const leaseSeconds = Math.max(1, Math.round(values['lease-duration'] / 1000));
  const leaseMs = leaseSeconds * 1000;
  const renewMs = values['renew-interval'];
  if (renewMs <= 0 || renewMs >= leaseMs)
    throw new UsageError(
      '--renew-interval must be shorter than --lease-duration: the Lease would lapse between renewals',
    );
  const logger = createLogger({ level: values['log-level'], stream: io.stderr });

  let hub;
  let member;
  try {
    hub = loadContext({ file: values['hub-kubeconfig'] });
    member = await loadKubeConfigFor(values, io);
  } catch (e: unknown) {
    if (e instanceof UsageError) throw e;
    logger.error('cannot load the kubeconfigs', { error: e instanceof Error ? e.message : String(e) });
    return 1;
  }

  const registry = new Registry();
  const reconciles = registry.histogram(
    'flotilla_agent_reconcile_duration_seconds',
    'Time to reconcile one template.',
    ['outcome'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  const depth = registry.gauge('flotilla_agent_queue_depth', 'Template keys waiting for a worker.');
  const results = registry.counter(
    'flotilla_agent_results_total',
    'Applies and removals on this cluster, by result (Applied, Unchanged, Removed, Conflict, Failed, Unreachable).',
    ['result'],
  );
  const leaseGauge = registry.gauge('flotilla_agent_lease_held', '1 while this agent holds its Lease on the hub.');
  const tooling = `flotilla/v${await readVersion()}`;
  const agent = new Controller({
    hub,
    members: [{ name: cluster, kubeConfig: member }],
    clusterSecrets: false,
    agent: { cluster },
    namespace,
    concurrency,
    logger,
    tooling,
    resyncMs: values.resync,
    clusterStatusIntervalMs: values['cluster-status-interval'],
    onReconcile: (ms, outcome) => reconciles.observe({ outcome }, ms / 1000),
    onMemberResult: (_member, result) => results.inc({ result }),
  });

  const stop = new AbortController();
  const signal = AbortSignal.any([io.signal, stop.signal]);
  let leading = false;
  const ready = () => {
    depth.set({}, agent.queueDepth);
    if (!leading) return { ok: false, reason: 'waiting for the Lease' };
    return agent.synced ? { ok: true } : { ok: false, reason: 'caches not synced' };
  };
  if (!(await serveOps({ port: metricsPort, registry, ready }, signal, logger))) return 1;

  const identity = `${io.env.POD_NAME || hostname()}-${randomBytes(4).toString('hex')}`;
  const lease = `${values['lease-namespace']}/${cluster}`;
  logger.info('waiting for the Lease', { cluster, identity, lease });
  const outcome = await runHoldingLease(
    {
      client: new KubeClient(hub, { concurrency: 2, userAgent: tooling }),
      namespace: values['lease-namespace'],
      name: cluster,
      identity,
      leaseDurationSeconds: leaseSeconds,
      retryPeriodMs: renewMs,
      renewDeadlineMs: Math.max(renewMs, leaseMs - renewMs),
      work: (s) => agent.run(s),
      onAcquired: () => {
        leading = true;
        leaseGauge.set({}, 1);
        logger.info('holding the Lease: agent starting', { cluster, identity, lease, hubNamespace: namespace });
      },
      onLost: () => {
        // Another agent may hold it now: stop writing at once, and exit so the pod restarts and waits.
        leaseGauge.set({}, 0);
        logger.error('lost the Lease; stopping', { cluster, identity, lease });
        stop.abort();
      },
      onError: (message) => logger.warn('cannot renew the Lease on the hub', { lease, error: message }),
      onReleaseError: (error) => logger.warn('could not release the Lease; it expires on its own', { error }),
    },
    signal,
  );
  logger.info('agent stopped', { cluster });
  return outcome === 'lost' ? 1 : 0;
}
