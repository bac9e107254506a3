// Fleet benchmark (`npm run bench:fleet`): 1,000 templates x 20 member apiservers on this machine (one
// etcd, a prefix per cluster), delivered two ways, each in a fresh environment so neither measures the
// other's objects:
//
//   push:    one `flotilla controller` process reaching all 20 members through a kubeconfig;
//   sharded: two `flotilla controller --sharding true` processes dividing the 20 members;
//   pull:    one `flotilla controller` process placing (no member credential) and 20 `flotilla agent`
//            processes, one per member (Cluster spec.syncMode Pull), each applying its own copies; node
//            runs them with the chart's agent.nodeFlags, as deployed (BENCH_AGENT_NODE_FLAGS replaces them).
//
// For each: the time from the first template create on the hub until every member holds all 1,000
// copies; the requests each member's apiserver served meanwhile (apiserver_request_total, watches left
// out); CPU seconds and RSS (VmRSS at the end, VmHWM the peak) of the controller and of each agent; and
// the single-edit latency: one template's data changed on the hub until all 20 members show it (EDITS
// times, one at a time; p50 and p99); and the requests the hub served. A mode that has not converged
// after BENCH_FLEET_TIMEOUT_MS (15 min) is printed with how far it got. BENCH_FLEET_NODE_OPTIONS is
// passed to the Flotilla processes as NODE_OPTIONS (a CPU profile: `--cpu-prof --cpu-prof-dir=DIR`). The machine's load average is
// printed with the table: every apiserver, etcd and Flotilla process shares its cores.
// This is the fidelity check of the light part (fleet-light.ts, fleet-light-report.ts): the same templates
// delivered to 200 in-memory members over HTTPS, printed after this table. BENCH_FLEET_PARTS=real or
// =light runs one part (default both).
// The controller's memory per 1,000 template-member pairs is printed four ways: its RSS over the same
// controller with no templates (V8's headroom and garbage included); and, over several fleet sizes (the
// templates, then BENCH_FLEET_GROW more, default half as many, added after the edits in
// BENCH_FLEET_GROW_STEPS steps, default 3), the least-squares slope of its retained heap (heap in use
// after a full collection, read from /metrics: the controllers run with --expose-gc and
// FLOTILLA_BENCH_HEAP_METRIC=true, pkg/runtime/heap-gauge.ts), of its RSS 2 s after that collection, and of its
// RSS as seen once settled (V8's memory reducer run after that collection; fleet-memory.ts). The retained slope is what the controller's state costs; the RSS figures are what a
// machine must have. MALLOC_ARENA_MAX, when set, is passed on to the Flotilla processes.
// Targets: retained heap and RSS under 3 MiB per 1,000 template-member pairs, an agent's RSS under 80 MiB
// at 1,000 templates, one edit reaching all 20 members with p99 under 2 s in every mode.

import { availableParallelism, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';

import { KubeClient } from '../../pkg/kube/client.js';
import { startEnvironment, type Environment } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import {
  NS,
  applyAll,
  assertRunning,
  configMap,
  MEASURED_COLUMNS,
  MEASURED_COUNT,
  grow,
  measuredCells,
  prepareHub,
  requests,
  spawnAgent,
  spawnControllers,
  stopProc,
  templateName,
  timeEdits,
  usage,
  waitFor,
  type Obj,
  type Proc,
  type Measured,
} from './fleet-common.js';
import { measureDrift, type DriftTimes } from './fleet-drift.js';
import { lightPart } from './fleet-light-report.js';

const MEMBERS = Number(process.env.BENCH_FLEET_MEMBERS ?? 20);
const TEMPLATES = Number(process.env.BENCH_FLEET_TEMPLATES ?? 1_000);
const EDITS = Number(process.env.BENCH_FLEET_EDITS ?? 20);
const TIMEOUT_MS = Number(process.env.BENCH_FLEET_TIMEOUT_MS ?? 15 * 60_000);
const GROW = Number(process.env.BENCH_FLEET_GROW ?? Math.round(TEMPLATES / 2));
type Mode = 'push' | 'sharded' | 'pull';

interface Row extends Measured {
  mode: Mode;
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

/** A fresh environment: CRDs, namespaces, the policy sending every ConfigMap of NS to every member. */
async function prepare(mode: Mode): Promise<{ env: Environment; hub: KubeClient; members: KubeClient[] }> {
  const t = performance.now();
  const env = await startEnvironment({ members: MEMBERS });
  process.stderr.write(`${mode}: ${MEMBERS} member apiservers up in ${Math.round(performance.now() - t)} ms\n`);
  const names = env.members.map((m) => m.name);
  await prepareHub(env.hub, names, mode === 'pull' ? names : []);
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
    const controllers = await spawnControllers(
      env.hub.kubeconfigPath,
      mode === 'pull' ? undefined : env.membersKubeconfigPath,
      mode === 'sharded' ? 2 : 1,
    );
    procs.push(...controllers);
    const agents =
      mode === 'pull' ? env.members.map((m) => spawnAgent(m.name, env.hub.kubeconfigPath, m.kubeconfigPath)) : [];
    procs.push(...agents);
    // Started and synced (no templates yet): the controllers' baseline.
    await new Promise((r) => setTimeout(r, mode === 'push' ? 8_000 : 15_000));
    assertRunning(procs);
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
      templates: TEMPLATES,
      members: MEMBERS,
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
    const edit = await timeEdits(hub, EDITS, TEMPLATES, async (name, value) =>
      (
        await Promise.all(
          members.map(async (m) => {
            const r = await m.request<Obj>({ method: 'GET', path: `/api/v1/namespaces/${NS}/configmaps/${name}` });
            return ((r.body?.data as Obj | undefined)?.value as string | undefined) === value;
          }),
        )
      ).every(Boolean),
    );
    // A copy changed on its member (templates the edits left as v0), until the controller or agent puts it back.
    const drift = await measureDrift(members, {
      namespace: NS,
      rounds: EDITS,
      name: (r) => templateName((EDITS + 1 + r) % TEMPLATES),
      expected: 'v0',
      timeoutMs: 120_000,
    });
    // CPU and RSS as printed are those before the second fleet size, grown for the slopes of retained heap and RSS.
    const done = row(edit, drift);
    done.growth = await grow({
      hub,
      controllers,
      from: TEMPLATES,
      count: GROW,
      members: MEMBERS,
      propagated: async (total) =>
        (await Promise.all(members.map((m) => countAll(m).catch(() => 0)))).every((n) => n >= total),
      timeoutMs: TIMEOUT_MS,
    });
    return done;
  } finally {
    await Promise.all(procs.map(stopProc));
    await Promise.all(members.map((m) => m.close()));
    await hub.close();
    await env.stop();
  }
}

async function realPart(): Promise<string[]> {
  const rows: Row[] = [];
  const loads: string[] = [];
  const modes = (process.env.BENCH_FLEET_MODES ?? 'push,sharded,pull').split(',') as Mode[];
  for (const mode of modes) {
    rows.push(await measure(mode));
    loads.push(`${mode} ${loadavg()[0]?.toFixed(1) ?? '?'}`);
  }
  return [
    `Real members: hub + ${MEMBERS} member kube-apiservers and one etcd on this machine; load average (1 min) at the end of each mode: ${loads.join(', ')}`,
    `${TEMPLATES} ConfigMaps (about 0.3 KiB each) x ${MEMBERS} members = ${TEMPLATES * MEMBERS} template-member pairs; edits: ${EDITS}, one at a time; then ${GROW} more templates for the slopes`,
    '',
    `| mode | ${MEASURED_COLUMNS} |`,
    `|${'---|'.repeat(MEASURED_COUNT + 1)}`,
    ...rows.map((r) => `| ${[r.mode, ...measuredCells(r)].join(' | ')} |`),
  ];
}

async function main(): Promise<void> {
  const parts = (process.env.BENCH_FLEET_PARTS ?? 'real,light').split(',');
  const lines = [
    `Node ${process.version}, ${availableParallelism()} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`,
    '',
  ];
  if (parts.includes('real')) lines.push(...(await realPart()), '');
  if (parts.includes('light')) lines.push(...(await lightPart(TEMPLATES, EDITS, TIMEOUT_MS, GROW)));
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
