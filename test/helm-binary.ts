// The helm binary the chart tests run (hack/helm/build.sh's: cached after a first build, or $HELM, which the
// script honours), and ways to call it. Asynchronous calls for anything that talks to an apiserver, so the
// test process can keep working (acting on hook Jobs) while helm waits.

import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const CHART = `${REPO}deploy/helm/flotilla`;

export interface HelmResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

let cached: string | undefined;

/** The helm binary's path; builds it on first use on a fresh machine (minutes). */
export function helmPath(): string {
  if (cached) return cached;
  const r = spawnSync('bash', [`${REPO}hack/helm/build.sh`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const path = r.stdout.trim().split('\n').pop();
  if (r.status !== 0 || !path)
    throw new Error(`hack/helm/build.sh failed (exit ${r.status ?? r.signal}); see its output above`);
  cached = path;
  return path;
}

/** `helm ARGS…`, waited for synchronously: for commands that touch no cluster (template, lint). */
export function helmSync(args: readonly string[]): HelmResult {
  const r = spawnSync(helmPath(), args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `helm ARGS…` against a cluster; never rejects on a non-zero exit. `env` is added to this process's. */
export function helm(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<HelmResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(helmPath(), args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The values of the chart's agent mode, with its two required ones. */
export const AGENT_MODE = [
  '--set',
  'agent.enabled=true',
  '--set',
  'agent.clusterName=member2',
  '--set',
  'agent.hubKubeconfigSecret.name=flotilla-hub',
];

/**
 * The command of the agent's container (agent mode) or the controller's (the default install), as `helm
 * template` renders it with default values.
 */
export function chartCommand(kind: 'agent' | 'controller'): string[] {
  const flags =
    kind === 'agent' ? ['--namespace', 'flotilla-agent', ...AGENT_MODE] : ['--namespace', 'flotilla-system'];
  const rendered = helmSync(['template', 'flotilla', CHART, ...flags]);
  if (rendered.status !== 0) throw new Error(`helm template: ${rendered.stderr}`);
  type Deployment = {
    kind?: string;
    metadata?: { name?: string };
    spec?: { template: { spec: { containers: { command?: string[] }[] } } };
  };
  const deployment = parseAllDocuments(rendered.stdout)
    .map((d) => d.toJS() as Deployment | null)
    .find((o) => o?.kind === 'Deployment' && o.metadata?.name === `flotilla-${kind}`);
  return deployment?.spec?.template.spec.containers[0]?.command ?? [];
}

/**
 * The chart's `/override` webhook entry (`webhook.override.enabled`, cluster `clusterName`) as `helm
 * template` renders it, pointed at `url` with `caBundle`: what a test registers with its apiserver.
 */
export function chartOverrideHook(clusterName: string, url: string, caBundle: string): Record<string, unknown> {
  const rendered = helmSync([
    'template',
    'flotilla',
    CHART,
    '--namespace',
    'flotilla-system',
    '--set',
    'webhook.override.enabled=true',
    '--set',
    `webhook.override.clusterName=${clusterName}`,
    '--show-only',
    'templates/webhook/webhookconfigurations.yaml',
  ]);
  if (rendered.status !== 0) throw new Error(`helm template failed: ${rendered.stderr}`);
  type Obj = Record<string, unknown>;
  const config = parseAllDocuments(rendered.stdout)
    .map((d) => d.toJS() as Obj)
    .find((o) => o.kind === 'MutatingWebhookConfiguration');
  const hook = (config?.webhooks as Obj[] | undefined)?.find((w) => w.name === 'override.flotilla.io');
  if (!hook) throw new Error('the chart rendered no override.flotilla.io webhook');
  return { ...hook, clientConfig: { url, caBundle } };
}
