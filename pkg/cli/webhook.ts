// `flotilla webhook`: the admission and conversion webhook server (pkg/webhook), configured from flags.



import { PollingInventory, WebhookHandler, WebhookServer, WebhookServerError, type ClusterInfo, type Logger } from '../webhook/index.js';
import { describeKubeError, loadKubeConfig } from './certs.js';
import { parseFlags, UsageError, type Command, type CommandIO } from './command.js';

const usage = `Serve the admission and conversion webhooks over HTTPS (TLS 1.2 or later).

Usage:
  flotilla webhook --tls-cert-file FILE --tls-private-key-file FILE [--port 8443] [--bind-address 0.0.0.0]
                   [--cert-reload-interval 10s] [--kubeconfig FILE] [--cluster-list-interval 30s]

Endpoints: POST /validate, /mutate (AdmissionReview admission.k8s.io/v1 and v1beta1), POST /convert
(ConversionReview apiextensions.k8s.io/v1 and v1beta1), GET /healthz, /readyz, /metrics (Prometheus).

The certificate files are re-read every --cert-reload-interval; a renewed certificate is used for new
connections without a restart. With --kubeconfig, $KUBECONFIG or a pod service account, the webhook lists
Cluster objects every --cluster-list-interval to warn about rules naming clusters that do not exist.
Logs are JSON lines on stderr. Runs until SIGINT or SIGTERM.
Exit status: 0 stopped by a signal; 1 could not start; 2 usage.`;

/** Parses `500ms`, `10s`, `2m` or a bare number of seconds. */
export function parseDuration(flag: string, value: string | undefined, fallbackMs: number): number {
  if (value === undefined) return fallbackMs;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
  if (!m) throw new UsageError(`${flag} must be a duration like 500ms, 10s or 2m, got ${JSON.stringify(value)}`);
  const n = Number(m[1]);
  const ms = m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
  if (ms <= 0) throw new UsageError(`${flag} must be positive`);
  return ms;
}

function jsonLogger(stream: NodeJS.WritableStream): Logger {
  const write = (level: string, msg: string, fields?: Record<string, unknown>) => {
    stream.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
  };
  return { info: (m, f) => write('info', m, f), error: (m, f) => write('error', m, f) };
}

async function run(args: string[], io: CommandIO): Promise<number> {
  const values = parseFlags(args, {
        'tls-cert-file': { type: 'string' },
        'tls-private-key-file': { type: 'string' },
        port: { type: 'string', default: '8443' },
        'bind-address': { type: 'string', default: '0.0.0.0' },
        'cert-reload-interval': { type: 'string' },
        kubeconfig: { type: 'string' },
        'cluster-list-interval': { type: 'string' },
      });
  if (values.help) {
    io.stdout.write(`${usage}\n`);
    return 0;
  }
  const certFile = values['tls-cert-file'];
  const keyFile = values['tls-private-key-file'];
  if (!certFile || !keyFile) throw new UsageError('--tls-cert-file and --tls-private-key-file are required');
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number, got ${JSON.stringify(values.port)}`);
  const reloadIntervalMs = parseDuration('--cert-reload-interval', values['cert-reload-interval'], 10_000);
  const listIntervalMs = parseDuration('--cluster-list-interval', values['cluster-list-interval'], 30_000);

  const logger = jsonLogger(io.stderr);
  let inventory: PollingInventory | undefined;
  let kubeconfig;
  try {
    kubeconfig = await loadKubeConfig(values.kubeconfig, io.env, { homeDefault: false });
  } catch (e: unknown) {
    logger.error('cannot load the kubeconfig', { error: e instanceof Error ? e.message : String(e) });
    return 1;
  }
  if (kubeconfig) {
    const { CustomObjectsApi } = await import('@kubernetes/client-node');
    const api = kubeconfig.makeApiClient(CustomObjectsApi);
    inventory = new PollingInventory({
      intervalMs: listIntervalMs,
      logger,
      list: async () => {
        try {
          const list = (await api.listClusterCustomObject({ group: 'cluster.flotilla.io', version: 'v1alpha1', plural: 'clusters' })) as { items?: ClusterInfo[] };
          return list.items ?? [];
        } catch (e: unknown) {
          throw new Error(describeKubeError(e), { cause: e });
        }
      },
    });
  }

  // /readyz asks the server, which is built next and exists before any request arrives.
  const handler: WebhookHandler = new WebhookHandler({ ...(inventory ? { inventory } : {}), ready: (): boolean => server.ready });
  const server: WebhookServer = new WebhookServer({ handler, certFile, keyFile, port, host: values['bind-address'], reloadIntervalMs, logger });
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

export const command: Command = {
  name: 'webhook',
  summary: 'Serve the admission (validate, mutate) and conversion webhooks over HTTPS',
  usage,
  run,
};
