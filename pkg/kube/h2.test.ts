// HTTP/2 to an apiserver, against local servers at the transport level: node:http2 standing in for an
// apiserver that speaks h2 (as kube-apiserver does), node:https for one that speaks HTTP/1.1 only, and a
// frozen TCP proxy for a dead link. Counted from the server side: connections (sessions) and streams.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer as createHttpsServer } from 'node:https';
import http2, { type Http2SecureServer, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';

import { PausableProxy } from '../../test/pausable-proxy.js';
import { createCA, createServingCert } from '../certs/index.js';
import { KubeClient } from './client.js';
import { TransportError } from './errors.js';
import { H2Pool } from './h2.js';
import { agentTlsOptions } from './transport.js';
import { Watcher } from './watch.js';

const TOKEN = 'h2-test-token';
const ca = createCA('h2-test-ca');
const serving = createServingCert(ca, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, caData: Buffer.from(ca.certPem).toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'u', token: TOKEN }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return kc;
}

type StreamHandler = (stream: ServerHttp2Stream, headers: http2.IncomingHttpHeaders, n: number) => void;

class H2Apiserver {
  readonly server: Http2SecureServer;
  sessions: ServerHttp2Session[] = [];
  streams = 0;
  authorization: string[] = [];
  handler: StreamHandler = (stream) => reply(stream, 200, {});

  constructor() {
    this.server = http2.createSecureServer({ cert: serving.certPem, key: serving.keyPem });
    this.server.on('session', (s: ServerHttp2Session) => this.sessions.push(s));
    this.server.on('stream', (stream, headers) => {
      this.authorization.push(String(headers.authorization ?? ''));
      this.handler(stream, headers, ++this.streams);
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const s of this.sessions) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function reply(stream: ServerHttp2Stream, status: number, body: unknown, headers: Record<string, string> = {}): void {
  stream.respond({ ':status': status, 'content-type': 'application/json', ...headers });
  stream.end(JSON.stringify(body));
}

const event = (type: string, name: string) =>
  `${JSON.stringify({ type, object: { kind: 'ConfigMap', metadata: { name, resourceVersion: '1' } } })}\n`;

void describe('HTTP/2 to an apiserver', () => {
  const api = new H2Apiserver();
  let url = '';
  before(async () => {
    url = await api.listen();
  });
  after(() => api.close());

  it('carries the requests of several clients and their watch on one connection', async () => {
    api.sessions = [];
    api.authorization = [];
    api.handler = (stream, headers) => {
      const path = String(headers[':path']);
      if (path.includes('watch=1')) {
        stream.respond({ ':status': 200, 'content-type': 'application/json' });
        stream.write(event('ADDED', 'a'));
        stream.end(event('MODIFIED', 'a'));
        return;
      }
      reply(stream, 200, { path, method: headers[':method'] }, { warning: '299 - "deprecated here"' });
    };
    const kc = kubeConfigFor(url);
    const a = new KubeClient(kc, { concurrency: 4 });
    const b = new KubeClient(kc, { concurrency: 4 });
    const watcher = new Watcher(kc);
    const events: string[] = [];
    const [answers] = await Promise.all([
      Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (i % 2 ? a : b).request<{ path: string; method: string }>({ method: 'GET', path: `/api/v1/x${i}` }),
        ),
      ),
      watcher.watch(
        { path: '/api/v1/configmaps', query: {}, idleTimeoutMs: 5_000, signal: new AbortController().signal },
        (e) => events.push(`${e.type} ${String((e.object.metadata as { name: string }).name)}`),
      ),
    ]);
    assert.equal(api.sessions.length, 1, 'one connection for both clients and the watch');
    assert.deepEqual(
      answers.map((r) => [r.status, r.body?.path, r.warnings]),
      Array.from({ length: 12 }, (_, i) => [200, `/api/v1/x${i}`, ['deprecated here']]),
    );
    assert.deepEqual(events, ['ADDED a', 'MODIFIED a']);
    assert.ok(
      api.authorization.every((h) => h === `Bearer ${TOKEN}`),
      'each stream carries the credentials',
    );
    await Promise.all([a.close(), b.close()]);
    watcher.close();
  });

  it('sends a body and reads an error status as the answer', async () => {
    api.handler = (stream, headers) => {
      let body = '';
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => (body += c));
      stream.on('end', () =>
        reply(stream, 409, { kind: 'Status', message: `conflict on ${String(headers[':method'])} ${body}` }),
      );
    };
    const client = new KubeClient(kubeConfigFor(url), { concurrency: 1 });
    const res = await client.request<{ message: string }>({ method: 'PATCH', path: '/api/v1/x', body: { a: 1 } });
    assert.equal(res.status, 409);
    assert.equal(res.body?.message, 'conflict on PATCH {"a":1}');
    await client.close();
  });

  it('opens a new connection when the server ends the one it had (GOAWAY)', async () => {
    api.sessions = [];
    api.handler = (stream) => {
      reply(stream, 200, {});
      stream.session?.goaway();
    };
    const client = new KubeClient(kubeConfigFor(url), { concurrency: 1 });
    for (let i = 0; i < 3; i++) {
      assert.equal((await client.request({ method: 'GET', path: '/version' })).status, 200);
      await sleep(50); // the GOAWAY arrives
    }
    assert.equal(api.sessions.length, 3, 'each request after a GOAWAY on a new connection');
    await client.close();
  });

  it('sends a stream the server refused once more', async () => {
    api.handler = (stream, _headers, n) => {
      stream.on('error', () => undefined); // the server's side of the refusal
      if (n % 2 === 1) stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      else reply(stream, 200, { n });
    };
    api.streams = 0;
    const client = new KubeClient(kubeConfigFor(url), { concurrency: 1 });
    const res = await client.request<{ n: number }>({ method: 'GET', path: '/version' });
    assert.equal(res.status, 200);
    assert.equal(res.body?.n, 2);
    await client.close();
  });

  it('fails a request with no answer within its timeout, naming the server', async () => {
    api.handler = () => undefined;
    const client = new KubeClient(kubeConfigFor(url), { concurrency: 1, timeoutMs: 200 });
    await assert.rejects(client.request({ method: 'GET', path: '/slow' }), (e: unknown) => {
      assert.ok(e instanceof TransportError);
      assert.equal(e.errno, 'ETIMEDOUT');
      assert.match(e.message, /127\.0\.0\.1/);
      return true;
    });
    await client.close();
  });

  it('reaches a server that speaks HTTP/1.1 only, over keep-alive connections', async () => {
    let requests = 0;
    const plain = createHttpsServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ http: req.httpVersion }));
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const client = new KubeClient(kubeConfigFor(`https://127.0.0.1:${(plain.address() as AddressInfo).port}`), {
      concurrency: 2,
    });
    const answers = await Promise.all(
      [1, 2, 3].map(() => client.request<{ http: string }>({ method: 'GET', path: '/' })),
    );
    assert.deepEqual(
      answers.map((r) => r.body?.http),
      ['1.1', '1.1', '1.1'],
    );
    assert.equal(requests, 3);
    await client.close();
    plain.closeAllConnections();
    await new Promise<void>((resolve) => plain.close(() => resolve()));
  });

  it('closes a connection that does not answer a PING, failing every stream on it', async () => {
    api.handler = () => undefined; // held open: a watch that sends nothing yet
    const proxy = await PausableProxy.start(url);
    const pool = new H2Pool({ pingTimeoutMs: 300 });
    const base = new URL(proxy.url);
    const material = { ca: ca.certPem };
    const c = pool.acquire(base, material, () => agentTlsOptions(proxy.url, material));
    const session = await c.route();
    assert.notEqual(session, 'http/1.1');
    if (session === 'http/1.1') return;
    const stream = c.request(session, { ':method': 'GET', ':path': '/watch' }, true);
    const failed = new Promise<string>((resolve) => {
      stream.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      stream.on('close', () => resolve(`closed ${stream.rstCode}`));
    });
    proxy.freeze();
    const started = Date.now();
    c.suspect();
    const outcome = await failed;
    const waited = Date.now() - started;
    assert.ok(session.destroyed, `the connection is closed (${outcome})`);
    assert.ok(waited >= 250 && waited < 5_000, `within the PING timeout, not the stream's own (${waited} ms)`);
    pool.release(c);
    assert.equal(pool.size, 0);
    await proxy.close();
  });

  it('lets a process exit once its streams are done (the connection does not hold it)', async () => {
    api.handler = (stream) => reply(stream, 200, { ok: true });
    const client = pathToFileURL(fileURLToPath(new URL('./client.js', import.meta.url))).href;
    const config = pathToFileURL(fileURLToPath(new URL('./config.js', import.meta.url))).href;
    const script = `
      const { KubeClient } = await import(${JSON.stringify(client)});
      const { KubeConfig } = await import(${JSON.stringify(config)});
      const kc = new KubeConfig();
      kc.loadFromString(process.env.KUBECONFIG_TEXT);
      const res = await new KubeClient(kc, { concurrency: 1 }).request({ method: 'GET', path: '/version' });
      console.log(res.status, JSON.stringify(res.body));`;
    const kubeconfig = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: { server: url, 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64') },
        },
      ],
      users: [{ name: 'u', user: { token: TOKEN } }],
      contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'ctx',
    });
    const sessions = api.sessions.length;
    const out = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = execFile(
        process.execPath,
        ['--input-type=module', '-e', script],
        { env: { ...process.env, KUBECONFIG_TEXT: kubeconfig }, timeout: 10_000 },
        (err, stdout) =>
          err && err.killed ? reject(new Error('the process did not exit')) : resolve({ code: child.exitCode, stdout }),
      );
    });
    assert.equal(out.stdout.trim(), '200 {"ok":true}');
    assert.equal(out.code, 0);
    assert.equal(api.sessions.length, sessions + 1, 'it went over HTTP/2');
  });
});
