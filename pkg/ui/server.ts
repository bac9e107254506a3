// The ui's HTTP server: read-only, GET only. Routes:
//   /                        the page (index.html), /assets/...  its style and scripts
//   /api/snapshot            the fleet (UiSnapshot) as JSON
//   /api/stream              server-sent events: the snapshot, then changes (sse.ts)
//   /api/template?id=ID      the template view (UiTemplateDetail)
//   /healthz                 ok
// Bound to a loopback address, it answers only requests whose Host names a loopback address too, so a
// web page elsewhere cannot reach it through DNS rebinding and read the fleet with the user's credentials.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { http } from '../runtime/node-http.js';
import type { AddressInfo } from 'node:net';

import { loadAssets, type Asset } from './assets.js';
import { hostnameOf, isLoopbackHost, SECURITY_HEADERS } from './headers.js';
import { DEFAULT_SSE_OPTIONS, EventStreams, type SseOptions } from './sse.js';
import type { FleetView } from './view.js';

export interface UiServerOptions {
  view: FleetView;
  host: string;
  /** 0: any free port (see `address()`). */
  port: number;
  sse?: Partial<SseOptions>;
  /** Called with each request failure (the server answers 500 and keeps running). */
  onError?: (err: unknown) => void;
}

const MAX_URL_LENGTH = 4096;

export class UiServer {
  private server?: Server;
  private streams?: EventStreams;
  private unsubscribe?: () => void;
  private snapshotCache?: { seq: number; json: string };
  private readonly assets: Map<string, Asset>;

  constructor(private readonly options: UiServerOptions) {
    this.assets = loadAssets();
  }

  /** Listens until `signal` aborts; resolves with the bound address once listening. */
  async start(signal: AbortSignal): Promise<AddressInfo> {
    const streams = new EventStreams(
      { snapshotJson: () => this.snapshotJson() },
      { ...DEFAULT_SSE_OPTIONS, ...this.options.sse },
    );
    this.streams = streams;
    this.unsubscribe = this.options.view.subscribe((c) => streams.broadcast(c));
    const server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        this.options.onError?.(err);
        if (!res.headersSent) this.send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
        else res.destroy();
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const stop = () => this.stop();
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    return server.address() as AddressInfo;
  }

  /** Resolves when the server has closed. */
  closed(): Promise<void> {
    const server = this.server;
    if (!server?.listening) return Promise.resolve();
    return new Promise((resolve) => server.once('close', () => resolve()));
  }

  /** Open event streams (for tests). */
  get streamCount(): number {
    return this.streams?.size ?? 0;
  }

  private stop(): void {
    this.unsubscribe?.();
    this.streams?.close();
    this.server?.close();
    this.server?.closeAllConnections();
  }

  private snapshotJson(): string {
    const snap = this.options.view.snapshot();
    if (this.snapshotCache?.seq !== snap.seq) this.snapshotCache = { seq: snap.seq, json: JSON.stringify(snap) };
    return this.snapshotCache.json;
  }

  private hostAllowed(req: IncomingMessage): boolean {
    if (!isLoopbackHost(this.options.host)) return true;
    const host = hostnameOf(req.headers.host);
    return host !== undefined && isLoopbackHost(host);
  }

  private send(res: ServerResponse, status: number, contentType: string, body: string | Buffer, extra = {}): void {
    res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': contentType, ...extra });
    res.end(body);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    if ((req.url ?? '').length > MAX_URL_LENGTH)
      return this.send(res, 414, 'text/plain; charset=utf-8', 'URL too long\n');
    if (!this.hostAllowed(req)) return this.send(res, 403, 'text/plain; charset=utf-8', 'Host not allowed\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return this.send(res, 405, 'text/plain; charset=utf-8', 'read-only: GET only\n', { Allow: 'GET, HEAD' });
    }
    const url = new URL(req.url ?? '/', 'http://ui.invalid');
    const asset = this.assets.get(url.pathname);
    if (asset) {
      if (req.headers['if-none-match'] === asset.etag) {
        res.writeHead(304, { ETag: asset.etag });
        res.end();
        return;
      }
      return this.send(res, 200, asset.contentType, req.method === 'HEAD' ? '' : asset.body, {
        ETag: asset.etag,
        'Cache-Control': 'no-cache',
      });
    }
    const json = (status: number, body: string) =>
      this.send(res, status, 'application/json; charset=utf-8', body, { 'Cache-Control': 'no-store' });
    switch (url.pathname) {
      case '/favicon.ico':
        res.writeHead(204);
        res.end();
        return;
      case '/healthz':
        return this.send(res, 200, 'text/plain; charset=utf-8', 'ok\n');
      case '/api/snapshot':
        return json(200, this.snapshotJson());
      case '/api/stream':
        return this.streams?.open(req, res);
      case '/api/template': {
        const id = url.searchParams.get('id') ?? '';
        const detail = await this.options.view.templateDetail(id);
        if (!detail) return json(404, JSON.stringify({ error: `no template ${id}` }));
        return json(200, JSON.stringify(detail));
      }
      default:
        return this.send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    }
  }
}
