// `flotilla controller` benchmark (`npm run bench:controller`), on the real test apiservers (hub + two
// members). The controller runs in this process through the CLI entry.
//
//   1. initial propagation: 500 Deployments created on the hub (16 writes at a time) until all 1,000 member
//      objects exist, next to the floor measured in the same run: the same 1,000 rendered objects sent as
//      server-side applies straight to the members with the controller's per-member concurrency (16);
//   2. single-edit latency, idle: one template's image changed on the hub until both members show it
//      (20 edits, one at a time; p50 and p99);
//   3. the same single-edit latency with 5,000 templates on the hub (4,500 more ConfigMaps, propagated too).
// Targets: initial propagation <= 1.5x the floor; single-edit p99 < 1 s; at 5,000 templates within 1.2x
// of the figure at 500.

import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { PassThrough } from 'node:stream';

import PQueue from 'p-queue';

import { customResourceDefinitions } from '../../api/crds/index.js';
import type { CommandIO } from '../../pkg/cli/command.js';
import { run } from '../../pkg/cli/index.js';
import { renderDetailed } from '../../pkg/engine/index.js';
import { KubeClient } from '../../pkg/kube/client.js';
import { startEnvironment, waitForCRDsEstablished, type ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';

type Obj = Record<string, unknown>;
const TEMPLATES = Number(process.env.BENCH_TEMPLATES ?? 500);
const MORE = Number(process.env.BENCH_MORE ?? 4_500);
const EDITS = 20;
const CONCURRENCY = 16;
const POLICY = 'policy.flotilla.io/v1beta1';

const deployment = (name: string, ns: string, tag = '1.0'): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns, labels: { app: name } },
  spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: `registry.example.com/team/${name}:${tag}` }] } } },
});
const policy = (ns: string, kind: string, apiVersion: string): Obj => ({
  apiVersion: POLICY,
  kind: 'PropagationPolicy',
  metadata: { name: `all-${kind.toLowerCase()}`, namespace: ns },
  spec: { resourceSelectors: [{ apiVersion, kind }], placement: { clusterAffinity: { clusterNames: ['member1', 'member2'] } } },
});
const override = (ns: string): Obj => ({
  apiVersion: POLICY,
  kind: 'OverridePolicy',
  metadata: { name: 'mirror', namespace: ns },
  spec: { resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment' }], overrideRules: [{ overriders: { imageOverrider: [{ component: 'Registry', operator: 'replace', value: 'mirror.example.com' }] } }] },
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
        const r = await client.request({ method: 'PATCH', path: path(o), query: { fieldManager: manager, force: 'true' }, contentType: 'application/apply-patch+yaml', body: o });
        if (r.status >= 400) throw new Error(`${path(o)}: HTTP ${r.status}`);
      }),
    ),
  );
}

async function count(client: KubeClient, path: string): Promise<number> {
  const r = await client.request<{ items: unknown[] | null }>({ method: 'GET', path, query: { labelSelector: 'flotilla.io/template-uid' }, accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' });
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

async function main(): Promise<void> {
  const env = await startEnvironment({ members: 2 });
  const stop = new AbortController();
  let controller: Promise<number> | undefined;
  try {
    const hub = new KubeClient(env.hub.kubeConfig(), { concurrency: CONCURRENCY });
    const members = env.members.map((m: ClusterHandle) => new KubeClient(m.kubeConfig(), { concurrency: CONCURRENCY }));
    const crds = customResourceDefinitions();
    const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const installed = await kubectl(env.hub.kubeconfigPath, ['apply', '--server-side', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: [...crds, ns('bench'), ns('more')] });
    if (installed.status !== 0) throw new Error(installed.stderr);
    await waitForCRDsEstablished(env.hub, crds.map((c) => c.metadata.name));
    for (const m of env.members) {
      const r = await kubectl(m.kubeconfigPath, ['apply', '--server-side', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: [ns('bench'), ns('floor')] });
      if (r.status !== 0) throw new Error(r.stderr);
    }
    const templates = Array.from({ length: TEMPLATES }, (_, i) => deployment(`app-${String(i).padStart(3, '0')}`, 'bench'));
    const policies = [policy('bench', 'Deployment', 'apps/v1'), override('bench')];
    await applyAll(hub, policies, (o) => `/apis/policy.flotilla.io/v1beta1/namespaces/bench/${o.kind === 'OverridePolicy' ? 'overridepolicies' : 'propagationpolicies'}/${(o.metadata as Obj).name as string}`, 'bench');

    // The floor: what the controller must send, sent directly.
    const rendered = renderDetailed({ objects: [...templates.map((t) => ({ ...t, metadata: { ...(t.metadata as Obj), namespace: 'floor' } })), { ...policies[0], metadata: { name: 'all', namespace: 'floor' } }, { ...policies[1], metadata: { name: 'mirror', namespace: 'floor' } }, ...['member1', 'member2'].map((name) => ({ apiVersion: 'cluster.flotilla.io/v1alpha1', kind: 'Cluster', metadata: { name } }))] });
    const floorStart = performance.now();
    await Promise.all(members.map((c, i) => applyAll(c, rendered.placements.filter((p) => p.cluster === `member${i + 1}`).map((p) => p.object as Obj), deployPath, 'floor')));
    const floorMs = performance.now() - floorStart;

    const stderr = new PassThrough();
    let log = '';
    stderr.on('data', (c: Buffer) => {
      if (log.length < 1_000_000) log += c.toString();
    });
    process.on('exit', () => {
      if (process.exitCode) process.stderr.write(`controller log:\n${log.slice(-20_000)}`);
    });
    const io: CommandIO = { stdout: new PassThrough(), stderr, stdin: new PassThrough(), env: {}, signal: stop.signal };
    controller = run(['controller', '--kubeconfig', env.hub.kubeconfigPath, '--members-kubeconfig', env.membersKubeconfigPath, '--metrics-port', '0', '--concurrency', String(CONCURRENCY), '--log-level', process.env.BENCH_LOG_LEVEL ?? 'warn'], io);
    await new Promise((r) => setTimeout(r, 500));

    const t0 = performance.now();
    await applyAll(hub, templates, deployPath, 'bench');
    await waitFor(async () => (await Promise.all(members.map((c) => count(c, '/apis/apps/v1/namespaces/bench/deployments')))).every((n) => n === TEMPLATES), 600_000, 200);
    const initialMs = performance.now() - t0;

    const editLatency = async (round: string): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < EDITS; i++) {
        const t = templates[(i * 37) % TEMPLATES] as Obj;
        const tag = `${round}-${i}`;
        const started = performance.now();
        await applyAll(hub, [deployment((t.metadata as Obj).name as string, 'bench', tag)], deployPath, 'bench');
        await waitFor(async () => {
          const images = await Promise.all(members.map(async (c) => {
            const r = await c.request<{ spec: { template: { spec: { containers: Array<{ image: string }> } } } }>({ method: 'GET', path: deployPath(t) });
            return r.body?.spec.template.spec.containers[0]?.image;
          }));
          return images.every((img) => img?.endsWith(`:${tag}`) === true);
        }, 30_000, 10).catch((e: unknown) => {
          process.exitCode = 1;
          throw e;
        });
        out.push(performance.now() - started);
      }
      return out;
    };
    const at500 = await editLatency('a');

    const more = Array.from({ length: MORE }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'more' }, data: { i: String(i) } }));
    for (const m of env.members) await kubectl(m.kubeconfigPath, ['create', 'namespace', 'more']);
    await applyAll(hub, [policy('more', 'ConfigMap', 'v1')], (o) => `/apis/policy.flotilla.io/v1beta1/namespaces/more/propagationpolicies/${(o.metadata as Obj).name as string}`, 'bench');
    const t1 = performance.now();
    await applyAll(hub, more, cmPath, 'bench');
    await waitFor(async () => (await Promise.all(members.map((c) => count(c, '/api/v1/namespaces/more/configmaps')))).every((n) => n === MORE), 900_000, 500);
    const moreMs = performance.now() - t1;
    const at5000 = await editLatency('b');

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
        `| initial propagation, ${TEMPLATES} Deployments x 2 members | ${fmt(initialMs)} | ${fmt(floorMs)} (direct server-side applies) | ${(initialMs / floorMs).toFixed(2)}x | <= 1.5x |`,
        `| single edit -> both members, ${TEMPLATES} templates (p50 / p99 of ${EDITS}) | ${fmt(p50a)} / ${fmt(p99a)} | | | p99 < 1 s |`,
        `| single edit -> both members, ${TEMPLATES + MORE} templates (p50 / p99 of ${EDITS}) | ${fmt(p50b)} / ${fmt(p99b)} | ${fmt(p50a)} at ${TEMPLATES} | ${(p50b / p50a).toFixed(2)}x (p50) | <= 1.2x |`,
        `| ${MORE} more ConfigMaps x 2 members propagated | ${fmt(moreMs)} | | | |`,
        '',
      ].join('\n'),
    );
  } finally {
    stop.abort();
    await controller?.catch(() => 1);
    await env.stop();
  }
}

await main();
