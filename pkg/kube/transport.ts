// How a KubeClient's requests reach an apiserver. The client (client.ts) owns what is the same for every
// way of getting there — the in-flight bound, retries, JSON in and out, Warning headers — and a Transport
// carries one request and brings back one answer. `httpsTransport` is the real one; unit tests hand the
// client an in-memory one (test/fake-apiserver.ts), so the delivery core and the controller's reconcilers
// are tested without a server while the integration tests use real apiservers.

import type { Agent, OutgoingHttpHeaders } from 'node:http';
import type { ClientHttp2Stream } from 'node:http2';
import https from 'node:https';
import tls from 'node:tls';
import type { KubeConfig } from './config.js';

import { http } from '../runtime/node-http.js';
import { TransportError, displayServer } from './errors.js';
import { TLS_KEYS, cancel, h2Pool, refused, routeWithin, streamHeaders, type H2Connection, type Route } from './h2.js';
import type { WatchEvent, WatchRequest } from './watch.js';

export interface TransportRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Path and query, e.g. `/api/v1/namespaces?limit=500`. */
  path: string;
  headers: Readonly<Record<string, string | number>>;
  body?: Buffer | undefined;
  signal?: AbortSignal | undefined;
  /** Deadline for the whole exchange. */
  timeoutMs: number;
  /** Largest answer accepted: a bigger one fails with TransportError ETOOBIG. */
  maxBytes: number;
}

export interface TransportResponse {
  status: number;
  /** The raw `Warning` header values. */
  warnings: string[];
  body: Buffer;
}

export interface Transport {
  /** scheme://host:port, for messages (never user info). */
  readonly server: string;
  /** Resolves with the answer whatever its status; rejects with TransportError when there is none. */
  send(req: TransportRequest): Promise<TransportResponse>;
  /** Releases idle connections. */
  close(): void;
  /**
   * Streams one watch, as `Watcher.watch` does (in-memory transports). Absent (the real transport): a
   * Watcher of the same KubeConfig opens its own connection.
   */
  watch?(req: WatchRequest, onEvent: (e: WatchEvent) => void): Promise<void>;
}

/** A Transport rather than a KubeConfig (a KubeClient or Watcher is handed either). */
export function isTransport(v: KubeConfig | Transport): v is Transport {
  return typeof (v as Partial<Transport>).send === 'function';
}

/**
 * The real transport: the KubeConfig (config.ts) supplies the server, the TLS material and the
 * credentials (tokens, exec plugins, basic auth, impersonation, refreshed per request). An https server
 * that speaks HTTP/2 gets each request as a stream on the process's one connection to it (h2.ts); any
 * other (HTTP/1.1 only, plain http, through a proxy) gets them through one keep-alive Agent of at most
 * `maxSockets` connections.
 */
export function httpsTransport(kc: KubeConfig, o: { maxSockets: number }): Transport {
  return new HttpsTransport(kc, o.maxSockets);
}

class HttpsTransport implements Transport {
  readonly server: string;
  private readonly kc: KubeConfig;
  private readonly base: URL;
  private readonly maxSockets: number;
  /** True when the cluster goes through a proxy: client-node's proxy agent is used as it comes. */
  private readonly proxied: boolean;
  private agent: Agent | undefined;
  private h2: H2Connection | undefined;

  constructor(kc: KubeConfig, maxSockets: number) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new TypeError('KubeClient: the KubeConfig has no current cluster');
    this.kc = kc;
    this.base = new URL(cluster.server);
    this.server = displayServer(cluster.server);
    this.proxied = Boolean(cluster.proxyUrl);
    this.maxSockets = maxSockets;
  }

  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
    if (this.h2) h2Pool.release(this.h2);
    this.h2 = undefined;
  }

  async send(req: TransportRequest, again = false): Promise<TransportResponse> {
    const options: https.RequestOptions = { headers: {} };
    try {
      await this.kc.applyToHTTPSOptions(options);
    } catch (err: unknown) {
      // Exec plugins and auth providers fail here; their messages are about the plugin, not secrets.
      const text = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
      throw new TransportError(`${this.server}: credentials: ${text}`, 'EAUTH', { cause: err });
    }
    const url = new URL(req.path, this.base);
    const headers: OutgoingHttpHeaders = { ...(options.headers as OutgoingHttpHeaders), ...req.headers };
    const route = await this.route(options, req);
    if (route !== 'http/1.1') {
      const sent = await this.stream(route, url, headers, options.auth ?? undefined, req);
      // Refused (a GOAWAY raced it): the server did not take it, so it goes once more, on a new connection.
      return sent === 'refused' && !again ? this.send(req, true) : orRefused(sent, this.server, url);
    }
    const agent = this.agentFor(options);
    const lib = url.protocol === 'http:' ? http : https;
    return new Promise<TransportResponse>((resolve, reject) => {
      let settled = false;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
        reject(err instanceof TransportError ? err : transportError(this.server, err));
      };
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
            if (size > req.maxBytes) {
              const message = `${this.server}: ${req.method} ${url.pathname}: answer larger than ${req.maxBytes} bytes`;
              fail(new TransportError(message, 'ETOOBIG'));
              r.destroy();
              return;
            }
            chunks.push(c);
          });
          res.on('end', () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            const warning = res.headers.warning;
            const warnings = Array.isArray(warning) ? warning : warning ? [warning] : [];
            resolve({ status: res.statusCode ?? 0, warnings, body: Buffer.concat(chunks) });
          });
          res.on('error', (err) => fail(err));
        },
      );
      const timer = setTimeout(() => {
        r.destroy(Object.assign(new Error(`no answer within ${req.timeoutMs} ms`), { code: 'ETIMEDOUT' }));
      }, req.timeoutMs);
      const onAbort = () => r.destroy(Object.assign(new Error('cancelled'), { code: 'ECANCELED' }));
      if (req.signal?.aborted) onAbort();
      else req.signal?.addEventListener('abort', onAbort, { once: true });
      r.on('error', fail);
      r.on('close', () => req.signal?.removeEventListener('abort', onAbort));
      r.end(req.body);
    });
  }

  /** HTTP/2 or not: the process's connection to this server and TLS identity, opened when there is none. */
  private async route(options: https.RequestOptions, req: TransportRequest): Promise<Route> {
    if (this.proxied || this.base.protocol !== 'https:') return 'http/1.1';
    this.h2 ??= h2Pool.acquire(this.base, options, () => agentTlsOptions(this.server, options));
    try {
      return await routeWithin(this.h2, req.timeoutMs, req.signal);
    } catch (err: unknown) {
      throw transportError(this.server, err);
    }
  }

  /** One exchange as a stream of `session`; 'refused' when the server turned the stream away unread. */
  private stream(
    session: Exclude<Route, 'http/1.1'>,
    url: URL,
    headers: OutgoingHttpHeaders,
    auth: string | undefined,
    req: TransportRequest,
  ): Promise<TransportResponse | 'refused'> {
    const c = this.h2!;
    return new Promise((resolve, reject) => {
      let settled = false;
      const end = () => {
        settled = true;
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
      };
      const fail = (err: unknown) => {
        if (settled) return;
        end();
        reject(err instanceof TransportError ? err : transportError(this.server, err));
      };
      let stream: ClientHttp2Stream;
      try {
        stream = c.request(
          session,
          streamHeaders(req.method, `${url.pathname}${url.search}`, headers, auth),
          !req.body,
        );
      } catch {
        // The session closed meanwhile (GOAWAY): nothing was sent.
        end();
        resolve('refused');
        return;
      }
      let status = 0;
      let warnings: string[] = [];
      const chunks: Buffer[] = [];
      let size = 0;
      stream.once('response', (h) => {
        status = Number(h[':status'] ?? 0);
        const w = h.warning;
        warnings = Array.isArray(w) ? w : w ? [w] : [];
      });
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (size > req.maxBytes) {
          cancel(stream);
          fail(
            new TransportError(
              `${this.server}: ${req.method} ${url.pathname}: answer larger than ${req.maxBytes} bytes`,
              'ETOOBIG',
            ),
          );
          return;
        }
        chunks.push(c);
      });
      stream.on('end', () => {
        if (settled) return;
        end();
        resolve({ status, warnings, body: Buffer.concat(chunks) });
      });
      // Turned away unread (a GOAWAY raced it): 'refused', for send() to try once more.
      const wasRefused = () => {
        if (settled || status !== 0 || !refused(stream)) return false;
        end();
        resolve('refused');
        return true;
      };
      stream.on('error', (err) => wasRefused() || fail(err));
      stream.on('close', () => {
        if (settled || wasRefused()) return;
        fail(
          Object.assign(new Error(`the stream ended without an answer (HTTP/2 code ${stream.rstCode})`), {
            code: 'ECONNRESET',
          }),
        );
      });
      const timer = setTimeout(() => {
        cancel(stream);
        fail(Object.assign(new Error(`no answer within ${req.timeoutMs} ms`), { code: 'ETIMEDOUT' }));
        c.suspect();
      }, req.timeoutMs);
      const onAbort = () => {
        cancel(stream);
        fail(Object.assign(new Error('cancelled'), { code: 'ECANCELED' }));
      };
      if (req.signal?.aborted) onAbort();
      else req.signal?.addEventListener('abort', onAbort, { once: true });
      if (req.body) stream.end(req.body);
    });
  }

  /** One keep-alive agent per transport, built from the TLS material of the first request. */
  private agentFor(options: https.RequestOptions): Agent | undefined {
    if (this.proxied) return options.agent as Agent | undefined;
    this.agent ??= keepAliveAgent(this.server, this.base.protocol, options, {
      maxSockets: this.maxSockets,
      maxFreeSockets: this.maxSockets,
    });
    return this.agent;
  }
}

/**
 * The one keep-alive Agent of a connection pool to `server` (the transport's, a watcher's): plain for
 * `http:`, else with the TLS material of `options` in one SecureContext (agentTlsOptions).
 */
export function keepAliveAgent(
  server: string,
  protocol: string,
  options: https.RequestOptions,
  limits: Pick<https.AgentOptions, 'maxSockets' | 'maxFreeSockets'> = {},
): Agent {
  const common = { keepAlive: true, scheduling: 'lifo' as const, ...limits };
  return protocol === 'http:'
    ? new http.Agent(common)
    : new https.Agent({ ...common, ...agentTlsOptions(server, options) });
}

/** The TLS material the KubeConfig put on request options (CA, client certificate, verification), for an Agent. */
function tlsOptions(options: https.RequestOptions): https.AgentOptions {
  const out: https.AgentOptions = {};
  for (const k of TLS_KEYS) {
    if (options[k] !== undefined) Object.assign(out, { [k]: options[k] });
  }
  return out;
}

/**
 * The Agent's TLS options: one TLS context made from the kubeconfig's material, which every connection
 * shares, and the verification settings; not the PEM itself. Without the context each connection makes
 * its own from the same PEM (parsed again, and held in native memory while the connection is open, with
 * hundreds open to a fleet of members); with the PEM among the Agent's options, node makes each request's
 * connection-pool name from it (some 4 KiB of string per request). Material that is not a certificate or
 * key throws a TransportError naming `server`.
 */
export function agentTlsOptions(server: string, options: https.RequestOptions): https.AgentOptions {
  const material = tlsOptions(options);
  let secureContext: tls.SecureContext;
  try {
    secureContext = tls.createSecureContext(material);
  } catch (err: unknown) {
    throw transportError(server, err, 'TLS credentials: ');
  }
  const { rejectUnauthorized, servername } = material;
  return {
    secureContext,
    ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
    ...(servername === undefined ? {} : { servername }),
  };
}

/** A stream's answer, or (refused twice) a TransportError saying so. */
function orRefused(sent: TransportResponse | 'refused', server: string, url: URL): TransportResponse {
  if (sent !== 'refused') return sent;
  throw new TransportError(
    `${server}: ${url.pathname}: the server refused the stream twice (it is going away)`,
    'ECONNRESET',
  );
}

/** `err` (a socket's, TLS's) as a TransportError naming `server`, its errno code kept. */
export function transportError(server: string, err: unknown, what = ''): TransportError {
  const errno = (err as { code?: unknown }).code;
  const code = typeof errno === 'string' ? errno : undefined;
  const text = err instanceof Error ? err.message : String(err);
  return new TransportError(`${server}: ${what}${text}`, code, { cause: err });
}
