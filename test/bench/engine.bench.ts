// Engine benchmarks (`npm run bench`). Prints a table; targets on a 2-core machine: (a) >= 20,000 renders/s,
// (b) under 2 s. A render is one (template, cluster) pair. (c) times one replica division at the largest
// replica count Kubernetes allows.

import { performance } from 'node:perf_hooks';
import { sortInputs } from '../../pkg/engine/inputs.js';
import { PropagationMatcher } from '../../pkg/engine/match.js';
import { MAX_REPLICAS, websterSeats } from '../../pkg/engine/webster.js';
import { renderDetailed } from '../../pkg/engine/render.js';
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

function mib(kb: number): string {
  return `${(kb / 1024).toFixed(0)} MiB`;
}

function benchRender(): string[] {
  const objects = renderWorkload();
  renderDetailed({ objects }); // warm-up
  const times: number[] = [];
  let renders = 0;
  let errors = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const r = renderDetailed({ objects });
    times.push(performance.now() - t0);
    renders = r.placements.length;
    errors = r.errors.length;
  }
  times.sort((a, b) => a - b);
  const median = times[2] ?? 0;
  return [
    '(a) render: 1,000 Deployments + 1 ConfigMap x 20 clusters x 10 OverridePolicies (every overrider)',
    `    renders per run      ${renders} (errors: ${errors})`,
    `    median run           ${median.toFixed(0)} ms (best ${(times[0] ?? 0).toFixed(0)} ms, worst ${(times[4] ?? 0).toFixed(0)} ms)`,
    `    throughput           ${Math.round(renders / (median / 1000)).toLocaleString('en-US')} renders/s  (target >= 20,000)`,
    `    peak RSS             ${mib(process.resourceUsage().maxRSS)}`,
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
