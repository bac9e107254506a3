// The webhook server against clients that misbehave on the wire: never reading their answers, sending
// more than the in-flight ceiling, oversized headers, garbage, plain HTTP on the TLS port. Real sockets,
// real TLS, the real server; only the limits are made small so the tests are quick.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connectTCP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';

import { eventually } from '../../test/eventually.js';
import { createCA, createServingCert } from '../certs/index.js';
import { WebhookHandler } from './handler.js';
import { admissionRequestReview, conversionRequestReview } from './reviews.js';
import { WebhookServer } from './server.js';
import { SendQueues, type SendQueueReader } from './unacked.js';

const WRITE_TIMEOUT_MS = 400;
const IN_FLIGHT_BYTES = 8 * 1024 * 1024;

function raw(path: string, body: string, extraHeaders = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}\r\n${body}`;
}

const small = JSON.stringify(admissionRequestReview({ uid: 'u-1', object: { apiVersion: 'v1', kind: 'ConfigMap' } }));

/** A ConversionReview whose answer is about `bytes` long: one policy carrying a long plaintext value. */
function bigConversion(bytes: number): string {
  const policy = {
    apiVersion: 'policy.flotilla.io/v1alpha1',
    kind: 'OverridePolicy',
    metadata: { name: 'big', namespace: 'shop' },
    spec: {
      resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
      overrideRules: [{ overriders: { plaintext: [{ path: '/data/x', operator: 'add', value: 'v'.repeat(bytes) }] } }],
    },
  };
  return JSON.stringify(conversionRequestReview([policy], 'policy.flotilla.io/v1beta1'));
}

/** Writes `data` on a new TLS connection and collects everything the server sends until it closes. */
function exchange(port: number, data: string | Buffer, opts: { endAfterMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      socket.write(data);
      if (opts.endAfterMs !== undefined) setTimeout(() => socket.end(), opts.endAfterMs);
    });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

// An answer's status line follows the previous answer's body directly, not at a line start.
const statusLines = (text: string): string[] => text.match(/HTTP\/1\.1 \d{3} [^\r]*/g) ?? [];

void describe('WebhookServer on the wire', () => {
  let dir: string;
  let port: number;
  let server: WebhookServer;
  let stop: () => Promise<void>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flotilla-wire-'));
    const ca = createCA('wire-ca');
    const pair = createServingCert(ca, { commonName: 'flotilla-webhook', ipAddresses: ['127.0.0.1'] });
    writeFileSync(join(dir, 'tls.crt'), pair.certPem);
    writeFileSync(join(dir, 'tls.key'), pair.keyPem);
    ({ server, port, stop } = await serverWith(new SendQueues()));
  });

  after(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });

  void it('closes a connection whose client never reads its answers, and frees what they held', async () => {
    const sockets: TLSSocket[] = [];
    const closed: Array<Promise<void>> = [];
    // Each connection pipelines answers of ~2 MB and never reads: 24 MB each, more than the kernel's
    // socket buffers on loopback take (a few MB each way), so some answer cannot be written out.
    const request = raw('/convert', bigConversion(2_000_000));
    for (let i = 0; i < 2; i++) {
      const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
        for (let j = 0; j < 12; j++) socket.write(request);
        socket.pause();
      });
      socket.on('error', () => undefined);
      closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
      sockets.push(socket);
    }
    try {
      assert.ok(
        (await eventually(
          () => server.inFlightBytes,
          (b) => b > 0,
          10_000,
        )) > 0,
        'answers are held while unread',
      );
      // Closed by the server (the clients never end them) within the write timeout and some slack.
      const deadline = new Promise<'late'>((resolve) =>
        setTimeout(() => resolve('late'), 20 * WRITE_TIMEOUT_MS + 10_000).unref(),
      );
      assert.notEqual(
        await Promise.race([Promise.all(closed), deadline]),
        'late',
        'the server closed every never-reading connection',
      );
      assert.equal(
        await eventually(
          () => server.inFlightBytes,
          (b) => b === 0,
          5_000,
        ),
        0,
        'nothing is held for them any more',
      );
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  /** A server on this test's certificate and limits, with the kernel's send queues answered by `reader`. */
  async function serverWith(
    reader: SendQueueReader,
  ): Promise<{ server: WebhookServer; port: number; stop: () => Promise<void> }> {
    const stop = new AbortController();
    const other = new WebhookServer({
      handler: new WebhookHandler(),
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
      writeTimeoutMs: WRITE_TIMEOUT_MS,
      maxInFlightBytes: IN_FLIGHT_BYTES,
      sendQueues: reader,
    });
    const started = await other.start(stop.signal);
    return { server: other, port: started.address.port, stop: () => (stop.abort(), started.stopped) };
  }

  /** A paused client that sent `request`: whether the server closed it (seen once it reads again). */
  function pausedClient(at: number, request: string): { socket: TLSSocket; closed: Promise<void> } {
    const socket = connect({ host: '127.0.0.1', port: at, rejectUnauthorized: false }, () => {
      socket.write(request);
      socket.pause();
    });
    socket.on('error', () => undefined);
    return { socket, closed: new Promise((resolve) => socket.once('close', () => resolve())) };
  }

  void it('holds a large answer until the client acknowledges it, and closes the connection when it has not by the write timeout', async () => {
    // The kernel says the answer is still unacknowledged (a client that does not read, whatever the
    // buffers on this machine took): its bytes stay held, and the connection goes at the write timeout.
    const s = await serverWith({ read: () => () => 1 });
    const clients = [pausedClient(s.port, raw('/convert', bigConversion(2_500_000)))];
    try {
      assert.ok(
        (await eventually(
          () => s.server.awaitingReceipt,
          (n) => n > 0,
          10_000,
        )) > 0,
        'the answer waits',
      );
      assert.ok(s.server.inFlightBytes >= 2_500_000, `held ${s.server.inFlightBytes}`);
      assert.equal(
        await eventually(
          () => s.server.awaitingReceipt,
          (n) => n === 0,
          10 * WRITE_TIMEOUT_MS + 5_000,
        ),
        0,
      );
      assert.equal(s.server.inFlightBytes, 0, 'freed');
      for (const c of clients) c.socket.resume();
      const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 5_000).unref());
      assert.notEqual(
        await Promise.race([Promise.all(clients.map((c) => c.closed)), late]),
        'late',
        'closed by the server',
      );
    } finally {
      for (const c of clients) c.socket.destroy();
      await s.stop();
    }
  });

  void it("without the kernel's queues, closes a connection left idle after a large answer at the write timeout", async () => {
    const s = await serverWith({ read: () => undefined });
    const socket = connect({ host: '127.0.0.1', port: s.port, rejectUnauthorized: false }, () =>
      socket.write(raw('/convert', bigConversion(1_000_000))),
    );
    socket.on('error', () => undefined);
    socket.resume();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    try {
      const late = new Promise<'late'>((resolve) =>
        setTimeout(() => resolve('late'), 10 * WRITE_TIMEOUT_MS + 5_000).unref(),
      );
      assert.notEqual(await Promise.race([closed, late]), 'late');
      assert.equal(s.server.inFlightBytes, 0);
    } finally {
      socket.destroy();
      await s.stop();
    }
  });

  void it('keeps the connection of a client that read its large answer, idle past the write timeout', async () => {
    const big = raw('/convert', bigConversion(1_000_000));
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => socket.write(big));
    socket.on('error', () => undefined);
    let received = '';
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    try {
      await eventually(
        () => received.length,
        (n) => n > 1_000_000,
        10_000,
      );
      // Read in full: acknowledged, so what it held is free and the connection stays.
      assert.equal(
        await eventually(
          () => server.inFlightBytes,
          (b) => b === 0,
          5_000,
        ),
        0,
      );
      await new Promise((r) => setTimeout(r, 3 * WRITE_TIMEOUT_MS));
      assert.equal(socket.destroyed, false, 'still open');
      assert.equal(server.awaitingReceipt, 0);
      received = '';
      socket.write(raw('/validate', small));
      assert.deepEqual(
        await eventually(
          () => statusLines(received),
          (l) => l.length > 0,
          5_000,
        ),
        ['HTTP/1.1 200 OK'],
      );
    } finally {
      socket.destroy();
    }
  });

  void it('answers 503 with Retry-After at once when a body would pass the in-flight ceiling, and still serves', async () => {
    // Three connections each send 2.5 MiB of a body (under the 3 MiB body limit) and stop just short of
    // its end, so 7.5 MiB of the 8 MiB ceiling stays held.
    const body = 'x'.repeat(2.5 * 1024 * 1024);
    const holders: TLSSocket[] = [];
    for (let i = 0; i < 3; i++) {
      const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () =>
        s.write(raw('/validate', `${body}tail`).slice(0, -4)),
      );
      s.on('error', () => undefined);
      holders.push(s);
    }
    try {
      const held = await eventually(
        () => server.inFlightBytes,
        (b) => b >= 7.5 * 1024 * 1024 - 65_536,
        10_000,
      );
      assert.ok(held >= 7.5 * 1024 * 1024 - 65_536, `held ${held}`);
      const answer = await exchange(port, raw('/validate', 'y'.repeat(1024 * 1024), 'Connection: close\r\n'));
      assert.match(answer, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
      assert.match(answer, /\r\nretry-after: 1\r\n/i);
      assert.match(answer, /for requests in flight; retry in 1 s/);
    } finally {
      for (const s of holders) s.destroy();
    }
    assert.equal(
      await eventually(
        () => server.inFlightBytes,
        (b) => b === 0,
        5_000,
      ),
      0,
    );
    const ok = await exchange(port, raw('/validate', small, 'Connection: close\r\n'));
    assert.match(ok, /^HTTP\/1\.1 200 OK\r\n/);
  });

  void it('answers headers over 16 KiB with 431', async () => {
    const answer = await exchange(port, raw('/validate', small, `X-Big: ${'a'.repeat(20 * 1024)}\r\n`));
    assert.deepStrictEqual(statusLines(answer), ['HTTP/1.1 431 Request Header Fields Too Large']);
  });

  void it('answers a garbage request line with 400', async () => {
    const answer = await exchange(port, 'NOT HTTP AT ALL\r\n\r\n');
    assert.deepStrictEqual(statusLines(answer), ['HTTP/1.1 400 Bad Request']);
    assert.match(answer, /malformed HTTP request/);
  });

  void it('answers a valid request followed by a garbage line on the same connection: 200 first, then 400', async () => {
    const answer = await exchange(port, `${raw('/validate', small)}\u0001\u0002garbage\r\n\r\n`);
    assert.deepStrictEqual(statusLines(answer), ['HTTP/1.1 200 OK', 'HTTP/1.1 400 Bad Request']);
    assert.match(answer, /"uid":"u-1"/);
  });

  void it('answers plain HTTP on the TLS port with a readable 400, as Go servers do', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connectTCP({ host: '127.0.0.1', port }, () =>
        socket.write('GET /healthz HTTP/1.1\r\nHost: webhook\r\n\r\n'),
      );
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(answer, /Client sent an HTTP request to an HTTPS server\./);
  });

  void it('answers HEAD on /healthz and /readyz with 200 and no body', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const answer = await exchange(port, `HEAD ${path} HTTP/1.1\r\nHost: webhook\r\nConnection: close\r\n\r\n`);
      assert.deepStrictEqual(statusLines(answer), ['HTTP/1.1 200 OK'], path);
      assert.ok(answer.endsWith('\r\n\r\n'), `no body after the headers for ${path}`);
    }
  });

  void it('refuses a review sent as text/plain with 415', async () => {
    const answer = await exchange(
      port,
      raw('/validate', small, 'Connection: close\r\n').replace(
        'Content-Type: application/json',
        'Content-Type: text/plain',
      ),
    );
    assert.deepStrictEqual(statusLines(answer), ['HTTP/1.1 415 Unsupported Media Type']);
  });
});
