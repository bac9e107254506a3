// The load a webhook meets beside the apiserver's, for `npm run bench:webhook` (webhook.bench.ts runs the
// server in a child process; these functions are the client side, over loopback HTTPS):
//
//   mixedLoad: for MIX_MS, at once: ordinary reviews on /validate, /mutate, /convert and /override over
//     keep-alive connections; heavy /override requests (a ~2 MB Deployment); a set of clients that never
//     read (40 connections, each a request with a large answer or a large body, never reading); a set of
//     oversized clients (bodies of 4 MiB, answered 413 after being read, and 20 MiB, cut); and a liveness
//     probe on a new connection every 250 ms, as kubelet makes it. The server's resident set is sampled
//     every 50 ms from /proc/<pid>/status.
//   neverReadingPerRoute: per route, 40 clients each send one ~2.5 MB review and never read; the
//     server's open connections (its side, ESTABLISHED in /proc/net/tcp) and resident set each few seconds.

import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as plainRequest } from 'node:http';
import { Agent, request } from 'node:https';
import { performance } from 'node:perf_hooks';
import { connect, type TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';

import { admissionRequestReview, conversionRequestReview } from '../../pkg/webhook/index.js';
import { parseTables } from '../../pkg/webhook/unacked.js';
import { deployment, overridePolicy, type Obj } from '../builders.js';

export const MIB = 1024 * 1024;
const MIX_MS = 20_000;
const NEVER_READING = 40;
export const PROBE_EVERY_MS = 250;

export function residentBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN) * 1024;
  } catch {
    return NaN;
  }
}

/**
 * Established connections to the server's `port` (its side of each), from the kernel's tables; only those
 * from `clients` when given.
 */
export function connectionsTo(port: number, clients?: readonly TLSSocket[]): number {
  const texts = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((p) => {
    try {
      return [readFileSync(p, 'utf8')];
    } catch {
      return [];
    }
  });
  const open = new Set([...parseTables(texts).keys()].filter((k) => k.startsWith(`${port}:`)));
  if (clients === undefined) return open.size;
  return clients.filter((c) => c.localPort !== undefined && open.has(`${port}:${c.localPort}`)).length;
}

function rawRequest(path: string, body: string, extra = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
}

const bigPolicy = (bytes: number): Obj =>
  overridePolicy(
    'big',
    'shop',
    [{ overriders: { plaintext: [{ path: '/data/x', operator: 'add', value: 'v'.repeat(bytes) }] } }],
    [{ apiVersion: 'v1', kind: 'ConfigMap' }],
  );

/** A Deployment of about `bytes` of JSON: containers with environment variables, each rewritten by the fleet's rules. */
export function heavyDeployment(bytes: number): Obj {
  const containers = Math.max(1, Math.round(bytes / 1300));
  return deployment('web', 'shop', {
    replicas: 3,
    containers: Array.from({ length: containers }, (_, i) => ({
      name: i === 0 ? 'web' : `c${i}`,
      image: `registry.example.com/app/c${i}:1.0`,
      env: Array.from({ length: 20 }, (_, j) => ({ name: `VAR_${j}`, value: `value-${i}-${j}-xxxxxxxx` })),
    })),
  });
}

/** Reviews of about 2.5 MB per route: their answers are as large on /convert, small elsewhere. */
export function bigReviews(): Record<string, string> {
  const policy = bigPolicy(2_500_000);
  return {
    '/validate': JSON.stringify(admissionRequestReview({ object: policy })),
    '/mutate': JSON.stringify(admissionRequestReview({ object: policy })),
    '/convert': JSON.stringify(conversionRequestReview([policy], 'policy.flotilla.io/v1beta1')),
    '/override': JSON.stringify(admissionRequestReview({ object: heavyDeployment(2_500_000) })),
  };
}

export interface Answer {
  status: number;
  ms: number;
}

export function post(port: number, agent: Agent | false, path: string, body: string, method = 'POST'): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        agent,
        rejectUnauthorized: false,
        headers:
          method === 'GET' ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
        res.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
      },
    );
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end(method === 'GET' ? undefined : body);
  });
}

/** GET on a new plain-HTTP connection, as kubelet probes (no keep-alive). */
export function plainGet(port: number, path: string): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = plainRequest(
      { host: '127.0.0.1', port, path, agent: false, headers: { connection: 'close' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
        res.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
      },
    );
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end();
  });
}

function tally(answers: readonly Answer[]): string {
  const counts = new Map<number, number>();
  for (const a of answers) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
  return [...counts]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${n} × ${s === 0 ? 'conn. error' : s}`)
    .join(', ');
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/** Starts sampling the server's RSS every 50 ms; stop() gives the peak. */
function sampleRss(pid: number): { stop: () => number } {
  let peak = residentBytes(pid);
  const timer = setInterval(() => (peak = Math.max(peak, residentBytes(pid) || 0)), 50);
  return { stop: () => (clearInterval(timer), Math.max(peak, residentBytes(pid) || 0)) };
}

function neverReadingClient(port: number, data: string, sockets: TLSSocket[]): void {
  const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
    socket.write(data);
    socket.pause();
  });
  socket.on('error', () => undefined);
  sockets.push(socket);
}

export interface Bodies {
  validate: string;
  override: string;
  convert: string;
}

/** What the server measured of itself over a window (webhook.bench.ts's child); asking starts a new one. */
export interface ServerWindow {
  /** The event loop's delay, ms. */
  loopMax: number;
  loopP99: number;
  /** The longest single handler call (judging one request, synchronous), ms, and its path. */
  longestJudgeMs: number;
  longestJudgePath: string;
  /** process.memoryUsage() when the resident set peaked, bytes. */
  peak: { rss: number; heapUsed: number; heapTotal: number; external: number; arrayBuffers: number };
}

/** The server under load: its HTTPS port, its probe port (plain HTTP) if any, its process. */
export interface Server {
  port: number;
  healthPort?: number;
  pid: number;
  window: () => Promise<ServerWindow>;
}

/** Probes both ports from a process of their own (webhook-prober.ts) for `ms`. */
function probeFrom(server: Server, ms: number): Promise<{ https: Answer[]; plain: Answer[] }> {
  const child = fork(fileURLToPath(new URL('./webhook-prober.js', import.meta.url)), [
    String(server.port),
    String(server.healthPort ?? 0),
    String(ms),
  ]);
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as { https: Answer[]; plain: Answer[] }));
    child.once('exit', () => resolve({ https: [], plain: [] }));
  });
}

const mib = (n: number) => `${(n / MIB).toFixed(0)} MiB`;

function probeLine(what: string, probes: readonly Answer[]): string {
  const ms = probes.map((p) => p.ms).sort((a, b) => a - b);
  return `  ${what} every ${PROBE_EVERY_MS} ms: ${probes.length} probes, ${tally(probes)}; p50 ${percentile(ms, 50).toFixed(0)} ms, p99 ${percentile(ms, 99).toFixed(0)} ms, max ${(ms[ms.length - 1] ?? NaN).toFixed(0)} ms, over 1 s: ${probes.filter((p) => p.ms > 1000).length}`;
}

/** The mixed load; returns the lines to print. */
export async function mixedLoad(server: Server, bodies: Bodies): Promise<string[]> {
  const { port, pid } = server;
  await server.window();
  const probing = probeFrom(server, MIX_MS);
  const until = performance.now() + MIX_MS;
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const rss = sampleRss(pid);
  const ordinary: Answer[] = [];
  const heavy: Answer[] = [];
  const oversized: Answer[] = [];
  const sockets: TLSSocket[] = [];
  const big = bigReviews();
  const heavyBody = JSON.stringify(admissionRequestReview({ object: heavyDeployment(2_000_000) }));
  const routes: Array<[string, string]> = [
    ['/validate', bodies.validate],
    ['/mutate', bodies.validate],
    ['/override', bodies.override],
    ['/override', bodies.override],
    ['/convert', bodies.convert],
  ];
  const loop = async (n: number, each: () => Promise<void>) =>
    Promise.all(
      Array.from({ length: n }, async () => {
        while (performance.now() < until) await each();
      }),
    );
  let turn = 0;
  const bigRoutes = Object.keys(big);
  // The never-reading set: 40 connections, one large review each, in two waves (at start and halfway).
  const wave = () => {
    for (let i = 0; i < NEVER_READING / 2; i++) {
      const route = bigRoutes[i % bigRoutes.length] ?? '/convert';
      neverReadingClient(port, rawRequest(route, big[route] ?? ''), sockets);
    }
  };
  wave();
  const second = setTimeout(wave, MIX_MS / 2);
  const oversizedBody = 'x'.repeat(4 * MIB);
  await Promise.all([
    loop(16, async () => {
      const [path, body] = routes[turn++ % routes.length] ?? ['/validate', bodies.validate];
      ordinary.push(await post(port, agent, path, body));
    }),
    loop(4, async () => {
      heavy.push(await post(port, agent, '/override', heavyBody));
    }),
    loop(2, async () => {
      oversized.push(await post(port, false, '/validate', oversizedBody));
      // A declared 20 MiB body: answered 413 at once and cut.
      await new Promise<void>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () =>
          socket.write(
            `POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: ${20 * MIB}\r\n\r\n${'x'.repeat(MIB)}`,
          ),
        );
        socket.on('error', () => undefined);
        socket.on('data', () => undefined);
        socket.on('close', () => resolve());
        setTimeout(() => (socket.destroy(), resolve()), 5_000).unref();
      });
    }),
  ]);
  const { https: probes, plain: plainProbes } = await probing;
  const seen = await server.window();
  clearTimeout(second);
  const openNeverReading = connectionsTo(port, sockets);
  for (const s of sockets) s.destroy();
  agent.destroy();
  const peak = rss.stop();
  const heavyMs = heavy.map((p) => p.ms).sort((a, b) => a - b);
  return [
    `mixed load, ${MIX_MS / 1000} s: 16 connections of ordinary reviews (/validate, /mutate, /override, /convert), 4 of ${(heavyBody.length / MIB).toFixed(1)} MB /override, ${NEVER_READING} never-reading clients (~2.5 MB reviews on every route), 2 oversized clients (4 MiB and a declared 20 MiB body)`,
    `  server peak VmRSS ${(peak / MIB).toFixed(0)} MiB (limit 256 MiB; 80% = 204.8 MiB); at its own peak sample: rss ${mib(seen.peak.rss)}, V8 heap ${mib(seen.peak.heapUsed)} used of ${mib(seen.peak.heapTotal)}, external ${mib(seen.peak.external)} (array buffers ${mib(seen.peak.arrayBuffers)})`,
    `  probes from a separate process (as kubelet's):`,
    probeLine('/healthz on a new HTTPS connection to the admission port', probes),
    ...(server.healthPort === undefined
      ? []
      : [probeLine('/healthz on a new plain-HTTP connection to the probe port (--health-port)', plainProbes)]),
    `  server event loop delay: max ${seen.loopMax.toFixed(0)} ms, p99 ${seen.loopP99.toFixed(0)} ms; longest single request judged: ${seen.longestJudgeMs.toFixed(0)} ms (${seen.longestJudgePath})`,
    `  ordinary: ${tally(ordinary)}; heavy /override: ${tally(heavy)}, p50 ${percentile(heavyMs, 50).toFixed(0)} ms, max ${(heavyMs[heavyMs.length - 1] ?? NaN).toFixed(0)} ms; oversized (4 MiB): ${tally(oversized)}`,
    `  never-reading connections still open at the end: ${openNeverReading} of ${sockets.length}`,
  ];
}

/**
 * Per route, 40 never-reading clients; open connections / RSS at the given seconds, then the peak RSS and
 * what the server's memory was made of at its peak. Returns table rows.
 */
export async function neverReadingPerRoute(server: Server, seconds: readonly number[]): Promise<string[]> {
  const { port, pid } = server;
  const big = bigReviews();
  const rows: string[] = [
    `| route | ${seconds.map((s) => `${s} s`).join(' | ')} | peak VmRSS | at the peak: V8 heap used / total, external (array buffers) |`,
    `|---|${seconds.map(() => '---|').join('')}---|---|`,
  ];
  for (const route of Object.keys(big)) {
    await server.window();
    const rss = sampleRss(pid);
    const sockets: TLSSocket[] = [];
    const started = performance.now();
    for (let i = 0; i < NEVER_READING; i++) neverReadingClient(port, rawRequest(route, big[route] ?? ''), sockets);
    const cells: string[] = [];
    for (const s of seconds) {
      const wait = started + s * 1000 - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      cells.push(`${connectionsTo(port, sockets)} / ${(residentBytes(pid) / MIB).toFixed(0)} MiB`);
    }
    const peak = rss.stop();
    const seen = await server.window();
    const p = seen.peak;
    rows.push(
      `| ${route} | ${cells.join(' | ')} | ${mib(peak)} | ${mib(p.heapUsed)} / ${mib(p.heapTotal)}, ${mib(p.external)} (${mib(p.arrayBuffers)}) |`,
    );
    for (const s of sockets) s.destroy();
    await new Promise((r) => setTimeout(r, 1000));
  }
  return rows;
}
