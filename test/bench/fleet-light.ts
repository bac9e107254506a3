// The light part of `npm run bench:fleet`: the templates delivered to hundreds of light members, each an
// in-memory apiserver over HTTPS (test/fake-apiserver-server.ts), 50 to a host process
// (light-members.ts), where a real apiserver per member (~260 MiB) allows 20 on this machine. The hub is
// one real kube-apiserver (envtest). Each run is a fresh hub and fresh members:
//
//   push at each member count of BENCH_FLEET_LIGHT_SLOPE (default 50,100,200): one controller; the
//        figures' slope over the member counts is extrapolated to 500 and 2,000 clusters;
//   sharded: BENCH_FLEET_LIGHT_REPLICAS (4) `--sharding true` controllers over BENCH_FLEET_LIGHT_MEMBERS (200);
//   pull: BENCH_FLEET_LIGHT_AGENTS (50) agents, one per member (Cluster spec.syncMode Pull).
//
// Member requests are those the light members served (watches left out); the bench reads the members
// through the host processes' IPC, so its own polling is not among them. A request a light member cannot
// serve (a path or verb the in-memory apiserver lacks) is printed as it happens, listed under the table,
// and fails the run (exit code 1): a 404 for a missing route must not pass for an answer.
// BENCH_FLEET_LIGHT_MODES picks runs (push,sharded,pull; default all). After the edits each run adds
// BENCH_FLEET_GROW more templates in steps (fleet.bench.ts): the controllers' retained heap and RSS at each
// size give the slopes per 1,000 template-member pairs (fleet-memory.ts).

import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { KubeClient } from '../../pkg/kube/client.js';
import { EC_SERVING_PAIR } from '../certs.js';
import { startEnvironment } from '../envtest/index.js';
import { kubeconfigYaml } from '../envtest/pki.js';
import {
  applyAll,
  assertRunning,
  configMap,
  grow,
  prepareHub,
  requests,
  spawnAgent,
  spawnControllers,
  stopProc,
  timeEdits,
  usage,
  waitFor,
  watched,
  type Measured,
  type Proc,
  type Usage,
} from './fleet-common.js';

const HOST = fileURLToPath(new URL('./light-members.js', import.meta.url));
const PER_HOST = 50;

export type LightMode = 'push' | 'sharded' | 'pull';

export interface LightRow extends Measured {
  mode: LightMode;
  replicas: number;
  hosts: Usage[];
  unserved: string[];
  /** Processes of the run that exited before the bench stopped them (name and exit code). */
  exited: string[];
}

interface MemberStats {
  name: string;
  requests: number;
  watches: number;
  copies: number;
  unserved: string[];
}

/** The host processes of a run, asked over IPC. */
class Hosts {
  private next = 1;
  private readonly waiting = new Map<number, (m: Record<string, unknown>) => void>();
  readonly unserved: string[] = [];
  constructor(
    readonly procs: Proc[],
    readonly members: Array<{ name: string; url: string }>,
  ) {
    for (const p of procs)
      p.child.on('message', (m: Record<string, unknown>) => {
        const id = m.id as number;
        this.waiting.get(id)?.(m);
        this.waiting.delete(id);
      });
  }

  static async start(members: number): Promise<Hosts> {
    const procs: Proc[] = [];
    const ready: Array<Promise<Array<{ name: string; url: string }>>> = [];
    for (let first = 1; first <= members; first += PER_HOST) {
      const count = Math.min(PER_HOST, members - first + 1);
      const child = spawn(process.execPath, [HOST, String(count), String(first)], {
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      });
      const p = watched(`light members ${first}..${first + count - 1}`, child);
      child.stderr?.on('data', (c: Buffer) => process.stderr.write(c));
      procs.push(p);
      ready.push(
        new Promise((resolve, reject) => {
          child.once('message', (m: { op?: string; members?: Array<{ name: string; url: string }> }) =>
            m.op === 'ready' && m.members ? resolve(m.members) : reject(new Error(`${p.name}: ${JSON.stringify(m)}`)),
          );
          void p.exited.then((code) => reject(new Error(`${p.name} exited (${code}): ${p.log().slice(-2000)}`)));
        }),
      );
    }
    return new Hosts(procs, (await Promise.all(ready)).flat());
  }

  private ask<T>(p: Proc, message: Record<string, unknown>): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve) => {
      this.waiting.set(id, (m) => resolve(m as T));
      p.child.send({ ...message, id });
    });
  }

  async stats(): Promise<MemberStats[]> {
    const all = await Promise.all(this.procs.map((p) => this.ask<{ members: MemberStats[] }>(p, { op: 'stats' })));
    const members = all.flatMap((a) => a.members);
    for (const m of members) this.unserved.push(...m.unserved.map((u) => `${m.name}: ${u}`));
    return members;
  }

  async shown(name: string, value: string): Promise<number> {
    const all = await Promise.all(this.procs.map((p) => this.ask<{ shown: number }>(p, { op: 'shown', name, value })));
    return all.reduce((a, b) => a + b.shown, 0);
  }

  async stop(): Promise<void> {
    for (const p of this.procs) if (p.child.connected) p.child.send({ op: 'stop' });
    await Promise.all(this.procs.map(async (p) => Promise.race([p.exited, stopProc(p)])));
  }
}

/** The kubeconfig of every light member (one context each), and one file per member for the agents. */
function writeKubeconfigs(dir: string, members: Array<{ name: string; url: string }>): Map<string, string> {
  mkdirSync(dir, { recursive: true });
  const pki = {
    caPem: EC_SERVING_PAIR.certPem,
    adminCertPem: EC_SERVING_PAIR.certPem,
    adminKeyPem: EC_SERVING_PAIR.keyPem,
  };
  const files = new Map<string, string>();
  const all = join(dir, 'members.kubeconfig');
  writeFileSync(all, kubeconfigYaml(members.map((m) => ({ name: m.name, server: m.url, pki }))), { mode: 0o600 });
  files.set('', all);
  for (const m of members) {
    const path = join(dir, `${m.name}.kubeconfig`);
    writeFileSync(path, kubeconfigYaml([{ name: m.name, server: m.url, pki }]), { mode: 0o600 });
    files.set(m.name, path);
  }
  return files;
}

export interface LightRun {
  mode: LightMode;
  members: number;
  replicas: number;
  templates: number;
  edits: number;
  timeoutMs: number;
  /** Templates added after the edits, for the slopes of retained heap and RSS. */
  grow: number;
}

export async function measureLight(run: LightRun): Promise<LightRow> {
  const label = `light ${run.mode} ${run.members}`;
  const env = await startEnvironment({ members: 0 });
  const procs: Proc[] = [];
  let hosts: Hosts | undefined;
  const hub = new KubeClient(env.hub.kubeConfig(), { concurrency: 16 });
  try {
    hosts = await Hosts.start(run.members);
    const names = hosts.members.map((m) => m.name);
    const files = writeKubeconfigs(join(env.dir, 'light'), hosts.members);
    await prepareHub(env.hub, names, run.mode === 'pull' ? names : []);
    process.stderr.write(`${label}: hub and ${run.members} light members ready\n`);
    const controllers = await spawnControllers(
      env.hub.kubeconfigPath,
      run.mode === 'pull' ? undefined : files.get(''),
      run.replicas,
      // Light members share a host process's one thread: on a loaded machine a probe may wait behind other
      // members' requests longer than the 5 s default, which a member apiserver of its own would not.
      ['--probe-timeout', process.env.BENCH_FLEET_LIGHT_PROBE_TIMEOUT ?? '60s'],
    );
    procs.push(...controllers);
    const agents =
      run.mode === 'pull' ? names.map((n) => spawnAgent(n, env.hub.kubeconfigPath, files.get(n) ?? '')) : [];
    procs.push(...agents);
    // Started and synced (no templates yet): the baseline.
    await new Promise((r) => setTimeout(r, run.mode === 'push' ? 10_000 : 20_000));
    assertRunning([...procs, ...hosts.procs]);
    const controllerIdle = controllers.map((c) => usage(c.child.pid));
    const before = await hosts.stats();
    const hubBefore = await requests(env.hub);
    const start = performance.now();
    await applyAll(
      hub,
      Array.from({ length: run.templates }, (_, i) => configMap(i)),
    );
    let counts: number[] = [0];
    let propagateMs: number | undefined;
    const h = hosts;
    try {
      await waitFor(
        async () => {
          counts = (await h.stats()).map((m) => m.copies);
          return counts.every((n) => n >= run.templates);
        },
        run.timeoutMs,
        1000,
      );
      propagateMs = performance.now() - start;
    } catch (err: unknown) {
      // not converged: printed with how far it got
      process.stderr.write(`${label}: ${err instanceof Error ? err.message : String(err)}\n`);
      for (const c of controllers) process.stderr.write(`${c.name}, the end of its log:\n${c.log().slice(-3000)}\n`);
    }
    const after = await hosts.stats();
    const hubRequests = (await requests(env.hub).catch(() => NaN)) - hubBefore;
    const requestsPerMember = after.reduce((a, m, i) => a + m.requests - (before[i]?.requests ?? 0), 0) / after.length;
    const copies: [number, number] = [Math.min(...counts), Math.max(...counts)];
    process.stderr.write(
      `${label}: ${propagateMs === undefined ? 'not propagated' : `propagated in ${Math.round(propagateMs)} ms`} (copies per member ${copies[0]}..${copies[1]})\n`,
    );
    const row = (edit: LightRow['edit']): LightRow => ({
      mode: run.mode,
      members: run.members,
      replicas: run.replicas,
      templates: run.templates,
      propagateMs,
      copies,
      requestsPerMember,
      hubRequests,
      controllers: controllers.map((c) => usage(c.child.pid)),
      controllerIdle,
      agents: agents.map((a) => usage(a.child.pid)),
      hosts: h.procs.map((p) => usage(p.child.pid)),
      edit,
      unserved: h.unserved,
      exited: [],
    });
    const exited = () =>
      [...procs, ...h.procs]
        .filter((p) => p.child.exitCode !== null || p.child.signalCode !== null)
        .map((p) => `${p.name} (code ${p.child.exitCode}, signal ${p.child.signalCode})`);
    if (propagateMs === undefined) return { ...row(undefined), exited: exited() };
    await new Promise((r) => setTimeout(r, 5_000));
    const edit = await timeEdits(
      hub,
      run.edits,
      run.templates,
      async (name, value) => (await h.shown(name, value)) === h.members.length,
    );
    // CPU and RSS as printed are those before the second fleet size, grown for the slopes of retained heap and RSS.
    const done = row(edit);
    done.growth = await grow({
      hub,
      controllers,
      from: run.templates,
      count: run.grow,
      members: run.members,
      propagated: async (total) => (await h.stats()).every((m) => m.copies >= total),
      timeoutMs: run.timeoutMs,
    });
    await h.stats(); // the last unserved requests
    done.exited = exited();
    return done;
  } finally {
    await Promise.all(procs.map(stopProc));
    await hosts?.stop();
    await hub.close();
    await env.stop();
  }
}
