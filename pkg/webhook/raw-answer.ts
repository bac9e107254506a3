// Answers written straight to a connection that Node's HTTP server no longer serves (plain HTTP on the TLS
// port, a request the parser gave up on), and closed without resetting it.

import { http } from '../runtime/node-http.js';
import type { Duplex } from 'node:stream';

/** After an error answer that closes the connection, how long the rest of what the client sends is read. */
export const LINGER_MS = 1_000;

/** An HTTP/1.1 answer written straight to a connection Node's HTTP server no longer serves. */
export function rawResponse(status: number, contentType: string, body: string): string {
  return `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * Writes `data` and closes the connection, reading (and dropping) what the client still sends for a
 * moment first: closing with unread input makes the kernel reset the connection, and a reset can reach the
 * client before it has read the answer.
 */
export function endWith(socket: Duplex, data: string): void {
  socket.end(data);
  socket.resume();
  socket.once('end', () => socket.destroy());
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
