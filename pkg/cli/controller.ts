// `flotilla controller`: the hub-to-members controller (pkg/controller), configured from flags. Its flags
// and help are in commands.ts.

import { hostname } from 'node:os';

import type { KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';

import { Controller, runHoldingLease, serveOps, SHARD_LABEL, type MemberAccess } from '../controller/index.js';
import { KubeClient } from '../kube/client.js';
import { KubeconfigError } from '../kube/errors.js';
import { configForContext, contextNames, loadKubeconfig } from '../kube/kubeconfig.js';
import { createLogger } from '../runtime/log.js';
import { Registry } from '../runtime/metrics.js';
import { UsageError, type CommandIO } from './command.js';
import type { ControllerFlags } from './commands.js';
import { loadKubeConfigFor } from './kubeflags.js';
import { readVersion } from './version.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Distinct member names given their own metrics series. */
const MAX_MEMBER_LABELS = 256;

function integer(flag: string, value: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max))
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

/** A number in (0, 1]. */
function fraction(flag: string, value: string): number {
  const n = /^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(value) ? Number(value) : NaN;
  if (!(n > 0 && n <= 1))
    throw new UsageError(`${flag} must be a fraction above 0, at most 1, got ${JSON.stringify(value)}`);
  return n;
}

export async function run(values: ControllerFlags, io: CommandIO): Promise<number> {
  const concurrency = integer('--concurrency', values.concurrency, 1, 1000);
  const metricsPort = integer('--metrics-port', values['metrics-port'], 0, 65535);
  const namespace = values.namespace ?? (io.env.POD_NAMESPACE || 'flotilla-system');
  if (!DNS_LABEL.test(namespace) || namespace.length > 63)
    throw new UsageError(`--namespace must be a DNS label, got ${JSON.stringify(namespace)}`);
  const sharded = values.sharding === 'true';
  if (sharded && values['leader-elect'] === 'true')
    throw new UsageError('--sharding true and --leader-elect true do not go together: sharded replicas all work');
  const logger = createLogger({ level: values['log-level'], stream: io.stderr });

  let members: MemberAccess[];
  let hub: KubeConfig;
  try {
    hub = await loadKubeConfigFor(values, io);
    members = [];
    const file = values['members-kubeconfig'];
    if (file !== undefined) {
      const loaded = loadKubeconfig({ file });
      const names = contextNames(loaded.config);
      if (names.length === 0)
        throw new KubeconfigError(
          'NO_CONTEXT',
          `${loaded.description} has no contexts: each context is a member cluster`,
        );
      members = names.map((name) => ({ name, kubeConfig: configForContext(loaded.config, name, loaded.description) }));
    } else {
      logger.info(
        'no --members-kubeconfig: members come from Cluster objects whose spec.secretRef names a Secret with credentials',
      );
    }
  } catch (e: unknown) {
    if (e instanceof UsageError) throw e;
    logger.error('cannot load the kubeconfigs', { error: e instanceof Error ? e.message : String(e) });
    return 1;
  }

  const registry = new Registry();
  const reconciles = registry.histogram(
    'flotilla_controller_reconcile_duration_seconds',
    'Time to reconcile one template.',
    ['outcome'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  const depth = registry.gauge('flotilla_controller_queue_depth', 'Template keys waiting for a worker.');
  const leaderGauge = registry.gauge(
    'flotilla_controller_leader',
    '1 while this replica holds the Lease (or runs without leader election).',
  );
  const memberResults = registry.counter(
    'flotilla_controller_member_results_total',
    'Applies and removals per member, by result (Applied, Unchanged, Removed, Conflict, Failed, Unreachable).',
    ['member', 'result'],
  );
  const memberReady = registry.gauge(
    'flotilla_controller_member_ready',
    '1 when the member answered its last /readyz probe, else 0.',
    ['member'],
  );
  // Member names come from Cluster objects on the hub: past MAX_MEMBER_LABELS distinct names, the rest share one series.
  const memberLabels = new Set<string>();
  const memberLabel = (name: string) => {
    if (memberLabels.has(name)) return name;
    if (memberLabels.size >= MAX_MEMBER_LABELS) return 'other';
    memberLabels.add(name);
    return name;
  };
  const tooling = `flotilla/v${await readVersion()}`;
  // The pod's name where the chart sets POD_NAME, else the host's; a suffix keeps two processes on one host apart.
  const identity = `${io.env.POD_NAME || hostname()}-${randomBytes(4).toString('hex')}`;
  const shardLease = shardLeaseName(values['lease-name'], identity);
  const controller = new Controller({
    ...(sharded ? { sharding: { self: shardLease, group: values['lease-name'], handoffMs: SHARD_HANDOFF_MS } } : {}),
    hub,
    members,
    namespace,
    concurrency,
    logger,
    tooling,
    instance: io.env.POD_NAME || hostname(),
    resyncMs: values.resync,
    probeIntervalMs: values['probe-interval'],
    probeTimeoutMs: values['probe-timeout'],
    clusterStatusIntervalMs: values['cluster-status-interval'],
    notReadyTaintAfterMs: values['not-ready-taint-after'],
    failover: values.failover === 'true',
    failoverEvictionTimeoutMs: values['failover-eviction-timeout'],
    unhealthyClusterThreshold: fraction('--unhealthy-cluster-threshold', values['unhealthy-cluster-threshold']),
    gracefulEvictionTimeoutMs: values['graceful-eviction-timeout'],
    evictionPurgeMode: purgeMode(values['eviction-purge-mode']),
    karmadaGroups: values['karmada-groups'] === 'off' ? 'off' : 'auto',
    leaseNamespace: values['lease-namespace'],
    onReconcile: (ms, outcome) => reconciles.observe({ outcome }, ms / 1000),
    onMemberResult: (member, result) => memberResults.inc({ member: memberLabel(member), result }),
    onMemberReady: (member, isReady) => memberReady.set({ member: memberLabel(member) }, isReady ? 1 : 0),
  });

  const stop = new AbortController();
  const signal = AbortSignal.any([io.signal, stop.signal]);
  const leaderElect = values['leader-elect'] === 'true';
  let leading = !leaderElect;
  const ready = () => {
    depth.set({}, controller.queueDepth);
    if (!leading) return { ok: true }; // a standby is ready: it is there to take over
    return controller.synced ? { ok: true } : { ok: false, reason: 'caches not synced' };
  };
  if (!(await serveOps({ port: metricsPort, registry, ready }, signal, logger))) return 1;

  if (sharded) return runSharded();

  if (!leaderElect) {
    leaderGauge.set({}, 1);
    logger.info('controller starting', { members: members.map((m) => m.name), namespace });
    await controller.run(signal);
    logger.info('controller stopped');
    return 0;
  }

  logger.info('waiting for the Lease', { identity, lease: `${namespace}/${values['lease-name']}` });
  const outcome = await runHoldingLease(
    {
      client: new KubeClient(hub, { concurrency: 2, userAgent: tooling }),
      namespace,
      name: values['lease-name'],
      identity,
      work: (s) => controller.run(s),
      onAcquired: () => {
        leading = true;
        leaderGauge.set({}, 1);
        logger.info('leading: controller starting', {
          identity,
          lease: `${namespace}/${values['lease-name']}`,
          members: members.map((m) => m.name),
        });
      },
      onLost: () => {
        // Another replica may be working already: stop at once, and exit so the pod restarts as a standby.
        leaderGauge.set({}, 0);
        logger.error('lost the Lease; stopping', { identity });
        stop.abort();
      },
      onError: (message) => logger.warn('leader election', { error: message }),
      onReleaseError: (error) =>
        logger.warn('could not release the Lease; another replica takes over when it expires', { error }),
    },
    signal,
  );
  logger.info('controller stopped');
  return outcome === 'lost' ? 1 : 0;

  /**
   * Sharded: this replica holds its own Lease (labelled with --lease-name) and works while it renews it;
   * one it cannot renew within the renew deadline stops it at once (before the Lease expires and the
   * other replicas take its members over) and exits, so the pod restarts as a new replica.
   */
  async function runSharded(): Promise<number> {
    const result = await runHoldingLease(
      {
        client: new KubeClient(hub, { concurrency: 2, userAgent: tooling }),
        namespace,
        name: shardLease,
        identity,
        labels: { [SHARD_LABEL]: values['lease-name'] },
        work: (s) => controller.run(s),
        onAcquired: () => {
          leading = true;
          leaderGauge.set({}, 1);
          logger.info('replica Lease held: controller starting (sharded)', {
            identity,
            lease: `${namespace}/${shardLease}`,
          });
        },
        onLost: () => {
          leaderGauge.set({}, 0);
          logger.error('cannot renew the replica Lease; stopping before it expires', { identity });
          stop.abort();
        },
        onError: (message) => logger.warn('replica Lease', { error: message }),
        onReleaseError: (error) =>
          logger.warn('could not release the replica Lease; the others take its members when it expires', { error }),
      },
      signal,
    );
    logger.info('controller stopped');
    return result === 'lost' ? 1 : 0;
  }
}

/** How long a joining replica waits before it works on the members it wins (the others stop at half of it). */
const SHARD_HANDOFF_MS = 6_000;

/** `<lease-name>-<identity>` as a Lease name: a DNS subdomain of at most 253 characters. */
function shardLeaseName(group: string, identity: string): string {
  const name = `${group}-${identity}`
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
  return name.slice(0, 253).replace(/[^a-z0-9]+$/, '');
}

function purgeMode(v: string): 'Directly' | 'Gracefully' | 'Never' {
  return v === 'Directly' || v === 'Never' ? v : 'Gracefully';
}
