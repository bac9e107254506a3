// The client against a local HTTPS server standing in for an apiserver at the transport level: real TLS
// with a CA from the kubeconfig, real sockets, keep-alive and concurrency observed from the server side.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';

import { createCA, createServingCert } from '../certs/index.js';
import { KubeClient } from './client.js';
import { Discovery, resourcePath } from './discovery.js';
import { TransportError, UnknownKindError } from './errors.js';
import { Watcher } from './watch.js';

const TOKEN = 'token-that-must-not-leak';
const ca = createCA('client-test-ca');
const serving = createServingCert(ca, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });

/** A port nothing listens on (it was free a moment ago). */
async function freePortForTest(): Promise<number> {
  const s = createTcpServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

class FakeApiserver {
  server: Server;
  handler: Handler = (_req, res) => json(res, 200, {});
  sockets = new Set<Socket>();
  connections = 0;
  inFlight = 0;
  maxInFlight = 0;
  authHeaders: string[] = [];

  constructor() {
    this.server = createServer({ cert: serving.certPem, key: serving.keyPem, keepAliveTimeout: 30_000 }, (req, res) => {
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      this.authHeaders.push(req.headers.authorization ?? '');
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        res.on('finish', () => this.inFlight--);
        this.handler(req, res, body);
      });
    });
    this.server.on('secureConnection', (s: Socket) => {
      this.connections++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function kubeConfigFor(port: number): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'c',
        server: `https://127.0.0.1:${port}`,
        caData: Buffer.from(ca.certPem).toString('base64'),
        skipTLSVerify: false,
      },
    ],
    users: [{ name: 'u', token: TOKEN }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return kc;
}

void describe('KubeClient', () => {
  const api = new FakeApiserver();
  let port = 0;
  before(async () => {
    port = await api.listen();
  });
  after(() => api.close());

  it('sends the kubeconfig credentials, over TLS verified with its CA', async () => {
    api.authHeaders = [];
    const client = new KubeClient(kubeConfigFor(port), { concurrency: 2 });
    const res = await client.request({ method: 'GET', path: '/version' });
    assert.equal(res.status, 200);
    assert.deepEqual(api.authHeaders, [`Bearer ${TOKEN}`]);
    await client.close();
  });

  it('sends an unqueued request (the readiness probe) while every queued slot hangs', async () => {
    const held: Array<() => void> = [];
    api.handler = (req, res) => {
      if (req.url === '/readyz') res.end('ok');
      else held.push(() => json(res, 200, {}));
    };
    const client = new KubeClient(kubeConfigFor(port), { concurrency: 2 });
    const hanging = Array.from({ length: 4 }, (_, i) => client.request({ method: 'GET', path: `/api/v1/x${i}` }));
    while (held.length < 2) await new Promise((r) => setImmediate(r));
    const probe = await client.request({ method: 'GET', path: '/readyz', accept: 'text/plain', unqueued: true });
    assert.equal(probe.status, 200);
    assert.equal(held.length, 2, 'the queued requests are still held');
    let released = 0;
    while (released < 4) {
      for (const r of held.splice(0)) {
        r();
        released++;
      }
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(hanging);
    await client.close();
  });

  it('reuses connections and never has more than `concurrency` requests in flight', async () => {
    const release: Array<() => void> = [];
    api.handler = (_req, res) => release.push(() => json(res, 200, { ok: true }));
    api.connections = 0;
    api.maxInFlight = 0;
    const client = new KubeClient(kubeConfigFor(port), { concurrency: 3 });
    const all = Promise.all(
      Array.from({ length: 30 }, (_, i) => client.request({ method: 'GET', path: `/api/v1/namespaces/n${i}` })),
    );
    // Answer requests as they arrive, in waves of whatever is waiting.
    let answered = 0;
    while (answered < 30) {
      await new Promise((r) => setImmediate(r));
      for (const r of release.splice(0)) {
        r();
        answered++;
      }
    }
    const results = await all;
    assert.ok(results.every((r) => r.status === 200));
    assert.equal(api.maxInFlight, 3);
    assert.ok(api.connections <= 3, `${api.connections} connections for 30 requests at concurrency 3`);
    await client.close();
    api.handler = (_req, res) => json(res, 200, {});
  });

  it('sends a server-side apply as JSON with its query, and returns the Status of an error', async () => {
    let seen: { method?: string; url?: string; type?: string; body?: string } = {};
    api.handler = (req, res, body) => {
      seen = { method: req.method, url: req.url, type: req.headers['content-type'], body };
      json(res, 409, {
        kind: 'Status',
        status: 'Failure',
        reason: 'Conflict',
        message: 'Apply failed with 1 conflict',
        code: 409,
      });
    };
    const client = new KubeClient(kubeConfigFor(port), { concurrency: 1 });
    const res = await client.request({
      method: 'PATCH',
      path: '/apis/apps/v1/namespaces/shop/deployments/web',
      query: { fieldManager: 'flotilla', force: 'false' },
      contentType: 'application/apply-patch+yaml',
      body: { kind: 'Deployment', x: 'é' },
    });
    assert.equal(res.status, 409);
    assert.deepEqual(seen, {
      method: 'PATCH',
      url: '/apis/apps/v1/namespaces/shop/deployments/web?fieldManager=flotilla&force=false',
      type: 'application/apply-patch+yaml',
      body: '{"kind":"Deployment","x":"é"}',
    });
    await assert.rejects(client.requestOk({ method: 'GET', path: '/x' }), {
      name: 'ApiError',
      status: 409,
      reason: 'Conflict',
      message: 'Apply failed with 1 conflict',
    });
    await client.close();
    api.handler = (_req, res) => json(res, 200, {});
  });

  it('retries 429 with the delay the apiserver asks for, then gives the answer', async () => {
    let calls = 0;
    api.handler = (_req, res) =>
      ++calls < 3
        ? json(res, 429, { kind: 'Status', reason: 'TooManyRequests', details: { retryAfterSeconds: 0 } })
        : json(res, 200, { ok: 1 });
    const client = new KubeClient(kubeConfigFor(port), { concurrency: 1 });
    const res = await client.request({ method: 'GET', path: '/x' });
    assert.equal(res.status, 200);
    assert.equal(calls, 3);
    await client.close();
    api.handler = (_req, res) => json(res, 200, {});
  });

  it('refuses an answer larger than the limit', async () => {
    api.handler = (_req, res) => json(res, 200, { big: 'x'.repeat(10_000) });
    const client = new KubeClient(kubeConfigFor(port), { concurrency: 1, maxResponseBytes: 1000 });
    await assert.rejects(
      client.request({ method: 'GET', path: '/x' }),
      (e: unknown) => e instanceof TransportError && /larger than 1000 bytes/.test(e.message),
    );
    await client.close();
    api.handler = (_req, res) => json(res, 200, {});
  });

  it('verifies every connection it opens at once with the kubeconfig CA', async () => {
    const held: Array<() => void> = [];
    api.handler = (_req, res) => held.push(() => json(res, 200, {}));
    const before = api.connections;
    const client = new KubeClient(kubeConfigFor(port), { concurrency: 4 });
    const answers = Array.from({ length: 4 }, (_, i) => client.request({ method: 'GET', path: `/api/v1/c${i}` }));
    while (held.length < 4) await new Promise((r) => setImmediate(r));
    for (const answer of held) answer();
    assert.deepEqual(
      (await Promise.all(answers)).map((r) => r.status),
      [200, 200, 200, 200],
    );
    assert.equal(api.connections - before, 4);
    await client.close();
    api.handler = (_req, res) => json(res, 200, {});
  });

  it('fails each request and watch with a TransportError naming the server when the client key is not a key', async () => {
    const kc = kubeConfigFor(port);
    const notAKey = Buffer.from('not a key').toString('base64');
    kc.users = [{ name: 'u', certData: Buffer.from(serving.certPem).toString('base64'), keyData: notAKey }];
    const client = new KubeClient(kc, { concurrency: 1 });
    const watcher = new Watcher(kc);
    const named = (e: unknown) => {
      assert.ok(e instanceof TransportError);
      assert.match(e.message, new RegExp(`^https://127\\.0\\.0\\.1:${port}: TLS credentials: `));
      return true;
    };
    for (let i = 0; i < 2; i++) await assert.rejects(client.request({ method: 'GET', path: '/version' }), named);
    const stop = new AbortController();
    const watch = { path: '/api/v1/configmaps', query: {}, idleTimeoutMs: 5_000, signal: stop.signal };
    await assert.rejects(
      watcher.watch(watch, () => undefined),
      named,
    );
    stop.abort();
    await client.close();
  });

  it('fails with a TransportError naming the server, not the credentials, when nothing listens', async () => {
    const closed = await freePortForTest();
    const client = new KubeClient(kubeConfigFor(closed), { concurrency: 1 });
    await assert.rejects(client.request({ method: 'GET', path: '/version' }), (e: unknown) => {
      assert.ok(e instanceof TransportError);
      assert.equal(e.errno, 'ECONNREFUSED');
      assert.match(e.message, new RegExp(`^https://127\\.0\\.0\\.1:${closed}: `));
      assert.ok(!e.message.includes(TOKEN));
      return true;
    });
    await client.close();
  });

  it('fails with a TransportError when the server certificate is not from the kubeconfig CA', async () => {
    const kc = kubeConfigFor(port);
    const other = createCA('someone-else');
    kc.clusters = [{ ...kc.clusters[0]!, caData: Buffer.from(other.certPem).toString('base64') }];
    const client = new KubeClient(kc, { concurrency: 1 });
    await assert.rejects(
      client.request({ method: 'GET', path: '/version' }),
      (e: unknown) => e instanceof TransportError && !e.message.includes(TOKEN),
    );
    await client.close();
  });
});

void describe('Discovery', () => {
  const api = new FakeApiserver();
  let port = 0;
  const requests: string[] = [];
  before(async () => {
    port = await api.listen();
    api.handler = (req, res) => {
      requests.push(req.url ?? '');
      if (req.url === '/api/v1')
        return json(res, 200, {
          resources: [
            { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
            { name: 'namespaces', kind: 'Namespace', namespaced: false },
            { name: 'namespaces/status', kind: 'Namespace', namespaced: false },
          ],
        });
      if (req.url === '/apis/apps/v1')
        return json(res, 200, {
          resources: [
            { name: 'deployments', kind: 'Deployment', namespaced: true },
            { name: 'deployments/scale', kind: 'Scale', namespaced: true },
          ],
        });
      if (req.url === '/apis')
        return json(res, 200, {
          groups: [{ name: 'apps', preferredVersion: { version: 'v1' }, versions: [{ version: 'v1' }] }],
        });
      json(res, 404, { kind: 'Status', reason: 'NotFound' });
    };
  });
  after(() => api.close());

  it('resolves kinds to resources and scopes, asking once per group-version', async () => {
    const client = new KubeClient(kubeConfigFor(port), { concurrency: 4 });
    const d = new Discovery(client);
    const [cm, ns, dep, dep2] = await Promise.all([
      d.resolve('v1', 'ConfigMap'),
      d.resolve('v1', 'Namespace'),
      d.resolve('apps/v1', 'Deployment'),
      d.resolveGroupKind('apps', 'Deployment'),
    ]);
    assert.equal(resourcePath(cm, 'shop', 'a b'), '/api/v1/namespaces/shop/configmaps/a%20b');
    assert.equal(resourcePath(ns, undefined, 'shop'), '/api/v1/namespaces/shop');
    assert.equal(resourcePath(dep, 'shop'), '/apis/apps/v1/namespaces/shop/deployments');
    assert.deepEqual(dep2, dep);
    assert.deepEqual(requests.filter((r) => r === '/apis/apps/v1').length, 1);
    await client.close();
  });

  it('says which kind or group-version the member lacks', async () => {
    const client = new KubeClient(kubeConfigFor(port), { concurrency: 1 });
    const d = new Discovery(client);
    await assert.rejects(
      d.resolve('example.com/v1', 'Widget'),
      (e: unknown) => e instanceof UnknownKindError && e.message === 'the member does not serve example.com/v1',
    );
    await assert.rejects(
      d.resolve('apps/v1', 'Widget'),
      (e: unknown) => e instanceof UnknownKindError && e.message === 'the member has no kind Widget in apps/v1',
    );
    await client.close();
  });
});
