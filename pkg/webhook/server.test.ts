import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type PeerCertificate } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';

import { EC_SERVING_PAIR, ecKeyPem } from '../../test/certs.js';
import { createCA, createServingCert, type KeyPair } from '../certs/index.js';
import { WebhookHandler } from './handler.js';
import { admissionRequestReview } from './reviews.js';
import { WebhookServer, WebhookServerError } from './server.js';

const servingPair = (caName: string): { ca: KeyPair; serving: KeyPair } => {
  const ca = createCA(caName);
  return {
    ca,
    serving: createServingCert(ca, {
      commonName: 'flotilla-webhook',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
    }),
  };
};

/** Writes the way kubelet updates a Secret volume: new files renamed into place. */
function install(dir: string, pair: KeyPair): void {
  writeFileSync(join(dir, 'tls.crt.tmp'), pair.certPem);
  writeFileSync(join(dir, 'tls.key.tmp'), pair.keyPem);
  renameSync(join(dir, 'tls.crt.tmp'), join(dir, 'tls.crt'));
  renameSync(join(dir, 'tls.key.tmp'), join(dir, 'tls.key'));
}

function peerCertificate(
  port: number,
  opts: { minVersion?: 'TLSv1' | 'TLSv1.2'; maxVersion?: 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'; ciphers?: string } = {},
): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...opts }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve(cert);
    });
    socket.on('error', reject);
  });
}

function get(port: number, ca: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, ca }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end();
  });
}

function post(
  port: number,
  ca: string,
  path: string,
  body: string | Buffer,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        ca,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

void describe('WebhookServer', () => {
  let dir: string;
  let first: { ca: KeyPair; serving: KeyPair };
  let port: number;
  let server: WebhookServer;
  let stopped: Promise<void>;
  const abort = new AbortController();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flotilla-webhook-'));
    first = servingPair('first-ca');
    install(dir, first.serving);
    let ready = () => false;
    server = new WebhookServer({
      handler: new WebhookHandler({ ready: () => ready() }),
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
      reloadIntervalMs: 50,
    });
    const started = await server.start(abort.signal);
    ready = () => server.ready;
    port = started.address.port;
    stopped = started.stopped;
  });

  after(async () => {
    abort.abort();
    await stopped;
    rmSync(dir, { recursive: true, force: true });
  });

  void it('answers a review over HTTPS, verified against its CA', async () => {
    const r = await post(
      port,
      first.ca.certPem,
      '/validate',
      JSON.stringify(admissionRequestReview({ uid: 'tls-1', object: { apiVersion: 'v1', kind: 'ConfigMap' } })),
    );
    assert.equal(r.status, 200);
    assert.deepStrictEqual((JSON.parse(r.body) as { response: unknown }).response, { uid: 'tls-1', allowed: true });
  });

  void it('reports ready once listening', async () => {
    assert.equal(await get(port, first.ca.certPem, '/readyz'), 200);
  });

  // The TLS 1.1 client lowers its own security level, so the refusal (a protocol_version alert) can only
  // come from the server.
  void it('accepts TLS 1.2 and refuses TLS 1.1', async () => {
    await peerCertificate(port, { maxVersion: 'TLSv1.2' });
    await assert.rejects(
      peerCertificate(port, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' }),
      (e: NodeJS.ErrnoException) => e.code === 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
    );
  });

  void it('answers a body over 3 MiB with 413 over the wire', async () => {
    const r = await post(port, first.ca.certPem, '/validate', Buffer.alloc(4 * 1024 * 1024, 0x20));
    assert.equal(r.status, 413);
    assert.match(r.body, /larger than/);
  });

  void it('serves a renewed certificate to new connections without a restart', async () => {
    const before = await peerCertificate(port);
    const second = servingPair('second-ca');
    install(dir, second.serving);
    let seen = before.fingerprint256;
    for (let i = 0; i < 100 && seen === before.fingerprint256; i++) {
      await sleep(20);
      seen = (await peerCertificate(port)).fingerprint256;
    }
    assert.notEqual(seen, before.fingerprint256);
    assert.equal(await get(port, second.ca.certPem, '/healthz'), 200, 'the new CA verifies the served certificate');
    first = second;
  });

  void it('keeps the current certificate when the files on disk are not a usable pair', async () => {
    const current = await peerCertificate(port);
    writeFileSync(join(dir, 'tls.key'), 'not a key');
    await sleep(200);
    assert.equal((await peerCertificate(port)).fingerprint256, current.fingerprint256);
    install(dir, first.serving);
  });
});

void describe('WebhookServer.start', () => {
  void it('fails with a TLS error when the certificate cannot be read', async () => {
    const server = new WebhookServer({
      handler: new WebhookHandler(),
      certFile: '/nonexistent/tls.crt',
      keyFile: '/nonexistent/tls.key',
      port: 0,
      host: '127.0.0.1',
    });
    await assert.rejects(
      server.start(new AbortController().signal),
      (e: unknown) => e instanceof WebhookServerError && e.code === 'TLS',
    );
  });

  void it('stops listening when its signal aborts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-webhook-'));
    install(dir, servingPair('stop-ca').serving);
    const abort = new AbortController();
    const server = new WebhookServer({
      handler: new WebhookHandler(),
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
    });
    const { address, stopped } = await server.start(abort.signal);
    await peerCertificate(address.port);
    abort.abort();
    await stopped;
    assert.equal(server.ready, false);
    await assert.rejects(peerCertificate(address.port), /ECONNREFUSED/);
    rmSync(dir, { recursive: true, force: true });
  });
});

void describe('WebhookServer with a certificate and a key of different types', () => {
  const RELOAD_FAILURES = /^flotilla_webhook_certificate_reload_failures_total (\d+)$/m;
  const reloadFailures = (handler: WebhookHandler): number =>
    Number(RELOAD_FAILURES.exec(handler.registry.render())?.[1] ?? NaN);

  const mismatched: Array<{ name: string; pair: KeyPair; message: RegExp }> = [
    {
      name: 'an RSA certificate with an EC key',
      pair: { certPem: servingPair('rsa-ca').serving.certPem, keyPem: ecKeyPem() },
      message: /tls\.key is a key of type EC but the certificate .*tls\.crt holds a public key of type RSA/,
    },
    {
      name: 'an EC certificate with an RSA key',
      pair: { certPem: EC_SERVING_PAIR.certPem, keyPem: servingPair('rsa-ca').serving.keyPem },
      message: /tls\.key is a key of type RSA but the certificate .*tls\.crt holds a public key of type EC/,
    },
  ];

  for (const m of mismatched) {
    void it(`refuses to start with ${m.name}, naming both files`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'flotilla-webhook-'));
      // Aborted at the end, so a server that starts after all does not outlive the test.
      const abort = new AbortController();
      try {
        install(dir, m.pair);
        const server = new WebhookServer({
          handler: new WebhookHandler(),
          certFile: join(dir, 'tls.crt'),
          keyFile: join(dir, 'tls.key'),
          port: 0,
          host: '127.0.0.1',
        });
        await assert.rejects(server.start(abort.signal), (e: unknown) => {
          assert.ok(e instanceof WebhookServerError && e.code === 'TLS', String(e));
          assert.match(e.message, /^cannot load the serving certificate: the private key /);
          assert.match(e.message, m.message);
          return true;
        });
        assert.equal(server.ready, false);
      } finally {
        abort.abort();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    void it(`keeps serving the current certificate when ${m.name} is written, and counts the refused reload`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'flotilla-webhook-'));
      const good = servingPair('good-ca');
      install(dir, good.serving);
      const handler = new WebhookHandler();
      const abort = new AbortController();
      const server = new WebhookServer({
        handler,
        certFile: join(dir, 'tls.crt'),
        keyFile: join(dir, 'tls.key'),
        port: 0,
        host: '127.0.0.1',
        reloadIntervalMs: 20,
      });
      const { address, stopped } = await server.start(abort.signal);
      try {
        assert.equal(reloadFailures(handler), 0, 'the counter is exported from the start');
        const before = await peerCertificate(address.port);
        install(dir, m.pair);
        // Wait for the reload to have looked at the new files (event-driven: the counter moves).
        for (let i = 0; i < 250 && !(reloadFailures(handler) >= 2); i++) await sleep(20);
        assert.ok(reloadFailures(handler) >= 2, `reload failures: ${reloadFailures(handler)}`);
        assert.equal((await peerCertificate(address.port)).fingerprint256, before.fingerprint256);
        assert.equal(await get(address.port, good.ca.certPem, '/healthz'), 200, 'handshakes still succeed');
      } finally {
        abort.abort();
        await stopped;
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
