// The in-flight ceiling a server gets by default (no maxInFlightBytes): 8 MiB, what the deployment's memory
// limit is sized for. Bodies sent in part and held: two or three large reviews fit, the next is refused at
// once with a 503. Real sockets and TLS.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';

import { eventually } from '../../test/eventually.js';
import { createCA, createServingCert } from '../certs/index.js';
import { WebhookHandler } from './handler.js';
import { WebhookServer } from './server.js';

const MIB = 1024 * 1024;
/** Sent of each body (under the 3 MiB body limit); the declared length is a little more, so none completes. */
const PART = Math.round(2.5 * MIB);

void describe('WebhookServer default in-flight ceiling', () => {
  let dir: string;
  let port: number;
  let server: WebhookServer;
  const abort = new AbortController();
  let stopped: Promise<void>;
  const sockets: TLSSocket[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flotilla-ceiling-'));
    const pair = createServingCert(createCA('ceiling-ca'), { commonName: 'w', ipAddresses: ['127.0.0.1'] });
    writeFileSync(join(dir, 'tls.crt'), pair.certPem);
    writeFileSync(join(dir, 'tls.key'), pair.keyPem);
    server = new WebhookServer({
      handler: new WebhookHandler(),
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
    });
    const started = await server.start(abort.signal);
    port = started.address.port;
    stopped = started.stopped;
  });

  after(async () => {
    for (const s of sockets) s.destroy();
    abort.abort();
    await stopped;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Sends PART bytes of a body declared a little longer; resolves with what the server answered, if anything. */
  const partial = () => {
    let text = '';
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () =>
      socket.write(
        `POST /validate HTTP/1.1\r\nHost: w\r\nContent-Type: application/json\r\nContent-Length: ${PART + 1024}\r\n\r\n${'x'.repeat(PART)}`,
      ),
    );
    socket.on('error', () => undefined);
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    sockets.push(socket);
    return () => text;
  };

  void it('holds three 2.5 MiB bodies at once and refuses a fourth with 503 at once', async () => {
    const answers: Array<() => string> = [];
    for (let n = 1; n <= 3; n++) {
      answers.push(partial());
      const held = await eventually(
        () => server.inFlightBytes,
        (b) => b >= n * PART,
        30_000,
      );
      assert.equal(held, n * PART, `body ${n} held whole`);
    }
    const fourth = partial();
    const refused = await eventually(fourth, (t) => t.startsWith('HTTP/1.1 503'), 30_000);
    assert.match(refused, /^HTTP\/1\.1 503 /, 'the fourth body does not fit under the ceiling');
    assert.match(refused, /limit of 8388608 bytes for requests in flight/);
    assert.ok(server.inFlightBytes <= 8 * MIB, `${server.inFlightBytes} bytes held`);
    for (const a of answers) assert.equal(a(), '', 'the three held are not answered yet');
  });
});
