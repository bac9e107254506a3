// Drift put back, for `npm run bench:fleet`: one copy at a time changed on its member by another field
// manager (an Update of a field the controller applied), timed until the member shows the template's value
// again. Each round picks another member and a template the edits left alone.

import { performance } from 'node:perf_hooks';

import type { KubeClient } from '../../pkg/kube/client.js';

type Obj = Record<string, unknown>;

export interface DriftTimes {
  p50: number;
  p99: number;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
}

/** `rounds` drifts of ConfigMap `name(i)`'s `data.value` in `namespace`, each until put back to `expected`. */
export async function measureDrift(
  members: KubeClient[],
  o: { namespace: string; rounds: number; name: (i: number) => string; expected: string; timeoutMs: number },
): Promise<DriftTimes> {
  const times: number[] = [];
  for (let r = 0; r < o.rounds; r++) {
    const member = members[r % members.length];
    if (!member) break;
    const path = `/api/v1/namespaces/${o.namespace}/configmaps/${o.name(r)}`;
    const t0 = performance.now();
    const patched = await member.request({
      method: 'PATCH',
      path,
      query: { fieldManager: 'bench-drift' },
      contentType: 'application/merge-patch+json',
      body: { data: { value: `drift-${r}` } },
    });
    if (patched.status >= 400) throw new Error(`${path}: HTTP ${patched.status}`);
    const deadline = Date.now() + o.timeoutMs;
    for (;;) {
      const got = await member.request<Obj>({ method: 'GET', path });
      if (((got.body?.data as Obj | undefined)?.value as string | undefined) === o.expected) break;
      if (Date.now() > deadline) throw new Error(`${path}: drift not put back after ${o.timeoutMs} ms`);
      await new Promise((res) => setTimeout(res, 20));
    }
    times.push(performance.now() - t0);
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}
