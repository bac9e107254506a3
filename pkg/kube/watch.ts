// Streaming watches for one cluster: `GET …?watch=1` read as newline-delimited JSON events. To a server
// that speaks HTTP/2, each watch is a stream on the process's one connection to it (h2.ts), beside the
// requests; otherwise on a keep-alive agent of its own (a watch holds its connection for minutes, so it
// must not take one of the request client's bounded sockets). Credentials and TLS come from the
// KubeConfig per connection, as in client.ts. A watch ends when the server ends it (timeoutSeconds), when
// no byte arrives for `idleTimeoutMs` (a dead link; over HTTP/2 the connection must then answer a PING),
// or when the signal aborts; the informer decides what comes next.
// Handed a Transport instead of a KubeConfig (unit tests), the Transport streams the watches.

import type { Agent, OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import type { KubeConfig } from './config.js';

import { cancel, h2Pool, routeWithin, streamHeaders, type H2Connection } from './h2.js';
import { agentTlsOptions, isTransport, keepAliveAgent, transportError, type Transport } from './transport.js';
import { http } from '../runtime/node-http.js';
import { ApiError, TransportError, displayServer } from './errors.js';
import { isObject, type JsonObject } from './objects.js';

export interface WatchEvent {
  /** ADDED, MODIFIED, DELETED, BOOKMARK or ERROR. */
  type: string;
  object: JsonObject;
}

export interface WatchRequest {
  /** Collection path, e.g. `/apis/apps/v1/deployments`. */
  path: string;
  query: Readonly<Record<string, string | undefined>>;
  /** No byte for this long ends the watch with a TransportError (ETIMEDOUT). */
  idleTimeoutMs: number;
  signal: AbortSignal;
}

/** Longest line accepted (one object); a bigger one ends the watch. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

export class Watcher {
  readonly server: string;
  private readonly kc: KubeConfig | undefined;
  private readonly transport: Transport | undefined;
  private readonly base: URL;
  private readonly userAgent: string;
  private agent: Agent | undefined;
  private h2: H2Connection | undefined;

  /** A KubeConfig must hold the cluster's context as its current context. */
  constructor(source: KubeConfig | Transport, options: { userAgent?: string } = {}) {
    this.userAgent = options.userAgent ?? 'flotilla';
    if (isTransport(source)) {
      this.transport = source;
      this.server = source.server;
      this.base = new URL(source.server);
      return;
    }
    const cluster = source.getCurrentCluster();
    if (!cluster) throw new TypeError('Watcher: the KubeConfig has no current cluster');
    this.kc = source;
    this.base = new URL(cluster.server);
    this.server = displayServer(cluster.server);
  }

  /**
   * Streams one watch, calling `onEvent` for each event in order. Resolves when the server ends the
   * stream; rejects with ApiError when it answers with an error status, with TransportError when the
   * connection fails or goes idle, and with what `onEvent` throws (the stream is then closed).
   */
  async watch(req: WatchRequest, onEvent: (e: WatchEvent) => void): Promise<void> {
    if (this.transport) {
      if (!this.transport.watch)
        throw new TransportError(`${this.server}: this transport streams no watches`, 'EPROTO');
      return this.transport.watch(req, onEvent);
    }
    const kc = this.kc!;
    const options: https.RequestOptions = { headers: {} };
    try {
      await kc.applyToHTTPSOptions(options);
    } catch (err: unknown) {
      throw new TransportError(
        `${this.server}: credentials: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
        'EAUTH',
        { cause: err },
      );
    }
    const url = new URL(req.path, this.base);
    for (const [k, v] of Object.entries(req.query)) if (v !== undefined) url.searchParams.set(k, v);
    url.searchParams.set('watch', '1');
    const proxied = Boolean(kc.getCurrentCluster()?.proxyUrl);
    const headers: OutgoingHttpHeaders = {
      ...(options.headers as OutgoingHttpHeaders),
      Accept: 'application/json',
      'User-Agent': this.userAgent,
    };
    const path = `${url.pathname}${url.search}`;
    let route: Awaited<ReturnType<H2Connection['route']>> = 'http/1.1';
    if (!proxied && url.protocol === 'https:') {
      this.h2 ??= h2Pool.acquire(this.base, options, () => agentTlsOptions(this.server, options));
      try {
        route = await routeWithin(this.h2, req.idleTimeoutMs, req.signal);
      } catch (err: unknown) {
        throw transportError(this.server, err);
      }
    }
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        req.signal.removeEventListener('abort', onAbort);
        if (err === undefined) resolve();
        else reject(err);
      };
      const fail = (err: unknown) =>
        finish(err instanceof ApiError || err instanceof TransportError ? err : transportError(this.server, err));
      const idle = () => Object.assign(new Error(`no data for ${req.idleTimeoutMs} ms`), { code: 'ETIMEDOUT' });
      let stop: () => void;
      if (route !== 'http/1.1') {
        const c = this.h2!;
        let stream: ReturnType<H2Connection['request']>;
        try {
          stream = c.request(route, streamHeaders('GET', path, headers, options.auth ?? undefined), true);
        } catch (err: unknown) {
          // The session closed meanwhile: the informer watches again.
          fail(err);
          return;
        }
        stop = () => cancel(stream);
        stream.once('response', (h) => this.read(Number(h[':status'] ?? 0), stream, url, onEvent, stop, finish, fail));
        stream.on('error', fail);
        stream.on('close', () => finish());
        stream.setTimeout(req.idleTimeoutMs, () => {
          stop();
          fail(idle());
          c.suspect();
        });
      } else {
        const lib = url.protocol === 'http:' ? http : https;
        const r = lib.request(
          {
            protocol: url.protocol,
            hostname: url.hostname.replace(/^\[|\]$/g, ''),
            port: url.port,
            path,
            method: 'GET',
            headers,
            agent: proxied ? options.agent : this.agentFor(options, url.protocol),
            ...(options.auth ? { auth: options.auth } : {}),
          },
          (res) => this.read(res.statusCode ?? 0, res, url, onEvent, () => r.destroy(), finish, fail),
        );
        stop = () => r.destroy();
        r.setTimeout(req.idleTimeoutMs, () => r.destroy(idle()));
        r.on('error', fail);
        r.end();
      }
      const onAbort = () => {
        stop();
        finish();
      };
      if (req.signal.aborted) onAbort();
      else req.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Reads one watch's answer: an error status as an ApiError, else newline-delimited events to `onEvent`
   * until the body ends (`stop` ends the exchange early: a bad event, `onEvent` throwing, a line too big).
   */
  private read(
    status: number,
    body: Readable,
    url: URL,
    onEvent: (e: WatchEvent) => void,
    stop: () => void,
    finish: (err?: Error) => void,
    fail: (err: unknown) => void,
  ): void {
    if (status >= 400) {
      const chunks: Buffer[] = [];
      body.on('data', (c: Buffer) => chunks.length < 64 && chunks.push(c));
      body.on('end', () => finish(statusError(status, Buffer.concat(chunks).toString('utf8'))));
      body.on('error', fail);
      return;
    }
    let pending = '';
    let done = false;
    const end = (err: Error) => {
      done = true;
      stop();
      finish(err);
    };
    body.setEncoding('utf8');
    body.on('data', (chunk: string) => {
      if (done) return;
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl).trim();
        pending = pending.slice(nl + 1);
        if (line === '') continue;
        let event: WatchEvent;
        try {
          const parsed: unknown = JSON.parse(line);
          if (!isObject(parsed) || typeof parsed.type !== 'string' || !isObject(parsed.object))
            throw new Error('not a watch event');
          event = { type: parsed.type, object: parsed.object };
        } catch (e: unknown) {
          const why = e instanceof Error ? e.message : String(e);
          return end(new TransportError(`${this.server}: watch ${url.pathname}: unreadable event: ${why}`, 'EPROTO'));
        }
        try {
          onEvent(event);
        } catch (e: unknown) {
          return end(e instanceof Error ? e : new Error(String(e)));
        }
      }
      if (pending.length > MAX_LINE_BYTES)
        end(
          new TransportError(
            `${this.server}: watch ${url.pathname}: event larger than ${MAX_LINE_BYTES} bytes`,
            'ETOOBIG',
          ),
        );
    });
    body.on('end', () => finish());
    body.on('error', fail);
    body.on('close', () => finish());
  }

  /** Closes idle connections. */
  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
    if (this.h2) h2Pool.release(this.h2);
    this.h2 = undefined;
  }

  private agentFor(options: https.RequestOptions, protocol: string): Agent {
    this.agent ??= keepAliveAgent(this.server, protocol, options);
    return this.agent;
  }
}

function statusError(status: number, text: string): ApiError {
  let message = `HTTP ${status}`;
  let reason = '';
  try {
    const b = JSON.parse(text) as { message?: unknown; reason?: unknown };
    if (typeof b.message === 'string' && b.message !== '') message = b.message;
    if (typeof b.reason === 'string') reason = b.reason;
  } catch {
    // not a Status
  }
  return new ApiError(status, reason, message);
}
