// A thin client for one apiserver: at most `concurrency` requests in flight (p-queue), retries of what a
// fresh connection fixes, JSON in and out, Warning headers read. How a request travels is a Transport
// (transport.ts): node:https with the KubeConfig's credentials for real, an in-memory one in unit tests.
//
// Why not client-node's API classes: its generic KubernetesObjectApi re-serializes built-in kinds through
// generated models (fields the model does not know are dropped) and keeps its own discovery cache, and
// each generated call goes through undici with a dispatcher per KubeConfig. Here the body sent is the
// object as rendered, byte for byte, and every request is a single round trip on a warm connection.

import PQueue from 'p-queue';
import type { KubeConfig } from './config.js';

import { ApiError, TransportError } from './errors.js';
import { sleep } from '../runtime/clock.js';
import { httpsTransport, isTransport, type Transport } from './transport.js';

export interface ClientOptions {
  /** Requests in flight at once on this member; more wait their turn in order. */
  concurrency: number;
  /** Deadline for one request (connect, send, whole answer). Default 60 s. */
  timeoutMs?: number;
  /** Largest answer accepted; a bigger one fails the request. Default 64 MiB. */
  maxResponseBytes?: number;
  userAgent?: string;
}

export interface KubeRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Absolute API path (`/api/v1/namespaces`); the query goes in `query`. */
  path: string;
  query?: Readonly<Record<string, string | undefined>>;
  /** Sent as JSON. */
  body?: unknown;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal | undefined;
  /**
   * Sent at once, outside the client's concurrency limit: for small requests whose timing matters more
   * than the limit (the readiness probe, which must not wait behind requests hanging on a dying member).
   */
  unqueued?: boolean;
}

export interface KubeResponse<T = unknown> {
  status: number;
  /** Parsed JSON, or undefined when the answer was empty or not JSON. */
  body: T | undefined;
  /** `Warning` headers (deprecations, unknown fields under fieldValidation=Warn). */
  warnings: string[];
}

/** Transport failures worth one more try on a fresh connection: a keep-alive socket the server closed. */
const RETRY_ERRNO = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);
const MAX_ATTEMPTS = 3;
/** Longest Retry-After honoured on 429/503 before giving up on the request. */
const MAX_RETRY_AFTER_MS = 10_000;

export class KubeClient {
  /** scheme://host:port, for messages. */
  readonly server: string;
  private readonly transport: Transport;
  private readonly queue: PQueue;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly userAgent: string;
  private fenced: AbortSignal | undefined;

  /**
   * `source` is a KubeConfig holding the member's context as its current context (see configForContext),
   * or a Transport (tests).
   */
  constructor(source: KubeConfig | Transport, options: ClientOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new RangeError(`concurrency must be a positive integer, got ${options.concurrency}`);
    }
    // One socket more than the queue lets through: room for an `unqueued` request (the readiness probe).
    this.transport = isTransport(source) ? source : httpsTransport(source, { maxSockets: options.concurrency + 1 });
    this.server = this.transport.server;
    this.queue = new PQueue({ concurrency: options.concurrency });
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxBytes = options.maxResponseBytes ?? 64 * 1024 * 1024;
    this.userAgent = options.userAgent ?? 'flotilla';
  }

  /**
   * Fences the client on `signal` (replacing an earlier fence): when it aborts, every request in flight is
   * abandoned (its stream reset, or its HTTP/1.1 connection destroyed), every queued one fails without
   * being sent, and so does every later one — a Lease holder past its deadline writes nothing more, not
   * even what it had started.
   */
  fence(signal: AbortSignal): void {
    this.fenced = signal;
  }

  /** Resolves with the answer whatever its status; rejects with TransportError when there is none. */
  request<T = unknown>(req: KubeRequest): Promise<KubeResponse<T>> {
    const fence = this.fenced;
    if (fence) req = { ...req, signal: req.signal ? AbortSignal.any([req.signal, fence]) : fence };
    if (req.unqueued) return this.withRetries<T>(req);
    return this.queue.add(() => this.withRetries<T>(req));
  }

  /** Like request(), but a status >= 400 rejects with ApiError carrying the apiserver's message. */
  async requestOk<T = unknown>(req: KubeRequest): Promise<KubeResponse<T>> {
    const res = await this.request<T>(req);
    if (res.status >= 400) throw apiError(res);
    return res;
  }

  /** Closes idle keep-alive connections. Requests still queued or in flight finish first. */
  async close(): Promise<void> {
    await this.queue.onIdle();
    this.transport.close();
  }

  private async withRetries<T>(req: KubeRequest): Promise<KubeResponse<T>> {
    for (let attempt = 1; ; attempt++) {
      // Aborted while queued, or during a retry's wait: not sent at all.
      if (req.signal?.aborted)
        throw new TransportError(
          `${this.server}: ${req.method} ${req.path}: cancelled before it was sent`,
          'ECANCELED',
        );
      let res: KubeResponse<T>;
      try {
        res = await this.send<T>(req);
      } catch (err: unknown) {
        const retriable = err instanceof TransportError && err.errno !== undefined && RETRY_ERRNO.has(err.errno);
        if (retriable && attempt < MAX_ATTEMPTS && !req.signal?.aborted) continue;
        throw err;
      }
      if ((res.status === 429 || res.status === 503) && attempt < MAX_ATTEMPTS && !req.signal?.aborted) {
        const wait = retryAfterMs(res, attempt);
        if (wait <= MAX_RETRY_AFTER_MS) {
          await sleep(wait, req.signal);
          continue;
        }
      }
      return res;
    }
  }

  private async send<T>(req: KubeRequest): Promise<KubeResponse<T>> {
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) search.set(k, v);
    const query = search.toString();
    const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
    const headers: Record<string, string | number> = {
      Accept: req.accept ?? 'application/json',
      'User-Agent': this.userAgent,
    };
    if (body) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = body.length;
    }
    const res = await this.transport.send({
      method: req.method,
      path: query ? `${req.path}?${query}` : req.path,
      headers,
      body,
      signal: req.signal,
      timeoutMs: this.timeoutMs,
      maxBytes: this.maxBytes,
    });
    const text = res.body.toString('utf8');
    let parsed: T | undefined;
    if (text !== '') {
      try {
        parsed = JSON.parse(text) as T;
      } catch {
        parsed = undefined;
      }
    }
    return { status: res.status, body: parsed, warnings: res.warnings.map(warningText) };
  }
}

/**
 * Accept header for a request whose answer is needed for its metadata only (reads and writes alike): the
 * apiserver answers a PartialObjectMetadata, which costs it, the wire and the parser a fraction of the
 * whole object (managedFields included). Plain JSON is the fallback for servers that cannot.
 */
export const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** The Status message of an error answer, as an ApiError. */
export function apiError(res: KubeResponse): ApiError {
  const b = res.body as { kind?: unknown; message?: unknown; reason?: unknown } | undefined;
  const message = typeof b?.message === 'string' && b.message !== '' ? b.message : `HTTP ${res.status}`;
  const reason = typeof b?.reason === 'string' ? b.reason : '';
  return new ApiError(res.status, reason, message);
}

/** `299 - "message"` → `message`. */
function warningText(h: string): string {
  const m = /^\d{3} \S+ "(.*)"/.exec(h);
  return m?.[1] ?? h;
}

function retryAfterMs(res: KubeResponse, attempt: number): number {
  const header = (res.body as { details?: { retryAfterSeconds?: unknown } } | undefined)?.details?.retryAfterSeconds;
  const seconds = typeof header === 'number' ? header : 0;
  return seconds > 0 ? seconds * 1000 : 100 * 2 ** attempt;
}
