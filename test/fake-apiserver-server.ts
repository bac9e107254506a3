// The in-memory apiserver (test/fake-apiserver.ts) served over HTTPS: a real endpoint the project's own
// clients reach through a kubeconfig, as they reach a kube-apiserver. It carries requests to the fake's
// Transport side (`send`) and streams watches (`?watch=1`) from its streaming side (`watch`) as
// newline-delimited JSON events, ending each at its `timeoutSeconds` as a real server does; a watch from
// a compacted resourceVersion is answered with an ERROR event carrying 410, as kube-apiserver answers it.
// The fleet benchmark runs hundreds of these as light members where a real apiserver (~260 MiB) per
// member does not fit. What the fake cannot serve is kept in `fake.unserved` and written to `onUnserved`.
//
// TLS: the P-256 serving certificate of test/certs.ts (localhost, 127.0.0.1), which is also the CA the
// kubeconfig trusts. No client authentication: the kubeconfig's client certificate is never asked for.
// HTTP/2 or HTTP/1.1, as the client offers by ALPN (kube-apiserver speaks both).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';

import { ApiError } from '../pkg/kube/errors.js';
import type { TransportRequest } from '../pkg/kube/transport.js';
import { EC_SERVING_PAIR } from './certs.js';
import { kubeconfigYaml } from './envtest/pki.js';
import type { FakeApiserver } from './fake-apiserver.js';

/** Largest request body read (kube-apiserver's limit is 3 MiB). */
const MAX_BODY_BYTES = 3 * 1024 * 1024;
const METHODS = new Set(['GET', 'POST', 'PATCH', 'PUT', 'DELETE']);

export interface FakeServer {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  /** Requests answered (watches included, each counted once when it starts). */
  readonly served: { requests: number; watches: number };
  /** Watches streaming now. */
  readonly openWatches: number;
  /** A kubeconfig (YAML) for this server, its one context named `name`. */
  kubeconfig(name: string): string;
  /** Stops listening and ends every open watch and connection. */
  close(): Promise<void>;
}

export interface ServeOptions {
  /** Port on 127.0.0.1 (default: any free one). */
  port?: number;
  /** Told of each request the fake could not serve, as it happens. */
  onUnserved?: (line: string) => void;
}

/** Serves `fake` on 127.0.0.1 over HTTPS. */
export async function serveFake(fake: FakeApiserver, o: ServeOptions = {}): Promise<FakeServer> {
  const served = { requests: 0, watches: 0 };
  const watches = new Set<AbortController>();
  let reported = fake.unserved.length;
  const report = () => {
    for (; reported < fake.unserved.length; reported++) o.onUnserved?.(fake.unserved[reported] ?? '');
  };
  const server = createSecureServer(
    { cert: EC_SERVING_PAIR.certPem, key: EC_SERVING_PAIR.keyPem, allowHTTP1: true },
    (req: Request, response: ServerResponse | Http2ServerResponse) => {
      const res = response as Response;
      served.requests++;
      handle(fake, req, res, watches, served)
        .catch((err: unknown) => {
          if (!res.headersSent)
            writeStatus(res, 500, 'InternalError', err instanceof Error ? err.message : String(err));
          else destroy(res);
        })
        .finally(report);
    },
  );
  const sockets = new Set<Socket>();
  server.on('secureConnection', (socket: Socket) => {
    // As node's http server does (and kube-apiserver, in Go): small frames go out at once.
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', () => resolve());
  });
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    served,
    get openWatches() {
      return watches.size;
    },
    kubeconfig: (name) =>
      kubeconfigYaml([
        {
          name,
          server: url,
          pki: {
            caPem: EC_SERVING_PAIR.certPem,
            adminCertPem: EC_SERVING_PAIR.certPem,
            adminKeyPem: EC_SERVING_PAIR.keyPem,
          },
        },
      ]),
    close: async () => {
      for (const w of watches) w.abort();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** An exchange over HTTP/1.1 or a stream of HTTP/2 (node's compatibility API): what is used of both. */
type Request = IncomingMessage | Http2ServerRequest;
interface Response {
  readonly headersSent: boolean;
  writeHead(status: number, headers: Record<string, string | number>): unknown;
  write(chunk: string): unknown;
  end(chunk?: string | Buffer): unknown;
  on(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

/** Ends an exchange abruptly: its connection (HTTP/1.1) or its stream (HTTP/2). */
function destroy(res: Response, err?: Error): void {
  const r = res as ServerResponse | Http2ServerResponse;
  if ('stream' in r) r.stream.destroy(err);
  else r.destroy(err);
}

async function handle(
  fake: FakeApiserver,
  req: Request,
  res: Response,
  watches: Set<AbortController>,
  served: { watches: number },
): Promise<void> {
  const method = req.method ?? '';
  const url = new URL(req.url ?? '/', 'https://fake.test');
  const body = await readBody(req);
  if (body === undefined) return writeStatus(res, 413, 'RequestEntityTooLarge', 'request body too large');
  const watchParam = url.searchParams.get('watch');
  if (method === 'GET' && (watchParam === '1' || watchParam === 'true')) {
    served.watches++;
    return streamWatch(fake, url, res, watches);
  }
  if (!METHODS.has(method)) {
    fake.unserved.push(`${method} ${url.pathname}: method not served`);
    return writeStatus(res, 405, 'MethodNotAllowed', `${method} is not served`);
  }
  const headers: Record<string, string> = {};
  if (req.headers['content-type']) headers['Content-Type'] = req.headers['content-type'];
  if (req.headers.accept) headers.Accept = req.headers.accept;
  const answer = await fake.send({
    method: method as TransportRequest['method'],
    path: `${url.pathname}${url.search}`,
    headers,
    body: body.length > 0 ? body : undefined,
    timeoutMs: 60_000,
    maxBytes: Number.MAX_SAFE_INTEGER,
  });
  res.writeHead(answer.status, { 'Content-Type': 'application/json', 'Content-Length': answer.body.length });
  res.end(answer.body);
}

/** One watch: the fake's events as JSON lines until timeoutSeconds, the client leaving, or close(). */
async function streamWatch(fake: FakeApiserver, url: URL, res: Response, watches: Set<AbortController>): Promise<void> {
  const stop = new AbortController();
  watches.add(stop);
  const timeoutSeconds = Number(url.searchParams.get('timeoutSeconds') ?? 0);
  const timer = timeoutSeconds > 0 ? setTimeout(() => stop.abort(), timeoutSeconds * 1000) : undefined;
  const onClose = () => stop.abort();
  res.on('close', onClose);
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) if (k !== 'watch') query[k] = v;
  const begin = () => {
    // Chunked over HTTP/1.1 (no length given); HTTP/2 frames it.
    if (!res.headersSent) res.writeHead(200, { 'Content-Type': 'application/json' });
  };
  try {
    await fake.watch({ path: url.pathname, query, idleTimeoutMs: 0, signal: stop.signal }, (e) => {
      begin();
      res.write(`${JSON.stringify(e)}\n`);
    });
    begin();
    res.end();
  } catch (err: unknown) {
    if (err instanceof ApiError && err.status === 410 && !res.headersSent) {
      begin();
      const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 };
      res.end(`${JSON.stringify({ type: 'ERROR', object: { ...status, message: err.message } })}\n`);
    } else if (err instanceof ApiError && !res.headersSent) writeStatus(res, err.status, err.reason, err.message);
    else destroy(res, err instanceof Error ? err : undefined);
  } finally {
    clearTimeout(timer);
    res.off('close', onClose);
    watches.delete(stop);
  }
}

/** The request body, or undefined past MAX_BODY_BYTES. */
async function readBody(req: Request): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

function writeStatus(res: Response, code: number, reason: string, message: string): void {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code });
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
