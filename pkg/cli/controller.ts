// `flotilla controller`: the hub-to-members controller (pkg/controller), configured from flags. Its flags
// and help are in commands.ts.

import {
  Controller,
  controllerParts,
  serveOps,
  SHARD_LABEL,
  skippedNamespaces,
  type ControllerOptions,
  type MemberAccess,
} from '../controller/index.js';
import { KubeconfigError } from '../kube/errors.js';
import { configForContext, contextNames, loadKubeconfig } from '../kube/kubeconfig.js';
import { registerHeapGauge } from '../runtime/heap-gauge.js';
import { createLogger, type Logger } from '../runtime/log.js';
import { Registry, type Gauge } from '../runtime/metrics.js';
import { UsageError, type CommandIO } from './command.js';
import type { ControllerFlags } from './commands.js';
import {
  checkDnsLabel,
  holdLease,
  instanceName,
  integer,
  loadKubeconfigs,
  processIdentity,
  releaseMemory,
  reconcileMetrics,
} from './daemon.js';
import { loadKubeConfigFor } from './kubeflags.js';
import { readVersion } from './version.js';

/** Distinct member names given their own metrics series. */
const MAX_MEMBER_LABELS = 256;

/** A number in (0, 1]. */
function fraction(flag: string, value: string): number {
  const n = /^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(value) ? Number(value) : NaN;
  if (!(n > 0 && n <= 1))
    throw new UsageError(`${flag} must be a fraction above 0, at most 1, got ${JSON.stringify(value)}`);
  return n;
}

/** --skipped-propagating-namespaces: comma-separated regular expressions, each checked. */
function skipped(value: string): string[] {
  const patterns = value.split(',').filter((p) => p !== '');
  try {
    skippedNamespaces(patterns);
  } catch (err: unknown) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  return patterns;
}

export async function run(values: ControllerFlags, io: CommandIO): Promise<number> {
  const concurrency = integer('--concurrency', values.concurrency, 1, 1000);
  const memberConcurrency = integer('--member-concurrency', values['member-concurrency'], 1, 1000);
  const metricsPort = integer('--metrics-port', values['metrics-port'], 0, 65535);
  const namespace = values.namespace ?? (io.env.POD_NAMESPACE || 'flotilla-system');
  checkDnsLabel('--namespace', namespace);
  const sharded = values.sharding === 'true';
  if (sharded && values['leader-elect'] === 'true')
    throw new UsageError('--sharding true and --leader-elect true do not go together: sharded replicas all work');
  const logger = createLogger({ level: values['log-level'], stream: io.stderr });

  const kubeconfigs = await loadKubeconfigs(logger, async () => ({
    hub: await loadKubeConfigFor(values, io),
    members: membersOf(values['members-kubeconfig'], logger),
  }));
  if (kubeconfigs === undefined) return 1;
  const { hub, members } = kubeconfigs;

  const registry = new Registry();
  const { reconciles, depth } = reconcileMetrics(registry, 'controller');
  const { leaderGauge, onMemberResult, onMemberReady } = memberMetrics(registry);
  registerHeapGauge(registry, io.env);
  const tooling = `flotilla/v${await readVersion()}`;
  const identity = processIdentity(io.env);
  const shardLease = shardLeaseName(values['lease-name'], identity);
  const controller = new Controller(
    {
      ...(sharded ? { sharding: { self: shardLease, group: values['lease-name'], handoffMs: SHARD_HANDOFF_MS } } : {}),
      hub,
      members,
      namespace,
      concurrency,
      memberConcurrency,
      logger,
      tooling,
      instance: instanceName(io.env),
      ...settingsOf(values),
      onReconcile: (ms, outcome) => reconciles.observe({ outcome }, ms / 1000),
      onMemberResult,
      onMemberReady,
    },
    controllerParts,
  );

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
  releaseMemory(registry, logger, signal);

  if (!leaderElect && !sharded) {
    leaderGauge.set({}, 1);
    logger.info('controller starting', { members: members.map((m) => m.name), namespace });
    await controller.run(signal);
    logger.info('controller stopped');
    return 0;
  }

  const holding = {
    hub,
    tooling,
    logger,
    held: leaderGauge,
    stop,
    namespace,
    identity,
    work: (s: AbortSignal) => controller.run(s),
    onAcquired: () => {
      leading = true;
    },
  };
  let outcome: 'lost' | 'stopped';
  if (sharded) {
    // This replica holds its own Lease (labelled with --lease-name) and works while it renews it; one it
    // cannot renew within the renew deadline stops it at once (before the Lease expires and the other
    // replicas take its members over) and exits, so the pod restarts as a new replica.
    outcome = await holdLease(
      {
        ...holding,
        name: shardLease,
        labels: { [SHARD_LABEL]: values['lease-name'] },
        acquired: [
          'replica Lease held: controller starting (sharded)',
          { identity, lease: `${namespace}/${shardLease}` },
        ],
        lost: ['cannot renew the replica Lease; stopping before it expires', { identity }],
        renewError: ['replica Lease', {}],
        releaseError: 'could not release the replica Lease; the others take its members when it expires',
      },
      signal,
    );
  } else {
    const lease = `${namespace}/${values['lease-name']}`;
    logger.info('waiting for the Lease', { identity, lease });
    // Lost, another replica may be working already: this one stops at once and exits, so the pod restarts
    // as a standby.
    outcome = await holdLease(
      {
        ...holding,
        name: values['lease-name'],
        acquired: ['leading: controller starting', { identity, lease, members: members.map((m) => m.name) }],
        lost: ['lost the Lease; stopping', { identity }],
        renewError: ['leader election', {}],
        releaseError: 'could not release the Lease; another replica takes over when it expires',
      },
      signal,
    );
  }
  logger.info('controller stopped');
  return outcome === 'lost' ? 1 : 0;
}

/** The Controller's settings that are its flags' values, checked. */
function settingsOf(values: ControllerFlags) {
  return {
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
    propagateNamespaces: ({ auto: 'auto', true: 'on', false: 'off' } as const)[values['propagate-namespaces']],
    skippedPropagatingNamespaces: skipped(values['skipped-propagating-namespaces']),
    leaseNamespace: values['lease-namespace'],
  } satisfies Partial<ControllerOptions>;
}

/** The controller's metrics past the reconcile ones, and the callbacks that keep the member series. */
function memberMetrics(
  registry: Registry,
): { leaderGauge: Gauge } & Required<Pick<ControllerOptions, 'onMemberResult' | 'onMemberReady'>> {
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
  return {
    leaderGauge,
    onMemberResult: (member, result) => memberResults.inc({ member: memberLabel(member), result }),
    onMemberReady: (member, isReady) => memberReady.set({ member: memberLabel(member) }, isReady ? 1 : 0),
  };
}

/**
 * The members named by --members-kubeconfig, one per context; none without it (members then come from
 * Cluster objects with credentials).
 */
function membersOf(file: string | undefined, logger: Logger): MemberAccess[] {
  if (file === undefined) {
    logger.info(
      'no --members-kubeconfig: members come from Cluster objects whose spec.secretRef names a Secret with credentials',
    );
    return [];
  }
  const loaded = loadKubeconfig({ file });
  const names = contextNames(loaded.config);
  if (names.length === 0)
    throw new KubeconfigError('NO_CONTEXT', `${loaded.description} has no contexts: each context is a member cluster`);
  return names.map((name) => ({ name, kubeConfig: configForContext(loaded.config, name, loaded.description) }));
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
