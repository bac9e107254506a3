// `flotilla webhook`: the admission and conversion webhook server (pkg/webhook), configured from flags.
// Its flags and help are in commands.ts.

import {
  clusterLister,
  PollingInventory,
  startHealthServer,
  WebhookHandler,
  WebhookServer,
  WebhookServerError,
  type Logger,
} from '../webhook/index.js';
import { createLogger } from '../runtime/log.js';
import { UsageError, type CommandIO } from './command.js';
import type { WebhookFlags } from './commands.js';
import { loadKubeConfigFor } from './kubeflags.js';

/**
 * The Cluster list for warnings (cluster.flotilla.io, and cluster.karmada.io where the hub serves it), when
 * a kubeconfig applies (--kubeconfig, $KUBECONFIG or a pod's service account; not ~/.kube/config, so a
 * webhook started on a laptop does not poll whatever cluster is current).
 */
async function clusterInventory(
  values: WebhookFlags,
  io: CommandIO,
  logger: Logger,
): Promise<PollingInventory | undefined> {
  let kubeconfig;
  try {
    kubeconfig = await loadKubeConfigFor(values, io, { home: false });
  } catch (e: unknown) {
    if (e instanceof UsageError && values.context === undefined) return undefined;
    throw e;
  }
  const [{ KubeClient }, { ApiError }] = await Promise.all([import('../kube/client.js'), import('../kube/errors.js')]);
  const client = new KubeClient(kubeconfig, { concurrency: 2, userAgent: 'flotilla-webhook' });
  const api = {
    listClusterCustomObject: async (g: { group: string; version: string; plural: string }) =>
      (await client.requestOk({ method: 'GET', path: `/apis/${g.group}/${g.version}/${g.plural}` })).body,
  };
  return new PollingInventory({
    intervalMs: values['cluster-list-interval'],
    logger,
    list: clusterLister(api, {
      status: (e) => (e instanceof ApiError ? e.status : undefined),
      describe: (e) =>
        e instanceof ApiError ? `HTTP ${e.status}: ${e.message}` : e instanceof Error ? e.message : String(e),
      logger,
    }),
  });
}

function keyValues(text: string | undefined, flag: string): Record<string, string> | undefined {
  if (text === undefined || text === '') return undefined;
  const out: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`${flag} takes KEY=VALUE pairs separated by commas, got ${JSON.stringify(pair)}`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return out;
}

/** The /override route's policies, watched in the kubeconfig's cluster (required with --override). */
async function overrideSource(values: WebhookFlags, io: CommandIO, logger: Logger) {
  const name = values['cluster-name'];
  if (!name) throw new UsageError('--override needs --cluster-name: the name of the cluster the webhook runs in');
  const labels = keyValues(values['cluster-labels'], '--cluster-labels');
  const zones = values['cluster-zones']
    ?.split(',')
    .map((z) => z.trim())
    .filter(Boolean);
  const kubeconfig = await loadKubeConfigFor(values, io, { home: false });
  const [{ KubeClient }, { Watcher }, { WatchedOverrides }] = await Promise.all([
    import('../kube/client.js'),
    import('../kube/watch.js'),
    import('../webhook/override-source.js'),
  ]);
  const userAgent = 'flotilla-webhook';
  return new WatchedOverrides({
    client: new KubeClient(kubeconfig, { concurrency: 4, userAgent }),
    watcher: new Watcher(kubeconfig, { userAgent }),
    cluster: {
      name,
      ...(labels ? { labels } : {}),
      ...(values['cluster-provider'] ? { provider: values['cluster-provider'] } : {}),
      ...(values['cluster-region'] ? { region: values['cluster-region'] } : {}),
      ...(zones && zones.length > 0 ? { zones } : {}),
    },
    logger,
  });
}

function portFlag(flag: string, text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535)
    throw new UsageError(`${flag} must be a port number (0 to 65535), got ${JSON.stringify(text)}`);
  return port;
}

export async function run(values: WebhookFlags, io: CommandIO): Promise<number> {
  const certFile = values['tls-cert-file'];
  const keyFile = values['tls-private-key-file'];
  const port = portFlag('--port', values.port);
  const healthPort = portFlag('--health-port', values['health-port']);

  const logger = createLogger({ level: 'info', stream: io.stderr });
  let inventory: PollingInventory | undefined;
  try {
    inventory = await clusterInventory(values, io, logger);
  } catch (e: unknown) {
    logger.error('cannot load the kubeconfig', { error: e instanceof Error ? e.message : String(e) });
    return 1;
  }

  let overrides: Awaited<ReturnType<typeof overrideSource>> | undefined;
  if (values.override) {
    try {
      overrides = await overrideSource(values, io, logger);
    } catch (e: unknown) {
      if (e instanceof UsageError) throw e;
      logger.error('cannot load the kubeconfig for --override', { error: e instanceof Error ? e.message : String(e) });
      return 1;
    }
  }

  // /readyz asks the server, which is built next and exists before any request arrives.
  const handler: WebhookHandler = new WebhookHandler({
    ...(inventory ? { inventory } : {}),
    ...(overrides ? { overrides } : {}),
    ready: (): boolean => server.ready && (overrides?.ready() ?? true),
    logger,
  });
  const server: WebhookServer = new WebhookServer({
    handler,
    certFile,
    keyFile,
    port,
    host: values['bind-address'],
    reloadIntervalMs: values['cert-reload-interval'],
    logger,
  });
  // Both listeners stop on the command's signal, or when the second cannot start.
  const listening = new AbortController();
  const stop = () => listening.abort();
  if (io.signal.aborted) stop();
  else io.signal.addEventListener('abort', stop, { once: true });
  let stopped: Promise<void>;
  try {
    ({ stopped } = await server.start(listening.signal));
  } catch (e: unknown) {
    if (!(e instanceof WebhookServerError)) throw e;
    logger.error(e.message);
    return 1;
  }
  try {
    const health = await startHealthServer(
      { port: healthPort, host: values['bind-address'], handler },
      listening.signal,
    );
    stopped = Promise.all([stopped, health.stopped]).then(() => undefined);
    logger.info('probes served over plain HTTP', { port: health.address.port, paths: '/healthz, /readyz' });
  } catch (e: unknown) {
    logger.error(`cannot listen on ${values['bind-address']}:${healthPort} for probes (--health-port)`, {
      error: e instanceof Error ? e.message : String(e),
    });
    stop();
    await stopped;
    return 1;
  }
  if (inventory) await inventory.start(listening.signal);
  if (overrides) await overrides.start(listening.signal);
  await stopped;
  logger.info('webhook stopped');
  return 0;
}
