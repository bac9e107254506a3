// Engine benchmarks (`npm run bench`). Prints a table; targets on a 2-core machine: (a) >= 20,000 renders/s
// and a peak RSS of at most 200 MiB with each placement dropped once handed on (renderEach, as `flotilla
// render` writes them; then renderDetailed, which keeps them all, for comparison), (b) under 2 s. A render is one (template, cluster) pair. (c) times one replica division at the largest
// replica count Kubernetes allows.

import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sortInputs } from '../../pkg/engine/inputs.js';
import { PropagationMatcher } from '../../pkg/engine/match.js';
import { MAX_REPLICAS, websterSeats } from '../../pkg/engine/webster.js';
import { renderDetailed, renderEach, type DetailedResult } from '../../pkg/engine/render.js';
import { propagationPolicy, type Obj } from '../builders.js';
import { renderWorkload } from './render-workload.js';

function matchingWorkload(): Obj[] {
  const objects: Obj[] = [];
  const kinds = [
    { apiVersion: 'apps/v1', kind: 'Deployment' },
    { apiVersion: 'v1', kind: 'ConfigMap' },
    { apiVersion: 'v1', kind: 'Service' },
    { apiVersion: 'apps/v1', kind: 'StatefulSet' },
  ];
  for (let n = 0; n < 100; n++) {
    const ns = `team-${n}`;
    for (let i = 0; i < 100; i++) {
      const k = kinds[i % kinds.length] ?? kinds[0];
      objects.push({ ...k, metadata: { name: `obj-${i}`, namespace: ns, labels: { app: `app-${i % 10}` } } });
    }
    for (let p = 0; p < 20; p++) {
      const k = kinds[p % kinds.length] ?? kinds[0];
      const selector =
        p < 10
          ? { ...k, name: `obj-${p * 7}` }
          : p < 16
            ? { ...k, labelSelector: { matchLabels: { app: `app-${p % 10}` } } }
            : { ...k };
      objects.push(propagationPolicy(`pp-${p}`, ns, [selector], undefined, p % 5 === 0 ? { priority: p } : {}));
    }
  }
  return objects;
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}

/** Median, best and worst of `runs` timed calls of `run` (after one warm-up call). */
function timed(runs: number, run: () => void): { median: number; best: number; worst: number } {
  run();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(runs / 2)] ?? 0, best: times[0] ?? 0, worst: times[runs - 1] ?? 0 };
}

/** Heap bytes in use after full collections. */
function heapAfterGc(): number {
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function benchRender(): string[] {
  const objects = renderWorkload();
  // As `flotilla render` does: each placement handed on as it is made and not kept (renderEach).
  let renders = 0;
  let errors = 0;
  const each = timed(5, () => {
    renders = 0;
    errors = renderEach({ objects }, {}, () => renders++).errors.length;
  });
  const eachPeak = process.resourceUsage().maxRSS * 1024;
  // Every placement kept until the run ends (renderDetailed), and what holding them costs.
  const before = heapAfterGc();
  let held: DetailedResult | undefined = renderDetailed({ objects });
  const heldBytes = heapAfterGc() - before;
  const heldCount = held.placements.length;
  held = undefined;
  const kept = timed(5, () => void renderDetailed({ objects }));
  return [
    '(a) render: 1,000 Deployments + 1 ConfigMap x 20 clusters x 10 OverridePolicies (every overrider)',
    `    renders per run      ${renders} (errors: ${errors})`,
    `    median run           ${each.median.toFixed(0)} ms (best ${each.best.toFixed(0)} ms, worst ${each.worst.toFixed(0)} ms)`,
    `    throughput           ${Math.round(renders / (each.median / 1000)).toLocaleString('en-US')} renders/s  (target >= 20,000)`,
    `    peak RSS             ${mib(eachPeak)}  (target <= 200 MiB; each placement dropped once handed on, as flotilla render -o yaml does)`,
    `    all kept             renderDetailed: median run ${kept.median.toFixed(0)} ms, peak RSS ${mib(process.resourceUsage().maxRSS * 1024)}; its ${heldCount} placements hold ${mib(heldBytes)} of heap`,
  ];
}

function benchMatching(): string[] {
  const objects = matchingWorkload();
  const inputs = sortInputs(objects);
  const times: number[] = [];
  let claimed = 0;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const matcher = new PropagationMatcher(inputs.propagation);
    claimed = 0;
    for (const t of inputs.templates) if (matcher.claim(t)) claimed++;
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return [
    '(b) matching: 10,000 templates against 2,000 PropagationPolicies (index build included)',
    `    templates claimed    ${claimed} of ${inputs.templates.length} (policies: ${inputs.propagation.length})`,
    `    median time          ${(times[1] ?? 0).toFixed(1)} ms  (target < 2,000 ms)`,
  ];
}

function benchDivision(): string[] {
  const weights = Array.from({ length: 100 }, (_, i) => ({
    name: `member-${String(i).padStart(3, '0')}`,
    weight: (i % 7) + 1,
  }));
  const times: number[] = [];
  let total = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const seats = websterSeats(MAX_REPLICAS, weights);
    times.push(performance.now() - t0);
    total = [...seats.values()].reduce((a, b) => a + b, 0);
  }
  times.sort((a, b) => a - b);
  return [
    '(c) replica division: 2,147,483,647 replicas (int32 max) x 100 clusters, weights 1..7',
    `    seats handed out     ${total.toLocaleString('en-US')}`,
    `    median time          ${(times[2] ?? 0).toFixed(2)} ms (worst ${(times[4] ?? 0).toFixed(2)} ms)`,
  ];
}

const lines = [
  `flotilla engine benchmark — node ${process.version}`,
  '',
  ...benchRender(),
  '',
  ...benchMatching(),
  '',
  ...benchDivision(),
];
console.log(lines.join('\n'));
