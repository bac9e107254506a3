// What the controller writes in a Cluster's status from its member, in Karmada's Cluster status shape
// (pkg/controllers/status/cluster_status_controller.go): the Kubernetes version, the kinds the member
// serves (`apiEnablements`), and the resource summary the scheduler's estimator reads:
//   allocatable  the sum of every Node's status.allocatable;
//   allocated    the requests of Pods bound to a node and not finished (phase not Succeeded/Failed),
//                plus their number as `pods`;
//   allocating   the requests of Pods not bound to a node yet, plus their number as `pods`.
// A Pod's requests are Kubernetes' rule: the sum over containers, at least the largest init container's,
// plus the Pod's overhead. Pure: the lists come from the caller (cluster-facts.ts and member-discovery.ts
// do the reading).
//
// Quantities are written as Karmada writes them (resource.Quantity's String()): allocatable keeps the
// format of the Nodes' values (a sum takes the first Node's, as Quantity.Add does: `16Gi`, `3500m`, and
// raw bytes stay raw bytes when the Nodes report them so); in allocated and allocating, memory,
// ephemeral-storage and hugepages-* are BinarySI (`1536Mi`), everything else DecimalSI (Karmada's
// Resource.ResourceList()).

import { podSpecRequests } from '../engine/capacity.js';
import { addQuantity, formatQuantity, parseQuantity, type Quantity, type QuantityFormat } from '../engine/quantity.js';
import { isObject, type JsonObject } from '../kube/objects.js';
import { setOwn } from '../engine/json.js';

export interface ResourceSummary {
  allocatable: Record<string, string>;
  allocated: Record<string, string>;
  allocating: Record<string, string>;
}

export interface APIEnablement {
  groupVersion: string;
  resources: Array<{ name: string; kind: string }>;
}

type Milli = Record<string, number>;

function add(into: Milli, from: Milli): void {
  for (const [k, v] of Object.entries(from)) setOwn(into, k, (Object.hasOwn(into, k) ? (into[k] as number) : 0) + v);
}

/** A pod spec's requests in milli-units, as the apiserver holds them (limits already defaulted into requests). */
export function podRequests(spec: JsonObject): Milli {
  return podSpecRequests(spec, false);
}

/** How Karmada writes a pod-request sum of resource `name`: bytes in BinarySI, the rest DecimalSI. */
function requestFormat(name: string): QuantityFormat {
  return name === 'memory' || name === 'ephemeral-storage' || name.startsWith('hugepages-') ? 'BinarySI' : 'DecimalSI';
}

function formatRequests(m: Milli): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(m).sort()) setOwn(out, k, formatQuantity(BigInt(m[k] as number), requestFormat(k)));
  return out;
}

/** The sum of the Nodes' status.allocatable, per resource, as Quantity.Add sums them. */
function allocatableOf(nodes: readonly JsonObject[]): Record<string, string> {
  const sums = new Map<string, Quantity>();
  for (const n of nodes) {
    const list = isObject(n.status) && isObject(n.status.allocatable) ? n.status.allocatable : {};
    for (const [k, v] of Object.entries(list)) {
      const q = parseQuantity(v);
      if (q && q.milli >= 0n) sums.set(k, addQuantity(sums.get(k), q));
    }
  }
  const out: Record<string, string> = {};
  for (const k of [...sums.keys()].sort()) {
    const q = sums.get(k) as Quantity;
    setOwn(out, k, formatQuantity(q.milli, q.format));
  }
  return out;
}

/** Karmada's resource summary of a member from its Nodes and Pods (as listed). */
export function resourceSummary(nodes: readonly JsonObject[], pods: readonly JsonObject[]): ResourceSummary {
  const allocated: Milli = {};
  const allocating: Milli = {};
  let bound = 0;
  let pending = 0;
  for (const p of pods) {
    const spec = isObject(p.spec) ? p.spec : {};
    const phase = isObject(p.status) ? p.status.phase : undefined;
    const nodeName = typeof spec.nodeName === 'string' ? spec.nodeName : '';
    if (nodeName === '') {
      add(allocating, podRequests(spec));
      pending++;
    } else if (phase !== 'Succeeded' && phase !== 'Failed') {
      add(allocated, podRequests(spec));
      bound++;
    }
  }
  setOwn(allocated, 'pods', bound * 1000);
  setOwn(allocating, 'pods', pending * 1000);
  return {
    allocatable: allocatableOf(nodes),
    allocated: formatRequests(allocated),
    allocating: formatRequests(allocating),
  };
}

/**
 * The member's API enablements from its discovery documents (group-version → resource lists), sorted,
 * subresources left out, in Karmada's shape.
 */
export function apiEnablements(lists: ReadonlyArray<{ groupVersion: string; resources: unknown }>): APIEnablement[] {
  const out: APIEnablement[] = [];
  for (const l of lists) {
    const resources: Array<{ name: string; kind: string }> = [];
    for (const r of Array.isArray(l.resources) ? l.resources : []) {
      if (!isObject(r) || typeof r.name !== 'string' || typeof r.kind !== 'string' || r.name.includes('/')) continue;
      resources.push({ name: r.name, kind: r.kind });
    }
    resources.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    out.push({ groupVersion: l.groupVersion, resources });
  }
  return out.sort((a, b) => (a.groupVersion < b.groupVersion ? -1 : a.groupVersion > b.groupVersion ? 1 : 0));
}
