// The webhook's probe listener: plain HTTP on its own port (`--health-port`), answering GET or HEAD
// /healthz (the process answers) and /readyz (the HTTPS server is listening with a certificate, and with
// --override the policies are loaded). A kubelet probe over HTTPS opens a connection and a TLS handshake
// every time, and queued behind the admission port's handshakes and reviews; here it costs one accept
// and a few bytes, and nothing on this port is queued behind a review.
//
// The answers are the handler's own (counted in its metrics as on the HTTPS port). Everything a client
// can make this port hold is small and bounded: no request body is read (a request that declares one is
// answered 413 and its connection closed), headers of at most 8 KiB, sent within 5 s, at most 64
// connections, idle ones closed after 5 s.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { http } from '../runtime/node-http.js';
import type { AddressInfo, Socket } from 'node:net';

import { statusResponse, type HttpResponse, type WebhookHandler } from './handler.js';

/** Headers larger than this get 431. */
export const HEALTH_MAX_HEADER_BYTES = 8 * 1024;
/** Headers, and the whole request, must arrive within this (408 after). */
export const HEALTH_REQUEST_TIMEOUT_MS = 5_000;
/** Idle keep-alive connections are closed after this. */
export const HEALTH_IDLE_TIMEOUT_MS = 5_000;
/** Most connections open at once; more are closed as they arrive. */
export const HEALTH_MAX_CONNECTIONS = 64;
/** How often Node looks for requests past the timeouts above. */
const TIMEOUT_CHECK_MS = 500;

export interface HealthServerOptions {
  port: number;
  /** Default 0.0.0.0. */
  host?: string;
  /** Answers /healthz and /readyz, as on the HTTPS port (and counts them in its metrics). */
  handler: Pick<WebhookHandler, 'handle'>;
}

const PATHS = new Set(['/healthz', '/readyz']);

function answer(req: IncomingMessage, res: ServerResponse, handler: HealthServerOptions['handler']): void {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q >= 0 ? url.slice(0, q) : url;
  const method = req.method ?? 'GET';
  const send = (r: HttpResponse, extra: Record<string, string> = {}) => {
    res.writeHead(r.status, {
      ...r.headers,
      'content-length': Buffer.byteLength(r.body),
      'cache-control': 'no-store',
      ...extra,
    });
    res.end(method === 'HEAD' ? undefined : r.body);
  };
  const declared = req.headers['content-length'];
  if (req.headers['transfer-encoding'] !== undefined || (declared !== undefined && declared !== '0')) {
    // Not read: answered now and the connection closed, so the body cannot hold anything.
    res.once('finish', () => req.socket.destroy());
    return send(statusResponse(413, 'this port takes no request body'), { connection: 'close' });
  }
  if (!PATHS.has(path)) return send(statusResponse(404, 'this port serves GET /healthz and /readyz only'));
  send(handler.handle({ method, url: path, body: '' }));
}

/**
 * Listens on `port` (0 picks a free one); the returned `stopped` settles once the listener has closed
 * after `signal` aborted. Rejects when it cannot listen.
 */
export async function startHealthServer(
  o: HealthServerOptions,
  signal: AbortSignal,
): Promise<{ address: AddressInfo; stopped: Promise<void> }> {
  const server: Server = http.createServer(
    {
      maxHeaderSize: HEALTH_MAX_HEADER_BYTES,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
      requestTimeout: HEALTH_REQUEST_TIMEOUT_MS,
      headersTimeout: HEALTH_REQUEST_TIMEOUT_MS,
      keepAliveTimeout: HEALTH_IDLE_TIMEOUT_MS,
    },
    (req, res) => answer(req, res, o.handler),
  );
  server.maxConnections = HEALTH_MAX_CONNECTIONS;
  // A connection silent this long is closed, whatever it is waiting for (Node's own clientError handler
  // answers malformed requests 400, oversized headers 431 and late ones 408, and closes them).
  server.timeout = HEALTH_REQUEST_TIMEOUT_MS;
  server.on('connection', (socket: Socket) => socket.on('error', () => socket.destroy()));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => undefined);
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      server.close(() => resolve());
      server.closeAllConnections();
    };
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  return { address: server.address() as AddressInfo, stopped };
}
