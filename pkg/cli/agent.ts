// `flotilla agent`: the pull-mode agent (pkg/controller, ControllerOptions.agent), configured from flags.
// Its flags and help are in commands.ts. It holds the Lease <--lease-namespace>/<cluster> on the hub
// while it works (one agent per cluster; the controller reads the Lease for the Cluster's Ready
// condition), and stops when it loses it.

// Module by module, not through pkg/controller/index.ts: an agent loads none of the controller's shape.
import { agentParts } from '../controller/agent-parts.js';
import { Controller } from '../controller/manager.js';
import { serveOps } from '../controller/ops.js';
import { loadContext } from '../kube/kubeconfig.js';
import { createLogger } from '../runtime/log.js';
import { Registry } from '../runtime/metrics.js';
import { UsageError, type CommandIO } from './command.js';
import type { AgentFlags } from './commands.js';
import {
  checkDnsLabel,
  holdLease,
  integer,
  loadKubeconfigs,
  processIdentity,
  reconcileMetrics,
  releaseMemory,
} from './daemon.js';
import { loadKubeConfigFor } from './kubeflags.js';
import { readVersion } from './version.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export async function run(values: AgentFlags, io: CommandIO): Promise<number> {
  const cluster = values['cluster-name'];
  if (!DNS_SUBDOMAIN.test(cluster) || cluster.length > 253)
    throw new UsageError(`--cluster-name must be a Cluster's name (a DNS subdomain), got ${JSON.stringify(cluster)}`);
  const concurrency = integer('--concurrency', values.concurrency, 1, 1000);
  const metricsPort = integer('--metrics-port', values['metrics-port'], 0, 65535);
  const namespace = values.namespace ?? (io.env.POD_NAMESPACE || 'flotilla-system');
  checkDnsLabel('--namespace', namespace);
  checkDnsLabel('--lease-namespace', values['lease-namespace']);
  // The Lease says whole seconds; the renew deadline (when this agent stops writing) is shorter than that.
  const leaseSeconds = Math.max(1, Math.round(values['lease-duration'] / 1000));
  const leaseMs = leaseSeconds * 1000;
  const renewMs = values['renew-interval'];
  if (renewMs <= 0 || renewMs >= leaseMs)
    throw new UsageError(
      '--renew-interval must be shorter than --lease-duration: the Lease would lapse between renewals',
    );
  const logger = createLogger({ level: values['log-level'], stream: io.stderr });

  const kubeconfigs = await loadKubeconfigs(logger, async () => ({
    hub: loadContext({ file: values['hub-kubeconfig'] }),
    member: await loadKubeConfigFor(values, io),
  }));
  if (kubeconfigs === undefined) return 1;
  const { hub, member } = kubeconfigs;

  const registry = new Registry();
  const { reconciles, depth } = reconcileMetrics(registry, 'agent');
  const results = registry.counter(
    'flotilla_agent_results_total',
    'Applies and removals on this cluster, by result (Applied, Unchanged, Removed, Conflict, Failed, Unreachable).',
    ['result'],
  );
  const leaseGauge = registry.gauge('flotilla_agent_lease_held', '1 while this agent holds its Lease on the hub.');
  const tooling = `flotilla/v${await readVersion()}`;
  const agent = new Controller(
    {
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
    },
    agentParts,
  );

  const stop = new AbortController();
  const signal = AbortSignal.any([io.signal, stop.signal]);
  let leading = false;
  const ready = () => {
    depth.set({}, agent.queueDepth);
    if (!leading) return { ok: false, reason: 'waiting for the Lease' };
    return agent.synced ? { ok: true } : { ok: false, reason: 'caches not synced' };
  };
  if (!(await serveOps({ port: metricsPort, registry, ready }, signal, logger))) return 1;
  releaseMemory(registry, logger, signal);

  const identity = processIdentity(io.env);
  const lease = `${values['lease-namespace']}/${cluster}`;
  logger.info('waiting for the Lease', { cluster, identity, lease });
  // Lost, another agent may hold it now: the agent stops writing at once and exits, so the pod restarts and waits.
  const outcome = await holdLease(
    {
      hub,
      tooling,
      logger,
      held: leaseGauge,
      stop,
      namespace: values['lease-namespace'],
      name: cluster,
      identity,
      leaseDurationSeconds: leaseSeconds,
      retryPeriodMs: renewMs,
      renewDeadlineMs: Math.max(renewMs, leaseMs - renewMs),
      work: (s) => agent.run(s),
      onAcquired: () => {
        leading = true;
      },
      acquired: ['holding the Lease: agent starting', { cluster, identity, lease, hubNamespace: namespace }],
      lost: ['lost the Lease; stopping', { cluster, identity, lease }],
      renewError: ['cannot renew the Lease on the hub', { lease }],
      releaseError: 'could not release the Lease; it expires on its own',
    },
    signal,
  );
  logger.info('agent stopped', { cluster });
  return outcome === 'lost' ? 1 : 0;
}
