// What both parts of `npm run bench:fleet` share (fleet.bench.ts: 20 real member apiservers; fleet-light.ts:
// hundreds of in-memory ones): the Flotilla processes, their CPU and memory from /proc, the hub's
// request counter, the templates and the policy, and how the hub is made ready.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import PQueue from 'p-queue';

import { customResourceDefinitions } from '../../api/crds/index.js';
import type { KubeClient } from '../../pkg/kube/client.js';
import { waitForCRDsEstablished, type ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';

export type Obj = Record<string, unknown>;
export const MAIN = fileURLToPath(new URL('../../cmd/flotilla/main.js', import.meta.url));
export const NS = 'fleet';
export const MiB = 1024 * 1024;

export interface Proc {
  name: string;
  child: ChildProcess;
  log: () => string;
  exited: Promise<number | null>;
}

export interface Usage {
  cpuSeconds: number;
  rssBytes: number;
  peakBytes: number;
}

/** A Flotilla process (controller or agent), its stderr kept (the last 100-200 kB). */
export function spawnFlotilla(name: string, args: string[]): Proc {
  const child = spawn(process.execPath, [MAIN, ...args, '--metrics-port', '0', '--log-level', 'warn'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      // e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`: a profile of each Flotilla process, written as it stops.
      ...(process.env.BENCH_FLEET_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_FLEET_NODE_OPTIONS } : {}),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return watched(name, child);
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

/** CPU seconds, RSS and peak RSS of a process, from /proc. */
export function usage(pid: number | undefined): Usage {
  if (pid === undefined) return { cpuSeconds: NaN, rssBytes: NaN, peakBytes: NaN };
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuSeconds = (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { cpuSeconds, rssBytes: kb('VmRSS'), peakBytes: kb('VmHWM') };
  } catch {
    return { cpuSeconds: NaN, rssBytes: NaN, peakBytes: NaN };
  }
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

/** The hub made ready: CRDs, namespaces, the policy sending every ConfigMap of NS to `members`, and a Pull Cluster per name in `pull`. */
export async function prepareHub(hub: ClusterHandle, members: string[], pull: string[]): Promise<void> {
  const crds = customResourceDefinitions();
  const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const installed = await kubectl(hub.kubeconfigPath, ['apply', '--server-side', '-f', '-'], {
    apiVersion: 'v1',
    kind: 'List',
    items: [...crds, ns(NS), ns('flotilla-system'), ns('flotilla-cluster-lease')],
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
        metadata: { name: 'everywhere', namespace: NS },
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

/** The controller processes of a mode: `replicas` of them, sharded when more than one; no member credentials for pull. */
export function spawnControllers(
  hubKubeconfig: string,
  membersKubeconfig: string | undefined,
  replicas: number,
  extra: string[] = [],
): Proc[] {
  return Array.from({ length: replicas }, (_, i) =>
    spawnFlotilla(`controller ${i}`, [
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
    ]),
  );
}

/** An agent in the cluster `name`, reaching it through `kubeconfig`. */
export function spawnAgent(name: string, hubKubeconfig: string, kubeconfig: string): Proc {
  return spawnFlotilla(`agent ${name}`, [
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
    '16',
  ]);
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
}

export const MEASURED_COLUMNS =
  'propagation | requests per member | hub requests | controller CPU | controller RSS (end / peak) | controller RSS per 1,000 pairs | agents: RSS max (mean) | agents: CPU max (sum) | one edit -> all members p50 / p99 | drift put back p50 / p99';

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
    r.agents.length ? `${mib(Math.max(...agentRss))} MiB (${mib(sum(agentRss) / agentRss.length)} MiB)` : '-',
    r.agents.length ? `${Math.max(...agentCpu).toFixed(1)} s (${sum(agentCpu).toFixed(1)} s)` : '-',
    ...[r.edit, r.drift].map((t) => (t ? `${Math.round(t.p50)} / ${Math.round(t.p99)} ms` : '-')),
  ];
}
