// What both parts of `npm run bench:fleet` share (fleet.bench.ts: 20 real member apiservers; fleet-light.ts:
// hundreds of in-memory ones): the Flotilla processes, their CPU and memory from /proc, the hub's
// request counter, the templates and the policy, and how the hub is made ready.

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import PQueue from 'p-queue';

import { customResourceDefinitions } from '../../api/crds/index.js';
import { HEAP_METRIC_ENV } from '../../pkg/runtime/heap-gauge.js';
import { agentConcurrency, agentNodeFlags, controllerNodeFlags } from '../node-launch.js';
import type { KubeClient } from '../../pkg/kube/client.js';
import { waitForCRDsEstablished, type ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import {
  MEMORY_COLUMNS,
  growSteps,
  growth,
  memoryCells,
  sample,
  usage,
  type Growth,
  type Usage,
} from './fleet-memory.js';

export { usage, type Growth, type Usage };

export type Obj = Record<string, unknown>;
export const MAIN = fileURLToPath(new URL('../../cmd/flotilla/main.js', import.meta.url));
export const NS = 'fleet';
export const MiB = 1024 * 1024;

export interface Proc {
  name: string;
  child: ChildProcess;
  log: () => string;
  exited: Promise<number | null>;
  /** Where a controller serves /metrics (with the heap-after-gc gauge). */
  metricsPort?: number;
}

let logDir: string | undefined;
let logCount = 0;

/** A new file for a process's output, in BENCH_FLEET_LOG_DIR or a temporary directory printed once. */
function logFile(name: string): string {
  if (logDir === undefined) {
    logDir = process.env.BENCH_FLEET_LOG_DIR ?? mkdtempSync(join(tmpdir(), 'flotilla-fleet-'));
    process.stderr.write(`bench:fleet: each Flotilla process's stdout and stderr are kept in ${logDir}\n`);
  }
  return join(logDir, `${String(++logCount).padStart(3, '0')}-${name.replace(/[^\w.-]+/g, '-')}.log`);
}

/**
 * A Flotilla process (controller or agent), its stderr kept (the last 100-200 kB) and its stdout and stderr
 * written whole to a file of its own (logFile); an exit the bench did not ask for is printed as it happens,
 * with the exit code, the file and the last lines. With `metricsPort`, it serves /metrics there and, started
 * with --expose-gc, the heap-after-gc gauge (pkg/runtime/heap-gauge.ts). BENCH_FLEET_LOG_LEVEL: its
 * --log-level (default warn). Node runs with `nodeFlags` (an agent: the chart's, spawnAgent).
 */
export function spawnFlotilla(name: string, args: string[], metricsPort?: number, nodeFlags: string[] = []): Proc {
  const file = logFile(name);
  const fd = openSync(file, 'a');
  const heap = metricsPort !== undefined;
  const child = spawn(
    process.execPath,
    [
      ...(heap ? ['--expose-gc'] : []),
      ...nodeFlags,
      MAIN,
      ...args,
      '--metrics-port',
      String(metricsPort ?? 0),
      '--log-level',
      process.env.BENCH_FLEET_LOG_LEVEL ?? 'warn',
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        // e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`: a profile of each Flotilla process, written as it stops.
        ...(process.env.BENCH_FLEET_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_FLEET_NODE_OPTIONS } : {}),
        // glibc's malloc settings (the process's native heap: MALLOC_ARENA_MAX, GLIBC_TUNABLES, …), as a
        // Deployment's env may set them.
        ...mallocEnv(),
        ...(heap ? { [HEAP_METRIC_ENV]: 'true' } : {}),
      },
      stdio: ['ignore', fd, 'pipe'],
    },
  );
  child.stderr?.on('data', (c: Buffer) => writeSync(fd, c));
  // 'close': exited, and its stderr read to the end. child.killed: stopped by the bench (stopProc).
  child.once('close', (code, signal) => {
    closeSync(fd);
    if (child.killed) return;
    const tail = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-15).join('\n');
    process.stderr.write(
      `${name} EXITED (code ${code}, signal ${signal}); its log: ${file}; the last lines:\n${tail}\n`,
    );
  });
  return { ...watched(name, child), ...(heap ? { metricsPort } : {}) };
}

/** The bench's own MALLOC_* and GLIBC_TUNABLES variables, which glibc's malloc reads at start. */
function mallocEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if ((k.startsWith('MALLOC_') || k === 'GLIBC_TUNABLES') && v !== undefined) out[k] = v;
  }
  return out;
}

/** A TCP port free on 127.0.0.1 at the time of asking. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A child process with its stderr kept and its exit awaited. */
export function watched(name: string, child: ChildProcess): Proc {
  let log = '';
  child.stderr?.on('data', (c: Buffer) => {
    log += c.toString();
    if (log.length > 200_000) log = log.slice(-100_000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { name, child, log: () => log, exited };
}

export async function stopProc(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  await Promise.race([p.exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (p.child.exitCode === null) p.child.kill('SIGKILL');
}

/** Throws naming the first process that has exited, with the end of its log. */
export function assertRunning(procs: Proc[]): void {
  for (const p of procs) if (p.child.exitCode !== null) throw new Error(`${p.name} exited: ${p.log().slice(-2000)}`);
}

/** Requests a kube-apiserver has served (apiserver_request_total; watches and connects left out). */
export async function requests(c: ClusterHandle): Promise<number> {
  const text = (await kubectl(c.kubeconfigPath, ['get', '--raw', '/metrics'])).stdout;
  let n = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{') || /verb="(WATCH|CONNECT)"/.test(line)) continue;
    n += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return n;
}

export async function waitFor(probe: () => Promise<boolean>, timeoutMs: number, intervalMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
}

export const templateName = (i: number): string => `cm-${String(i).padStart(4, '0')}`;

export const configMap = (i: number, value = 'v0'): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: templateName(i), namespace: NS },
  data: { value, padding: 'x'.repeat(200) },
});

/** Server-side applies of the templates on the hub, 16 at a time. */
export async function applyAll(client: KubeClient, objects: Obj[]): Promise<void> {
  const q = new PQueue({ concurrency: 16 });
  await Promise.all(
    objects.map((o) =>
      q.add(async () => {
        const meta = o.metadata as Obj;
        const r = await client.request({
          method: 'PATCH',
          path: `/api/v1/namespaces/${NS}/configmaps/${meta.name as string}`,
          query: { fieldManager: 'bench', force: 'true' },
          contentType: 'application/apply-patch+yaml',
          body: o,
        });
        if (r.status >= 400) throw new Error(`${meta.name as string}: HTTP ${r.status}`);
      }),
    ),
  );
}

/**
 * The hub made ready: CRDs, namespaces, the policy sending every ConfigMap of `namespace` (default NS) to
 * `members`, and a Pull Cluster per name in `pull`.
 */
export async function prepareHub(hub: ClusterHandle, members: string[], pull: string[], namespace = NS): Promise<void> {
  const crds = customResourceDefinitions();
  const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const installed = await kubectl(hub.kubeconfigPath, ['apply', '--server-side', '-f', '-'], {
    apiVersion: 'v1',
    kind: 'List',
    items: [...crds, ns(namespace), ns('flotilla-system'), ns('flotilla-cluster-lease')],
  });
  if (installed.status !== 0) throw new Error(installed.stderr);
  await waitForCRDsEstablished(
    hub,
    crds.map((c) => c.metadata.name),
  );
  const objects = await kubectl(hub.kubeconfigPath, ['apply', '--server-side', '-f', '-'], {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'policy.flotilla.io/v1beta1',
        kind: 'PropagationPolicy',
        metadata: { name: 'everywhere', namespace },
        spec: {
          resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
          placement: { clusterAffinity: { clusterNames: members } },
        },
      },
      ...pull.map((name) => ({
        apiVersion: 'cluster.flotilla.io/v1alpha1',
        kind: 'Cluster',
        metadata: { name },
        spec: { syncMode: 'Pull' },
      })),
    ],
  });
  if (objects.status !== 0) throw new Error(objects.stderr);
}

/**
 * The controller processes of a mode: `replicas` of them, sharded when more than one; no member
 * credentials for pull. Each serves /metrics on a port of its own, with the heap-after-gc gauge; node runs
 * with the chart's controller.nodeFlags.
 */
export async function spawnControllers(
  hubKubeconfig: string,
  membersKubeconfig: string | undefined,
  replicas: number,
  extra: string[] = [],
): Promise<Proc[]> {
  const ports: number[] = [];
  for (let i = 0; i < replicas; i++) ports.push(await freePort());
  return ports.map((port, i) =>
    spawnFlotilla(
      `controller ${i}`,
      [
        'controller',
        '--kubeconfig',
        hubKubeconfig,
        ...(membersKubeconfig ? ['--members-kubeconfig', membersKubeconfig] : []),
        ...(replicas > 1 ? ['--sharding', 'true'] : []),
        '--namespace',
        'flotilla-system',
        '--concurrency',
        '16',
        ...extra,
      ],
      port,
      controllerNodeFlags(),
    ),
  );
}

/** An agent in the cluster `name`, reaching it through `kubeconfig`, as the chart runs it: node with agent.nodeFlags, the agent with agent.concurrency. */
export function spawnAgent(name: string, hubKubeconfig: string, kubeconfig: string): Proc {
  return spawnFlotilla(
    `agent ${name}`,
    [
      'agent',
      '--cluster-name',
      name,
      '--hub-kubeconfig',
      hubKubeconfig,
      '--kubeconfig',
      kubeconfig,
      '--namespace',
      'flotilla-system',
      '--concurrency',
      agentConcurrency(),
    ],
    undefined,
    agentNodeFlags(),
  );
}

/** One edit at a time on the hub (template e's value), timed until `shown(name, value)` says every member has it. */
export async function timeEdits(
  hub: KubeClient,
  edits: number,
  templates: number,
  shown: (name: string, value: string) => Promise<boolean>,
): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let e = 1; e <= edits; e++) {
    const value = `edit-${e}`;
    const t0 = performance.now();
    await applyAll(hub, [configMap(e % templates, value)]);
    await waitFor(() => shown(templateName(e % templates), value), 120_000, 20);
    times.push(performance.now() - t0);
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

export const mib = (b: number): string => (b / MiB).toFixed(0);

/**
 * The controllers sampled (quiet) at the fleet's size now, then `count` more templates (from index `from`)
 * added in steps (fleet-memory.ts), each applied on the hub until `propagated` says every member holds
 * them, and sampled again; undefined when a step has not propagated within `timeoutMs`.
 */
export async function grow(o: {
  hub: KubeClient;
  controllers: Proc[];
  from: number;
  count: number;
  members: number;
  propagated: (total: number) => Promise<boolean>;
  timeoutMs: number;
}): Promise<Growth | undefined> {
  if (o.count <= 0) return undefined;
  const sizes: Growth['sizes'] = [{ pairs: o.from * o.members, samples: await sample(o.controllers) }];
  for (const [from, to] of growSteps(o.from, o.count)) {
    await applyAll(
      o.hub,
      Array.from({ length: to - from }, (_, i) => configMap(from + i)),
    );
    try {
      await waitFor(() => o.propagated(to), o.timeoutMs, 1000);
    } catch {
      return undefined;
    }
    sizes.push({ pairs: to * o.members, samples: await sample(o.controllers) });
  }
  return growth(o.count * o.members, sizes);
}

/** What one run measured, as both parts' tables print it. */
export interface Measured {
  templates: number;
  members: number;
  /** undefined: not converged within the timeout. */
  propagateMs: number | undefined;
  /** Copies per member at the end (fewest, most). */
  copies: [number, number];
  requestsPerMember: number;
  hubRequests: number;
  controllers: Usage[];
  controllerIdle: Usage[];
  agents: Usage[];
  edit: { p50: number; p99: number } | undefined;
  /** A copy changed on its member until put back (the real part only). */
  drift?: { p50: number; p99: number };
  /** The controllers at several fleet sizes (undefined: a size did not propagate, or none was asked for). */
  growth?: Growth | undefined;
}

export const MEASURED_COLUMNS = [
  'propagation | requests per member | hub requests | controller CPU | controller RSS (end / peak) | controller RSS over idle per 1,000 pairs',
  ...MEMORY_COLUMNS,
  'agents: RSS max (mean) | agents: CPU max (sum) | one edit -> all members p50 / p99 | drift put back p50 / p99',
].join(' | ');

/** How many columns MEASURED_COLUMNS has. */
export const MEASURED_COUNT = MEASURED_COLUMNS.split(' | ').length;

/** The cells of MEASURED_COLUMNS. */
export function measuredCells(r: Measured): string[] {
  const pairs = r.templates * r.members;
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const each = (f: (u: Usage) => string) => r.controllers.map(f).join(' + ');
  const growth = r.controllers
    .map((c, i) => ((c.rssBytes - (r.controllerIdle[i]?.rssBytes ?? NaN)) / MiB / (pairs / 1000)).toFixed(2))
    .join(' + ');
  const agentRss = r.agents.map((a) => a.rssBytes);
  const agentCpu = r.agents.map((a) => a.cpuSeconds);
  return [
    r.propagateMs === undefined
      ? `not converged (${r.copies[0]}..${r.copies[1]} of ${r.templates} per member)`
      : `${(r.propagateMs / 1000).toFixed(1)} s`,
    `${Math.round(r.requestsPerMember)} (${(r.requestsPerMember / r.templates).toFixed(2)} per template)`,
    String(r.hubRequests),
    each((u) => `${u.cpuSeconds.toFixed(1)} s`),
    `${each((u) => `${mib(u.rssBytes)} / ${mib(u.peakBytes)}`)} MiB (${r.controllerIdle.map((u) => mib(u.rssBytes)).join(' + ')} before the templates)`,
    `${growth} MiB`,
    ...memoryCells(r.growth),
    // To a tenth: the agent's target (80 MiB) is within a MiB of what it reads.
    r.agents.length
      ? `${(Math.max(...agentRss) / MiB).toFixed(1)} MiB (${(sum(agentRss) / agentRss.length / MiB).toFixed(1)} MiB)`
      : '-',
    r.agents.length ? `${Math.max(...agentCpu).toFixed(1)} s (${sum(agentCpu).toFixed(1)} s)` : '-',
    ...[r.edit, r.drift].map((t) => (t ? `${Math.round(t.p50)} / ${Math.round(t.p99)} ms` : '-')),
  ];
}
