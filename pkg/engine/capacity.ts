// What a cluster can take, from its Cluster object's status (Karmada's shape, written by Flotilla's
// controller or by Karmada's): the resource summary and the API enablements; and what one replica of a
// workload asks for. Karmada's general estimator (pkg/estimator/client/general.go) turns the two into
// "how many more replicas fit": pure arithmetic on these numbers, no clock, no I/O.
//
//   podsLeft  = allocatable.pods − allocated.pods − allocating.pods        (≤ 0 → 0)
//   for each resource the replica requests (> 0):
//     offered? no → 0;  left = allocatable − allocated − allocating (≤ 0 → 0)
//     fits = floor(left / request), CPU in millicores, anything else in whole units rounded up
//   estimate  = min(podsLeft, every fits)
// A Cluster without a resource summary fits nothing (Karmada's rule); a template without replicas is
// not estimated.

import { arr, isObject, obj, own, setOwn, str } from './json.js';
import { readResourceList } from './quantity.js';
import type { Capacity, ClusterInfo, ObjectRef } from './types.js';

/** Karmada's MaxInt32: the estimate of a template that has no replicas to place. */
export const UNLIMITED = 2_147_483_647;

export function readCapacity(status: unknown): Capacity | undefined {
  const s = obj(obj(status)?.resourceSummary);
  if (!s) return undefined;
  return {
    allocatable: readResourceList(s.allocatable),
    allocated: readResourceList(s.allocated),
    allocating: readResourceList(s.allocating),
  };
}

/** `status.apiEnablements` as sorted `groupVersion/Kind` strings; undefined when the status lists none. */
export function readApiEnablements(status: unknown): string[] | undefined {
  const list = arr(obj(status)?.apiEnablements);
  if (!list || list.length === 0) return undefined;
  const out = new Set<string>();
  for (const e of list) {
    const gv = str(obj(e)?.groupVersion);
    if (gv === undefined) continue;
    for (const r of arr(obj(e)?.resources) ?? []) {
      const kind = str(obj(r)?.kind);
      if (kind) out.add(`${gv}/${kind}`);
    }
  }
  return [...out].sort();
}

/**
 * Whether a cluster serves the kind. Karmada's APIEnablement filter passes only a listed kind, so a
 * Cluster with no list fits nothing there; Flotilla reads no list as "not known" and lets it pass, so
 * Cluster objects written by hand (and fleets rendered offline) place as before.
 */
export function servesKind(cluster: ClusterInfo, ref: Pick<ObjectRef, 'apiVersion' | 'kind'>): boolean {
  if (!cluster.apis) return true;
  const want = `${ref.apiVersion}/${ref.kind}`;
  let lo = 0;
  let hi = cluster.apis.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((cluster.apis[mid] as string) < want) lo = mid + 1;
    else hi = mid;
  }
  return cluster.apis[lo] === want;
}

const POD_TEMPLATE_PATHS: Readonly<Record<string, readonly string[]>> = {
  Deployment: ['spec', 'template', 'spec'],
  StatefulSet: ['spec', 'template', 'spec'],
  ReplicaSet: ['spec', 'template', 'spec'],
  Job: ['spec', 'template', 'spec'],
};

function containerRequests(c: unknown, limitsAsRequests: boolean): Record<string, number> {
  const resources = obj(obj(c)?.resources);
  const requests = readResourceList(resources?.requests);
  if (!limitsAsRequests) return requests;
  // A limit without a request is the request (Kubernetes' defaulting, which Karmada applies here too).
  const limits = readResourceList(resources?.limits);
  for (const [k, v] of Object.entries(limits)) if (!Object.hasOwn(requests, k)) setOwn(requests, k, v);
  return requests;
}

/**
 * A pod spec's requests in milli-units (Kubernetes' PodRequests without sidecar init containers): the
 * containers' requests summed, at least each init container's, plus the pod overhead. With
 * `limitsAsRequests`, a limit stands for a missing request (a pod template, not yet defaulted).
 */
export function podSpecRequests(spec: unknown, limitsAsRequests: boolean): Record<string, number> {
  const out: Record<string, number> = {};
  if (!isObject(spec)) return out;
  for (const c of arr(own(spec, 'containers')) ?? [])
    for (const [k, v] of Object.entries(containerRequests(c, limitsAsRequests))) setOwn(out, k, (own(out, k) ?? 0) + v);
  for (const c of arr(own(spec, 'initContainers')) ?? [])
    for (const [k, v] of Object.entries(containerRequests(c, limitsAsRequests)))
      if ((own(out, k) ?? 0) < v) setOwn(out, k, v);
  for (const [k, v] of Object.entries(readResourceList(own(spec, 'overhead')))) setOwn(out, k, (own(out, k) ?? 0) + v);
  return out;
}

/**
 * What one replica asks for (Karmada's ReplicaRequirements.resourceRequest): podSpecRequests of its pod
 * template, limits standing for missing requests. Undefined for kinds without a pod template, or when it
 * asks for nothing.
 */
export function replicaRequests(kind: string, object: unknown): Record<string, number> | undefined {
  const path = Object.hasOwn(POD_TEMPLATE_PATHS, kind) ? POD_TEMPLATE_PATHS[kind] : undefined;
  if (!path) return undefined;
  let spec: unknown = object;
  for (const k of path) spec = isObject(spec) && Object.hasOwn(spec, k) ? spec[k] : undefined;
  if (!isObject(spec)) return undefined;
  const out = podSpecRequests(spec, true);
  for (const k of Object.keys(out)) if (out[k] === 0) delete out[k];
  return Object.keys(out).length === 0 ? undefined : out;
}

const units = (milli: number) => Math.ceil(milli / 1000);

/** Karmada's general estimator: how many replicas asking `requests` each still fit on the cluster. */
export function estimateReplicas(cluster: ClusterInfo, requests: Readonly<Record<string, number>> | undefined): number {
  const c = cluster.capacity;
  if (!c) return 0;
  const left = (k: string) => (own(c.allocatable, k) ?? 0) - (own(c.allocated, k) ?? 0) - (own(c.allocating, k) ?? 0);
  const podsLeft = units(left('pods'));
  if (podsLeft <= 0) return 0;
  let fits = podsLeft;
  for (const [k, request] of Object.entries(requests ?? {})) {
    if (request <= 0) continue;
    if (!Object.hasOwn(c.allocatable, k)) return 0;
    const available = left(k);
    if (units(available) <= 0) return 0;
    const n = k === 'cpu' ? Math.floor(available / request) : Math.floor(units(available) / units(request));
    if (n < fits) fits = n;
  }
  return Math.min(fits, UNLIMITED);
}
