// HTTP/2 to an apiserver, as client-go reaches one: a single connection per server and TLS identity,
// shared by every KubeClient and Watcher of the process that goes there, each request and watch a stream
// on it. A fleet of members then costs one TLS connection each instead of one per request in flight plus
// one per watch (a Node TLS client connection holds some 100-180 KiB of native memory, and keeps most of
// it after it closes).
//
// The first connection offers h2 and http/1.1 by ALPN: a server that picks http/1.1 is reached over the
// keep-alive HTTP/1.1 pool as before (transport.ts, watch.ts), and remembered as such. Plain-http and
// proxied clusters never come here. A connection that ends (GOAWAY, a reset, the server gone) is forgotten
// at once and the next request opens another; a stream that times out makes its connection answer a PING,
// and one that does not within PING_TIMEOUT_MS is closed, so a dead link fails every stream on it instead
// of each waiting out its own timeout. The socket does not keep the process alive while no stream is open.

import { createHash } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import type * as Http2Module from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream, OutgoingHttpHeaders as H2Headers } from 'node:http2';
import type https from 'node:https';
import { isIP } from 'node:net';
import tls from 'node:tls';

/**
 * node:http2, loaded with the first connection that negotiates h2 (about 1.4 MiB of RSS a process that
 * reaches no such server does not pay), as a module object (see runtime/node-http.ts).
 */
let loaded: typeof Http2Module | undefined;
function http2(): typeof Http2Module {
  return (loaded ??= process.getBuiltinModule('node:http2'));
}

/** A connection whose PING is not answered within this is closed. */
export const PING_TIMEOUT_MS = 10_000;
/** A connection not set up (TCP and TLS) within this fails. */
const CONNECT_TIMEOUT_MS = 30_000;
/** Flow-control windows: what the server may send ahead, per stream and per connection (lists are large). */
const STREAM_WINDOW = 1 << 20;
const SESSION_WINDOW = 8 << 20;

/** The request options that make a connection's TLS identity (transport.ts gives them to an Agent). */
export const TLS_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

/** Headers HTTP/2 forbids (connection-specific) or carries as pseudo-headers. */
const DROPPED = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host']);

/** Where a request goes: a session to open a stream on, or the HTTP/1.1 pool. */
export type Route = ClientHttp2Session | 'http/1.1';

/** One server and TLS identity: its current connection, opened on demand. */
export class H2Connection {
  readonly key: string;
  users = 0;
  private readonly url: URL;
  private readonly tls: https.AgentOptions;
  private readonly pingTimeoutMs: number;
  private session: ClientHttp2Session | undefined;
  private connecting: Promise<Route> | undefined;
  private http1 = false;
  private pinging = false;
  /** Streams open on each session (the process is kept alive while there are some). */
  private readonly open = new WeakMap<ClientHttp2Session, number>();

  constructor(key: string, url: URL, tlsOptions: https.AgentOptions, pingTimeoutMs = PING_TIMEOUT_MS) {
    this.key = key;
    this.url = url;
    this.tls = tlsOptions;
    this.pingTimeoutMs = pingTimeoutMs;
  }

  /** The route a stream can take now, without connecting: undefined while there is no open session. */
  current(): Route | undefined {
    if (this.http1) return 'http/1.1';
    const s = this.session;
    return s && !s.closed && !s.destroyed ? s : undefined;
  }

  /** The session to open a stream on (opening a connection when there is none), or 'http/1.1'. */
  route(): Promise<Route> {
    const now = this.current();
    if (now) return Promise.resolve(now);
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** Opens a stream on `session`; the connection keeps the process alive while any stream is open. */
  request(session: ClientHttp2Session, headers: H2Headers, endStream: boolean): ClientHttp2Stream {
    const stream = session.request(headers, { endStream });
    const n = (this.open.get(session) ?? 0) + 1;
    this.open.set(session, n);
    if (n === 1) session.ref();
    stream.once('close', () => {
      const left = (this.open.get(session) ?? 1) - 1;
      this.open.set(session, left);
      if (left === 0 && !session.destroyed) session.unref();
    });
    return stream;
  }

  /** A stream on the current connection timed out: the connection must answer a PING or is closed. */
  suspect(): void {
    const s = this.session;
    if (!s || s.destroyed || this.pinging) return;
    this.pinging = true;
    const dead = () =>
      s.destroy(Object.assign(new Error(`no answer to PING within ${this.pingTimeoutMs} ms`), { code: 'ETIMEDOUT' }));
    const timer = setTimeout(dead, this.pingTimeoutMs);
    timer.unref();
    const sent = s.ping((err) => {
      clearTimeout(timer);
      this.pinging = false;
      if (err && !s.destroyed) s.destroy(err);
    });
    if (!sent) {
      clearTimeout(timer);
      this.pinging = false;
    }
  }

  /** Closes the connection (streams in flight finish first). */
  close(): void {
    this.session?.close();
    this.session = undefined;
  }

  private connect(): Promise<Route> {
    const host = this.url.hostname.replace(/^\[|\]$/g, '');
    const servername = this.tls.servername ?? (isIP(host) ? undefined : host);
    return new Promise<Route>((resolve, reject) => {
      const socket = tls.connect({
        host,
        port: Number(this.url.port || 443),
        ALPNProtocols: ['h2', 'http/1.1'],
        ...(this.tls.secureContext ? { secureContext: this.tls.secureContext } : {}),
        ...(this.tls.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: this.tls.rejectUnauthorized }),
        ...(servername ? { servername } : {}),
      });
      // As node's http agents do: a small frame (a request's HEADERS, a WINDOW_UPDATE) goes out at once
      // instead of waiting on the server's delayed ACK (Nagle's algorithm: some 40 ms a request).
      socket.setNoDelay(true);
      socket.setTimeout(CONNECT_TIMEOUT_MS, () =>
        socket.destroy(
          Object.assign(new Error(`not connected within ${CONNECT_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' }),
        ),
      );
      socket.once('error', reject);
      socket.once('secureConnect', () => {
        socket.setTimeout(0);
        socket.removeListener('error', reject);
        if (socket.alpnProtocol !== 'h2') {
          socket.destroy();
          this.http1 = true;
          resolve('http/1.1');
          return;
        }
        const s = http2().connect(this.url.origin, {
          createConnection: () => socket,
          settings: { enablePush: false, initialWindowSize: STREAM_WINDOW },
        });
        const forget = () => {
          if (this.session === s) this.session = undefined;
        };
        s.on('goaway', forget);
        s.on('close', forget);
        // A connection's failure reaches its streams; here it is only forgotten.
        s.on('error', forget);
        s.once('connect', () => s.setLocalWindowSize(SESSION_WINDOW));
        s.unref();
        this.session = s;
        resolve(s);
      });
    });
  }
}

/** The connections of a process, by server and TLS identity; one is closed when its last user lets go. */
export class H2Pool {
  private readonly connections = new Map<string, H2Connection>();
  private readonly pingTimeoutMs: number;

  constructor(o: { pingTimeoutMs?: number } = {}) {
    this.pingTimeoutMs = o.pingTimeoutMs ?? PING_TIMEOUT_MS;
  }

  /**
   * The connection to `url` with the TLS identity of `material` (a KubeConfig's request options);
   * `tlsOptions` (a TLS context made from it) is called only when there is no such connection yet.
   */
  acquire(url: URL, material: https.RequestOptions, tlsOptions: () => https.AgentOptions): H2Connection {
    const key = `${url.origin} ${identity(material)}`;
    let c = this.connections.get(key);
    if (!c) {
      c = new H2Connection(key, url, tlsOptions(), this.pingTimeoutMs);
      this.connections.set(key, c);
    }
    c.users++;
    return c;
  }

  release(c: H2Connection): void {
    if (--c.users > 0 || this.connections.get(c.key) !== c) return;
    this.connections.delete(c.key);
    c.close();
  }

  get size(): number {
    return this.connections.size;
  }
}

/**
 * `c`'s route, failing as a request would: with the connection's error (its errno code kept), or when
 * `timeoutMs` passes (ETIMEDOUT) or `signal` aborts (ECANCELED) first. The connection attempt goes on.
 */
export function routeWithin(c: H2Connection, timeoutMs: number, signal: AbortSignal | undefined): Promise<Route> {
  // Connected (every request but a connection's first): no timer to set and clear.
  const now = signal?.aborted ? undefined : c.current();
  if (now) return Promise.resolve(now);
  return new Promise<Route>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const timer = setTimeout(() => {
      done();
      reject(Object.assign(new Error(`not connected within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
    }, timeoutMs);
    const onAbort = () => {
      done();
      reject(Object.assign(new Error('cancelled'), { code: 'ECANCELED' }));
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    c.route().then(
      (r) => {
        done();
        resolve(r);
      },
      (err: unknown) => {
        done();
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/** Whether a stream's end before its answer means the server never took it: it may be sent again. */
export function refused(stream: ClientHttp2Stream): boolean {
  return stream.rstCode === http2().constants.NGHTTP2_REFUSED_STREAM;
}

/** Cancels a stream (RST_STREAM CANCEL), as destroying a request's socket does over HTTP/1.1. */
export function cancel(stream: ClientHttp2Stream): void {
  if (!stream.closed && !stream.destroyed) stream.close(http2().constants.NGHTTP2_CANCEL);
}

/** The process's pool: every KubeClient and Watcher shares it. */
export const h2Pool = new H2Pool();

/** A digest of the TLS material on request options: equal material, one connection. */
function identity(o: https.RequestOptions): string {
  const h = createHash('sha256');
  for (const k of TLS_KEYS) {
    const v: unknown = o[k];
    h.update(`${k}:`);
    for (const part of Array.isArray(v) ? v : [v]) {
      if (Buffer.isBuffer(part)) h.update(part);
      else if (typeof part === 'string') h.update(part);
      else h.update(String(part));
      h.update('\0');
    }
  }
  return h.digest('hex');
}

/** Request headers for a stream: lower-case names, none HTTP/2 forbids, `auth` (user:password) as Basic. */
export function streamHeaders(
  method: string,
  path: string,
  headers: OutgoingHttpHeaders,
  auth: string | undefined,
): H2Headers {
  const out: H2Headers = { ':method': method, ':path': path };
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (v === undefined || DROPPED.has(name)) continue;
    out[name] = v;
  }
  if (auth !== undefined && out.authorization === undefined)
    out.authorization = `Basic ${Buffer.from(auth).toString('base64')}`;
  return out;
}
