// `flotilla controller` benchmark (`npm run bench:controller`), on the real test apiservers (hub + two
// members). The controller of phases 1-4 runs as a process of its own (so its peak RSS is its own); the
// fresh controllers of phases 5 and 6 run in this process through the CLI entry.
//
//   1. initial propagation: 500 Deployments created on the hub (16 writes at a time) until all 1,000 member
//      objects exist, next to the floor measured in the same run: the same 1,000 rendered objects sent as
//      server-side applies straight to the members with the controller's per-member concurrency (16: the
//      controller runs with --member-concurrency 16 here, its default being 4, so the two compare like for like);
//      then, counted until the hub has served no write for QUIET_MS, the controller's hub writes per
//      template, its member applies per template and member, its CPU, and its peak RSS (VmHWM);
//   2. single-edit latency, idle: one template's image changed on the hub until both members show it
//      (20 edits, one at a time; p50 and p99);
//   3. drift: an image edited on a member until the controller puts it back (10 times; p50 and p99);
//   4. the same single-edit latency with 5,000 templates on the hub (4,500 more ConfigMaps, propagated too);
//   5. a slow member: a fresh controller propagates 500 more Deployments while member2 sits behind a proxy
//      that holds every chunk the controller sends it for BENCH_SLOW_MS (500 ms), against the same with
//      member2 direct: the time until member1 holds them all must stay within 1.2x (work is queued per
//      template and member, so member2's backlog is member2's alone);
//   6. failover: a fresh controller with --failover holds FAILOVER_TEMPLATES Deployments divided over both
//      members; member2's apiserver is stopped, and the time until member1 runs every replica is measured,
//      and printed with the configured detection and eviction timeouts subtracted (what is left is the
//      controller's own reaction: probe cadence, re-placement, applies).
// Next to the floor, a second reference: the requests the controller cannot do without, sent directly with
// the same pipeline (per template: its create on the hub, the claim record with the finalizer in one
// metadata patch, on each member a metadata read from the watch cache (someone else's object there is a
// conflict) and an apply, then the ResourceBinding and its status; no Event, as none is written for a
// template that propagates well; the template's aggregated status is not written either, as the members
// run no controllers and it says nothing new). The reference's templates and bindings are deleted from
// the hub before the controller starts, so none of the controller's writes is about them. All clusters
// share this machine's cores, so the hub's writes slow the members' down; the ratio to this reference is
// the controller's own overhead.
// Targets: initial propagation <= 1.3x the required requests; <= 3 hub writes per template until quiet,
// 1 apply per template and member, controller peak RSS < 200 MiB; single-edit p99 <= 100 ms; at 5,000
// templates within 1.2x of the figure at 500; a slow member costs the fast one at most 1.2x.
// BENCH_PROFILE=DIR: a CPU profile of the phases 1-4 controller, written there as it stops.

import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { PassThrough } from 'node:stream';

import PQueue from 'p-queue';

import { customResourceDefinitions } from '../../api/crds/index.js';
import type { CommandIO } from '../../pkg/cli/command.js';
import { run } from '../../pkg/cli/index.js';
import { bindingObject } from '../../pkg/controller/index.js';
import { renderDetailed } from '../../pkg/engine/index.js';
import { KubeClient, METADATA_ACCEPT } from '../../pkg/kube/client.js';
import { startEnvironment, waitForCRDsEstablished, type ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import {
  countDelta,
  cpuDelta,
  cpuSnapshot,
  deltas,
  memoryOf,
  requestCounts,
  spawnController,
  total,
  untilQuiet,
  writesOf,
} from './controller-measure.js';

type Obj = Record<string, unknown>;
const TEMPLATES = Number(process.env.BENCH_TEMPLATES ?? 500);
const MORE = Number(process.env.BENCH_MORE ?? 4_500);
const EDITS = 20;
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 500);
const CONCURRENCY = 16;
const FAILOVER_TEMPLATES = Number(process.env.BENCH_FAILOVER_TEMPLATES ?? 100);
const PROBE_MS = 500;
const EVICTION_MS = 2_000;
const POLICY = 'policy.flotilla.io/v1beta1';
/** The hub is quiet once it has served no write for this long. */
const QUIET_MS = 5_000;

const deployment = (name: string, ns: string, tag = '1.0'): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns, labels: { app: name } },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'main', image: `registry.example.com/team/${name}:${tag}` }] },
    },
  },
});
const policy = (ns: string, kind: string, apiVersion: string): Obj => ({
  apiVersion: POLICY,
  kind: 'PropagationPolicy',
  metadata: { name: `all-${kind.toLowerCase()}`, namespace: ns },
  spec: {
    resourceSelectors: [{ apiVersion, kind }],
    placement: { clusterAffinity: { clusterNames: ['member1', 'member2'] } },
  },
});
const override = (ns: string): Obj => ({
  apiVersion: POLICY,
  kind: 'OverridePolicy',
  metadata: { name: 'mirror', namespace: ns },
  spec: {
    resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment' }],
    overrideRules: [
      { overriders: { imageOverrider: [{ component: 'Registry', operator: 'replace', value: 'mirror.example.com' }] } },
    ],
  },
});

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
}

async function applyAll(client: KubeClient, objects: Obj[], path: (o: Obj) => string, manager: string): Promise<void> {
  const q = new PQueue({ concurrency: CONCURRENCY });
  await Promise.all(
    objects.map((o) =>
      q.add(async () => {
        const r = await client.request({
          method: 'PATCH',
          path: path(o),
          query: { fieldManager: manager, force: 'true' },
          contentType: 'application/apply-patch+yaml',
          body: o,
        });
        if (r.status >= 400) throw new Error(`${path(o)}: HTTP ${r.status}`);
      }),
    ),
  );
}

/**
 * How many objects `path` lists, cheaply: one item and the apiserver's remainingItemCount (no selector, so
 * the namespace must hold only what is counted; no copy of the list goes over the wire every poll).
 */
async function countAll(client: KubeClient, path: string): Promise<number> {
  const r = await client.request<{ items: unknown[] | null; metadata?: { remainingItemCount?: number } }>({
    method: 'GET',
    path,
    query: { limit: '1' },
    accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
  });
  return (r.body?.items?.length ?? 0) + (r.body?.metadata?.remainingItemCount ?? 0);
}

/** How many objects carrying the controller's label `path` lists (the whole list is read). */
async function count(client: KubeClient, path: string): Promise<number> {
  const r = await client.request<{ items: unknown[] | null }>({
    method: 'GET',
    path,
    query: { labelSelector: 'flotilla.io/template-uid' },
    accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
  });
  return r.body?.items?.length ?? 0;
}

async function waitFor(probe: () => Promise<boolean>, timeoutMs: number, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

const deployPath = (o: Obj) => {
  const m = o.metadata as { name: string; namespace: string };
  return `/apis/apps/v1/namespaces/${m.namespace}/deployments/${m.name}`;
};
const cmPath = (o: Obj) => {
  const m = o.metadata as { name: string; namespace: string };
  return `/api/v1/namespaces/${m.namespace}/configmaps/${m.name}`;
};

/** A TCP proxy to 127.0.0.1:`port` that holds every chunk the client sends for `delayMs` before passing it on. */
async function slowProxy(port: number, delayMs: number): Promise<{ server: Server; port: number }> {
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    client.on('data', (chunk: Buffer) => {
      client.pause();
      setTimeout(() => {
        upstream.write(chunk);
        client.resume();
      }, delayMs);
    });
    upstream.pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0 };
}

/** `flotilla controller` in this process on the hub and members given, quiet; `extra` flags appended. */
function freshController(hubKubeconfig: string, membersKubeconfig: string, extra: string[]): { stop(): Promise<void> } {
  const stop = new AbortController();
  const io: CommandIO = {
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    stdin: new PassThrough(),
    env: {},
    signal: stop.signal,
  };
  const running = run(
    [
      'controller',
      '--kubeconfig',
      hubKubeconfig,
      '--members-kubeconfig',
      membersKubeconfig,
      '--metrics-port',
      '0',
      '--log-level',
      'error',
      ...extra,
    ],
    io,
  );
  return {
    async stop() {
      stop.abort();
      await running;
    },
  };
}

async function main(): Promise<void> {
  const env = await startEnvironment({ members: 2 });
  let controller: { stop(): Promise<void>; child: { pid?: number | undefined } } | undefined;
  try {
    const hub = new KubeClient(env.hub.kubeConfig(), { concurrency: CONCURRENCY });
    const members = env.members.map((m: ClusterHandle) => new KubeClient(m.kubeConfig(), { concurrency: CONCURRENCY }));
    const crds = customResourceDefinitions();
    const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const installed = await kubectl(env.hub.kubeconfigPath, ['apply', '--server-side', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [...crds, ns('bench'), ns('more'), ns('required'), ns('flotilla-system')],
    });
    if (installed.status !== 0) throw new Error(installed.stderr);
    await waitForCRDsEstablished(
      env.hub,
      crds.map((c) => c.metadata.name),
    );
    for (const m of env.members) {
      const r = await kubectl(m.kubeconfigPath, ['apply', '--server-side', '-f', '-'], {
        apiVersion: 'v1',
        kind: 'List',
        items: [ns('bench'), ns('floor'), ns('required')],
      });
      if (r.status !== 0) throw new Error(r.stderr);
    }
    const templates = Array.from({ length: TEMPLATES }, (_, i) =>
      deployment(`app-${String(i).padStart(3, '0')}`, 'bench'),
    );
    const policies = [policy('bench', 'Deployment', 'apps/v1'), override('bench')];
    await applyAll(
      hub,
      policies,
      (o) =>
        `/apis/policy.flotilla.io/v1beta1/namespaces/bench/${o.kind === 'OverridePolicy' ? 'overridepolicies' : 'propagationpolicies'}/${(o.metadata as Obj).name as string}`,
      'bench',
    );

    // The floor: what the controller must send, sent directly.
    const rendered = renderDetailed({
      objects: [
        ...templates.map((t) => ({ ...t, metadata: { ...(t.metadata as Obj), namespace: 'floor' } })),
        { ...policies[0], metadata: { name: 'all', namespace: 'floor' } },
        { ...policies[1], metadata: { name: 'mirror', namespace: 'floor' } },
        ...['member1', 'member2'].map((name) => ({
          apiVersion: 'cluster.flotilla.io/v1alpha1',
          kind: 'Cluster',
          metadata: { name },
        })),
      ],
    });
    const floorCpu = cpuSnapshot(env.pids);
    const floorStart = performance.now();
    await Promise.all(
      members.map((c, i) =>
        applyAll(
          c,
          rendered.placements.filter((p) => p.cluster === `member${i + 1}`).map((p) => p.object as Obj),
          deployPath,
          'floor',
        ),
      ),
    );
    const floorMs = performance.now() - floorStart;
    const floorCpuText = cpuDelta(floorCpu, cpuSnapshot(env.pids));

    // The required requests, sent directly: templates in namespace `required` on the hub, their objects in
    // `required` on the members. They go from the hub before the controller starts: their claim record
    // names a policy that does not exist, and the controller would remove it (a patch per template).
    const required = templates.map((t) => ({ ...t, metadata: { ...(t.metadata as Obj), namespace: 'required' } }));
    const requiredCpu = cpuSnapshot(env.pids);
    const requiredStart = performance.now();
    const pipeline = new PQueue({ concurrency: CONCURRENCY });
    await Promise.all(
      required.map((t, i) =>
        pipeline.add(async () => {
          const path = deployPath(t);
          const created = await hub.request<Obj>({
            method: 'PATCH',
            path,
            query: { fieldManager: 'bench', force: 'true' },
            contentType: 'application/apply-patch+yaml',
            body: t,
          });
          if (created.status >= 400) throw new Error(`${path}: HTTP ${created.status}`);
          const uid = ((created.body?.metadata as Obj | undefined)?.uid as string | undefined) ?? '';
          const name = (t.metadata as Obj).name as string;
          const check = (r: { status: number }, what: string) => {
            if (r.status >= 400) throw new Error(`${what} of ${name}: HTTP ${r.status}`);
          };
          // The claim record and the finalizer, in one patch, before anything reaches a member.
          const claimed = await hub.request({
            method: 'PATCH',
            path,
            accept: METADATA_ACCEPT,
            contentType: 'application/merge-patch+json',
            body: {
              metadata: {
                labels: { 'propagationpolicy.karmada.io/permanent-id': 'bench-permanent-id' },
                annotations: {
                  'propagationpolicy.karmada.io/namespace': 'required',
                  'propagationpolicy.karmada.io/name': 'all',
                },
                finalizers: ['bench.example/cleanup'],
              },
            },
          });
          check(claimed, 'claim and finalizer');
          await Promise.all(
            members.map(async (c, m) => {
              const object = rendered.placements.filter((p) => p.cluster === `member${m + 1}`)[i]?.object as Obj;
              const body = { ...object, metadata: { ...(object.metadata as Obj), namespace: 'required' } };
              // What is there now (someone else's object is a conflict): a metadata read from the watch cache.
              const there = await c.request({
                method: 'GET',
                path,
                query: { resourceVersion: '0' },
                accept: METADATA_ACCEPT,
              });
              if (there.status >= 400 && there.status !== 404) throw new Error(`${path}: HTTP ${there.status}`);
              const r = await c.request({
                method: 'PATCH',
                path,
                accept: METADATA_ACCEPT,
                query: { fieldManager: 'floor', force: 'false' },
                contentType: 'application/apply-patch+yaml',
                body,
              });
              if (r.status >= 400) throw new Error(`${path}: HTTP ${r.status}`);
            }),
          );
          const binding = bindingObject({
            template: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'required', name, uid, generation: 1 },
            controllerNamespace: 'flotilla-system',
            policy: { kind: 'PropagationPolicy', namespace: 'required', name: 'all' },
            conflictResolution: 'Abort',
            clusters: ['member1', 'member2'].map((c) => ({
              name: c,
              state: 'Applied' as const,
              replicas: 2,
              overrides: [],
              observedGeneration: 1,
              health: { state: 'Progressing' as const, replicas: 2, readyReplicas: 0, availableReplicas: 0 },
            })),
            errors: [],
          });
          // The binding's spec, then its status (a subresource: a write of its own).
          const bindingPath = `/apis/work.flotilla.io/v1alpha1/namespaces/required/resourcebindings/${name}-deployment`;
          const { status, ...spec } = binding;
          for (const [at, body] of [
            [bindingPath, spec],
            [
              `${bindingPath}/status`,
              { apiVersion: binding.apiVersion, kind: binding.kind, metadata: binding.metadata, status },
            ],
          ] as const)
            check(
              await hub.request({
                method: 'PATCH',
                path: at,
                accept: METADATA_ACCEPT,
                query: { fieldManager: 'bench', force: 'true' },
                contentType: 'application/apply-patch+yaml',
                body,
              }),
              at,
            );
        }),
      ),
    );
    const requiredMs = performance.now() - requiredStart;
    const requiredCpuText = cpuDelta(requiredCpu, cpuSnapshot(env.pids));
    await Promise.all(
      required.map((t) =>
        pipeline.add(async () => {
          const path = deployPath(t);
          for (const r of [
            await hub.request({ method: 'DELETE', path, accept: METADATA_ACCEPT }),
            await hub.request({
              method: 'PATCH',
              path,
              accept: METADATA_ACCEPT,
              contentType: 'application/merge-patch+json',
              body: { metadata: { finalizers: null } },
            }),
          ])
            if (r.status >= 400 && r.status !== 404) throw new Error(`${path}: HTTP ${r.status}`);
        }),
      ),
    );
    const bindingsGone = await hub.request({
      method: 'DELETE',
      path: '/apis/work.flotilla.io/v1alpha1/namespaces/required/resourcebindings',
    });
    if (bindingsGone.status >= 400) throw new Error(`the reference's bindings: HTTP ${bindingsGone.status}`);

    const controllerProc = spawnController(
      [
        '--kubeconfig',
        env.hub.kubeconfigPath,
        '--members-kubeconfig',
        env.membersKubeconfigPath,
        '--metrics-port',
        '0',
        '--concurrency',
        String(CONCURRENCY),
        '--member-concurrency',
        String(CONCURRENCY),
        '--log-level',
        process.env.BENCH_LOG_LEVEL ?? 'warn',
      ],
      process.env.BENCH_PROFILE ? `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}` : undefined,
    );
    controller = controllerProc;
    process.on('exit', () => {
      if (process.exitCode) process.stderr.write(`controller log:\n${controllerProc.log().slice(-20_000)}`);
    });
    const named = new Map([[controllerProc.child.pid ?? 0, 'flotilla controller']]);
    await new Promise((r) => setTimeout(r, 500));

    const initialCpu = cpuSnapshot(env.pids, named);
    const requestsBefore = await Promise.all([env.hub, ...env.members].map(requestCounts));
    const t0 = performance.now();
    await applyAll(hub, templates, deployPath, 'bench');
    // Namespace bench on the members holds only what the controller applies there.
    await waitFor(
      async () =>
        (await Promise.all(members.map((c) => countAll(c, '/apis/apps/v1/namespaces/bench/deployments')))).every(
          (n) => n === TEMPLATES,
        ),
      600_000,
      50,
    );
    const initialMs = performance.now() - t0;
    const labelled = await Promise.all(members.map((c) => count(c, '/apis/apps/v1/namespaces/bench/deployments')));
    if (labelled.some((n) => n !== TEMPLATES))
      throw new Error(`members hold ${labelled.join(', ')} objects with the controller's label, not ${TEMPLATES}`);
    const initialCpuText = cpuDelta(initialCpu, cpuSnapshot(env.pids, named));
    // Until the hub is quiet: every binding written, then no write for QUIET_MS (what was left in the
    // controller's queues done; on a loaded machine a pause alone may be the controller not scheduled).
    await waitFor(
      async () =>
        (await countAll(hub, '/apis/work.flotilla.io/v1alpha1/namespaces/bench/resourcebindings')) === TEMPLATES,
      600_000,
      100,
    );
    const lastHubWrite = await untilQuiet(env.hub, QUIET_MS, 300_000);
    const quietMs = lastHubWrite - t0;
    const quietCpuText = cpuDelta(initialCpu, cpuSnapshot(env.pids, named));
    const requestsAfter = await Promise.all([env.hub, ...env.members].map(requestCounts));
    const memoryAt500 = memoryOf(controllerProc.child.pid);
    const delta = (i: number) =>
      deltas(requestsBefore[i] ?? new Map<string, number>(), requestsAfter[i] ?? new Map<string, number>());
    // The hub's writes but the bench's own creates of the templates and the apiserver's renewals of its
    // own identity Lease (PUT leases: the controller holds none without --leader-elect).
    const hubWrites = writesOf(delta(0));
    hubWrites.set('APPLY deployments', (hubWrites.get('APPLY deployments') ?? 0) - TEMPLATES);
    hubWrites.delete('PUT leases');
    const hubWritesPerTemplate = total(hubWrites) / TEMPLATES;
    // The policies' status writes are the policies' (two here, written as their counts settle), not a template's.
    const policyStatusWrites = [...hubWrites]
      .filter(([k]) => /policies\/status$/.test(k))
      .reduce((n, [, v]) => n + v, 0);
    const appliesPerTemplate = [1, 2].map((i) => (delta(i).get('APPLY deployments') ?? 0) / TEMPLATES);
    const requestsText = ['hub', 'member1', 'member2']
      .map(
        (n, i) =>
          `${n}: ${countDelta(requestsBefore[i] ?? new Map<string, number>(), requestsAfter[i] ?? new Map<string, number>())}`,
      )
      .join('\n');
    const hubWritesText = [...hubWrites]
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');

    const editLatency = async (round: string): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < EDITS; i++) {
        const t = templates[(i * 37) % TEMPLATES] as Obj;
        const tag = `${round}-${i}`;
        const started = performance.now();
        await applyAll(hub, [deployment((t.metadata as Obj).name as string, 'bench', tag)], deployPath, 'bench');
        await waitFor(
          async () => {
            const images = await Promise.all(
              members.map(async (c) => {
                const r = await c.request<{ spec: { template: { spec: { containers: Array<{ image: string }> } } } }>({
                  method: 'GET',
                  path: deployPath(t),
                });
                return r.body?.spec.template.spec.containers[0]?.image;
              }),
            );
            return images.every((img) => img?.endsWith(`:${tag}`) === true);
          },
          30_000,
          10,
        ).catch((e: unknown) => {
          process.exitCode = 1;
          throw e;
        });
        out.push(performance.now() - started);
      }
      return out;
    };
    const at500 = await editLatency('a');

    // Drift: someone changes the image of a Deployment on member1; time until the controller puts it back.
    const drift: number[] = [];
    const member1 = members[0] as KubeClient;
    for (let i = 0; i < EDITS / 2; i++) {
      const t = templates[(i * 53) % TEMPLATES] as Obj;
      const path = deployPath(t);
      const image = async () =>
        (
          await member1.request<{ spec: { template: { spec: { containers: Array<{ image: string }> } } } }>({
            method: 'GET',
            path,
          })
        ).body?.spec.template.spec.containers[0]?.image;
      const want = await image();
      const started = performance.now();
      const r = await member1.request({
        method: 'PATCH',
        path,
        contentType: 'application/strategic-merge-patch+json',
        body: { spec: { template: { spec: { containers: [{ name: 'main', image: 'hand.example/edited:1' }] } } } },
      });
      if (r.status >= 400) throw new Error(`${path}: HTTP ${r.status}`);
      await waitFor(async () => (await image()) === want, 30_000, 10);
      drift.push(performance.now() - started);
    }

    const more = Array.from({ length: MORE }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${i}`, namespace: 'more' },
      data: { i: String(i) },
    }));
    for (const m of env.members) await kubectl(m.kubeconfigPath, ['create', 'namespace', 'more']);
    await applyAll(
      hub,
      [policy('more', 'ConfigMap', 'v1')],
      (o) =>
        `/apis/policy.flotilla.io/v1beta1/namespaces/more/propagationpolicies/${(o.metadata as Obj).name as string}`,
      'bench',
    );
    const t1 = performance.now();
    await applyAll(hub, more, cmPath, 'bench');
    await waitFor(
      async () =>
        (await Promise.all(members.map((c) => count(c, '/api/v1/namespaces/more/configmaps')))).every(
          (n) => n === MORE,
        ),
      900_000,
      500,
    );
    const moreMs = performance.now() - t1;
    const at5000 = await editLatency('b');

    const memoryAt5000 = memoryOf(controller.child.pid);
    // 5. A slow member. The controller of phases 1-4 stops; each run below is a fresh controller.
    await controller.stop();
    controller = undefined;
    const fast = members[0] as KubeClient;
    const member2Server = (env.members[1] as ClusterHandle).server;
    const proxy = await slowProxy(Number(new URL(member2Server).port), SLOW_MS);
    const slowKubeconfig = `${env.membersKubeconfigPath}.slow`;
    writeFileSync(
      slowKubeconfig,
      readFileSync(env.membersKubeconfigPath, 'utf8').split(member2Server).join(`https://127.0.0.1:${proxy.port}`),
    );
    const toFastMember = async (ns: string, kubeconfig: string): Promise<number> => {
      for (const c of [env.hub, ...env.members]) await kubectl(c.kubeconfigPath, ['create', 'namespace', ns]);
      await applyAll(
        hub,
        [policy(ns, 'Deployment', 'apps/v1')],
        (o) =>
          `/apis/policy.flotilla.io/v1beta1/namespaces/${ns}/propagationpolicies/${(o.metadata as Obj).name as string}`,
        'bench',
      );
      const fresh = freshController(env.hub.kubeconfigPath, kubeconfig, [
        '--concurrency',
        String(CONCURRENCY),
        '--member-concurrency',
        String(CONCURRENCY),
      ]);
      await new Promise((r) => setTimeout(r, 500));
      const started = performance.now();
      await applyAll(
        hub,
        templates.map((t) => ({ ...t, metadata: { ...(t.metadata as Obj), namespace: ns } })),
        deployPath,
        'bench',
      );
      await waitFor(
        async () => (await countAll(fast, `/apis/apps/v1/namespaces/${ns}/deployments`)) === TEMPLATES,
        600_000,
        50,
      );
      const ms = performance.now() - started;
      await fresh.stop();
      return ms;
    };
    const bothDirect = await toFastMember('direct', env.membersKubeconfigPath);
    const oneSlow = await toFastMember('slow', slowKubeconfig);
    proxy.server.close();

    // 6. failover: member2 stops; how long until member1 runs every replica.
    const failoverMs = await (async () => {
      const fns = 'failover';
      for (const c of [env.hub, ...env.members]) {
        const r = await kubectl(c.kubeconfigPath, ['apply', '--server-side', '-f', '-'], ns(fns));
        if (r.status !== 0) throw new Error(r.stderr);
      }
      const divided: Obj = {
        apiVersion: POLICY,
        kind: 'PropagationPolicy',
        metadata: { name: 'divided', namespace: fns },
        spec: {
          resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment' }],
          placement: {
            clusterAffinity: { clusterNames: ['member1', 'member2'] },
            replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' },
          },
          failover: { cluster: { purgeMode: 'Directly' } },
        },
      };
      await applyAll(hub, [divided], () => `/apis/${POLICY}/namespaces/${fns}/propagationpolicies/divided`, 'bench');
      const fresh = freshController(env.hub.kubeconfigPath, env.membersKubeconfigPath, [
        '--probe-interval',
        `${PROBE_MS}ms`,
        '--probe-timeout',
        '1s',
        '--not-ready-taint-after',
        '1s',
        '--failover',
        'true',
        '--failover-eviction-timeout',
        `${EVICTION_MS}ms`,
      ]);
      const names = Array.from({ length: FAILOVER_TEMPLATES }, (_, i) => `fo-${String(i).padStart(3, '0')}`);
      await applyAll(
        hub,
        names.map((n) => deployment(n, fns)),
        (o) => `/apis/apps/v1/namespaces/${fns}/deployments/${(o.metadata as Obj).name as string}`,
        'bench',
      );
      const onMember1 = async (want: number) => {
        const list = await members[0]!.request<{ items?: Obj[] }>({
          method: 'GET',
          path: `/apis/apps/v1/namespaces/${fns}/deployments`,
        });
        return (list.body?.items ?? []).filter((d) => (d.spec as Obj).replicas === want).length === FAILOVER_TEMPLATES;
      };
      await waitFor(() => onMember1(1), 300_000, 100);
      // The clock starts at the SIGTERM: from then on member2's /readyz fails (then it stops answering).
      const started = performance.now();
      await env.stopCluster('member2');
      await waitFor(() => onMember1(2), 300_000, 50);
      const ms = performance.now() - started;
      await env.startCluster('member2');
      await fresh.stop();
      return ms;
    })();

    const fmt = (ms: number) => `${ms.toFixed(0)} ms`;
    const p50a = percentile(at500, 50);
    const p99a = percentile(at500, 99);
    const p50b = percentile(at5000, 50);
    const p99b = percentile(at5000, 99);
    process.stdout.write(
      [
        `Node ${process.version}, ${availableParallelism()} cores, load ${loadavg()[0]?.toFixed(1)}; hub + 2 member kube-apiservers on this machine; concurrency ${CONCURRENCY}`,
        '',
        '| measure | flotilla controller | floor / reference | ratio | target |',
        '|---|---|---|---|---|',
        `| initial propagation, ${TEMPLATES} Deployments x 2 members | ${fmt(initialMs)} | ${fmt(floorMs)} (direct server-side applies) | ${(initialMs / floorMs).toFixed(2)}x | |`,
        `| (same) against the required requests sent directly | ${fmt(initialMs)} | ${fmt(requiredMs)} (hub create, claim and finalizer, per member a metadata read and an apply, binding, binding status per template) | ${(initialMs / requiredMs).toFixed(2)}x | <= 1.3x |`,
        `| hub writes per template, counted until the hub is quiet (no write for ${QUIET_MS} ms) | ${hubWritesPerTemplate.toFixed(2)}; ${(hubWritesPerTemplate - policyStatusWrites / TEMPLATES).toFixed(2)} without the ${policyStatusWrites} status writes of the ${policies.length} policies | 3 (claim and finalizer, binding, binding status) | | <= 3 |`,
        `| member applies per template (member1, member2) | ${appliesPerTemplate.map((n) => n.toFixed(2)).join(', ')} | 1 | | 1 |`,
        `| the hub quiet after (from the first create) | ${fmt(quietMs)} | | | |`,
        `| controller peak RSS (VmHWM) once quiet, ${TEMPLATES} templates | ${memoryAt500.peakMiB.toFixed(0)} MiB | | | < 200 MiB |`,
        `| single edit -> both members, ${TEMPLATES} templates (p50 / p99 of ${EDITS}) | ${fmt(p50a)} / ${fmt(p99a)} | | | p99 <= 100 ms |`,
        `| single edit -> both members, ${TEMPLATES + MORE} templates (p50 / p99 of ${EDITS}) | ${fmt(p50b)} / ${fmt(p99b)} | ${fmt(p50a)} at ${TEMPLATES} | ${(p50b / p50a).toFixed(2)}x (p50) | <= 1.2x |`,
        `| drift on a member (image edited there) -> put back (p50 / p99 of ${drift.length}) | ${fmt(percentile(drift, 50))} / ${fmt(percentile(drift, 99))} | | | < 5 s |`,
        `| ${MORE} more ConfigMaps x 2 members propagated | ${fmt(moreMs)} | | | |`,
        `| controller peak RSS (VmHWM) after ${TEMPLATES + MORE} templates and the edits; RSS then | ${memoryAt5000.peakMiB.toFixed(0)} MiB; ${memoryAt5000.rssMiB.toFixed(0)} MiB | | | |`,
        `| ${TEMPLATES} Deployments to member1 while member2 answers ${SLOW_MS} ms late (fresh controller) | ${fmt(oneSlow)} | ${fmt(bothDirect)} (member2 direct) | ${(oneSlow / bothDirect).toFixed(2)}x | <= 1.2x |`,
        `| member2 stopped -> member1 runs all replicas of ${FAILOVER_TEMPLATES} divided Deployments (--failover, eviction timeout ${EVICTION_MS} ms, probe every ${PROBE_MS} ms) | ${fmt(failoverMs)} | ${fmt(failoverMs - EVICTION_MS)} with the eviction timeout subtracted | | |`,
        '',
        `CPU during the floor: ${floorCpuText}`,
        `CPU during the required requests: ${requiredCpuText}`,
        `CPU during initial propagation: ${initialCpuText}`,
        `CPU until the hub is quiet: ${quietCpuText}`,
        `Controller's hub writes until quiet (the bench's creates taken out): ${hubWritesText}`,
        `Requests until the hub is quiet (the bench's own creates and counts included):\n${requestsText}`,
        '',
      ].join('\n'),
    );
  } finally {
    await controller?.stop();
    await env.stop();
  }
}

await main();
