import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as plainRequest } from 'node:http';
import { request } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';

import { ecKeyPem } from '../../test/certs.js';
import { createCA, createServingCert } from '../certs/index.js';
import type { CommandIO } from './command.js';
import { run } from './index.js';

function io(signal: AbortSignal): CommandIO & { err: () => string } {
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return { stdout: new PassThrough(), stderr, stdin: new PassThrough(), env: {}, signal, err: () => err };
}

const plainGet = (port: number, path: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    plainRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });

/** The port a JSON log line with message `msg` names, once it has been written (0 if never). */
async function loggedPort(t: { err: () => string }, msg: string): Promise<number> {
  for (let i = 0; i < 250; i++) {
    const line = t
      .err()
      .split('\n')
      .find((l) => l.includes(`"msg":"${msg}"`));
    if (line) return (JSON.parse(line) as { port: number }).port;
    await new Promise((r) => setTimeout(r, 20));
  }
  return 0;
}

function servingPair(): string {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-cli-'));
  const serving = createServingCert(createCA('cli-ca'), { commonName: 'w', ipAddresses: ['127.0.0.1'] });
  writeFileSync(join(dir, 'tls.crt'), serving.certPem);
  writeFileSync(join(dir, 'tls.key'), serving.keyPem);
  return dir;
}

const get = (port: number, ca: string, path: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, ca }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });

void describe('flotilla webhook', () => {
  void it('serves over HTTPS until its signal aborts, then exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-cli-'));
    const ca = createCA('cli-ca');
    const serving = createServingCert(ca, { commonName: 'w', ipAddresses: ['127.0.0.1'] });
    writeFileSync(join(dir, 'tls.crt'), serving.certPem);
    writeFileSync(join(dir, 'tls.key'), serving.keyPem);
    const abort = new AbortController();
    const t = io(abort.signal);
    const exit = run(
      [
        'webhook',
        '--tls-cert-file',
        join(dir, 'tls.crt'),
        '--tls-private-key-file',
        join(dir, 'tls.key'),
        '--port',
        '0',
        '--health-port',
        '0',
        '--bind-address',
        '127.0.0.1',
      ],
      t,
    );
    let port = 0;
    for (let i = 0; i < 100 && port === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      const line = t
        .err()
        .split('\n')
        .find((l) => l.includes('"webhook listening"'));
      if (line) port = (JSON.parse(line) as { port: number }).port;
    }
    assert.ok(port > 0, t.err());
    assert.deepStrictEqual(await get(port, ca.certPem, '/readyz'), { status: 200, body: 'ok' });
    // The probes' own port, plain HTTP.
    const healthPort = await loggedPort(t, 'probes served over plain HTTP');
    assert.ok(healthPort > 0 && healthPort !== port, t.err());
    assert.deepStrictEqual(await plainGet(healthPort, '/healthz'), { status: 200, body: 'ok' });
    assert.deepStrictEqual(await plainGet(healthPort, '/readyz'), { status: 200, body: 'ok' });
    assert.equal((await plainGet(healthPort, '/metrics')).status, 404, 'only the probes on this port');
    abort.abort();
    assert.equal(await exit, 0);
    assert.match(t.err(), /"msg":"webhook stopped"/);
    rmSync(dir, { recursive: true, force: true });
  });

  void it('exits 1 naming --health-port when that port is taken, and closes the HTTPS port it opened', async () => {
    const dir = servingPair();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const takenPort = (taken.address() as AddressInfo).port;
    const t = io(new AbortController().signal);
    try {
      const code = await run(
        [
          'webhook',
          '--tls-cert-file',
          join(dir, 'tls.crt'),
          '--tls-private-key-file',
          join(dir, 'tls.key'),
          '--port',
          '0',
          '--health-port',
          String(takenPort),
          '--bind-address',
          '127.0.0.1',
        ],
        t,
      );
      assert.equal(code, 1, t.err());
      assert.match(t.err(), new RegExp(`cannot listen on 127\\.0\\.0\\.1:${takenPort} for probes \\(--health-port\\)`));
      assert.match(t.err(), /EADDRINUSE/);
      const https = await loggedPort(t, 'webhook listening');
      assert.ok(https > 0, t.err());
      // The HTTPS listener it had opened is closed again: a connection to it is refused.
      await assert.rejects(get(https, '', '/healthz'), /ECONNREFUSED/);
    } finally {
      taken.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  void it('exits 1 with a message when the certificate cannot be loaded', async () => {
    const t = io(new AbortController().signal);
    assert.equal(
      await run(
        ['webhook', '--tls-cert-file', '/nonexistent.crt', '--tls-private-key-file', '/nonexistent.key', '--port', '0'],
        t,
      ),
      1,
    );
    assert.match(t.err(), /cannot load the serving certificate/);
  });

  void it('exits 1 with a one-line message, no stack, when the key is of another type than the certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-cli-'));
    writeFileSync(
      join(dir, 'tls.crt'),
      createServingCert(createCA('cli-ca'), { commonName: 'w', ipAddresses: ['127.0.0.1'] }).certPem,
    );
    writeFileSync(join(dir, 'tls.key'), ecKeyPem());
    const abort = new AbortController();
    const t = io(abort.signal);
    // Should it start after all, stop it at once so the test fails rather than hangs.
    t.stderr.on('data', (c: Buffer) => c.toString().includes('"webhook listening"') && abort.abort());
    try {
      const code = await run(
        [
          'webhook',
          '--tls-cert-file',
          join(dir, 'tls.crt'),
          '--tls-private-key-file',
          join(dir, 'tls.key'),
          '--port',
          '0',
          '--bind-address',
          '127.0.0.1',
        ],
        t,
      );
      assert.equal(code, 1, t.err());
      const lines = t.err().trim().split('\n');
      assert.equal(lines.length, 1, t.err());
      const entry = JSON.parse(lines[0] ?? '') as { level: string; msg: string };
      assert.equal(entry.level, 'error');
      assert.equal(
        entry.msg,
        `cannot load the serving certificate: the private key ${join(dir, 'tls.key')} is a key of type EC but the certificate ${join(dir, 'tls.crt')} holds a public key of type RSA`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const usage: Array<{ name: string; args: string[]; message: RegExp }> = [
    { name: 'missing certificate flags', args: ['--port', '8443'], message: /--tls-cert-file is required/ },
    {
      name: 'a port out of range',
      args: ['--tls-cert-file', 'c', '--tls-private-key-file', 'k', '--port', '70000'],
      message: /--port must be a port number \(0 to 65535\), got "70000"/,
    },
    {
      name: 'a health port that is not a number',
      args: ['--tls-cert-file', 'c', '--tls-private-key-file', 'k', '--health-port', 'http'],
      message: /--health-port must be a port number \(0 to 65535\), got "http"/,
    },
    {
      name: 'a malformed reload interval',
      args: ['--tls-cert-file', 'c', '--tls-private-key-file', 'k', '--cert-reload-interval', 'often'],
      message: /--cert-reload-interval: invalid duration "often"/,
    },
    {
      name: 'a duration without a unit',
      args: ['--tls-cert-file', 'c', '--tls-private-key-file', 'k', '--cluster-list-interval', '30'],
      message: /--cluster-list-interval: invalid duration "30": missing unit; did you mean 30s\?/,
    },
    {
      name: 'a zero interval',
      args: ['--tls-cert-file', 'c', '--tls-private-key-file', 'k', '--cert-reload-interval', '0s'],
      message: /--cert-reload-interval must be positive, got "0s"/,
    },
    {
      name: 'an interval longer than a timer takes',
      args: ['--tls-cert-file', 'c', '--tls-private-key-file', 'k', '--cluster-list-interval', '1000h'],
      message: /--cluster-list-interval must be at most 596h31m23\.647s/,
    },
    { name: 'a positional argument', args: ['serve'], message: /unexpected argument "serve"/ },
  ];
  for (const u of usage) {
    void it(`rejects ${u.name} as a usage error naming the flag`, async () => {
      const t = io(new AbortController().signal);
      assert.equal(await run(['webhook', ...u.args], t), 2);
      assert.match(t.err(), u.message);
    });
  }

  void it('takes Go durations such as 1m30s for its intervals', async () => {
    const t = io(new AbortController().signal);
    const code = await run(
      [
        'webhook',
        '--tls-cert-file',
        '/nonexistent.crt',
        '--tls-private-key-file',
        '/nonexistent.key',
        '--port',
        '0',
        '--cert-reload-interval',
        '1m30s',
        '--cluster-list-interval',
        '1h2m3.5s',
      ],
      t,
    );
    assert.equal(code, 1, 'gets past flag parsing to loading the certificate');
    assert.match(t.err(), /cannot load the serving certificate/);
  });
});
