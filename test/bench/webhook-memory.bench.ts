// Webhook memory under attack (`npm run bench:webhook-memory`): does the process stay inside the 256 MiB
// memory limit its Deployment sets? The server is the real `flotilla webhook` command in a child process,
// over loopback HTTPS, with the heap flags of WEBHOOK_NODE_OPTIONS (the Deployment's, from the chart's
// webhook.nodeOptions: `WEBHOOK_NODE_OPTIONS="--max-old-space-size=96 --max-semi-space-size=8"`) or, without
// it, Node's defaults. Its resident set
// (VmRSS, and the kernel's high-water mark VmHWM) is read from /proc/<pid>/status every 50 ms through:
//
//   1. idle, then warm: a few ordinary reviews;
//   2. never-reading clients: 40 connections that each pipeline reviews whose answers are megabytes
//      (2.9 MB ConversionReviews, and 2.9 MB AdmissionReviews whose one value fails several rules) and then
//      never read a byte; an ordinary client keeps sending reviews meanwhile and counts what it gets
//      (200, or 503 with Retry-After once the in-flight ceiling is reached);
//   3. slow readers per route, each on a fresh webhook: 40 connections each send one 2.5 MB review (the
//      answer is as large on /convert, small on /validate and /mutate) and never read; the webhook's
//      resident set and its established connections (/proc/net/tcp) at start and every second for 14 s;
//   4. a parse-cache attack: /validate requests, 8 at a time, each carrying a fresh 2 MB string, in turn a
//      templated value (`${cluster.name}` in it) and a plaintext path, so no parse cache ever hits.
//
// Prints the figures per phase and exits non-zero when the high-water mark passes the limit.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';

import { createCA, createServingCert } from '../../pkg/certs/index.js';
import { admissionRequestReview, conversionRequestReview } from '../../pkg/webhook/index.js';
import { parseTables } from '../../pkg/webhook/unacked.js';
import { overridePolicy, type Obj } from '../builders.js';

const LIMIT_BYTES = 256 * 1024 * 1024;
const NEVER_READING_CLIENTS = 40;
const PIPELINED_PER_CLIENT = 4;
const CACHE_ATTACK_REQUESTS = 240;
const CACHE_ATTACK_CONCURRENCY = 8;
const MIB = 1024 * 1024;

const MAIN = fileURLToPath(new URL('../../cmd/flotilla/main.js', import.meta.url));

// ---- measuring -----------------------------------------------------------------------------------------

interface Memory {
  rss: number;
  hwm: number;
}

function memoryOf(pid: number): Memory | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

/** Samples the child's RSS every 50 ms; `phase()` returns the peak since the last call. */
function sampler(pid: number): { phase: () => number; stop: () => void } {
  let peak = 0;
  const timer = setInterval(() => {
    const m = memoryOf(pid);
    if (m) peak = Math.max(peak, m.rss);
  }, 50);
  return {
    phase: () => {
      const p = Math.max(peak, memoryOf(pid)?.rss ?? 0);
      peak = 0;
      return p;
    },
    stop: () => clearInterval(timer),
  };
}

// ---- requests ------------------------------------------------------------------------------------------

const policyWithValue = (name: string, value: unknown, path = '/data/x'): Obj =>
  overridePolicy(
    name,
    'shop',
    [{ overriders: { plaintext: [{ path, operator: 'add', value }] } }],
    [{ apiVersion: 'v1', kind: 'ConfigMap' }],
  );

/** A raw HTTP/1.1 request, for clients that write bytes and never read. */
function raw(path: string, body: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** Answers are megabytes: a converted 2.9 MB object, or (before messages were bounded) a denial quoting a 1.4 MB value many times. */
function neverReadingRequests(): string[] {
  const conversion = JSON.stringify(
    conversionRequestReview([policyWithValue('big', 'v'.repeat(2_900_000))], 'policy.flotilla.io/v1beta1'),
  );
  const quotes = '"'.repeat(1_400_000);
  const denial = JSON.stringify(
    admissionRequestReview({
      object: { ...policyWithValue('big', 1), metadata: { name: 'big', namespace: 'shop', labels: { k: quotes } } },
    }),
  );
  return [raw('/convert', conversion), raw('/validate', denial)];
}

function neverReadingClient(port: number, requests: readonly string[], sockets: TLSSocket[]): void {
  const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
    for (let i = 0; i < PIPELINED_PER_CLIENT; i++) socket.write(requests[i % requests.length] ?? '');
    socket.pause();
  });
  socket.on('error', () => undefined);
  sockets.push(socket);
}

interface Answer {
  status: number;
  retryAfter?: string;
}

function post(port: number, agent: Agent, path: string, body: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        rejectUnauthorized: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ...(res.headers['retry-after'] ? { retryAfter: res.headers['retry-after'] } : {}),
          }),
        );
      },
    );
    req.on('error', () => resolve({ status: 0 }));
    req.end(body);
  });
}

function tally(answers: readonly Answer[]): string {
  const counts = new Map<string, number>();
  for (const a of answers) {
    const key =
      a.status === 0
        ? 'connection error'
        : a.retryAfter
          ? `${a.status} (Retry-After ${a.retryAfter})`
          : String(a.status);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${n} × ${k}`).join(', ');
}

/** A fresh 2 MB string each time: a templated value, or a plaintext path. */
function cacheAttackBody(i: number): string {
  const fresh = `${randomBytes(8).toString('hex')}${'x'.repeat(2 * 1024 * 1024)}`;
  const object =
    i % 2 === 0 ? policyWithValue(`c${i}`, `${fresh}-\${cluster.name}`) : policyWithValue(`c${i}`, 1, `/data/${fresh}`);
  return JSON.stringify(admissionRequestReview({ object }));
}

/** Established connections whose local port is `port`, from the kernel's tables. */
function connectionsTo(port: number): number {
  const texts = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((p) => {
    try {
      return [readFileSync(p, 'utf8')];
    } catch {
      return [];
    }
  });
  return [...parseTables(texts).keys()].filter((k) => k.startsWith(`${port}:`)).length;
}

/**
 * A fresh webhook; 40 clients, one review each, never read; the webhook's RSS and open connections every
 * second for 14 s.
 */
async function slowReaders(dir: string, path: string, body: string): Promise<string[]> {
  const { child, port } = await startServer(dir);
  const pid = child.pid ?? 0;
  const sockets: TLSSocket[] = [];
  const line: string[] = [`${mib(memoryOf(pid)?.rss ?? NaN)} / ${connectionsTo(port)}`];
  for (let i = 0; i < NEVER_READING_CLIENTS; i++) {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      socket.write(raw(path, body));
      socket.pause();
    });
    socket.on('error', () => undefined);
    sockets.push(socket);
  }
  for (let t = 1; t <= 14; t++) {
    await new Promise((r) => setTimeout(r, 1000));
    line.push(`${mib(memoryOf(pid)?.rss ?? NaN)} / ${connectionsTo(port)}`);
  }
  for (const s of sockets) s.destroy();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return line;
}

// ---- the run -------------------------------------------------------------------------------------------

async function startServer(dir: string): Promise<{ child: ChildProcess; port: number }> {
  const env = { ...process.env };
  delete env.KUBECONFIG;
  delete env.NODE_OPTIONS;
  // WEBHOOK_NODE_OPTIONS: the heap flags the deployment gives the webhook (see deploy/helm/flotilla/values.yaml).
  if (process.env.WEBHOOK_NODE_OPTIONS) env.NODE_OPTIONS = process.env.WEBHOOK_NODE_OPTIONS;
  const child = spawn(
    process.execPath,
    [
      MAIN,
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
    {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const m = /"msg":"webhook listening"[^\n]*"port":(\d+)/.exec(seen);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`the webhook exited with ${code}: ${seen}`)));
  });
  return { child, port };
}

const mib = (bytes: number): string => `${(bytes / MIB).toFixed(1)} MiB`;

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-bench-memory-'));
  const ca = createCA('bench-ca');
  const serving = createServingCert(ca, { commonName: 'bench', ipAddresses: ['127.0.0.1'] });
  writeFileSync(join(dir, 'tls.crt'), serving.certPem);
  writeFileSync(join(dir, 'tls.key'), serving.keyPem);
  const { child, port } = await startServer(dir);
  const pid = child.pid ?? 0;
  const samples = sampler(pid);
  const agent = new Agent({ keepAlive: true, maxSockets: CACHE_ATTACK_CONCURRENCY });
  const sockets: TLSSocket[] = [];
  const rows: Array<[string, string, string]> = [];
  let slowTable: Array<[string, string[]]> = [];
  try {
    process.stdout.write(
      `Node ${process.version}, ${availableParallelism()} cores; webhook pid ${pid}, default heap settings; limit ${mib(LIMIT_BYTES)}\n`,
    );
    await new Promise((r) => setTimeout(r, 500));
    rows.push(['idle', mib(samples.phase()), '']);

    const ordinary = JSON.stringify(admissionRequestReview({ object: policyWithValue('ok', 'v') }));
    const warm: Answer[] = [];
    for (let i = 0; i < 200; i++) warm.push(await post(port, agent, '/validate', ordinary));
    rows.push(['warm: 200 ordinary reviews', mib(samples.phase()), tally(warm)]);

    const requests = neverReadingRequests();
    for (let i = 0; i < NEVER_READING_CLIENTS; i++) neverReadingClient(port, requests, sockets);
    const during: Answer[] = [];
    const until = Date.now() + 15_000;
    while (Date.now() < until) {
      during.push(await post(port, agent, '/validate', ordinary));
      await new Promise((r) => setTimeout(r, 100));
    }
    const open = sockets.filter((s) => !s.destroyed).length;
    rows.push([
      `${NEVER_READING_CLIENTS} never-reading clients × ${PIPELINED_PER_CLIENT} pipelined ~2.9 MB reviews, 15 s`,
      mib(samples.phase()),
      `ordinary client meanwhile: ${tally(during)}; ${open} never-reading connections still open`,
    ]);
    for (const s of sockets) s.destroy();

    const big = policyWithValue('big', 'v'.repeat(2_500_000));
    const slow: Array<[string, string[]]> = [];
    const convert = JSON.stringify(conversionRequestReview([big], 'policy.flotilla.io/v1beta1'));
    slow.push(['/convert', await slowReaders(dir, '/convert', convert)]);
    const labels = { k: '"'.repeat(1_200_000) };
    const denial = JSON.stringify(
      admissionRequestReview({
        object: { ...policyWithValue('big', 1), metadata: { name: 'big', namespace: 'shop', labels } },
      }),
    );
    slow.push(['/validate', await slowReaders(dir, '/validate', denial)]);
    slow.push(['/mutate', await slowReaders(dir, '/mutate', JSON.stringify(admissionRequestReview({ object: big })))]);
    slowTable = slow;

    const attack: Answer[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CACHE_ATTACK_CONCURRENCY }, async () => {
        while (next < CACHE_ATTACK_REQUESTS) attack.push(await post(port, agent, '/validate', cacheAttackBody(next++)));
      }),
    );
    rows.push([
      `cache attack: ${CACHE_ATTACK_REQUESTS} /validate, fresh 2 MB templated value or path each`,
      mib(samples.phase()),
      tally(attack),
    ]);

    await new Promise((r) => setTimeout(r, 1000));
    rows.push(['afterwards, idle 1 s', mib(samples.phase()), '']);
  } finally {
    samples.stop();
    agent.destroy();
    for (const s of sockets) s.destroy();
  }
  const hwm = memoryOf(pid)?.hwm ?? NaN;
  child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });

  process.stdout.write(`\n| phase | peak VmRSS | answers |\n|---|---|---|\n`);
  for (const [phase, peak, answers] of rows) process.stdout.write(`| ${phase} | ${peak} | ${answers} |\n`);
  process.stdout.write(
    `\nSlow readers: ${NEVER_READING_CLIENTS} clients, one review each, never reading; VmRSS / established connections to the webhook, each second\n`,
  );
  process.stdout.write(
    `| route | 0 s | ${Array.from({ length: 14 }, (_, i) => `${i + 1} s`).join(' | ')} |\n|---|${'---|'.repeat(15)}\n`,
  );
  for (const [route, cells] of slowTable) process.stdout.write(`| ${route} | ${cells.join(' | ')} |\n`);
  const within = hwm < LIMIT_BYTES;
  process.stdout.write(
    `\nVmHWM (peak resident set over the whole run): ${mib(hwm)} — ${within ? 'within' : 'OVER'} the ${mib(LIMIT_BYTES)} limit\n`,
  );
  return within ? 0 : 1;
}

process.exitCode = await main();
