// `flotilla webhook` for the suite's hub, installed as README's out-of-cluster section says: a serving
// certificate for 127.0.0.1, the webhook on a free port, and the webhook configurations of
// deploy/karmada-api/patches with each clientConfig pointed at it by URL. Karmada's own webhook defaults
// and validates policy.karmada.io objects (permanent-id labels, defaults the suite reads back); Flotilla's
// serves both groups.

import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { parseAllDocuments } from 'yaml';

import { createCA, createServingCert } from '../../pkg/certs/index.js';
import type { ClusterHandle } from '../../test/envtest/index.js';
import { freePort } from '../../test/envtest/process.js';
import { kubectl } from '../../test/envtest/kubectl.js';

const MAIN = fileURLToPath(new URL('../../cmd/flotilla/main.js', import.meta.url));

const CONFIGS = ['validatingwebhookconfiguration-flotilla.yaml', 'mutatingwebhookconfiguration-flotilla.yaml'];

interface WebhookConfig {
  webhooks: Array<{ clientConfig: { service?: { path?: string }; url?: string; caBundle?: string } }>;
}

/** A policy the webhook refuses (a namespaced selector in a ClusterPropagationPolicy is fine; this is not). */
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
export async function startWebhook(hub: ClusterHandle, root: string, dir: string): Promise<ChildProcess> {
  const ca = createCA('flotilla-karmada-e2e');
  const serving = createServingCert(ca, { commonName: 'flotilla-webhook', ipAddresses: ['127.0.0.1'] });
  writeFileSync(join(dir, 'tls.crt'), serving.certPem);
  writeFileSync(join(dir, 'tls.key'), serving.keyPem, { mode: 0o600 });
  const [port, healthPort] = [await freePort(), await freePort()];
  const args = [
    ...['webhook', '--tls-cert-file', join(dir, 'tls.crt'), '--tls-private-key-file', join(dir, 'tls.key')],
    ...['--port', String(port), '--health-port', String(healthPort), '--bind-address', '127.0.0.1'],
    ...['--kubeconfig', hub.kubeconfigPath, '--cluster-list-interval', '2s'],
  ];
  const logPath = join(dir, 'flotilla-webhook.log');
  const webhook = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  webhook.stderr?.pipe(createWriteStream(logPath));
  const caBundle = Buffer.from(ca.certPem).toString('base64');
  const configs = CONFIGS.flatMap((f) =>
    parseAllDocuments(readFileSync(join(root, 'deploy', 'karmada-api', 'patches', f), 'utf8')),
  ).map((d) => d.toJS() as WebhookConfig);
  for (const c of configs)
    for (const w of c.webhooks)
      w.clientConfig = { url: `https://127.0.0.1:${port}${w.clientConfig.service?.path ?? ''}`, caBundle };
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
    if (webhook.exitCode !== null) throw new Error(`flotilla webhook exited ${webhook.exitCode}: see ${logPath}`);
    const r = await kubectl(hub.kubeconfigPath, ['create', '--dry-run=server', '-f', '-'], REFUSED);
    last = r.stderr;
    if (r.status !== 0 && /admission webhook "[^"]+" denied the request/.test(r.stderr)) return webhook;
    await new Promise((res) => setTimeout(res, 500));
  }
  webhook.kill('SIGTERM');
  throw new Error(`the hub never called flotilla webhook: ${last}`);
}
