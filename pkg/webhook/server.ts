// The HTTPS shell around WebhookHandler: TLS 1.2+ only, bodies streamed with a hard limit, and the
// serving certificate re-read from disk so a renewed Secret (kubelet swaps the mounted files) is used for
// new handshakes without a restart. Constructing a server does nothing; `start(signal)` listens and the
// server stops when the signal aborts.
//
// Everything a client can make the server hold is bounded (README.md lists the figures): connections,
// header size, the time to send a request and to read its answer, and the bytes held for requests in
// flight, bodies being received and answers not yet written, which share one ceiling. A request that
// would pass the ceiling is answered 503 with Retry-After at once and its body is read and dropped.
// Malformed HTTP, oversized headers and plain HTTP sent to the TLS port get a 4xx before the connection
// closes, after any answers already due on it.

import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createSecureContext } from 'node:tls';

// pair.js, not the package index: the index loads node-forge, which only certificate creation needs.
import { checkKeyPair } from '../certs/pair.js';
import type { Logger } from '../runtime/log.js';
import type { Counter } from '../runtime/metrics.js';
import { InFlightBytes } from './in-flight.js';
import { endWith, LINGER_MS, rawResponse } from './raw-answer.js';
import { Receipts } from './receipts.js';
import { SendQueues, type SendQueueReader } from './unacked.js';
import { statusResponse, type HttpResponse, type WebhookHandler } from './handler.js';
import { WorkQueue } from './work-queue.js';

export type { Logger } from '../runtime/log.js';

const SILENT: Logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined };

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
  /** Ceiling on the bytes held for requests in flight (bodies being read, answers being written); default 8 MiB. */
  maxInFlightBytes?: number;
  /** The kernel's send queues (tests give a fake). */
  sendQueues?: SendQueueReader;
  /** How long an answer may take to be written out (read by the client) before its connection is closed; default 10 s. */
  writeTimeoutMs?: number;
  /** Most connections open at once; more are closed as they arrive. Default 1,024. */
  maxConnections?: number;
  /** A request's headers must arrive within this; default 10 s (tests make it short). */
  headersTimeoutMs?: number;
  /** The whole request must arrive within this; default 30 s. */
  requestTimeoutMs?: number;
  logger?: Logger;
}

/**
 * Idle connections are kept a little longer than the apiserver keeps its own (Go's transport: 90 s), so
 * the apiserver closes first and never sends on a connection we just closed; see start().
 */
const IDLE_CONNECTION_TIMEOUT_MS = 95_000;
/** A request's headers must arrive within this, and the whole request within REQUEST_TIMEOUT_MS (408 after). */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
/**
 * How often Node looks for connections past those two timeouts: they fire at most this late. Node's
 * default, 30 s, made a 10 s header timeout fire at 10 to 40 s.
 */
const TIMEOUT_CHECK_MS = 500;
/** From a new connection's first byte to a finished TLS handshake. */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Node's default, stated: larger request headers get 431. */
export const MAX_HEADER_BYTES = 16 * 1024;
/**
 * The apiserver gives up on a webhook after at most 30 s (10 s by default), so an answer not read by then
 * is never read: its connection is closed and its memory freed.
 */
const WRITE_TIMEOUT_MS = 10_000;
/**
 * Bytes held for requests in flight: two of the largest reviews the apiserver sends (3 MiB) at once, or one
 * with its answer. Each counted byte costs about three resident (the body or answer, its string, its
 * encrypted copy) and is freed only by the garbage collector: under bench:webhook's never-reading clients
 * with --override and the chart's heap flags, 16 MiB peaked at 193-206 MiB resident, past 80% of the
 * 256 MiB limit; 8 MiB at 160-176 MiB. 64 MiB reached 434 MiB.
 */
const MAX_IN_FLIGHT_BYTES = 8 * 1024 * 1024;
const MAX_CONNECTIONS = 1024;
/**
 * An answer this large may sit whole in the kernel's send buffer after 'finish' (loopback buffers reach
 * megabytes), so 'finish' says nothing about the client taking it: its bytes stay counted until the
 * kernel's send queue for the connection is empty, and the connection is closed when it is not empty by
 * the write timeout (receipts.ts). Smaller answers fit in the receive window a client's kernel opens
 * (64 KiB on Linux) and are acknowledged as they arrive, read or not: they are released at 'finish'.
 */
const LARGE_ANSWER_BYTES = 64 * 1024;
const RETRY_AFTER_SECONDS = 1;

/** Bodies beyond the limit are read and dropped up to this size (so the client sees the 413), then cut. */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

const PLAIN_HTTP_ANSWER = 'Client sent an HTTP request to an HTTPS server.\n';

interface KeyMaterial {
  cert: Buffer;
  key: Buffer;
}

/** The answers a connection still owes, by request, in order: a connection-level error is written after them. */
type Owed = Map<ServerResponse, IncomingMessage>;

export class WebhookServer {
  private server: Server | undefined;
  private current: KeyMaterial | undefined;
  private stopping = false;
  private reloadFailures: Counter | undefined;
  private readonly inFlight: InFlightBytes;
  private readonly owed = new WeakMap<Duplex, Owed>();
  /** Connections already answered with a connection-level error (a broken parser reports again and again). */
  private readonly failed = new WeakSet<Duplex>();
  /** Connections whose large answer the client has not acknowledged yet. */
  private readonly receipts: Receipts;
  /** Reviews waiting to be judged, one per turn of the event loop (work-queue.ts). */
  private readonly work = new WorkQueue<Duplex>();

  constructor(private readonly opts: WebhookServerOptions) {
    this.inFlight = new InFlightBytes(opts.maxInFlightBytes ?? MAX_IN_FLIGHT_BYTES);
    this.receipts = new Receipts(opts.sendQueues ?? new SendQueues());
  }

  /** Connections whose large answer the client has not acknowledged yet. */
  get awaitingReceipt(): number {
    return this.receipts.size;
  }

  /** True while listening with a certificate and not stopping; /readyz reports it. */
  get ready(): boolean {
    return this.server?.listening === true && this.current !== undefined && !this.stopping;
  }

  /** Bytes now held for requests in flight (bodies being read, answers not yet written). */
  get inFlightBytes(): number {
    return this.inFlight.used;
  }

  /**
   * Loads the certificate, listens, and resolves with the bound address. The returned `stopped` promise
   * settles once the server has closed after `signal` aborted.
   */
  async start(signal: AbortSignal): Promise<{ address: AddressInfo; stopped: Promise<void> }> {
    const log = this.opts.logger ?? SILENT;
    const material = await this.load();
    if (material instanceof Error)
      throw new WebhookServerError('TLS', `cannot load the serving certificate: ${material.message}`, {
        cause: material,
      });
    this.current = material;
    this.reloadFailures ??= this.opts.handler.registry.counter(
      'flotilla_webhook_certificate_reload_failures_total',
      'Serving certificate reloads refused because the files on disk are not a usable pair.',
    );
    this.reloadFailures.inc({}, 0);

    const server = createServer(
      {
        cert: material.cert,
        key: material.key,
        minVersion: 'TLSv1.2',
        handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
        maxHeaderSize: MAX_HEADER_BYTES,
        connectionsCheckingInterval: TIMEOUT_CHECK_MS,
      },
      (req, res) => this.onRequest(req, res),
    );
    server.requestTimeout = this.requestTimeoutMs;
    server.headersTimeout = this.opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
    // Keep idle connections a little longer than the apiserver does (Go's transport: 90 s), so it reuses
    // them rather than paying a TLS handshake whenever its load rises, and never sends on one we just closed.
    server.keepAliveTimeout = IDLE_CONNECTION_TIMEOUT_MS;
    server.maxConnections = this.opts.maxConnections ?? MAX_CONNECTIONS;
    server.on('clientError', (err: NodeJS.ErrnoException, socket) => this.onClientError(err, socket));
    server.on('tlsClientError', () => undefined);
    // Look at each connection's first byte before TLS does: plain HTTP gets a readable 400 instead of a
    // TLS alert. The TLS server's own connection listener is called with the byte put back.
    const tlsListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => this.onConnection(server, socket, tlsListeners));
    this.server = server;

    await new Promise<void>((resolve, reject) => {
      const onError = (e: Error) =>
        reject(
          new WebhookServerError(
            'LISTEN',
            `cannot listen on ${this.opts.host ?? '0.0.0.0'}:${this.opts.port}: ${e.message}`,
            { cause: e },
          ),
        );
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
      checkKeyPair(cert, key, {
        cert: `the certificate ${this.opts.certFile}`,
        key: `the private key ${this.opts.keyFile}`,
      });
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

  /**
   * A TLS connection starts with a handshake record (0x16); an HTTP request with a method name, in capital
   * letters. The latter gets Go's answer, in plain text, and is closed; anything else is TLS's to judge.
   */
  private onConnection(server: Server, socket: Socket, tlsListeners: ReadonlyArray<(socket: Socket) => void>): void {
    socket.on('error', () => socket.destroy());
    socket.setTimeout(HANDSHAKE_TIMEOUT_MS, () => socket.destroy());
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      socket.setTimeout(0);
      const first = chunk[0] ?? 0;
      if (first >= 0x41 && first <= 0x5a) {
        endWith(socket, rawResponse(400, 'text/plain; charset=utf-8', PLAIN_HTTP_ANSWER));
        return;
      }
      socket.unshift(chunk);
      for (const listener of tlsListeners) listener.call(server, socket);
    });
  }

  /**
   * Node's HTTP parser failed on a connection (garbage, oversized headers, a request not sent in time).
   * Answers owed for requests that arrived whole before the bad bytes are written first; then the error,
   * as a metav1.Status, and the connection is closed.
   */
  private onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    if (this.failed.has(socket)) return;
    this.failed.add(socket);
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const message =
      status === 431
        ? `request headers are larger than ${MAX_HEADER_BYTES} bytes`
        : status === 408
          ? 'the request was not received in time'
          : `malformed HTTP request (${err.code ?? err.message})`;
    const answer = statusResponse(status, message);
    const write = () =>
      endWith(socket, rawResponse(status, answer.headers['content-type'] ?? 'application/json', answer.body));
    // Answers for whole requests are written in order by Node; one for a request cut off by the error
    // never will be, and is not waited for.
    const due = [...(this.owed.get(socket) ?? new Map<ServerResponse, IncomingMessage>())]
      .filter(([, req]) => req.complete)
      .map(([res]) => res);
    if (due.length === 0) {
      write();
      return;
    }
    let left = due.length;
    for (const res of due) {
      res.once('close', () => {
        if (--left === 0) write();
      });
    }
    setTimeout(() => socket.destroy(), (this.opts.writeTimeoutMs ?? WRITE_TIMEOUT_MS) + LINGER_MS).unref();
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const handler = this.opts.handler;
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    // Where the kernel's queues cannot be read, a client that sends its next request has read the last answer.
    this.receipts.nextRequest(req.socket);
    this.owe(req, res);
    const limit = handler.bodyLimit;
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > DRAIN_LIMIT_BYTES) {
      res.setHeader('connection', 'close');
      this.send(res, handler.tooLarge(url));
      res.on('finish', () => req.destroy());
      return;
    }
    // The body is held as it arrives, each chunk counted against the in-flight ceiling; whatever is held
    // goes back when the exchange ends, however it ends.
    const chunks: Buffer[] = [];
    let size = 0;
    let held = 0;
    let refused = false;
    const drop = () => {
      chunks.length = 0;
      this.inFlight.give(held);
      held = 0;
    };
    res.once('close', drop);
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > DRAIN_LIMIT_BYTES) req.destroy();
      if (refused || size > limit) {
        drop();
        return;
      }
      if (!this.inFlight.take(chunk.length)) {
        // Answered now; the rest of the body is read and dropped so the connection stays usable.
        refused = true;
        drop();
        this.send(res, handler.overloaded(url, this.inFlight.limit, RETRY_AFTER_SECONDS));
        return;
      }
      held += chunk.length;
      chunks.push(chunk);
    });
    req.on('error', () => undefined);
    req.on('end', () => {
      if (refused) return;
      const contentType = req.headers['content-type'];
      const respond = () => {
        const response =
          size > limit
            ? handler.tooLarge(url)
            : handler.handle({
                method,
                url,
                body: Buffer.concat(chunks, size),
                ...(contentType === undefined ? {} : { contentType }),
              });
        drop();
        this.send(res, response);
      };
      // Probes, metrics and refusals are answered at once; reviews wait their turn, one per turn of the
      // event loop, so those never wait behind more than one review. A review still waiting when the
      // apiserver has given up on it (the request timeout) is not judged.
      if (method === 'GET' || method === 'HEAD' || size > limit) return respond();
      const queuedAt = Date.now();
      const queued = this.work.push(
        req.socket,
        () => {
          if (res.writableEnded || req.socket.destroyed) return drop();
          if (Date.now() - queuedAt < this.requestTimeoutMs) return respond();
          drop();
          this.send(res, handler.overloaded(url, this.inFlight.limit, RETRY_AFTER_SECONDS));
        },
        size,
      );
      if (!queued) {
        drop();
        this.send(res, handler.overloaded(url, this.inFlight.limit, RETRY_AFTER_SECONDS));
      }
    });
  }

  private get requestTimeoutMs(): number {
    return this.opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  }

  /** Notes that `socket` owes an answer to `req` until `res` closes. */
  private owe(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    let owed = this.owed.get(socket);
    if (owed === undefined) {
      owed = new Map();
      this.owed.set(socket, owed);
    }
    owed.set(res, req);
    res.once('close', () => owed.delete(res));
  }

  /**
   * Writes an answer, its bytes held against the in-flight ceiling until it is written out or its
   * connection is gone (a 503 takes its place when they do not fit). An answer not written out within
   * the write timeout, because the client does not read, closes its connection.
   */
  private send(res: ServerResponse, r: HttpResponse): void {
    let answer = r;
    let body = Buffer.from(answer.body);
    let held = 0;
    if (this.inFlight.take(body.length)) {
      held = body.length;
    } else {
      // The route's smaller answer if it has one (/override admits unmodified) and it fits; else a 503.
      const smaller = answer.smaller?.(this.inFlight.limit);
      const smallerBody = smaller === undefined ? undefined : Buffer.from(smaller.body);
      if (smaller !== undefined && smallerBody !== undefined && this.inFlight.take(smallerBody.length)) {
        answer = smaller;
        body = smallerBody;
        held = body.length;
      } else {
        answer = this.opts.handler.overloaded(res.req.url ?? '/', this.inFlight.limit, RETRY_AFTER_SECONDS);
        body = Buffer.from(answer.body);
      }
    }
    const release = () => {
      this.inFlight.give(held);
      held = 0;
    };
    const writeTimeout = this.opts.writeTimeoutMs ?? WRITE_TIMEOUT_MS;
    const deadline = Date.now() + writeTimeout;
    const timer = setTimeout(() => res.destroy(), writeTimeout);
    timer.unref();
    let watching = false;
    res.once('close', () => {
      clearTimeout(timer);
      if (!watching) release();
    });
    // Taken now: Node detaches the socket from a keep-alive response before 'finish'.
    const socket = res.socket;
    res.once('finish', () => {
      clearTimeout(timer);
      if (body.length < LARGE_ANSWER_BYTES || !socket || socket.destroyed) return release();
      watching = true;
      this.receipts.watch(socket, release, deadline);
    });
    try {
      // Shedding load sheds the connection too: a client told to come back in a second opens a new one.
      const close = answer.status === 503 ? { connection: 'close' } : {};
      res.writeHead(answer.status, { ...answer.headers, ...close, 'content-length': body.length });
      res.end(body);
    } catch {
      res.destroy();
    }
  }
}
