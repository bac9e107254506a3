// Fleet benchmark (`npm run bench:fleet`): 1,000 templates x 20 member apiservers on this machine (one
// etcd, a prefix per cluster), delivered two ways, each in a fresh environment so neither measures the
// other's objects:
//
//   push:    one `flotilla controller` process reaching all 20 members through a kubeconfig;
//   sharded: two `flotilla controller --sharding true` processes dividing the 20 members;
//   pull:    one `flotilla controller` process placing (no member credential) and 20 `flotilla agent`
//            processes, one per member (Cluster spec.syncMode Pull), each applying its own copies.
//
// For each: the time from the first template create on the hub until every member holds all 1,000
// copies; the requests each member's apiserver served meanwhile (apiserver_request_total, watches left
// out); CPU seconds and RSS (VmRSS at the end, VmHWM the peak) of the controller and of each agent; and
// the single-edit latency: one template's data changed on the hub until all 20 members show it (EDITS
// times, one at a time; p50 and p99); and the requests the hub served. A mode that has not converged
// after BENCH_FLEET_TIMEOUT_MS (15 min) is printed with how far it got. BENCH_FLEET_NODE_OPTIONS is
// passed to the Flotilla processes as NODE_OPTIONS (a CPU profile: `--cpu-prof --cpu-prof-dir=DIR`). The machine's load average is
// printed with the table: every apiserver, etcd and Flotilla process shares its cores.
// Targets (issue 23): the controller's RSS grows with templates x members stored once (printed as MiB per
// 1,000 template-member pairs over a controller with no templates), an agent's RSS under 100 MiB at 1,000
// templates, one edit reaching all 20 members with p99 under 2 s in every mode.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import PQueue from 'p-queue';

import { customResourceDefinitions } from '../../api/crds/index.js';
import { KubeClient } from '../../pkg/kube/client.js';
import { startEnvironment, waitForCRDsEstablished, type ClusterHandle, type Environment } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { measureDrift, type DriftTimes } from './fleet-drift.js';

type Obj = Record<string, unknown>;
const MAIN = fileURLToPath(new URL('../../cmd/flotilla/main.js', import.meta.url));
const MEMBERS = Number(process.env.BENCH_FLEET_MEMBERS ?? 20);
const TEMPLATES = Number(process.env.BENCH_FLEET_TEMPLATES ?? 1_000);
const EDITS = Number(process.env.BENCH_FLEET_EDITS ?? 20);
const NS = 'fleet';
const TIMEOUT_MS = Number(process.env.BENCH_FLEET_TIMEOUT_MS ?? 15 * 60_000);
type Mode = 'push' | 'sharded' | 'pull';
const MiB = 1024 * 1024;

interface Proc {
  name: string;
  child: ChildProcess;
  log: () => string;
  exited: Promise<number | null>;
}

interface Usage {
  cpuSeconds: number;
  rssBytes: number;
  peakBytes: number;
}

interface Row {
  mode: Mode;
  /** undefined: not converged within TIMEOUT_MS. */
  propagateMs: number | undefined;
  /** Copies per member at the end (fewest, most). */
  copies: [number, number];
  requestsPerMember: number;
  hubRequests: number;
  controllers: Usage[];
  controllerIdle: Usage[];
  agents: Usage[];
  edit: { p50: number; p99: number } | undefined;
  drift?: DriftTimes;
}

function spawnFlotilla(name: string, args: string[]): Proc {
  const child = spawn(process.execPath, [MAIN, ...args, '--metrics-port', '0', '--log-level', 'warn'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      // e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`: a profile of each Flotilla process, written as it stops.
      ...(process.env.BENCH_FLEET_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_FLEET_NODE_OPTIONS } : {}),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.on('data', (c: Buffer) => {
    log += c.toString();
    if (log.length > 200_000) log = log.slice(-100_000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { name, child, log: () => log, exited };
}

async function stopProc(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  await Promise.race([p.exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (p.child.exitCode === null) p.child.kill('SIGKILL');
}

/** CPU seconds, RSS and peak RSS of a process, from /proc. */
function usage(pid: number | undefined): Usage {
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

/** Requests an apiserver has served (apiserver_request_total; watches and connects left out). */
async function requests(c: ClusterHandle): Promise<number> {
  const text = (await kubectl(c.kubeconfigPath, ['get', '--raw', '/metrics'])).stdout;
  let n = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{') || /verb="(WATCH|CONNECT)"/.test(line)) continue;
    n += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return n;
}

/** How many ConfigMaps the namespace holds: one item and remainingItemCount, so no list crosses the wire. */
async function countAll(client: KubeClient): Promise<number> {
  const r = await client.request<{ items: unknown[] | null; metadata?: { remainingItemCount?: number } }>({
    method: 'GET',
    path: `/api/v1/namespaces/${NS}/configmaps`,
    query: { limit: '1' },
    accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
  });
  return (r.body?.items?.length ?? 0) + (r.body?.metadata?.remainingItemCount ?? 0);
}

async function waitFor(probe: () => Promise<boolean>, timeoutMs: number, intervalMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
}

const configMap = (i: number, value = 'v0'): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `cm-${String(i).padStart(4, '0')}`, namespace: NS },
  data: { value, padding: 'x'.repeat(200) },
});

async function applyAll(client: KubeClient, objects: Obj[]): Promise<void> {
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

/** A fresh environment: CRDs, namespaces, the policy sending every ConfigMap of NS to every member. */
async function prepare(mode: Mode): Promise<{ env: Environment; hub: KubeClient; members: KubeClient[] }> {
  const t = performance.now();
  const env = await startEnvironment({ members: MEMBERS });
  process.stderr.write(`${mode}: ${MEMBERS} member apiservers up in ${Math.round(performance.now() - t)} ms\n`);
  const crds = customResourceDefinitions();
  const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const names = env.members.map((m) => m.name);
  const installed = await kubectl(env.hub.kubeconfigPath, ['apply', '--server-side', '-f', '-'], {
    apiVersion: 'v1',
    kind: 'List',
    items: [...crds, ns(NS), ns('flotilla-system'), ns('flotilla-cluster-lease')],
  });
  if (installed.status !== 0) throw new Error(installed.stderr);
  await waitForCRDsEstablished(
    env.hub,
    crds.map((c) => c.metadata.name),
  );
  const objects = await kubectl(env.hub.kubeconfigPath, ['apply', '--server-side', '-f', '-'], {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'policy.flotilla.io/v1beta1',
        kind: 'PropagationPolicy',
        metadata: { name: 'everywhere', namespace: NS },
        spec: {
          resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
          placement: { clusterAffinity: { clusterNames: names } },
        },
      },
      ...(mode === 'pull'
        ? names.map((name) => ({
            apiVersion: 'cluster.flotilla.io/v1alpha1',
            kind: 'Cluster',
            metadata: { name },
            spec: { syncMode: 'Pull' },
          }))
        : []),
    ],
  });
  if (objects.status !== 0) throw new Error(objects.stderr);
  await Promise.all(
    env.members.map(async (m) => {
      const r = await kubectl(m.kubeconfigPath, ['create', 'namespace', NS]);
      if (r.status !== 0) throw new Error(r.stderr);
    }),
  );
  return {
    env,
    hub: new KubeClient(env.hub.kubeConfig(), { concurrency: 16 }),
    members: env.members.map((m) => new KubeClient(m.kubeConfig(), { concurrency: 2 })),
  };
}

async function measure(mode: Mode): Promise<Row> {
  const { env, hub, members } = await prepare(mode);
  const procs: Proc[] = [];
  try {
    const controllers = Array.from({ length: mode === 'sharded' ? 2 : 1 }, (_, i) =>
      spawnFlotilla(`controller ${i}`, [
        'controller',
        '--kubeconfig',
        env.hub.kubeconfigPath,
        ...(mode === 'pull' ? [] : ['--members-kubeconfig', env.membersKubeconfigPath]),
        ...(mode === 'sharded' ? ['--sharding', 'true'] : []),
        '--namespace',
        'flotilla-system',
        '--concurrency',
        '16',
      ]),
    );
    procs.push(...controllers);
    const agents: Proc[] =
      mode === 'pull'
        ? env.members.map((m) =>
            spawnFlotilla(`agent ${m.name}`, [
              'agent',
              '--cluster-name',
              m.name,
              '--hub-kubeconfig',
              env.hub.kubeconfigPath,
              '--kubeconfig',
              m.kubeconfigPath,
              '--namespace',
              'flotilla-system',
              '--concurrency',
              '16',
            ]),
          )
        : [];
    procs.push(...agents);
    // Started and synced (no templates yet): the controllers' baseline.
    await new Promise((r) => setTimeout(r, mode === 'push' ? 8_000 : 15_000));
    for (const p of procs) if (p.child.exitCode !== null) throw new Error(`${p.name} exited: ${p.log().slice(-2000)}`);
    const controllerIdle = controllers.map((c) => usage(c.child.pid));
    const before = await Promise.all(env.members.map(requests));
    const hubBefore = await requests(env.hub);
    const start = performance.now();
    await applyAll(
      hub,
      Array.from({ length: TEMPLATES }, (_, i) => configMap(i)),
    );
    let counts: number[] = [0];
    let propagateMs: number | undefined;
    try {
      await waitFor(
        async () => {
          counts = await Promise.all(members.map((m) => countAll(m).catch(() => 0)));
          return counts.every((n) => n >= TEMPLATES);
        },
        TIMEOUT_MS,
        500,
      );
      propagateMs = performance.now() - start;
    } catch {
      // not converged: printed with how far it got
    }
    const after = await Promise.all(env.members.map(requests));
    const hubRequests = (await requests(env.hub).catch(() => NaN)) - hubBefore;
    const requestsPerMember = after.reduce((a, n, i) => a + n - (before[i] ?? 0), 0) / members.length;
    const copies: [number, number] = [Math.min(...counts), Math.max(...counts)];
    process.stderr.write(
      `${mode}: ${TEMPLATES} x ${MEMBERS} ${propagateMs === undefined ? `not propagated after ${TIMEOUT_MS} ms` : `propagated in ${Math.round(propagateMs)} ms`} (copies per member ${copies[0]}..${copies[1]})\n`,
    );
    const row = (edit: Row['edit'], drift?: DriftTimes): Row => ({
      mode,
      propagateMs,
      copies,
      requestsPerMember,
      hubRequests,
      controllers: controllers.map((c) => usage(c.child.pid)),
      controllerIdle,
      agents: agents.map((a) => usage(a.child.pid)),
      edit,
      ...(drift ? { drift } : {}),
    });
    if (propagateMs === undefined) return row(undefined);
    // Settle (bindings, status), then one edit at a time until every member shows it.
    await new Promise((r) => setTimeout(r, 5_000));
    const edits: number[] = [];
    for (let e = 1; e <= EDITS; e++) {
      const value = `edit-${e}`;
      const t0 = performance.now();
      await applyAll(hub, [configMap(e % TEMPLATES, value)]);
      const name = `cm-${String(e % TEMPLATES).padStart(4, '0')}`;
      await waitFor(
        async () =>
          (
            await Promise.all(
              members.map(async (m) => {
                const r = await m.request<Obj>({ method: 'GET', path: `/api/v1/namespaces/${NS}/configmaps/${name}` });
                return ((r.body?.data as Obj | undefined)?.value as string | undefined) === value;
              }),
            )
          ).every(Boolean),
        120_000,
        20,
      );
      edits.push(performance.now() - t0);
    }
    // A copy changed on its member (templates the edits left as v0), until the controller or agent puts it back.
    const name = (r: number) => `cm-${String((EDITS + 1 + r) % TEMPLATES).padStart(4, '0')}`;
    const drift = await measureDrift(members, {
      namespace: NS,
      rounds: EDITS,
      name,
      expected: 'v0',
      timeoutMs: 120_000,
    });
    return row({ p50: percentile(edits, 50), p99: percentile(edits, 99) }, drift);
  } finally {
    await Promise.all(procs.map(stopProc));
    await Promise.all(members.map((m) => m.close()));
    await hub.close();
    await env.stop();
  }
}

const mib = (b: number) => (b / MiB).toFixed(0);

async function main(): Promise<void> {
  const rows: Row[] = [];
  const loads: string[] = [];
  const modes = (process.env.BENCH_FLEET_MODES ?? 'push,sharded,pull').split(',') as Mode[];
  for (const mode of modes) {
    rows.push(await measure(mode));
    loads.push(`${mode} ${loadavg()[0]?.toFixed(1) ?? '?'}`);
  }
  const pairs = TEMPLATES * MEMBERS;
  const lines = [
    `Node ${process.version}, ${availableParallelism()} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; hub + ${MEMBERS} member kube-apiservers and one etcd on this machine; load average (1 min) at the end of each mode: ${loads.join(', ')}`,
    `${TEMPLATES} ConfigMaps (about 0.3 KiB each) x ${MEMBERS} members = ${pairs} template-member pairs; edits: ${EDITS}, one at a time`,
    '',
    '| mode | propagation | requests per member | hub requests | controller CPU | controller RSS (end / peak) | controller RSS per 1,000 pairs | agents: RSS max (mean) | agents: CPU max (sum) | one edit -> all members p50 / p99 | drift put back p50 / p99 |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const each = (f: (u: Usage) => string) => r.controllers.map(f).join(' + ');
    const growth = r.controllers
      .map((c, i) => ((c.rssBytes - (r.controllerIdle[i]?.rssBytes ?? NaN)) / MiB / (pairs / 1000)).toFixed(2))
      .join(' + ');
    const agentRss = r.agents.map((a) => a.rssBytes);
    const agentCpu = r.agents.map((a) => a.cpuSeconds);
    const propagation =
      r.propagateMs === undefined
        ? `not converged after ${TIMEOUT_MS / 60_000} min (${r.copies[0]}..${r.copies[1]} of ${TEMPLATES} per member)`
        : `${(r.propagateMs / 1000).toFixed(1)} s`;
    const agentsRss = r.agents.length
      ? `${mib(Math.max(...agentRss))} MiB (${mib(agentRss.reduce((a, b) => a + b, 0) / agentRss.length)} MiB)`
      : '-';
    const agentsCpu = r.agents.length
      ? `${Math.max(...agentCpu).toFixed(1)} s (${agentCpu.reduce((a, b) => a + b, 0).toFixed(1)} s)`
      : '-';
    const cells = [
      r.mode,
      propagation,
      `${Math.round(r.requestsPerMember)} (${(r.requestsPerMember / TEMPLATES).toFixed(2)} per template)`,
      String(r.hubRequests),
      each((u) => `${u.cpuSeconds.toFixed(1)} s`),
      `${each((u) => `${mib(u.rssBytes)} / ${mib(u.peakBytes)}`)} MiB (${r.controllerIdle.map((u) => mib(u.rssBytes)).join(' + ')} before the templates)`,
      `${growth} MiB`,
      agentsRss,
      agentsCpu,
      r.edit ? `${Math.round(r.edit.p50)} / ${Math.round(r.edit.p99)} ms` : '-',
      r.drift ? `${Math.round(r.drift.p50)} / ${Math.round(r.drift.p99)} ms` : '-',
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
