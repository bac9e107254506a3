// The webhook server's header and request timeouts fire when they are due, not at Node's next sweep of
// its connections (every 30 s unless told otherwise). Real sockets and TLS; the timeouts are made short.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect } from 'node:tls';

import { createCA, createServingCert } from '../certs/index.js';
import { WebhookHandler } from './handler.js';
import { WebhookServer } from './server.js';

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_500;
/** How late a timeout may fire on a loaded machine and still count as on time (Node's sweep is 30 s). */
const SLACK_MS = 4_000;

/**
 * Sends `data` on a new connection and never more; resolves with what the server sent until it closed the
 * connection and when it did (ms after the send), or with `undefined` when it had not by `waitMs`.
 */
function sendAndWait(port: number, data: string, waitMs: number): Promise<{ text: string; ms: number } | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let sentAt = 0;
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      sentAt = performance.now();
      socket.write(data);
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(undefined);
    }, waitMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString('latin1'), ms: performance.now() - sentAt });
    });
  });
}

void describe('WebhookServer timeouts', () => {
  let dir: string;
  let port: number;
  const abort = new AbortController();
  let stopped: Promise<void>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flotilla-timeouts-'));
    const ca = createCA('timeouts-ca');
    const pair = createServingCert(ca, { commonName: 'flotilla-webhook', ipAddresses: ['127.0.0.1'] });
    writeFileSync(join(dir, 'tls.crt'), pair.certPem);
    writeFileSync(join(dir, 'tls.key'), pair.keyPem);
    // A fresh server per run: Node's sweep starts when it listens, so a connection made right after
    // would otherwise wait for the sweep 30 s later.
    const server = new WebhookServer({
      handler: new WebhookHandler(),
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
      headersTimeoutMs: HEADERS_TIMEOUT_MS,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    });
    const started = await server.start(abort.signal);
    port = started.address.port;
    stopped = started.stopped;
  });

  after(async () => {
    abort.abort();
    await stopped;
    rmSync(dir, { recursive: true, force: true });
  });

  void it('answers 408 when the headers have not arrived by the header timeout', async () => {
    const got = await sendAndWait(port, 'POST /validate HTTP/1.1\r\nHost: webhook\r\n', HEADERS_TIMEOUT_MS + SLACK_MS);
    assert.ok(got, `no answer within ${HEADERS_TIMEOUT_MS + SLACK_MS} ms of a ${HEADERS_TIMEOUT_MS} ms header timeout`);
    assert.match(got.text, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.ok(got.ms >= HEADERS_TIMEOUT_MS / 2, `answered after ${got.ms.toFixed(0)} ms, before the timeout`);
  });

  void it('answers 408 when the body has not arrived by the request timeout', async () => {
    const head =
      'POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n';
    const got = await sendAndWait(port, `${head}{"kind":`, REQUEST_TIMEOUT_MS + SLACK_MS);
    assert.ok(
      got,
      `no answer within ${REQUEST_TIMEOUT_MS + SLACK_MS} ms of a ${REQUEST_TIMEOUT_MS} ms request timeout`,
    );
    assert.match(got.text, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.ok(got.ms >= REQUEST_TIMEOUT_MS / 2, `answered after ${got.ms.toFixed(0)} ms, before the timeout`);
  });
});
