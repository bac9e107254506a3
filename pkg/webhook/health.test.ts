// The probe listener (health.ts) over real sockets: what it answers, what it refuses, and that nothing a
// client sends (generated requests, garbage, too many connections) stops it answering /healthz.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';

import fc from 'fast-check';

import { WebhookHandler } from './handler.js';
import { HEALTH_MAX_CONNECTIONS, HEALTH_MAX_HEADER_BYTES, startHealthServer } from './health.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(port: number, path: string, method = 'GET', headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

/**
 * Writes `data` on a new connection (and, with `end`, says it sends no more); resolves with everything
 * received until the server closes it.
 */
function raw(
  port: number,
  data: Buffer | string,
  waitMs = 15_000,
  end = false,
): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: '127.0.0.1', port }, () => (end ? socket.end(data) : socket.write(data)));
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: false });
    }, waitMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: true });
    });
  });
}

const statusOf = (text: string): number => Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? 0);

void describe('the probe listener (--health-port)', () => {
  const abort = new AbortController();
  let port = 0;
  let ready = true;
  let stopped: Promise<void>;
  const handler = new WebhookHandler({ ready: () => ready });

  before(async () => {
    const started = await startHealthServer({ port: 0, host: '127.0.0.1', handler }, abort.signal);
    port = started.address.port;
    stopped = started.stopped;
  });
  after(async () => {
    abort.abort();
    await stopped;
  });

  void it('answers /healthz and /readyz in plain HTTP, GET and HEAD, as the HTTPS port does, and counts them', async () => {
    assert.deepStrictEqual((({ status, body }) => ({ status, body }))(await get(port, '/healthz')), {
      status: 200,
      body: 'ok',
    });
    const head = await get(port, '/healthz', 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
    assert.equal((await get(port, '/readyz?verbose')).status, 200);
    ready = false;
    assert.deepStrictEqual((({ status, body }) => ({ status, body }))(await get(port, '/readyz')), {
      status: 503,
      body: 'not ready',
    });
    ready = true;
    assert.equal((await get(port, '/readyz')).status, 200);
    assert.match(
      handler.registry.render(),
      /flotilla_webhook_requests_total\{path="\/readyz",outcome="unavailable"\} 1/,
    );
  });

  void it('serves nothing else: other paths 404, other methods 405, with a message', async () => {
    for (const path of ['/metrics', '/validate', '/override', '/', '/healthz/x']) {
      const a = await get(port, path);
      assert.equal(a.status, 404, path);
      assert.match(a.body, /serves GET \/healthz and \/readyz only/);
    }
    const post = await get(port, '/healthz', 'POST');
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
  });

  void it('reads no request body: one declared or chunked is answered 413 and its connection closed', async () => {
    const declared = await raw(port, 'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nabc');
    assert.equal(statusOf(declared.text), 413, declared.text);
    assert.ok(declared.closed, 'closed without waiting for the body');
    const chunked = await raw(
      port,
      'GET /readyz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n',
    );
    assert.equal(statusOf(chunked.text), 413, chunked.text);
    assert.ok(chunked.closed);
  });

  void it('answers headers over its limit 431, garbage 400, and closes both', async () => {
    const big = await raw(
      port,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(HEALTH_MAX_HEADER_BYTES)}\r\n\r\n`,
    );
    assert.equal(statusOf(big.text), 431, big.text);
    assert.ok(big.closed);
    const garbage = await raw(port, Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x01, 0x00, 0x00]));
    assert.equal(statusOf(garbage.text), 400, garbage.text);
    assert.ok(garbage.closed);
  });

  void it('closes a connection that never finishes its request (within its 5 s timeouts)', async () => {
    const silent = await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n');
    assert.ok(silent.closed, 'closed by the server');
    assert.ok(silent.text === '' || statusOf(silent.text) === 408, silent.text);
  });

  void it(`holds at most ${HEALTH_MAX_CONNECTIONS} connections; more are closed on arrival, and it answers again once they go`, async () => {
    const held: Socket[] = [];
    for (let i = 0; i < HEALTH_MAX_CONNECTIONS; i++) {
      const s = connect({ host: '127.0.0.1', port });
      s.on('error', () => undefined);
      await new Promise((r) => s.once('connect', r));
      held.push(s);
    }
    // Let the server accept them all before the next one arrives.
    await new Promise((r) => setTimeout(r, 200));
    await assert.rejects(get(port, '/healthz'), /socket hang up|ECONNRESET/);
    for (const s of held) s.destroy();
    let answer: Answer | undefined;
    for (let i = 0; i < 100 && answer === undefined; i++) {
      answer = await get(port, '/healthz').catch(() => undefined);
      if (answer === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(answer?.status, 200);
  });

  void it('answers every generated request with a status line it knows, or closes; /healthz still answers after', async () => {
    const known = new Set([0, 100, 200, 400, 404, 405, 408, 413, 417, 431, 503, 505]);
    const token = fc.stringMatching(/^[A-Za-z!#$%&'*+.^_`|~-]{1,12}$/);
    const header = fc.tuple(token, fc.string({ maxLength: 40 })).map(([k, v]) => `${k}: ${v.replace(/[\r\n]/g, '')}`);
    const line = fc.oneof(
      fc
        .tuple(
          fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'CONNECT', 'get', 'BREW'),
          fc.oneof(
            fc.constantFrom('/healthz', '/readyz', '/metrics', '/healthz?x=1', '*', '//readyz', '/readyz#'),
            fc.webPath(),
            fc.string({ maxLength: 60 }),
          ),
          fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9', ''),
          fc.array(header, { maxLength: 6 }),
          fc.string({ maxLength: 80 }),
        )
        .map(([m, p, v, hs, tail]) => `${m} ${p} ${v}\r\n${hs.join('\r\n')}\r\n\r\n${tail}`),
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
    );
    await fc.assert(
      fc.asyncProperty(line, async (text) => {
        const { text: got, closed } = await raw(port, Buffer.from(text, 'latin1'), 8_000, true);
        const status = statusOf(got);
        assert.ok(known.has(status), `status ${status} for ${JSON.stringify(text)}: ${JSON.stringify(got)}`);
        assert.ok(closed || status !== 0 || got === '', `neither answered nor closed: ${JSON.stringify(text)}`);
      }),
      { numRuns: 300, seed: 30 },
    );
    assert.equal((await get(port, '/healthz')).status, 200);
  });
});
