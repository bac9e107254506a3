// How many bytes of what the server wrote on a connection the client has not acknowledged yet, as the
// Linux kernel reports it (/proc/net/tcp and tcp6: tx_queue, the bytes in the send queue that are unsent
// or unacknowledged). Node says an answer is written ('finish') as soon as the kernel has taken it, and a
// multi-megabyte answer fits in the kernel's send buffer on loopback, so 'finish' cannot tell a client
// that read the answer from one that never will; the send queue can.
//
// Each read is fresh (receipts.ts reads once per tick for every connection waiting), and bounded by the
// number of connections in the network namespace (the server's own ceiling in a pod).

import { readFileSync } from 'node:fs';

const TABLES = ['/proc/net/tcp', '/proc/net/tcp6'];
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

/**
 * Bytes still in the send queue of the connection with these ports: 0 when the client has everything (or
 * the connection is gone from the table), undefined when a port is not known.
 */
export type Unacknowledged = (localPort: number | undefined, remotePort: number | undefined) => number | undefined;

/** What the server asks of the kernel's send queues (SendQueues; tests give a fixed answer). */
export interface SendQueueReader {
  /** The send queues as the kernel has them now; undefined when its tables cannot be read. */
  read(): Unacknowledged | undefined;
}

export class SendQueues implements SendQueueReader {
  constructor(private readonly readTable: ReadTable = (p) => readFileSync(p, 'utf8')) {}

  read(): Unacknowledged | undefined {
    const table = this.load();
    if (table === undefined) return undefined;
    return (localPort, remotePort) =>
      localPort === undefined || remotePort === undefined ? undefined : (table.get(`${localPort}:${remotePort}`) ?? 0);
  }

  private load(): Map<string, number> | undefined {
    const texts: string[] = [];
    for (const path of TABLES) {
      try {
        const text = this.readTable(path);
        if (text.length > MAX_TABLE_BYTES) return undefined;
        texts.push(text);
      } catch {
        // tcp6 may be absent (IPv6 off); tcp absent too means not Linux.
      }
    }
    return texts.length === 0 ? undefined : parseTables(texts);
  }
}
