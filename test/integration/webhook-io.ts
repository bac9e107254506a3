// What the integration tests that run `flotilla webhook` share: a serving certificate for 127.0.0.1 from
// a fresh CA, written where the process reads it; the process started through its CLI entry with its
// stderr kept; and its HTTPS paths asked with that CA, as the apiserver asks them.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createCA, createServingCert, type KeyPair } from '../../pkg/certs/index.js';
import { freePort } from '../envtest/process.js';
import { eventually } from '../eventually.js';
import type { FlotillaProcess } from './controller-io.js';

const MAIN = fileURLToPath(new URL('../../cmd/flotilla/main.js', import.meta.url));

/** A CA and a serving certificate for 127.0.0.1, the pair written to `dir` as tls.crt and tls.key. */
export interface WebhookCerts {
  dir: string;
  caPem: string;
  serving: KeyPair;
  certFile: string;
  keyFile: string;
}

/** A fresh CA named `name` and a serving certificate for 127.0.0.1, in a new temporary directory. */
export function webhookCerts(name: string, commonName = 'flotilla-webhook'): WebhookCerts {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  const ca = createCA(name);
  const serving = createServingCert(ca, { commonName, ipAddresses: ['127.0.0.1'] });
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  writeFileSync(certFile, serving.certPem);
  writeFileSync(keyFile, serving.keyPem, { mode: 0o600 });
  return { dir, caPem: ca.certPem, serving, certFile, keyFile };
}

export interface WebhookProcess extends FlotillaProcess {
  /** The HTTPS port (admission, conversion, /readyz, /metrics). */
  port: number;
  /** The plain-HTTP probe port, or 0 when the process was told to pick one. */
  healthPort: number;
}

/**
 * `flotilla webhook` on 127.0.0.1 with `certs`, reading `kubeconfig`, on a free port (and on `healthPort`
 * for the probes: 0 picks any), with `args` after those; a clean environment (PATH and HOME).
 */
export async function spawnWebhook(options: {
  certs: WebhookCerts;
  kubeconfig: string;
  args?: readonly string[];
  healthPort?: number;
}): Promise<WebhookProcess> {
  const port = await freePort();
  const healthPort = options.healthPort ?? 0;
  const { certs } = options;
  const child = spawn(
    process.execPath,
    [
      MAIN,
      'webhook',
      '--tls-cert-file',
      certs.certFile,
      '--tls-private-key-file',
      certs.keyFile,
      '--port',
      String(port),
      '--health-port',
      String(healthPort),
      '--bind-address',
      '127.0.0.1',
      '--kubeconfig',
      options.kubeconfig,
      ...(options.args ?? []),
    ],
    { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (c: Buffer) => (log += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, port, healthPort, log: () => log, exited };
}

/** Status of GET `path` on a new HTTPS connection to `port`, trusting `caPem` (0: refused, closed or no answer within 5 s). */
export function httpsStatus(port: number, path: string, caPem: string): Promise<number> {
  return new Promise<number>((resolve) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, ca: caPem, agent: false, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Waits (up to `ms`) until the webhook's /readyz answers 200; fails with its log otherwise. */
export async function waitWebhookReady(w: WebhookProcess, caPem: string, ms: number): Promise<void> {
  const status = await eventually(
    () => httpsStatus(w.port, '/readyz', caPem),
    (s) => s === 200,
    ms,
    100,
  );
  assert.equal(status, 200, `the webhook never became ready:\n${w.log()}`);
}
