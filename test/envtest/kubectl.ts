// Running kubectl from tests. Asynchronous on purpose: a webhook kubectl ends up calling may be served by
// the test process itself, which a blocking spawnSync would deadlock.

import { spawn } from 'node:child_process';

export interface KubectlResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `kubectl --kubeconfig F ARGS…`; `input` is written to stdin (objects as JSON); `env` is added to
 * the environment (e.g. KUBECTL_APPLYSET=true). Never rejects on a non-zero exit.
 */
export function kubectl(
  kubeconfig: string,
  args: readonly string[],
  input?: unknown,
  env?: Readonly<Record<string, string>>,
): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(env ? { env: { ...process.env, ...env } } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input === undefined ? '' : typeof input === 'string' ? input : JSON.stringify(input));
  });
}
