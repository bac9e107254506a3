// Waiting for a client to have a large answer. Node says an answer is written ('finish') once the kernel
// has taken it, and a multi-megabyte answer fits in the kernel's send buffer, so 'finish' cannot tell a
// client that reads from one that never will. The kernel's send queue for the connection can: it empties
// only as the client's side acknowledges the bytes. Until it is empty the answer's bytes stay counted
// against the in-flight ceiling, and a connection whose queue is not empty by its deadline is closed.
//
// Every connection waiting is judged by one read of the kernel's tables per tick, and always by a read
// made after its answer was handed over: a table read before that would show the queue empty because
// the answer was not in it yet (a read shared for 200 ms once let concurrent clients that never read
// count as served and keep their connections for the keep-alive).

import type { Duplex } from 'node:stream';

import type { SendQueueReader } from './unacked.js';

/** How often connections that owe their client a large answer are looked at. */
export const RECEIPT_POLL_MS = 100;

type Connection = Duplex & { localPort?: number; remotePort?: number };

interface Waiting {
  /** What to call, once, when the client has everything or the connection is gone. */
  releases: Array<() => void>;
  /** The connection's 'close' listener, removed once the entry goes. */
  onClose: () => void;
  /** When the connection is closed if the client still has not taken everything. */
  deadline: number;
}

export class Receipts {
  private readonly waiting = new Map<Connection, Waiting>();
  private timer: NodeJS.Timeout | undefined;
  /** Whether the last read of the kernel's tables succeeded (false: not Linux, or /proc not mounted). */
  private readable = true;

  constructor(
    private readonly queues: SendQueueReader,
    private readonly pollMs = RECEIPT_POLL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Connections whose client has not acknowledged its answer yet. */
  get size(): number {
    return this.waiting.size;
  }

  /**
   * Calls `release` once `socket`'s client has acknowledged everything written to it, or the connection
   * is gone; closes the connection when that has not happened by `deadline`. Answers written one after
   * another on a connection are released together, when its queue is empty.
   */
  watch(socket: Connection, release: () => void, deadline: number): void {
    let entry = this.waiting.get(socket);
    if (entry === undefined) {
      entry = { releases: [], deadline, onClose: () => this.done(socket) };
      this.waiting.set(socket, entry);
      socket.once('close', entry.onClose);
    }
    entry.releases.push(release);
    entry.deadline = Math.min(entry.deadline, deadline);
    this.timer ??= setTimeout(() => this.tick(), this.pollMs).unref();
  }

  /**
   * `socket` sent its next request. Where the kernel's queues can be read this proves nothing (a client
   * may send requests without reading answers); where they cannot, it is the only sign of receipt there is.
   */
  nextRequest(socket: Connection): void {
    if (!this.readable) this.done(socket);
  }

  private tick(): void {
    this.timer = undefined;
    const unacknowledged = this.queues.read();
    this.readable = unacknowledged !== undefined;
    const now = this.now();
    for (const [socket, entry] of this.waiting) {
      if (socket.destroyed) {
        this.done(socket);
      } else if (unacknowledged !== undefined && unacknowledged(socket.localPort, socket.remotePort) === 0) {
        this.done(socket);
      } else if (now >= entry.deadline) {
        // Not taken in time (or, without the tables, no next request in time): closed, its bytes freed.
        socket.destroy();
        this.done(socket);
      }
    }
    if (this.waiting.size > 0) this.timer = setTimeout(() => this.tick(), this.pollMs).unref();
  }

  private done(socket: Connection): void {
    const entry = this.waiting.get(socket);
    if (entry === undefined) return;
    this.waiting.delete(socket);
    socket.off('close', entry.onClose);
    for (const release of entry.releases) release();
  }
}
