// A thin HTTP client for one member apiserver: client-node's KubeConfig supplies the server, the TLS
// material and the credentials (tokens, exec plugins, basic auth, impersonation, refreshed per request);
// node:https sends the requests through one keep-alive Agent, at most `concurrency` at a time.
//
// Why not client-node's API classes: its generic KubernetesObjectApi re-serializes built-in kinds through
// generated models (fields the model does not know are dropped) and keeps its own discovery cache, and
// each generated call goes through undici with a dispatcher per KubeConfig. Here the body sent is the
// object as rendered, byte for byte, and every request is a single round trip on a warm connection.

import http from 'node:http';
import https from 'node:https';
import PQueue from 'p-queue';
import type { KubeConfig } from '@kubernetes/client-node';

import { ApiError, TransportError, displayServer } from './errors.js';

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
  private readonly base: URL;
  private readonly kc: KubeConfig;
  private readonly queue: PQueue;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly userAgent: string;
  private readonly concurrency: number;
  private agent: http.Agent | undefined;
  /** True when the cluster goes through a proxy: client-node's proxy agent is used as it comes. */
  private readonly proxied: boolean;

  /** `kc` must hold the member's context as its current context (see configForContext). */
  constructor(kc: KubeConfig, options: ClientOptions) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new TypeError('KubeClient: the KubeConfig has no current cluster');
    this.kc = kc;
    this.base = new URL(cluster.server);
    this.server = displayServer(cluster.server);
    this.proxied = Boolean(cluster.proxyUrl);
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) throw new RangeError(`concurrency must be a positive integer, got ${options.concurrency}`);
    this.queue = new PQueue({ concurrency: options.concurrency });
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxBytes = options.maxResponseBytes ?? 64 * 1024 * 1024;
    this.userAgent = options.userAgent ?? 'flotilla';
    this.concurrency = options.concurrency;
  }

  /** Resolves with the answer whatever its status; rejects with TransportError when there is none. */
  request<T = unknown>(req: KubeRequest): Promise<KubeResponse<T>> {
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
    this.agent?.destroy();
    this.agent = undefined;
  }

  private async withRetries<T>(req: KubeRequest): Promise<KubeResponse<T>> {
    for (let attempt = 1; ; attempt++) {
      let res: KubeResponse<T>;
      try {
        res = await this.send<T>(req);
      } catch (err: unknown) {
        if (err instanceof TransportError && err.errno !== undefined && RETRY_ERRNO.has(err.errno) && attempt < MAX_ATTEMPTS && !req.signal?.aborted) continue;
        throw err;
      }
      if ((res.status === 429 || res.status === 503) && attempt < MAX_ATTEMPTS && !req.signal?.aborted) {
        const wait = retryAfterMs(res, attempt);
        if (wait <= MAX_RETRY_AFTER_MS) {
          await delay(wait, req.signal);
          continue;
        }
      }
      return res;
    }
  }

  private async send<T>(req: KubeRequest): Promise<KubeResponse<T>> {
    const options: https.RequestOptions = { headers: {} };
    try {
      await this.kc.applyToHTTPSOptions(options);
    } catch (err: unknown) {
      // Exec plugins and auth providers fail here; their messages are about the plugin, not secrets.
      throw new TransportError(`${this.server}: credentials: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`, 'EAUTH', { cause: err });
    }
    const agent = this.agentFor(options);
    const url = new URL(req.path, this.base);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
    const headers: http.OutgoingHttpHeaders = {
      ...(options.headers as http.OutgoingHttpHeaders),
      Accept: req.accept ?? 'application/json',
      'User-Agent': this.userAgent,
    };
    if (body) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = body.length;
    }
    const lib = url.protocol === 'http:' ? http : https;
    return new Promise<KubeResponse<T>>((resolve, reject) => {
      const r = lib.request(
        {
          protocol: url.protocol,
          hostname: url.hostname.replace(/^\[|\]$/g, ''),
          port: url.port,
          path: `${url.pathname}${url.search}`,
          method: req.method,
          headers,
          agent,
          ...(options.auth ? { auth: options.auth } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > this.maxBytes) {
              fail(new TransportError(`${this.server}: ${req.method} ${url.pathname}: answer larger than ${this.maxBytes} bytes`, 'ETOOBIG'));
              r.destroy();
              return;
            }
            chunks.push(c);
          });
          res.on('end', () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: T | undefined;
            if (text !== '') {
              try {
                parsed = JSON.parse(text) as T;
              } catch {
                parsed = undefined;
              }
            }
            const warning = res.headers.warning;
            const warnings = (Array.isArray(warning) ? warning : warning ? [warning] : []).map(warningText);
            resolve({ status: res.statusCode ?? 0, body: parsed, warnings });
          });
          res.on('error', (err) => fail(err));
        },
      );
      let settled = false;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
        reject(err instanceof TransportError ? err : transportError(this.server, req.method, url.pathname, err));
      };
      const timer = setTimeout(() => r.destroy(Object.assign(new Error(`no answer within ${this.timeoutMs} ms`), { code: 'ETIMEDOUT' })), this.timeoutMs);
      const onAbort = () => r.destroy(Object.assign(new Error('cancelled'), { code: 'ECANCELED' }));
      if (req.signal?.aborted) onAbort();
      else req.signal?.addEventListener('abort', onAbort, { once: true });
      r.on('error', fail);
      r.on('close', () => req.signal?.removeEventListener('abort', onAbort));
      r.end(body);
    });
  }

  /** One keep-alive agent per client, built from the TLS material of the first request. */
  private agentFor(options: https.RequestOptions): http.Agent | undefined {
    if (this.proxied) return options.agent as http.Agent | undefined;
    if (this.agent) return this.agent;
    const common = { keepAlive: true, maxSockets: this.concurrency, maxFreeSockets: this.concurrency, scheduling: 'lifo' as const };
    if (this.base.protocol === 'http:') {
      this.agent = new http.Agent(common);
    } else {
      this.agent = new https.Agent({ ...common, ...tlsOptions(options) });
    }
    return this.agent;
  }
}

/**
 * Accept header for a request whose answer is needed for its metadata only (reads and writes alike): the
 * apiserver answers a PartialObjectMetadata, which costs it, the wire and the parser a fraction of the
 * whole object (managedFields included). Plain JSON is the fallback for servers that cannot.
 */
export const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** The TLS material client-node put on request options (CA, client certificate, verification), for an Agent. */
export function tlsOptions(options: https.RequestOptions): https.AgentOptions {
  const out: https.AgentOptions = {};
  for (const k of ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const) {
    if (options[k] !== undefined) Object.assign(out, { [k]: options[k] });
  }
  return out;
}

/** The Status message of an error answer, as an ApiError. */
export function apiError(res: KubeResponse): ApiError {
  const b = res.body as { kind?: unknown; message?: unknown; reason?: unknown } | undefined;
  const message = typeof b?.message === 'string' && b.message !== '' ? b.message : `HTTP ${res.status}`;
  const reason = typeof b?.reason === 'string' ? b.reason : '';
  return new ApiError(res.status, reason, message);
}

function transportError(server: string, method: string, path: string, err: unknown): TransportError {
  const errno = (err as { code?: unknown }).code;
  const code = typeof errno === 'string' ? errno : undefined;
  const text = err instanceof Error ? err.message : String(err);
  return new TransportError(`${server}: ${text}`, code, { cause: err });
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

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
