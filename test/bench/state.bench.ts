// Incremental engine benchmark (`npm run bench:state`). Prints a table. What it shows: one template
// reconcile through EngineState costs about the same with 500 or 5,000 templates held, and what an upsert
// of each kind of object costs (and how many templates it reports as affected) with 5,000 templates; and
// (d) what an EngineState holds per template at 1,000, 10,000 and 50,000 templates (heap after a full
// collection, the templates themselves included; rendered outputs are not kept: renderTemplate returns
// them and the caller drops them).

import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { renderDetailed } from '../../pkg/engine/render.js';
import { EngineState } from '../../pkg/engine/state.js';
import {
  cluster,
  clusterOverridePolicy,
  clusterPropagationPolicy,
  deployment,
  overridePolicy,
  propagationPolicy,
  type Obj,
} from '../builders.js';

const NAMESPACES = 50;
const CLUSTERS = 20;
const REGIONS = ['eu-west-1', 'eu-central-1', 'us-east-1', 'us-west-2', 'ap-south-1'];
const dep = { apiVersion: 'apps/v1', kind: 'Deployment' };

function divided(weightFor: string): Obj {
  return {
    clusterAffinity: { labelSelector: { matchLabels: { env: 'prod' } } },
    replicaScheduling: {
      replicaSchedulingType: 'Divided',
      replicaDivisionPreference: 'Weighted',
      weightPreference: {
        staticWeightList: [
          { targetCluster: { labelSelector: { matchLabels: { tier: weightFor } } }, weight: 2 },
          { targetCluster: {}, weight: 1 },
        ],
      },
    },
  };
}

/** A hub: `templates` Deployments over 50 namespaces, per namespace a PropagationPolicy and three OverridePolicies, two ClusterOverridePolicies, 20 Clusters. */
function hub(templates: number): { templates: Obj[]; policies: Obj[]; clusters: Obj[] } {
  const ts: Obj[] = [];
  for (let i = 0; i < templates; i++) {
    ts.push(
      deployment(`app-${i}`, `team-${i % NAMESPACES}`, {
        replicas: 12,
        labels: { app: `app-${i}`, tier: i % 2 ? 'web' : 'api' },
        containers: [
          { name: 'main', image: `registry.example.com/team/app-${i}:1.0`, args: ['--port=8080'] },
          { name: 'proxy', image: 'registry.example.com/infra/proxy:2.1' },
        ],
      }),
    );
  }
  const policies: Obj[] = [];
  for (let n = 0; n < NAMESPACES; n++) {
    const ns = `team-${n}`;
    policies.push(
      propagationPolicy('all', ns, [dep], divided('a')),
      propagationPolicy(
        'pinned',
        ns,
        [{ ...dep, name: `app-${n}` }],
        { clusterAffinity: { clusterNames: ['member-00', 'member-01'] } },
        { priority: 5 },
      ),
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
        [dep],
      ),
      overridePolicy(
        'web-labels',
        ns,
        [{ overriders: { labelsOverrider: [{ operator: 'add', value: { cluster: '${cluster.name}' } }] } }],
        [{ ...dep, labelSelector: { matchLabels: { tier: 'web' } } }],
      ),
      overridePolicy(
        'pinned-args',
        ns,
        [
          {
            targetCluster: { clusterNames: ['member-00'] },
            overriders: { argsOverrider: [{ containerName: 'main', operator: 'add', value: ['--canary'] }] },
          },
        ],
        [{ ...dep, name: `app-${n}` }],
      ),
    );
  }
  policies.push(
    clusterOverridePolicy(
      'region-annotation',
      [
        {
          overriders: {
            annotationsOverrider: [{ operator: 'add', value: { 'example.com/region': '${cluster.region}' } }],
          },
        },
      ],
      [dep],
    ),
    clusterOverridePolicy(
      'prod-memory',
      [
        {
          targetCluster: { labelSelector: { matchLabels: { env: 'prod' } } },
          overriders: {
            plaintext: [
              {
                path: '/spec/template/spec/containers[name=main]/resources',
                operator: 'add',
                value: { limits: { memory: '1Gi' } },
              },
            ],
          },
        },
      ],
      [dep],
    ),
    clusterPropagationPolicy('fallback', [dep], undefined, { priority: 100 }),
  );
  const clusters: Obj[] = [];
  for (let c = 0; c < CLUSTERS; c++) {
    clusters.push(
      cluster(`member-${String(c).padStart(2, '0')}`, {
        labels: { env: c % 4 === 0 ? 'dev' : 'prod', tier: c % 3 ? 'a' : 'b' },
        provider: c % 2 ? 'aws' : 'gcp',
        region: REGIONS[c % REGIONS.length] ?? 'x',
      }),
    );
  }
  return { templates: ts, policies, clusters };
}

function load(objects: { templates: Obj[]; policies: Obj[]; clusters: Obj[] }): { state: EngineState; ms: number } {
  const t0 = performance.now();
  const state = new EngineState();
  for (const o of [...objects.clusters, ...objects.policies, ...objects.templates]) {
    const m = state.upsert(o);
    if (m.rejected.length) throw new Error(`rejected: ${JSON.stringify(m.rejected)}`);
  }
  return { state, ms: performance.now() - t0 };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const fmt = (ms: number): string => (ms < 1 ? `${(ms * 1000).toFixed(1)} µs` : `${ms.toFixed(2)} ms`);

/** Median time of one renderTemplate call over batches of random templates. */
function reconcileTime(state: EngineState): { ms: number; placements: number } {
  const keys = [...state.templateKeys()];
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % keys.length;
  let placements = 0;
  for (let i = 0; i < 300; i++) state.renderTemplate(keys[next()] ?? ''); // warm-up
  const batches: number[] = [];
  for (let b = 0; b < 15; b++) {
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) placements = state.renderTemplate(keys[next()] ?? '')?.placements.length ?? 0;
    batches.push((performance.now() - t0) / 200);
  }
  return { ms: median(batches), placements };
}

/** Median time of upserting `a` and `b` alternately (each a real change), with the affected count. */
function upsertTime(state: EngineState, a: Obj, b: Obj, rounds = 9): { ms: number; affected: number } {
  const times: number[] = [];
  let affected = 0;
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    const m = state.upsert(i % 2 ? b : a);
    times.push(performance.now() - t0);
    affected = m.affected.size;
  }
  return { ms: median(times), affected };
}

const lines: string[] = [`flotilla incremental engine benchmark — node ${process.version}`, ''];
const small = hub(500);
const large = hub(5000);
const s500 = load(small);
const s5000 = load(large);
const r500 = reconcileTime(s500.state);
const r5000 = reconcileTime(s5000.state);
lines.push(
  `(a) one template reconcile: renderTemplate(key), ${CLUSTERS} clusters, ${large.policies.length} policies, Divided over the prod clusters, 5 overrides each`,
  `    500 templates held     ${fmt(r500.ms)} per reconcile (${r500.placements} placements)`,
  `    5,000 templates held   ${fmt(r5000.ms)} per reconcile (ratio 5,000/500: ${(r5000.ms / r500.ms).toFixed(2)})`,
);
const t0 = performance.now();
renderDetailed({ objects: [...large.templates, ...large.policies, ...large.clusters] });
const full = performance.now() - t0;
lines.push(`    for scale: render({objects}) of all 5,000 templates   ${fmt(full)}`, '');

const st = s5000.state;
const ppA = propagationPolicy('all', 'team-7', [dep], divided('a'));
const ppB = propagationPolicy('all', 'team-7', [dep], divided('b'));
const cppA = clusterPropagationPolicy('fallback', [dep], undefined, { priority: 100 });
const cppB = clusterPropagationPolicy(
  'fallback',
  [dep],
  { clusterAffinity: { clusterNames: ['member-03'] } },
  { priority: 100 },
);
const opA = overridePolicy(
  'web-labels',
  'team-7',
  [{ overriders: { labelsOverrider: [{ operator: 'add', value: { cluster: '${cluster.name}' } }] } }],
  [{ ...dep, labelSelector: { matchLabels: { tier: 'web' } } }],
);
const opB = overridePolicy(
  'web-labels',
  'team-7',
  [{ overriders: { labelsOverrider: [{ operator: 'add', value: { where: '${cluster.name}' } }] } }],
  [{ ...dep, labelSelector: { matchLabels: { tier: 'web' } } }],
);
const copA = clusterOverridePolicy(
  'region-annotation',
  [
    {
      overriders: { annotationsOverrider: [{ operator: 'add', value: { 'example.com/region': '${cluster.region}' } }] },
    },
  ],
  [dep],
);
const copB = clusterOverridePolicy(
  'region-annotation',
  [
    {
      overriders: { annotationsOverrider: [{ operator: 'add', value: { 'example.com/where': '${cluster.region}' } }] },
    },
  ],
  [dep],
);
const clusterA = cluster('member-05', {
  labels: { env: 'prod', tier: 'b' },
  provider: 'aws',
  region: REGIONS[0] ?? 'x',
});
const clusterB = cluster('member-05', {
  labels: { env: 'prod', tier: 'a' },
  provider: 'aws',
  region: REGIONS[0] ?? 'x',
});
const tplA = deployment('app-7', 'team-7', { replicas: 12, labels: { app: 'app-7', tier: 'web' } });
const tplB = deployment('app-7', 'team-7', { replicas: 13, labels: { app: 'app-7', tier: 'web' } });
const rows: Array<[string, Obj, Obj]> = [
  ['PropagationPolicy, one namespace (100 templates)', ppA, ppB],
  ['ClusterPropagationPolicy on every Deployment (shadowed)', cppA, cppB],
  ['OverridePolicy by label, one namespace', opA, opB],
  ['ClusterOverridePolicy on every Deployment', copA, copB],
  ['Cluster label change (placeable by every PP)', clusterA, clusterB],
  ['template', tplA, tplB],
];
lines.push('(b) upsert with 5,000 templates held (median of 9 alternating real changes)');
for (const [name, a, b] of rows) {
  const u = upsertTime(st, a, b);
  lines.push(`    ${name.padEnd(58)} ${fmt(u.ms).padStart(10)}   affected ${u.affected}`);
}
lines.push(
  '',
  `(c) initial load (upsert every object): 500 templates ${fmt(s500.ms)}, 5,000 templates ${fmt(s5000.ms)}`,
);
lines.push(`    peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** Heap bytes after full collections. */
const heap = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
lines.push('', '(d) EngineState held per template (heap after a full GC; templates, policies and clusters included)');
for (const n of [1_000, 10_000, 50_000]) {
  const before = heap();
  let held: EngineState | undefined = load(hub(n)).state;
  const after = heap();
  const json = JSON.stringify(hub(1).templates[0]).length;
  lines.push(
    `    ${n.toLocaleString('en-US').padStart(6)} templates   ${((after - before) / n).toFixed(0).padStart(6)} bytes per template   (${((after - before) / 1024 / 1024).toFixed(1)} MiB; one template is ${json} bytes of JSON; ${[...held.templateKeys()].length} held)`,
  );
  held = undefined;
}
console.log(lines.join('\n'));
