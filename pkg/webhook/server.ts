// The HTTPS shell around WebhookHandler: TLS 1.2+ only, bodies streamed with a hard limit, and the
// serving certificate re-read from disk so a renewed Secret (kubelet swaps the mounted files) is used for
// new handshakes without a restart. Constructing a server does nothing; `start(signal)` listens and the
// server stops when the signal aborts.

import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';

// pair.js, not the package index: the index loads node-forge, which only certificate creation needs.
import { checkKeyPair } from '../certs/pair.js';
import type { Counter } from '../runtime/metrics.js';
import type { HttpResponse, WebhookHandler } from './handler.js';

export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const SILENT: Logger = { info: () => undefined, error: () => undefined };

export class WebhookServerError extends Error {
  readonly code: 'TLS' | 'LISTEN';
  constructor(code: 'TLS' | 'LISTEN', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebhookServerError';
    this.code = code;
  }
}

export interface WebhookServerOptions {
  handler: WebhookHandler;
  certFile: string;
  keyFile: string;
  port: number;
  /** Default 0.0.0.0. */
  host?: string;
  /** How often the certificate files are re-read; default 10 s (a Secret update reaches a pod in ~1 min). */
  reloadIntervalMs?: number;
  /** How long open connections may finish after stop; default 5 s. */
  shutdownGraceMs?: number;
  logger?: Logger;
}

const IDLE_CONNECTION_TIMEOUT_MS = 120_000;

/** Bodies beyond the limit are read and dropped up to this size (so the client sees the 413), then cut. */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

interface KeyMaterial {
  cert: Buffer;
  key: Buffer;
}

export class WebhookServer {
  private server: Server | undefined;
  private current: KeyMaterial | undefined;
  private stopping = false;
  private reloadFailures: Counter | undefined;

  constructor(private readonly opts: WebhookServerOptions) {}

  /** True while listening with a certificate and not stopping; /readyz reports it. */
  get ready(): boolean {
    return this.server?.listening === true && this.current !== undefined && !this.stopping;
  }

  /**
   * Loads the certificate, listens, and resolves with the bound address. The returned `stopped` promise
   * settles once the server has closed after `signal` aborted.
   */
  async start(signal: AbortSignal): Promise<{ address: AddressInfo; stopped: Promise<void> }> {
    const log = this.opts.logger ?? SILENT;
    const material = await this.load();
    if (material instanceof Error) throw new WebhookServerError('TLS', `cannot load the serving certificate: ${material.message}`, { cause: material });
    this.current = material;
    this.reloadFailures ??= this.opts.handler.registry.counter('flotilla_webhook_certificate_reload_failures_total', 'Serving certificate reloads refused because the files on disk are not a usable pair.');
    this.reloadFailures.inc({}, 0);

    const server = createServer({ cert: material.cert, key: material.key, minVersion: 'TLSv1.2' }, (req, res) => this.onRequest(req, res));
    server.requestTimeout = 30_000;
    server.headersTimeout = 10_000;
    // Keep idle connections longer than clients do (Go's transport: 90 s), so the apiserver reuses them
    // rather than paying a TLS handshake whenever its load rises, and never sends on one we just closed.
    server.keepAliveTimeout = IDLE_CONNECTION_TIMEOUT_MS;
    server.on('clientError', (_err, socket) => socket.destroy());
    server.on('tlsClientError', () => undefined);
    this.server = server;

    await new Promise<void>((resolve, reject) => {
      const onError = (e: Error) => reject(new WebhookServerError('LISTEN', `cannot listen on ${this.opts.host ?? '0.0.0.0'}:${this.opts.port}: ${e.message}`, { cause: e }));
      server.once('error', onError);
      server.listen(this.opts.port, this.opts.host ?? '0.0.0.0', () => {
        server.off('error', onError);
        resolve();
      });
    });
    server.on('error', (e) => log.error('webhook server error', { error: e.message }));

    const reload = setInterval(() => void this.reload(log), this.opts.reloadIntervalMs ?? 10_000);
    reload.unref();

    const stopped = new Promise<void>((resolve) => {
      const stop = () => {
        this.stopping = true;
        clearInterval(reload);
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), this.opts.shutdownGraceMs ?? 5_000).unref();
      };
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
    const address = server.address() as AddressInfo;
    log.info('webhook listening', { address: address.address, port: address.port });
    return { address, stopped };
  }

  /** Reads both files and checks they form a usable pair; an Error describes why not. */
  private async load(): Promise<KeyMaterial | Error> {
    try {
      const [cert, key] = await Promise.all([readFile(this.opts.certFile), readFile(this.opts.keyFile)]);
      // OpenSSL alone accepts a key of another type than the certificate's (RSA certificate, EC key).
      checkKeyPair(cert, key, { cert: `the certificate ${this.opts.certFile}`, key: `the private key ${this.opts.keyFile}` });
      createSecureContext({ cert, key });
      return { cert, key };
    } catch (e: unknown) {
      return e instanceof Error ? e : new Error(String(e));
    }
  }

  /** Swaps in changed files; a half-written or mismatched pair is skipped and retried on the next tick. */
  private async reload(log: Logger): Promise<void> {
    const server = this.server;
    if (!server || this.stopping) return;
    const next = await this.load();
    if (next instanceof Error) {
      this.reloadFailures?.inc();
      log.error('serving certificate not reloaded; keeping the current one', { error: next.message });
      return;
    }
    if (this.current && next.cert.equals(this.current.cert) && next.key.equals(this.current.key)) return;
    server.setSecureContext({ cert: next.cert, key: next.key, minVersion: 'TLSv1.2' });
    this.current = next;
    log.info('serving certificate reloaded');
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const handler = this.opts.handler;
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    const limit = handler.bodyLimit;
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > DRAIN_LIMIT_BYTES) {
      res.setHeader('connection', 'close');
      send(res, handler.tooLarge(url));
      res.on('finish', () => req.destroy());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else if (size > DRAIN_LIMIT_BYTES) req.destroy();
    });
    req.on('error', () => undefined);
    req.on('end', () => {
      const response = size > limit ? handler.tooLarge(url) : handler.handle({ method, url, body: Buffer.concat(chunks, size) });
      send(res, response);
    });
  }
}

function send(res: ServerResponse, r: HttpResponse): void {
  try {
    res.writeHead(r.status, { ...r.headers, 'content-length': Buffer.byteLength(r.body) });
    res.end(r.body);
  } catch {
    res.destroy();
  }
}
