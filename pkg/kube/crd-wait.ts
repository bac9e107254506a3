// Waiting for a CustomResourceDefinition the applier just applied to be Established, before custom
// resources of its kind are applied.

import type { KubeClient } from './client.js';
import { sleep } from '../runtime/clock.js';

export const CRD_GROUP = 'apiextensions.k8s.io';

/**
 * Waits until CustomResourceDefinition `name` is Established: '' once it is, else the last reason seen
 * when `deadline` (ms since the epoch, `timeoutMs` after the wait began) passed. `checkGoing` throws to stop
 * waiting (member gone, interrupted).
 */
export async function untilEstablished(
  client: KubeClient,
  name: string,
  deadline: number,
  timeoutMs: number,
  checkGoing: () => void,
  signal: AbortSignal | undefined,
): Promise<string> {
  for (;;) {
    checkGoing();
    const res = await client.request<{
      status?: { conditions?: Array<{ type?: string; status?: string; message?: string }> };
    }>({
      method: 'GET',
      path: `/apis/${CRD_GROUP}/v1/customresourcedefinitions/${encodeURIComponent(name)}`,
    });
    let why = `HTTP ${res.status}`;
    if (res.status === 200) {
      const conditions = res.body?.status?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return '';
      const names = conditions.find((c) => c.type === 'NamesAccepted' && c.status === 'False');
      why = names?.message ? `names not accepted: ${names.message}` : 'not Established yet';
    }
    if (Date.now() > deadline) return `${why} after ${timeoutMs} ms`;
    await sleep(200, signal);
  }
}
