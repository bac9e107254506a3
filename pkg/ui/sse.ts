// Server-sent events to the page: each connection gets the snapshot, then the changes after it. Bounded
// both ways: at most `maxConnections` streams (more are refused with 503), and per connection at most
// `maxPending` changes waiting for a slow reader, coalesced by object (a later change to an object
// replaces the earlier one). When a reader falls further behind than that, its pending changes are
// dropped and it gets a fresh snapshot once its socket drains, so memory per connection stays bounded
// whatever the hub does.

import type { IncomingMessage, ServerResponse } from 'node:http';

import type { UiChange } from './shared/model.js';

export interface SseOptions {
  maxConnections: number;
  maxPending: number;
  /** A comment line this often keeps proxies (kubectl port-forward, ingresses) from closing a quiet stream. */
  keepAliveMs: number;
}

export const DEFAULT_SSE_OPTIONS: SseOptions = { maxConnections: 32, maxPending: 2000, keepAliveMs: 25_000 };

/** What a stream needs from the data: the current snapshot as one JSON text (built once per version). */
export interface SnapshotSource {
  snapshotJson(): string;
}

class Connection {
  private readonly pending = new Map<string, UiChange>();
  private needSnapshot = true;
  private waitingForDrain = false;
  closed = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly source: SnapshotSource,
    private readonly maxPending: number,
  ) {}

  push(change: UiChange): void {
    if (this.closed || this.needSnapshot) return;
    const key = `${change.type}:${change.id}`;
    this.pending.delete(key); // re-insert so the order stays that of the last change
    if (this.pending.size >= this.maxPending) {
      this.pending.clear();
      this.needSnapshot = true;
    } else {
      this.pending.set(key, change);
    }
    this.flush();
  }

  /** Writes what is pending until the socket says to wait; resumes on 'drain'. */
  flush(): void {
    if (this.closed || this.waitingForDrain) return;
    let ok = true;
    if (this.needSnapshot) {
      this.needSnapshot = false;
      this.pending.clear();
      ok = this.res.write(`event: snapshot\ndata: ${this.source.snapshotJson()}\n\n`);
    }
    while (ok && this.pending.size > 0) {
      const [key, change] = this.pending.entries().next().value as [string, UiChange];
      this.pending.delete(key);
      ok = this.res.write(`event: change\ndata: ${JSON.stringify(change)}\n\n`);
    }
    if (!ok) {
      this.waitingForDrain = true;
      this.res.once('drain', () => {
        this.waitingForDrain = false;
        this.flush();
      });
    }
  }

  keepAlive(): void {
    if (!this.closed && !this.waitingForDrain) this.res.write(': keep-alive\n\n');
  }

  get backlog(): number {
    return this.pending.size;
  }
}

/** The set of open event streams. */
export class EventStreams {
  private readonly connections = new Set<Connection>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly source: SnapshotSource,
    private readonly options: SseOptions = DEFAULT_SSE_OPTIONS,
  ) {
    this.timer = setInterval(() => {
      for (const c of this.connections) c.keepAlive();
    }, options.keepAliveMs);
    this.timer.unref();
  }

  get size(): number {
    return this.connections.size;
  }

  /** The largest number of changes any connection has waiting (for tests and metrics). */
  get maxBacklog(): number {
    let max = 0;
    for (const c of this.connections) max = Math.max(max, c.backlog);
    return max;
  }

  /** Serves GET /api/stream; headers other than the event-stream ones are the caller's. */
  open(req: IncomingMessage, res: ServerResponse): void {
    if (this.connections.size >= this.options.maxConnections) {
      res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '10' });
      res.end(`too many open streams (at most ${this.options.maxConnections})\n`);
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    });
    const c = new Connection(res, this.source, this.options.maxPending);
    this.connections.add(c);
    const close = () => {
      c.closed = true;
      this.connections.delete(c);
    };
    req.once('close', close);
    res.once('close', close);
    res.write('retry: 3000\n\n');
    c.flush();
  }

  broadcast(change: UiChange): void {
    for (const c of this.connections) c.push(change);
  }

  close(): void {
    clearInterval(this.timer);
    this.connections.clear();
  }
}
