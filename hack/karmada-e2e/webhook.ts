// `flotilla webhook` for the suite's hub, installed as README's out-of-cluster section says: a serving
// certificate for 127.0.0.1, the webhook on a free port, and the webhook configurations of
// deploy/karmada-api/patches with each clientConfig pointed at it by URL. Karmada's own webhook defaults
// and validates policy.karmada.io objects (permanent-id labels, defaults the suite reads back); Flotilla's
// serves both groups.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { parseAllDocuments } from 'yaml';

import type { ClusterHandle } from '../../test/envtest/index.js';
import { kubectl } from '../../test/envtest/kubectl.js';
import { spawnWebhook, webhookCerts, type WebhookProcess } from '../../test/integration/webhook-io.js';

const CONFIGS = ['validatingwebhookconfiguration-flotilla.yaml', 'mutatingwebhookconfiguration-flotilla.yaml'];

interface WebhookConfig {
  webhooks: Array<{
    clientConfig: { service?: { path?: string }; url?: string; caBundle?: string };
    timeoutSeconds?: number;
  }>;
}

/** A PropagationPolicy the webhook refuses: its selector names another namespace. */
const REFUSED = {
  apiVersion: 'policy.karmada.io/v1alpha1',
  kind: 'PropagationPolicy',
  metadata: { name: 'flotilla-karmada-e2e-probe', namespace: 'default' },
  spec: { resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'elsewhere' }] },
};

/**
 * Starts the webhook (its log in `dir`) and registers it on the hub; resolves once the hub's apiserver
 * calls it (a dry-run of a policy it refuses is refused by it).
 */
export async function startWebhook(hub: ClusterHandle, root: string, dir: string): Promise<WebhookProcess> {
  const certs = webhookCerts('flotilla-karmada-e2e');
  const webhook = await spawnWebhook({
    certs,
    kubeconfig: hub.kubeconfigPath,
    args: ['--cluster-list-interval', '2s'],
  });
  const logPath = join(dir, 'flotilla-webhook.log');
  webhook.child.stderr?.on('data', (c: Buffer) => writeFileSync(logPath, c, { flag: 'a' }));
  const port = webhook.port;
  const caBundle = Buffer.from(certs.caPem).toString('base64');
  const configs = CONFIGS.flatMap((f) =>
    parseAllDocuments(readFileSync(join(root, 'deploy', 'karmada-api', 'patches', f), 'utf8')),
  ).map((d) => d.toJS() as WebhookConfig);
  for (const c of configs)
    for (const w of c.webhooks) {
      w.clientConfig = { url: `https://127.0.0.1:${port}${w.clientConfig.service?.path ?? ''}`, caBundle };
      // The chart's 5 s: a loaded CI machine (the suite's processes, four apiservers) answered some
      // reviews later than that, and the apiserver then refused the suite's policies.
      w.timeoutSeconds = 30;
    }
  const applied = await kubectl(hub.kubeconfigPath, ['apply', '--server-side', '-f', '-'], {
    apiVersion: 'v1',
    kind: 'List',
    items: configs,
  });
  if (applied.status !== 0) throw new Error(`registering the webhook: ${applied.stderr}`);
  // The apiserver picks up webhook configurations asynchronously.
  const deadline = Date.now() + 60_000;
  let last = '';
  while (Date.now() < deadline) {
    if (webhook.child.exitCode !== null) throw new Error(`flotilla webhook exited: ${webhook.log().slice(-2000)}`);
    const r = await kubectl(hub.kubeconfigPath, ['create', '--dry-run=server', '-f', '-'], REFUSED);
    last = r.stderr;
    if (r.status !== 0 && /admission webhook "[^"]+" denied the request/.test(r.stderr)) return webhook;
    await new Promise((res) => setTimeout(res, 500));
  }
  webhook.child.kill('SIGTERM');
  throw new Error(`the hub never called flotilla webhook: ${last}`);
}
