// Start-up and memory of each Flotilla process kind (`npm run bench:processes`), against a real hub and
// one real member (envtest):
//
//   flotilla --version   wall time to exit and peak RSS (/usr/bin/time), median of RUNS runs;
//   webhook              spawn until GET /readyz on --health-port answers 200; RSS then (it lists the hub's Clusters);
//   controller           spawn until /readyz answers 200 (Lease held, caches synced); RSS then;
//   agent                spawn until /readyz answers 200 (its Lease on the hub held, caches synced); RSS then;
//
// then TEMPLATES ConfigMap templates (BENCH_PROCESSES_TEMPLATES, default 1,000) propagated by the
// controller to the member's agent (Cluster spec.syncMode Pull) until the member holds them all, then every
// template edited once until the member holds every edit, and, after SETTLE_MS, the RSS (VmRSS; its
// anonymous and file-backed parts, RssAnon and RssFile) and peak (VmHWM) of the controller and the agent,
// and the CPU seconds each spent on the propagation and on the edits. Prints the machine's load average:
// every apiserver, etcd and Flotilla process shares its cores. The agent and the controller run with the
// chart's agent.nodeFlags and controller.nodeFlags (test/node-launch.ts; BENCH_AGENT_NODE_FLAGS and
// BENCH_CONTROLLER_NODE_FLAGS replace them); BENCH_PROCESSES_NODE_OPTIONS
// is given to the webhook, controller and agent as NODE_OPTIONS (e.g. `--max-semi-space-size=1`).
// Target: the agent under 80 MiB RSS at 1,000 templates.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import PQueue from 'p-queue';

import { KubeClient } from '../../pkg/kube/client.js';
import { EC_SERVING_PAIR } from '../certs.js';
import { startEnvironment, type Environment } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { agentNodeFlags, controllerNodeFlags } from '../node-launch.js';
import { prepareHub } from './fleet-common.js';
import { processUsage, type ProcessUsage } from './process-usage.js';

const MAIN = fileURLToPath(new URL('../../cmd/flotilla/main.js', import.meta.url));
const TEMPLATES = Number(process.env.BENCH_PROCESSES_TEMPLATES ?? 1_000);
const RUNS = 5;
const SETTLE_MS = 10_000;
const READY_TIMEOUT_MS = 180_000;
const NS = 'bench';
const MiB = 1024 * 1024;

interface Started {
  child: ChildProcess;
  readyMs: number;
  log: () => string;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Spawns `node …nodeFlags flotilla …args` and resolves when http://127.0.0.1:<port>/readyz answers 200. */
async function startUntilReady(args: string[], port: number, nodeFlags: string[] = []): Promise<Started> {
  const t0 = performance.now();
  const quiet = args[0] === 'webhook' ? [] : ['--log-level', 'warn'];
  const child = spawn(process.execPath, [...nodeFlags, MAIN, ...args, ...quiet], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ...(process.env.BENCH_PROCESSES_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_PROCESSES_NODE_OPTIONS } : {}),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.on('data', (c: Buffer) => {
    log = (log + c.toString()).slice(-20_000);
  });
  while (performance.now() - t0 < READY_TIMEOUT_MS) {
    if (child.exitCode !== null) throw new Error(`flotilla ${args[0]} exited ${child.exitCode}: ${log}`);
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) return { child, readyMs: performance.now() - t0, log: () => log };
    await new Promise((r) => setTimeout(r, 25));
  }
  child.kill('SIGKILL');
  throw new Error(`flotilla ${args[0]} not ready after ${READY_TIMEOUT_MS} ms: ${log}`);
}

async function stop(p: Started): Promise<void> {
  if (p.child.exitCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (p.child.exitCode === null) p.child.kill('SIGKILL');
}

/** `flotilla --version`: median wall time and the largest peak RSS of RUNS runs (GNU time's %M). */
function versionRuns(): { ms: number; peakBytes: number } {
  const times: number[] = [];
  let peak = 0;
  for (let i = 0; i < RUNS + 1; i++) {
    const t0 = performance.now();
    const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, MAIN, '--version'], { encoding: 'utf8' });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`flotilla --version: ${r.stderr}`);
    if (i === 0) continue; // warms the file cache
    times.push(ms);
    peak = Math.max(peak, Number(r.stderr.trim().split('\n').pop()) * 1024);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)] ?? NaN, peakBytes: peak };
}

async function prepare(): Promise<Environment> {
  const env = await startEnvironment({ members: 1 });
  // The member is a Pull Cluster: the agent applies, the controller places.
  const member = env.members[0]!.name;
  await prepareHub(env.hub, [member], [member], NS);
  const created = await kubectl(env.members[0]!.kubeconfigPath, ['create', 'namespace', NS]);
  if (created.status !== 0) throw new Error(created.stderr);
  return env;
}

/** Server-side applies every template with label `round` and value `v<round>` (round 0 creates them). */
async function applyTemplates(hub: KubeClient, round: number): Promise<void> {
  const q = new PQueue({ concurrency: 16 });
  await Promise.all(
    Array.from({ length: TEMPLATES }, (_, i) =>
      q.add(async () => {
        const name = `cm-${String(i).padStart(5, '0')}`;
        const r = await hub.request({
          method: 'PATCH',
          path: `/api/v1/namespaces/${NS}/configmaps/${name}`,
          query: { fieldManager: 'bench', force: 'true' },
          contentType: 'application/apply-patch+yaml',
          body: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name, namespace: NS, labels: { round: String(round) } },
            data: { value: `v${round}`, padding: 'x'.repeat(200) },
          },
        });
        if (r.status >= 400) throw new Error(`${name}: HTTP ${r.status}`);
      }),
    ),
  );
}

/** ConfigMaps in the namespace matching `labelSelector`: one metadata item, and remainingItemCount without a selector. */
async function countOn(client: KubeClient, labelSelector?: string): Promise<number> {
  const r = await client.request<{ items?: unknown[]; metadata?: { remainingItemCount?: number } }>({
    method: 'GET',
    path: `/api/v1/namespaces/${NS}/configmaps`,
    query: { limit: '1', ...(labelSelector ? { labelSelector } : {}) },
    accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
  });
  return (r.body?.items?.length ?? 0) + (r.body?.metadata?.remainingItemCount ?? 0);
}

/**
 * Waits until the member holds every template at `round`: none at another round, and all there (with a
 * selector the apiserver gives no remaining count); resolves with how many it holds at that round.
 */
async function propagated(member: KubeClient, round: number, deadline: number): Promise<number> {
  while (Date.now() < deadline) {
    const behind = await countOn(member, `round!=${round}`).catch(() => 1);
    if (behind === 0 && (await countOn(member).catch(() => 0)) >= TEMPLATES) return TEMPLATES;
    await new Promise((r) => setTimeout(r, 500));
  }
  const r = await member.request<{ items?: unknown[] }>({
    method: 'GET',
    path: `/api/v1/namespaces/${NS}/configmaps`,
    query: { labelSelector: `round=${round}` },
    accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
  });
  return r.body?.items?.length ?? 0;
}

const mib = (b: number) => (b / MiB).toFixed(1);
const row = (cells: string[]) => `| ${cells.join(' | ')} |`;

async function main(): Promise<void> {
  const load0 = loadavg();
  const version = versionRuns();
  const env = await prepare();
  const started: Started[] = [];
  try {
    const dir = mkdtempSync(join(tmpdir(), 'bench-processes-'));
    writeFileSync(join(dir, 'tls.crt'), EC_SERVING_PAIR.certPem);
    writeFileSync(join(dir, 'tls.key'), EC_SERVING_PAIR.keyPem);
    const hubConfig = env.hub.kubeconfigPath;
    const ports = { webhook: await freePort(), controller: await freePort(), agent: await freePort() };

    const webhook = await startUntilReady(
      [
        'webhook',
        '--kubeconfig',
        hubConfig,
        '--tls-cert-file',
        join(dir, 'tls.crt'),
        '--tls-private-key-file',
        join(dir, 'tls.key'),
        '--port',
        '0',
        '--health-port',
        String(ports.webhook),
      ],
      ports.webhook,
    );
    started.push(webhook);
    const webhookUsage = processUsage(webhook.child.pid);
    await stop(webhook);

    const controller = await startUntilReady(
      [
        'controller',
        '--kubeconfig',
        hubConfig,
        '--namespace',
        'flotilla-system',
        '--metrics-port',
        String(ports.controller),
      ],
      ports.controller,
      controllerNodeFlags(),
    );
    started.push(controller);
    const controllerIdle = processUsage(controller.child.pid);
    const agent = await startUntilReady(
      [
        'agent',
        '--cluster-name',
        env.members[0]!.name,
        '--hub-kubeconfig',
        hubConfig,
        '--kubeconfig',
        env.members[0]!.kubeconfigPath,
        '--namespace',
        'flotilla-system',
        '--metrics-port',
        String(ports.agent),
      ],
      ports.agent,
      agentNodeFlags(),
    );
    started.push(agent);
    const agentIdle = processUsage(agent.child.pid);

    const hub = new KubeClient(env.hub.kubeConfig(), { concurrency: 16 });
    const member = new KubeClient(env.members[0]!.kubeConfig(), { concurrency: 2 });
    const deadline = Date.now() + 15 * 60_000;
    const t0 = performance.now();
    await applyTemplates(hub, 0);
    const copies = await propagated(member, 0, deadline);
    const propagatedMs = performance.now() - t0;
    const [controllerCopied, agentCopied] = [processUsage(controller.child.pid), processUsage(agent.child.pid)];
    const t1 = performance.now();
    await applyTemplates(hub, 1);
    const edited = await propagated(member, 1, deadline);
    const editedMs = performance.now() - t1;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const controllerFull = processUsage(controller.child.pid);
    const agentFull = processUsage(agent.child.pid);
    await Promise.all([hub.close(), member.close()]);

    const load1 = loadavg();
    const fmt = (u: ProcessUsage) => `${mib(u.rssBytes)} MiB (peak ${mib(u.peakBytes)})`;
    const split = (u: ProcessUsage) => `${fmt(u)}: ${mib(u.anonBytes)} anonymous, ${mib(u.fileBytes)} file-backed`;
    const cpu = (ready: ProcessUsage, copied: ProcessUsage, full: ProcessUsage) =>
      `${(copied.cpuSeconds - ready.cpuSeconds).toFixed(2)} + ${(full.cpuSeconds - copied.cpuSeconds).toFixed(2)} s`;
    console.log(
      `node ${process.version}; load average ${load0.map((l) => l.toFixed(2)).join(' ')} at the start, ${load1.map((l) => l.toFixed(2)).join(' ')} at the end`,
    );
    console.log(`agent node flags: ${agentNodeFlags().join(' ') || '(none)'}`);
    console.log(
      row([
        'process',
        'start-up (until ready)',
        'RSS when ready',
        `RSS with ${TEMPLATES} templates`,
        'CPU: propagation + edits',
      ]),
    );
    console.log(row(['---', '---', '---', '---', '---']));
    console.log(
      row([
        '`flotilla --version`',
        `${version.ms.toFixed(0)} ms (median of ${RUNS})`,
        `${mib(version.peakBytes)} MiB (peak)`,
        '',
        '',
      ]),
    );
    console.log(row(['webhook', `${webhook.readyMs.toFixed(0)} ms`, fmt(webhookUsage), '', '']));
    console.log(
      row([
        'controller (pull: places, applies nothing)',
        `${controller.readyMs.toFixed(0)} ms`,
        fmt(controllerIdle),
        fmt(controllerFull),
        cpu(controllerIdle, controllerCopied, controllerFull),
      ]),
    );
    console.log(
      row([
        'agent',
        `${agent.readyMs.toFixed(0)} ms`,
        split(agentIdle),
        split(agentFull),
        cpu(agentIdle, agentCopied, agentFull),
      ]),
    );
    console.log(
      `${copies} of ${TEMPLATES} copies on the member in ${(propagatedMs / 1000).toFixed(1)} s, ${edited} edits in ${(editedMs / 1000).toFixed(1)} s; agent target < 80 MiB RSS: ${agentFull.rssBytes < 80 * MiB ? 'ok' : 'MISSED'}`,
    );
  } finally {
    for (const p of started) await stop(p);
    await env.stop();
  }
}

await main();
