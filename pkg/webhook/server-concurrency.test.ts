// The webhook server's limits with many clients at once: the in-flight ceiling holds exactly when several
// clients never read their answers, each such connection is closed by the write timeout, and /healthz is
// answered between admission requests instead of after all of them. Real sockets, real TLS, the real
// server and the engine's OverrideSet; only the limits are made small so the tests are quick.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
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
function neverReading(
  port: number,
  data: string,
): Client & { sent: Promise<void>; read: () => void; received: () => string } {
  const chunks: Buffer[] = [];
  let sent = () => undefined as void;
  const written = new Promise<void>((resolve) => (sent = resolve));
  const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
    socket.write(data, () => sent());
    socket.pause();
  });
  socket.on('error', () => undefined);
  socket.on('data', (c: Buffer) => chunks.push(c));
  const closed = new Promise<string>((resolve) =>
    socket.once('close', () => resolve(Buffer.concat(chunks).toString('latin1'))),
  );
  return {
    socket,
    closed,
    sent: written,
    read: () => socket.resume(),
    received: () => Buffer.concat(chunks).toString('latin1'),
  };
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
    void it(`${route}: keeps what the kernel holds for clients that never read under the in-flight ceiling, and closes by the write timeout each that has not taken its answer`, async () => {
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
        // Once every answer is due, nothing may be held for these clients beyond the write timeout: no
        // bytes counted, and no connection still open with bytes its client has not acknowledged (a paused
        // client does not see the server close; the kernel's table does). A connection whose small answer
        // its client's kernel took whole may stay, holding nothing, until the idle timeout.
        await Promise.all(clients.map((c) => c.sent));
        await sleep(WRITE_TIMEOUT_MS);
        const left = await eventually(
          () => ({ counted: server.inFlightBytes, unacknowledged: queuesOf(port).filter((b) => b > 0).length }),
          (l) => l.counted === 0 && l.unacknowledged === 0,
          2 * WRITE_TIMEOUT_MS + 15_000,
        );
        // What each client would have read: its answer's status line is in the bytes it was sent.
        for (const c of clients) c.read();
        await within(Promise.all(clients.map((c) => c.closed)), 2_000);
        const statuses = clients.map((c) => statusLines(c.received())[0] ?? 'nothing');
        assert.equal(
          left.unacknowledged,
          0,
          `${left.unacknowledged} of 16 never-reading connections still open with unacknowledged answers; answers: ${statuses.join(', ')}`,
        );
        assert.equal(left.counted, 0, 'nothing counted once their answers are gone');
        const answered = statuses.filter((s) => s === 'HTTP/1.1 200 OK').length;
        assert.ok(answered >= 1, `no answer at all: ${statuses.join(', ')}`);
        // TLS adds a few bytes per 16 KiB record and each answer has its headers: 1% and 1 KiB each.
        assert.ok(
          mostQueued <= IN_FLIGHT_BYTES * 1.01 + 16 * 1024,
          `the kernel held ${mostQueued} unacknowledged bytes for them under a ${IN_FLIGHT_BYTES}-byte ceiling (answers: ${statuses.join(', ')})`,
        );
      } finally {
        clearInterval(sampling);
        for (const c of clients) c.socket.destroy();
      }
    });
  }

  void it('answers /healthz between admission requests, not after every /override request that arrived before it', async () => {
    // The probe's connection is open before the load, as a kept-alive one would be.
    const probe = connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
    probe.on('error', () => undefined);
    await new Promise<void>((resolve) => probe.once('secureConnect', () => resolve()));
    // Sixteen /override requests of a Deployment with 40 containers (~50 KB, within one receive window, so
    // each arrives whole at once), each rewriting every container: a few milliseconds of work each.
    const body = overrideReview(wideDeployment(40), 'u-wide');
    const order: string[] = [];
    const load = Array.from({ length: 16 }, (_, i) => {
      const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
      socket.on('error', () => undefined);
      let text = '';
      socket.on('data', (c: Buffer) => {
        text += c.toString('latin1');
        if (/\r\n\r\n[\s\S]*"uid":"u-wide"/.test(text) && !order.includes(`override-${i}`)) order.push(`override-${i}`);
      });
      return { socket, connected: new Promise<void>((resolve) => socket.once('secureConnect', () => resolve())) };
    });
    try {
      await Promise.all(load.map((l) => l.connected));
      const written = load.map(
        (l) => new Promise<void>((resolve) => l.socket.write(raw('/override', body), () => resolve())),
      );
      await Promise.all(written);
      let answer = '';
      const probed = new Promise<void>((resolve) =>
        probe.on('data', (c: Buffer) => {
          answer += c.toString('latin1');
          if (answer.endsWith('ok')) {
            order.push('healthz');
            resolve();
          }
        }),
      );
      probe.write('GET /healthz HTTP/1.1\r\nHost: webhook\r\n\r\n');
      assert.notEqual(await within(probed, 30_000), 'late', 'no /healthz answer');
      await eventually(
        () => order.length,
        (n) => n === 17,
        30_000,
      );
      const before = order.indexOf('healthz');
      assert.ok(
        before >= 0 && before < 8,
        `/healthz answered after ${before} of the 16 /override answers: ${order.join(' ')}`,
      );
    } finally {
      probe.destroy();
      for (const l of load) l.socket.destroy();
    }
  });

  void it('/override admits unmodified, with a warning and counted, when its answer does not fit under the in-flight ceiling', async () => {
    const handler = new WebhookHandler({ overrides: overrides() });
    const small = new WebhookServer({
      handler,
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
      maxInFlightBytes: ANSWER_BYTES,
    });
    const stop = new AbortController();
    const started = await small.start(stop.signal);
    try {
      const request = raw('/override', overrideReview(wideDeployment(1, { size: 'big' }), 'u-big'));
      const text = await new Promise<string>((resolve, reject) => {
        let got = '';
        const socket = connect({ host: '127.0.0.1', port: started.address.port, rejectUnauthorized: false }, () =>
          socket.write(request),
        );
        socket.on('data', (c: Buffer) => {
          got += c.toString('latin1');
          if (got.includes('"uid":"u-big"') && got.endsWith('}')) {
            socket.destroy();
            resolve(got);
          }
        });
        socket.on('error', reject);
        socket.on('close', () => resolve(got));
      });
      assert.deepEqual(statusLines(text), ['HTTP/1.1 200 OK'], text.slice(0, 300));
      const review = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as {
        response: { allowed: boolean; patch?: string; warnings?: string[] };
      };
      assert.equal(review.response.allowed, true);
      assert.equal(review.response.patch, undefined);
      assert.match(
        review.response.warnings?.[0] ?? '',
        /^Flotilla admission override not applied: the answer \(\d+ bytes\) does not fit/,
      );
      assert.match(handler.registry.render(), /flotilla_webhook_override_unmodified_total\{reason="overloaded"\} 1/);
    } finally {
      stop.abort();
      await started.stopped;
    }
  });
});
