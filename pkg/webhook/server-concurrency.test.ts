// The webhook server's limits with many clients at once: the in-flight ceiling holds exactly when several
// clients never read their answers, each such connection is closed by the write timeout, and /healthz is
// answered between admission requests instead of after all of them. Real sockets, real TLS, the real
// server and the engine's OverrideSet; only the limits are made small so the tests are quick.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';

import { eventually } from '../../test/eventually.js';
import { cluster, clusterOverridePolicy, deployment, type Obj } from '../../test/builders.js';
import { createCA, createServingCert } from '../certs/index.js';
import { clusterInfo, OverrideSet } from '../engine/index.js';
import { WebhookHandler } from './handler.js';
import type { OverrideSource } from './overriding.js';
import { admissionRequestReview, conversionRequestReview } from './reviews.js';
import { WebhookServer } from './server.js';
import { parseTables } from './unacked.js';

const WRITE_TIMEOUT_MS = 1_000;
const IN_FLIGHT_BYTES = 6 * 1024 * 1024;
const ANSWER_BYTES = 1_000_000;

function raw(path: string, body: string, method = 'POST'): string {
  return `${method} ${path} HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

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

/**
 * /override's policies: Deployments labelled `big` get a label of ANSWER_BYTES characters (a patch that
 * large), and every Deployment gets its containers' images and environment rewritten (work that grows
 * with the object).
 */
function overrides(): OverrideSource {
  const set = new OverrideSet(clusterInfo(cluster('eu-1', { region: 'eu-west-1' })));
  const add = (p: Obj) => assert.equal(set.upsert(p), undefined);
  add(
    clusterOverridePolicy(
      'big-label',
      [{ overriders: { labelsOverrider: [{ operator: 'add', value: { note: 'n'.repeat(ANSWER_BYTES) } }] } }],
      [{ apiVersion: 'apps/v1', kind: 'Deployment', labelSelector: { matchLabels: { size: 'big' } } }],
    ),
  );
  add(
    clusterOverridePolicy('mirror', [
      {
        overriders: {
          imageOverrider: [{ component: 'Registry', operator: 'replace', value: 'mirror.${cluster.region}' }],
          argsOverrider: [{ containerName: 'c0', operator: 'add', value: ['--region=${cluster.region}'] }],
        },
      },
    ]),
  );
  return { set, ready: () => true, namespaceLabels: () => undefined };
}

/** A Deployment of `containers` containers with 40 environment variables each. */
function wideDeployment(containers: number, labels?: Record<string, string>): Obj {
  return deployment('web', 'shop', {
    ...(labels ? { labels } : {}),
    containers: Array.from({ length: containers }, (_, i) => ({
      name: `c${i}`,
      image: `registry.example.com/app/c${i}:1.0`,
      env: Array.from({ length: 40 }, (_, j) => ({ name: `VAR_${j}`, value: `value-${i}-${j}` })),
    })),
  });
}

const overrideReview = (object: Obj, uid: string): string =>
  JSON.stringify(admissionRequestReview({ uid, operation: 'CREATE', object }));

// An answer's status line follows the previous answer's body directly, not at a line start.
const statusLines = (text: string): string[] => text.match(/HTTP\/1\.1 \d{3} [^\r]*/g) ?? [];

interface Client {
  socket: TLSSocket;
  /** Settles when the connection closes, with everything the server had sent that the client then read. */
  closed: Promise<string>;
}

/** A client that sends `data` and reads nothing until `read()` is called. */
function neverReading(port: number, data: string): Client & { read: () => void; received: () => string } {
  const chunks: Buffer[] = [];
  const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
    socket.write(data);
    socket.pause();
  });
  socket.on('error', () => undefined);
  socket.on('data', (c: Buffer) => chunks.push(c));
  const closed = new Promise<string>((resolve) =>
    socket.once('close', () => resolve(Buffer.concat(chunks).toString('latin1'))),
  );
  return { socket, closed, read: () => socket.resume(), received: () => Buffer.concat(chunks).toString('latin1') };
}

/** The server's side of each established connection to `port`, from the kernel's tables: its send queue. */
function queuesOf(port: number): number[] {
  const texts = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((p) => {
    try {
      return [readFileSync(p, 'utf8')];
    } catch {
      return [];
    }
  });
  return [...parseTables(texts)].filter(([k]) => k.startsWith(`${port}:`)).map(([, bytes]) => bytes);
}

const connectionsTo = (port: number): number => queuesOf(port).length;

/** Resolves with `p`'s value, or 'late' after `ms`. */
const within = <T>(p: Promise<T>, ms: number): Promise<T | 'late'> =>
  Promise.race([p, new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), ms).unref())]);

void describe('WebhookServer under concurrent clients', () => {
  let dir: string;
  let port: number;
  let server: WebhookServer;
  const abort = new AbortController();
  let stopped: Promise<void>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flotilla-concurrency-'));
    const ca = createCA('concurrency-ca');
    const pair = createServingCert(ca, { commonName: 'flotilla-webhook', ipAddresses: ['127.0.0.1'] });
    writeFileSync(join(dir, 'tls.crt'), pair.certPem);
    writeFileSync(join(dir, 'tls.key'), pair.keyPem);
    server = new WebhookServer({
      handler: new WebhookHandler({ overrides: overrides() }),
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
      writeTimeoutMs: WRITE_TIMEOUT_MS,
      maxInFlightBytes: IN_FLIGHT_BYTES,
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

  for (const route of ['/convert', '/override'] as const) {
    void it(`${route}: keeps what the kernel holds for clients that never read under the in-flight ceiling, and closes each by the write timeout`, async () => {
      const request =
        route === '/convert'
          ? raw(route, bigConversion(ANSWER_BYTES))
          : raw(route, overrideReview(wideDeployment(1, { size: 'big' }), 'u-big'));
      // Sixteen clients at once, each owed an answer of ~1 MB that it never reads: the 6 MiB ceiling holds
      // a few such answers at a time, and none is released before its client has it. What the server's
      // kernel holds for them unacknowledged (their answers, encrypted) is what the ceiling bounds.
      const clients = Array.from({ length: 16 }, () => neverReading(port, request));
      let mostQueued = 0;
      const sampling = setInterval(() => {
        mostQueued = Math.max(
          mostQueued,
          queuesOf(port).reduce((a, b) => a + b, 0),
        );
      }, 10);
      try {
        // A paused client does not see the server close; the kernel's table does.
        await eventually(
          () => connectionsTo(port),
          (n) => n === 16,
          10_000,
        );
        const open = await eventually(
          () => connectionsTo(port),
          (n) => n === 0,
          2 * WRITE_TIMEOUT_MS + 15_000,
        );
        // What each client would have read: its answer's status line is in the bytes it was sent.
        for (const c of clients) c.read();
        await within(Promise.all(clients.map((c) => c.closed)), 5_000);
        const statuses = clients.map((c) => statusLines(c.received())[0] ?? 'nothing');
        assert.equal(open, 0, `${open} of 16 never-reading connections still open; answers: ${statuses.join(', ')}`);
        const answered = statuses.filter((s) => s === 'HTTP/1.1 200 OK').length;
        assert.ok(answered >= 1, `no answer at all: ${statuses.join(', ')}`);
        // TLS adds a few bytes per 16 KiB record and each answer has its headers: 1% and 1 KiB each.
        assert.ok(
          mostQueued <= IN_FLIGHT_BYTES * 1.01 + 16 * 1024,
          `the kernel held ${mostQueued} unacknowledged bytes for them under a ${IN_FLIGHT_BYTES}-byte ceiling (answers: ${statuses.join(', ')})`,
        );
        assert.equal(server.inFlightBytes, 0, 'nothing held once they are gone');
      } finally {
        clearInterval(sampling);
        for (const c of clients) c.socket.destroy();
      }
    });
  }
});
