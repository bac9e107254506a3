// How many bytes of what the server wrote on a connection the client has not acknowledged yet, as the
// Linux kernel reports it (/proc/net/tcp and tcp6: tx_queue, the bytes in the send queue that are unsent
// or unacknowledged). Node says an answer is written ('finish') as soon as the kernel has taken it, and a
// multi-megabyte answer fits in the kernel's send buffer on loopback, so 'finish' cannot tell a client
// that read the answer from one that never will; the send queue can.
//
// The tables are read at most once per TABLE_TTL_MS whatever the number of connections asking, and are
// bounded by the number of connections in the network namespace (the server's own ceiling in a pod).

import { readFileSync } from 'node:fs';

const TABLES = ['/proc/net/tcp', '/proc/net/tcp6'];
const TABLE_TTL_MS = 200;
/** The tables are read up to this size; past it (a host with a vast number of sockets) the answer is "unknown". */
const MAX_TABLE_BYTES = 8 * 1024 * 1024;
const ESTABLISHED = '01';

export type ReadTable = (path: string) => string;

/** `localPort:remotePort` → the largest tx_queue among established connections with those ports. */
export function parseTables(texts: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const text of texts) {
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 5 || f[3] !== ESTABLISHED) continue;
      const local = Number.parseInt(f[1]?.split(':')[1] ?? '', 16);
      const remote = Number.parseInt(f[2]?.split(':')[1] ?? '', 16);
      const tx = Number.parseInt(f[4]?.split(':')[0] ?? '', 16);
      if (!Number.isFinite(local) || !Number.isFinite(remote) || !Number.isFinite(tx)) continue;
      const key = `${local}:${remote}`;
      out.set(key, Math.max(out.get(key) ?? 0, tx));
    }
  }
  return out;
}

/** What the server asks of the kernel's send queues (SendQueues; tests give a fixed answer). */
export interface SendQueueReader {
  unacknowledged(localPort: number | undefined, remotePort: number | undefined): number | undefined;
}

export class SendQueues implements SendQueueReader {
  private table: Map<string, number> | undefined;
  private readAt = -Infinity;

  constructor(private readonly read: ReadTable = (p) => readFileSync(p, 'utf8')) {}

  /**
   * Bytes still in the send queue of the connection with these ports: 0 when the client has everything
   * (or the connection is gone from the table), undefined when the kernel's tables cannot be read.
   */
  unacknowledged(localPort: number | undefined, remotePort: number | undefined, now = Date.now()): number | undefined {
    if (localPort === undefined || remotePort === undefined) return undefined;
    if (now - this.readAt > TABLE_TTL_MS) {
      this.readAt = now;
      this.table = this.load();
    }
    return this.table === undefined ? undefined : (this.table.get(`${localPort}:${remotePort}`) ?? 0);
  }

  private load(): Map<string, number> | undefined {
    const texts: string[] = [];
    for (const path of TABLES) {
      try {
        const text = this.read(path);
        if (text.length > MAX_TABLE_BYTES) return undefined;
        texts.push(text);
      } catch {
        // tcp6 may be absent (IPv6 off); tcp absent too means not Linux.
      }
    }
    return texts.length === 0 ? undefined : parseTables(texts);
  }
}
