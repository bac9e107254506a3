// A stand-in for kube-controller-manager's Deployment and Job controllers on the members, which the test
// apiservers do not run, acting as they act on a cluster where no pod is ever scheduled (no scheduler, no
// kubelet): a Deployment's status counts its replicas as created, updated and unavailable, for the
// generation it observed; a Job that is not suspended has started, its `parallelism` pods active, none
// ready. Karmada's own e2e members are kind clusters whose controllers write these, and Karmada's status
// aggregation (with the AggregateStatusSucceed Event on the template that the suite waits for) follows
// from them. Nothing becomes ready or available, so no workload's health changes. Each status is written
// once per generation (Deployments) or once (Jobs), by merge patch on the status subresource. Polls each
// member every second until `signal` aborts.

import type { KubeClient } from '../../pkg/kube/client.js';
import type { JsonObject } from '../../pkg/kube/objects.js';

interface Item {
  metadata: { name: string; namespace: string; generation?: number; deletionTimestamp?: string };
  spec?: JsonObject;
  status?: JsonObject;
}

const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) ? v : d);

/** The status a Deployment controller writes when none of the pods it creates is scheduled; undefined when it holds it. */
export function deploymentStatus(d: Item): JsonObject | undefined {
  const s = d.status ?? {};
  const generation = d.metadata.generation ?? 1;
  const replicas = num(d.spec?.replicas, 1);
  if (s.observedGeneration === generation && num(s.replicas, 0) === replicas) return undefined;
  // Zero counts are left out, as the controller's omitempty fields are.
  const count = replicas > 0 ? { replicas, updatedReplicas: replicas, unavailableReplicas: replicas } : {};
  return { observedGeneration: generation, ...count };
}

/** The status a Job controller writes once it created the pods of a Job none of whose pods is scheduled. */
export function jobStatus(j: Item, now: Date): JsonObject | undefined {
  if (j.spec?.suspend === true || (j.status && typeof j.status.startTime === 'string')) return undefined;
  return { startTime: now.toISOString().replace(/\.\d+Z$/, 'Z'), active: num(j.spec?.parallelism, 1), ready: 0 };
}

const KINDS = [
  { list: '/apis/apps/v1/deployments', path: '/apis/apps/v1', plural: 'deployments', status: deploymentStatus },
  { list: '/apis/batch/v1/jobs', path: '/apis/batch/v1', plural: 'jobs', status: jobStatus },
] as const;

type Kind = (typeof KINDS)[number];

/** One kind on one member: each object whose status the stand-in's controller would write now, written. */
async function writeStatuses(c: KubeClient, k: Kind, signal: AbortSignal): Promise<string[]> {
  const failures: string[] = [];
  const r = await c.request<{ items?: Item[] }>({ method: 'GET', path: k.list, signal });
  for (const o of r.body?.items ?? []) {
    const status = o.metadata.deletionTimestamp ? undefined : k.status(o, new Date());
    if (!status) continue;
    const { namespace, name } = o.metadata;
    const p = await c.request({
      method: 'PATCH',
      path: `${k.path}/namespaces/${encodeURIComponent(namespace)}/${k.plural}/${encodeURIComponent(name)}/status`,
      contentType: 'application/merge-patch+json',
      body: { status },
      signal,
    });
    // Gone, or changed meanwhile: the next round looks again.
    if (p.status >= 300 && p.status !== 404 && p.status !== 409)
      failures.push(`${namespace}/${name}: HTTP ${p.status}`);
  }
  return failures;
}

/** Writes the members' Deployment and Job statuses each second until `signal` aborts. */
export async function standInWorkloadStatus(
  members: KubeClient[],
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<void> {
  const work = members.flatMap((c) => KINDS.map((k) => ({ c, k })));
  while (!signal.aborted) {
    for (const { c, k } of work) {
      const failures = await writeStatuses(c, k, signal).catch((e: unknown) =>
        signal.aborted ? [] : [e instanceof Error ? e.message : String(e)],
      );
      for (const f of failures) log(`${k.plural} status stand-in: ${f}`);
    }
    await new Promise((res) => setTimeout(res, 1000));
  }
}
