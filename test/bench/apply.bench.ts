// `flotilla apply` benchmark (`npm run bench:apply`), on the real test apiservers (two members).
//
// Workload: 500 Deployments with overrides (image registry per region, labels, an argument) rendered for
// two members: 1,000 objects. Each round uses fresh namespaces and measures, in the same process:
//   - first apply: `flotilla apply` (read files, render, discovery, ApplySet parent, one metadata LIST
//     per member, 1,000 server-side applies, output) against the floor: a plain loop that sends the same
//     1,000 rendered objects as server-side applies through the same client and concurrency;
//   - no-change re-apply: `flotilla apply` again (nothing changes) against a floor of 1,000 GETs; also
//     timed, for reference, the same 1,000 server-side applies sent again (each a no-op), which is what
//     one apply request per unchanged object would cost.
// Flotilla and the floor write into different namespaces, so both create their objects; which one goes
// first alternates between rounds. Targets: first apply <= 1.3x its floor, re-apply <= 1.3x its floor.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PassThrough, Readable } from 'node:stream';
import { stringify } from 'yaml';

import { run } from '../../pkg/cli/index.js';
import { renderDetailed } from '../../pkg/engine/index.js';
import {
  KubeClient,
  configForContext,
  readKubeconfigFile,
  resourcePath,
  PART_OF_LABEL,
  applySetId,
} from '../../pkg/kube/index.js';
import { startEnvironment } from '../envtest/index.js';
import { cluster, deployment, overridePolicy, propagationPolicy, type Obj } from '../builders.js';

const DEPLOYMENTS = 500;
const ROUNDS = 3;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const DEPLOYMENT_INFO = { group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', namespaced: true };

function workload(ns: string, members: readonly string[]): Obj[] {
  const objects: Obj[] = [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }];
  for (let i = 0; i < DEPLOYMENTS; i++) {
    objects.push(
      deployment(`app-${String(i).padStart(3, '0')}`, ns, {
        replicas: 4,
        labels: { app: `app-${i}`, tier: i % 2 ? 'web' : 'api' },
        containers: [
          {
            name: 'main',
            image: `registry.example.com/team/app-${i}:1.${i % 10}.0`,
            args: ['--port=8080'],
            env: [{ name: 'MODE', value: 'x' }],
            resources: { limits: { memory: '512Mi' } },
          },
          { name: 'sidecar', image: 'registry.example.com/infra/proxy:2.1' },
        ],
      }),
    );
  }
  members.forEach((m, i) =>
    objects.push(
      cluster(m, {
        labels: { env: 'prod', idx: String(i) },
        provider: 'aws',
        region: i === 0 ? 'eu-west-1' : 'us-east-1',
      }),
    ),
  );
  objects.push(
    propagationPolicy('all', ns, [
      { apiVersion: 'apps/v1', kind: 'Deployment' },
      { apiVersion: 'v1', kind: 'Namespace', name: ns },
    ]),
  );
  const dep = [{ apiVersion: 'apps/v1', kind: 'Deployment' }];
  objects.push(
    overridePolicy(
      'registry',
      ns,
      [
        {
          overriders: {
            imageOverrider: [
              { component: 'Registry', operator: 'replace', value: 'mirror.${cluster.region}.example.com' },
            ],
          },
        },
      ],
      dep,
    ),
    overridePolicy(
      'labels',
      ns,
      [
        {
          overriders: {
            labelsOverrider: [{ operator: 'add', value: { 'example.com/cluster': '${cluster.name}' } }],
            argsOverrider: [{ containerName: 'main', operator: 'add', value: ['--region=${cluster.region}'] }],
          },
        },
      ],
      dep,
    ),
  );
  return objects;
}

function sink() {
  const s = new PassThrough();
  s.resume();
  return s;
}

async function flotillaApply(dir: string, kubeconfig: string, applyset: string): Promise<number> {
  const err = new PassThrough();
  let text = '';
  err.on('data', (c: Buffer) => (text += c.toString()));
  const start = performance.now();
  const code = await run(
    ['apply', '-f', dir, '--kubeconfig', kubeconfig, '--applyset', applyset, '--concurrency', String(CONCURRENCY)],
    {
      stdout: sink(),
      stderr: err,
      stdin: Readable.from([]),
      env: {},
      signal: new AbortController().signal,
    },
  );
  const ms = performance.now() - start;
  if (code !== 0) throw new Error(`flotilla apply exited ${code}: ${text}`);
  return ms;
}

/** The floor: the same objects, straight server-side applies (or GETs) through the same client. */
async function floor(
  kubeconfig: string,
  members: readonly string[],
  perMember: Map<string, Obj[]>,
  op: 'apply' | 'get',
): Promise<number> {
  const kc = readKubeconfigFile(kubeconfig);
  const start = performance.now();
  await Promise.all(
    members.map(async (m) => {
      const client = new KubeClient(configForContext(kc, m, 'bench'), { concurrency: CONCURRENCY });
      const objects = perMember.get(m) ?? [];
      await Promise.all(
        objects.map(async (o) => {
          const meta = o.metadata as { name: string; namespace: string };
          const path = resourcePath(DEPLOYMENT_INFO, meta.namespace, meta.name);
          const res =
            op === 'apply'
              ? await client.request({
                  method: 'PATCH',
                  path,
                  query: { fieldManager: 'floor', force: 'false', fieldValidation: 'Strict' },
                  contentType: 'application/apply-patch+yaml',
                  body: o,
                })
              : await client.request({ method: 'GET', path });
          if (res.status >= 400) throw new Error(`floor ${op} ${path}: HTTP ${res.status}`);
        }),
      );
      await client.close();
    }),
  );
  return performance.now() - start;
}

async function ensureNamespace(kubeconfig: string, member: string, ns: string): Promise<void> {
  const client = new KubeClient(configForContext(readKubeconfigFile(kubeconfig), member, 'bench'), { concurrency: 1 });
  const res = await client.request({
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
  });
  if (res.status >= 400 && res.status !== 409) throw new Error(`namespace ${ns}: HTTP ${res.status}`);
  await client.close();
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

const env = await startEnvironment({ members: 2 });
const dir = mkdtempSync(join(tmpdir(), 'flotilla-apply-bench-'));
try {
  const kubeconfig = env.membersKubeconfigPath;
  const members = env.members.map((m) => m.name);
  const rows = {
    first: { flotilla: [] as number[], floor: [] as number[] },
    again: { flotilla: [] as number[], floor: [] as number[] },
  };
  const noopApplies: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const ns = `bench-${round}`;
    const floorNs = `floor-${round}`;
    const objects = workload(ns, members);
    writeFileSync(join(dir, `round-${round}.yaml`), objects.map((o) => stringify(o)).join('---\n'));
    const inputFile = join(dir, `round-${round}.yaml`);
    // The floor's objects: the same render, moved to the floor's namespace, with the same ApplySet label.
    const rendered = renderDetailed({ objects: workload(floorNs, members) });
    const perMember = new Map<string, Obj[]>();
    const floorLabel = applySetId({ name: `floor-${round}`, namespace: 'flotilla-system' });
    for (const p of rendered.placements) {
      if (p.object.kind !== 'Deployment') continue;
      const meta = p.object.metadata as { labels?: Record<string, string> };
      meta.labels = { ...meta.labels, [PART_OF_LABEL]: floorLabel };
      perMember.set(p.cluster, [...(perMember.get(p.cluster) ?? []), p.object]);
    }
    for (const m of members) await ensureNamespace(kubeconfig, m, floorNs);
    const flotillaFirst = round % 2 === 1;
    if (flotillaFirst) {
      rows.first.flotilla.push(await flotillaApply(inputFile, kubeconfig, `bench-${round}`));
      rows.first.floor.push(await floor(kubeconfig, members, perMember, 'apply'));
      rows.again.flotilla.push(await flotillaApply(inputFile, kubeconfig, `bench-${round}`));
      rows.again.floor.push(await floor(kubeconfig, members, perMember, 'get'));
    } else {
      rows.first.floor.push(await floor(kubeconfig, members, perMember, 'apply'));
      rows.first.flotilla.push(await flotillaApply(inputFile, kubeconfig, `bench-${round}`));
      rows.again.floor.push(await floor(kubeconfig, members, perMember, 'get'));
      rows.again.flotilla.push(await flotillaApply(inputFile, kubeconfig, `bench-${round}`));
    }
    noopApplies.push(await floor(kubeconfig, members, perMember, 'apply'));
    process.stderr.write(
      `round ${round}: first ${rows.first.flotilla.at(-1)?.toFixed(0)} ms vs floor ${rows.first.floor.at(-1)?.toFixed(0)} ms; re-apply ${rows.again.flotilla.at(-1)?.toFixed(0)} ms vs floor ${rows.again.floor.at(-1)?.toFixed(0)} ms\n`,
    );
  }
  const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const line = (name: string, r: { flotilla: number[]; floor: number[] }, floorName: string) => {
    const f = median(r.flotilla);
    const fl = median(r.floor);
    return `| ${name} | ${fmt(f)} | ${floorName} | ${fmt(fl)} | ${(f / fl).toFixed(2)}x | <= 1.3x |`;
  };
  console.log(
    `\nflotilla apply, ${DEPLOYMENTS} Deployments x ${members.length} members = ${DEPLOYMENTS * members.length} objects, concurrency ${CONCURRENCY} per member, median of ${ROUNDS} rounds`,
  );
  console.log(
    `(${availableParallelism()} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})\n`,
  );
  console.log('| run | flotilla apply | floor | floor time | ratio | target |');
  console.log('|---|---|---|---|---|---|');
  console.log(line('first apply', rows.first, `${DEPLOYMENTS * members.length} server-side applies`));
  console.log(line('no-change re-apply', rows.again, `${DEPLOYMENTS * members.length} GETs`));
  console.log(
    `\nfor reference: the same ${DEPLOYMENTS * members.length} server-side applies sent again, each changing nothing: ${fmt(median(noopApplies))} (${(median(noopApplies) / median(rows.again.floor)).toFixed(2)}x the GET floor)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
  await env.stop();
}
