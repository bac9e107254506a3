// What bench:controller measures besides time: the requests each apiserver served (its
// apiserver_request_total, by verb and resource), the hub's writes counted until it is quiet, the CPU
// seconds of each process, and the controller as a process of its own (spawned from the CLI entry) so
// that its peak resident set (VmHWM) is its own, not the bench client's.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import type { ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { controllerNodeFlags } from '../node-launch.js';

const MAIN = fileURLToPath(new URL('../../cmd/flotilla/main.js', import.meta.url));
const WRITE_VERBS = new Set(['APPLY', 'PATCH', 'POST', 'PUT', 'DELETE', 'DELETECOLLECTION']);
const MiB = 1024 * 1024;

/** apiserver_request_total by `VERB resource[/subresource]`, from the apiserver's /metrics (watches left out). */
export async function requestCounts(c: ClusterHandle): Promise<Map<string, number>> {
  const text = (await kubectl(c.kubeconfigPath, ['get', '--raw', '/metrics'])).stdout;
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels: Record<string, string> = Object.fromEntries(
      [...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
    );
    if (labels.verb === 'WATCH' || labels.verb === 'CONNECT') continue;
    const key = `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/** after - before, by key (keys that did not grow left out). */
export function deltas(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) out.set(k, v - (before.get(k) ?? 0));
  return out;
}

export function countDelta(before: Map<string, number>, after: Map<string, number>): string {
  return [...deltas(before, after)]
    .sort((a, b) => b[1] - a[1])
    .map(([k, d]) => `${k} ${d}`)
    .join(', ');
}

/** The writes (APPLY, PATCH, POST, PUT, DELETE) among counts. */
export function writesOf(counts: Map<string, number>): Map<string, number> {
  return new Map([...counts].filter(([k]) => WRITE_VERBS.has(k.slice(0, k.indexOf(' ')))));
}

export function total(counts: Map<string, number>): number {
  let n = 0;
  for (const v of counts.values()) n += v;
  return n;
}

/**
 * Waits until the apiserver has served no write for `quietMs` (bounded by `timeoutMs`); returns the time
 * of the last write seen (performance.now()), as closely as one look a second tells it.
 */
export async function untilQuiet(c: ClusterHandle, quietMs: number, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let last = total(writesOf(await requestCounts(c)));
  let lastAt = performance.now();
  while (performance.now() - lastAt < quietMs) {
    if (performance.now() > deadline) throw new Error(`the hub was not quiet for ${quietMs} ms within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 1_000));
    const n = total(writesOf(await requestCounts(c)));
    if (n !== last) {
      last = n;
      lastAt = performance.now();
    }
  }
  return lastAt;
}

/** CPU seconds used so far by each process of the environment (by its command), `named` pids and this process. */
export function cpuSnapshot(
  pids: readonly number[],
  named: ReadonlyMap<number, string> = new Map(),
): Map<string, number> {
  const out = new Map<string, number>();
  const tick = 100; // USER_HZ on Linux
  for (const pid of [...pids, ...named.keys()]) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const name =
        named.get(pid) ??
        (cmd[0]?.endsWith('etcd')
          ? 'etcd'
          : (cmd
              .find((a) => a.startsWith('--etcd-prefix='))
              ?.slice('--etcd-prefix='.length)
              .split('/')[1] ??
            cmd[0] ??
            String(pid)));
      // utime, stime, cutime, cstime: fields 14-17 of /proc/PID/stat (index 11-14 after the command).
      const cpu = [11, 12, 13, 14].reduce((a, i) => a + Number(fields[i] ?? 0), 0) / tick;
      out.set(name, (out.get(name) ?? 0) + cpu);
    } catch {
      // gone
    }
  }
  const self = process.cpuUsage();
  out.set('node (bench)', (self.user + self.system) / 1e6);
  return out;
}

export function cpuDelta(before: Map<string, number>, after: Map<string, number>): string {
  return [...after].map(([k, v]) => `${k} ${(v - (before.get(k) ?? 0)).toFixed(1)} s`).join(', ');
}

/** VmHWM (peak resident set) and VmRSS of a process, in MiB. */
export function memoryOf(pid: number | undefined): { peakMiB: number; rssMiB: number } {
  try {
    const status = readFileSync(`/proc/${pid ?? 0}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { peakMiB: kb('VmHWM') / MiB, rssMiB: kb('VmRSS') / MiB };
  } catch {
    return { peakMiB: NaN, rssMiB: NaN };
  }
}

export interface ControllerProcess {
  child: ChildProcess;
  log(): string;
  stop(): Promise<void>;
}

/**
 * `flotilla controller ARGS…` as a process of its own, node with the chart's controller.nodeFlags (clean
 * environment; `nodeOptions` as its NODE_OPTIONS, e.g. `--cpu-prof --cpu-prof-dir=DIR`), its stderr kept
 * (the last 1 MB).
 */
export function spawnController(args: readonly string[], nodeOptions?: string): ControllerProcess {
  const child = spawn(process.execPath, [...controllerNodeFlags(), MAIN, 'controller', ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.on('data', (c: Buffer) => {
    log += c.toString();
    if (log.length > 1_000_000) log = log.slice(-500_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    log: () => log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
