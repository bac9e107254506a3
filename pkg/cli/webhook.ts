// `flotilla webhook`: the admission and conversion webhook server (pkg/webhook), configured from flags.
// Its flags and help are in commands.ts.

import {
  PollingInventory,
  WebhookHandler,
  WebhookServer,
  WebhookServerError,
  type ClusterInfo,
  type Logger,
} from '../webhook/index.js';
import { createLogger } from '../runtime/log.js';
import { UsageError, type CommandIO } from './command.js';
import type { WebhookFlags } from './commands.js';
import { loadKubeConfigFor } from './kubeflags.js';

/**
 * The Cluster list for warnings, when a kubeconfig applies (--kubeconfig, $KUBECONFIG or a pod's service
 * account; not ~/.kube/config, so a webhook started on a laptop does not poll whatever cluster is current).
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
  const [{ CustomObjectsApi }, { describeKubeError }] = await Promise.all([
    import('@kubernetes/client-node'),
    import('../kube/client-errors.js'),
  ]);
  const api = kubeconfig.makeApiClient(CustomObjectsApi);
  return new PollingInventory({
    intervalMs: values['cluster-list-interval'],
    logger,
    list: async () => {
      try {
        const list = (await api.listClusterCustomObject({
          group: 'cluster.flotilla.io',
          version: 'v1alpha1',
          plural: 'clusters',
        })) as { items?: ClusterInfo[] };
        return list.items ?? [];
      } catch (e: unknown) {
        throw new Error(describeKubeError(e), { cause: e });
      }
    },
  });
}

export async function run(values: WebhookFlags, io: CommandIO): Promise<number> {
  const certFile = values['tls-cert-file'];
  const keyFile = values['tls-private-key-file'];
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535)
    throw new UsageError(`--port must be a port number (0 to 65535), got ${JSON.stringify(values.port)}`);

  const logger = createLogger({ level: 'info', stream: io.stderr });
  let inventory: PollingInventory | undefined;
  try {
    inventory = await clusterInventory(values, io, logger);
  } catch (e: unknown) {
    logger.error('cannot load the kubeconfig', { error: e instanceof Error ? e.message : String(e) });
    return 1;
  }

  // /readyz asks the server, which is built next and exists before any request arrives.
  const handler: WebhookHandler = new WebhookHandler({
    ...(inventory ? { inventory } : {}),
    ready: (): boolean => server.ready,
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
  let stopped: Promise<void>;
  try {
    ({ stopped } = await server.start(io.signal));
  } catch (e: unknown) {
    if (!(e instanceof WebhookServerError)) throw e;
    logger.error(e.message);
    return 1;
  }
  if (inventory) await inventory.start(io.signal);
  await stopped;
  logger.info('webhook stopped');
  return 0;
}
