// The controller's plain-HTTP endpoints: /healthz (the process answers), /readyz (caches synced, and
// leading or a standby), /metrics (Prometheus text). GET and HEAD only; no request body is read; slow
// or idle connections are closed.

import type { Server } from 'node:http';
import { http } from '../runtime/node-http.js';
import type { AddressInfo } from 'node:net';

import type { Logger } from '../runtime/log.js';
import type { Registry } from '../runtime/metrics.js';

export interface OpsServerOptions {
  port: number;
  host?: string;
  registry: Registry;
  ready(): { ok: boolean; reason?: string };
}

export async function startOpsServer(
  o: OpsServerOptions,
  signal: AbortSignal,
): Promise<{ server: Server; address: AddressInfo }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (path === '/healthz') return send(200, 'text/plain', 'ok\n');
    if (path === '/readyz') {
      const r = o.ready();
      return send(r.ok ? 200 : 503, 'text/plain', r.ok ? 'ok\n' : `not ready: ${r.reason ?? ''}\n`);
    }
    if (path === '/metrics') return send(200, 'text/plain; version=0.0.4', o.registry.render());
    return send(404, 'text/plain', 'not found\n');
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  server.keepAliveTimeout = 30_000;
  server.maxConnections = 64;
  server.maxHeadersCount = 50;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  signal.addEventListener(
    'abort',
    () => {
      server.close();
      server.closeAllConnections();
    },
    { once: true },
  );
  return { server, address: server.address() as AddressInfo };
}

/** startOpsServer for a command: says where it serves, or why it cannot (false: the command exits 1). */
export async function serveOps(o: OpsServerOptions, signal: AbortSignal, logger: Logger): Promise<boolean> {
  try {
    const { address } = await startOpsServer(o, signal);
    logger.info('serving /healthz, /readyz and /metrics', { port: address.port });
    return true;
  } catch (e: unknown) {
    logger.error('cannot listen for /metrics', { port: o.port, error: e instanceof Error ? e.message : String(e) });
    return false;
  }
}
