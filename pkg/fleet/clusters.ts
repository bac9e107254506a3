// The clusters as the hub describes them: Ready, a pull cluster's agent Lease, taints, capacity, version
// and API groups, from Cluster objects of both groups (cluster.flotilla.io first when a name is in both).
// Pure: `now` is the caller's.

import { clusterNotActedUpon } from '../../api/validation/not-acted-upon.js';
import { readResourceList } from '../engine/quantity.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { HubSnapshot } from './hub.js';
import type { CapacityFact, ClusterFact, LeaseFact, TaintFact } from './types.js';

const list = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isObject) : []);
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObject(v)) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

function leaseFact(lease: JsonObject | undefined, ref: string, now: number): LeaseFact {
  if (!lease) return { lease: ref, expired: true };
  const spec = isObject(lease.spec) ? lease.spec : {};
  const holder = ownString(spec, 'holderIdentity');
  const renewTime = ownString(spec, 'renewTime');
  const duration =
    typeof spec.leaseDurationSeconds === 'number' && Number.isFinite(spec.leaseDurationSeconds)
      ? spec.leaseDurationSeconds
      : undefined;
  const renewed = renewTime === undefined ? NaN : Date.parse(renewTime);
  const fact: LeaseFact = { lease: ref, expired: true };
  if (holder) fact.holder = holder;
  if (renewTime) fact.renewTime = renewTime;
  if (duration !== undefined) fact.durationSeconds = duration;
  if (Number.isFinite(renewed)) {
    fact.ageSeconds = Math.max(0, Math.round((now - renewed) / 1000));
    fact.expired = !holder || duration === undefined || renewed + duration * 1000 <= now;
  }
  return fact;
}

function capacityFacts(status: JsonObject): CapacityFact[] {
  const summary = isObject(status.resourceSummary) ? status.resourceSummary : undefined;
  if (!summary) return [];
  const milli = {
    allocatable: readResourceList(summary.allocatable),
    allocated: readResourceList(summary.allocated),
    allocating: readResourceList(summary.allocating),
  };
  const text = {
    allocatable: stringMap(summary.allocatable),
    allocated: stringMap(summary.allocated),
    allocating: stringMap(summary.allocating),
  };
  const names = new Set([...Object.keys(milli.allocatable), ...Object.keys(milli.allocated)]);
  return [...names].sort().map((resource) => ({
    resource,
    allocatable: milli.allocatable[resource] ?? 0,
    allocated: milli.allocated[resource] ?? 0,
    allocating: milli.allocating[resource] ?? 0,
    text: {
      ...(text.allocatable[resource] !== undefined ? { allocatable: text.allocatable[resource] } : {}),
      ...(text.allocated[resource] !== undefined ? { allocated: text.allocated[resource] } : {}),
      ...(text.allocating[resource] !== undefined ? { allocating: text.allocating[resource] } : {}),
    },
  }));
}

/** The optional string fields of T. */
type StringField<T> = {
  [K in keyof T]-?: undefined extends T[K] ? (NonNullable<T[K]> extends string ? K : never) : never;
}[keyof T];

/** Sets each field of `fields` on `fact` to the own string of `from` it names, when that is not empty. */
function setStrings<T>(fact: T, from: unknown, fields: Partial<Record<StringField<T>, string>>): void {
  for (const [key, field] of Object.entries(fields) as Array<[StringField<T>, string]>) {
    const v = ownString(from, field);
    if (v) (fact as Record<StringField<T>, string>)[key] = v;
  }
}

/** Distinct API groups of status.apiEnablements (`v1` is the core group). */
function apiGroups(status: JsonObject): number {
  const groups = new Set<string>();
  for (const e of list(status.apiEnablements)) {
    const gv = ownString(e, 'groupVersion');
    if (gv) groups.add(gv.includes('/') ? gv.slice(0, gv.indexOf('/')) : '');
  }
  return groups.size;
}

export function clusterFact(
  o: JsonObject,
  leases: ReadonlyMap<string, JsonObject>,
  leaseNamespace: string,
  now: number,
): ClusterFact {
  const meta = isObject(o.metadata) ? o.metadata : {};
  const spec = isObject(o.spec) ? o.spec : {};
  const status = isObject(o.status) ? o.status : {};
  const name = ownString(meta, 'name') ?? '';
  const ready = list(status.conditions).find((c) => c.type === 'Ready');
  const readyStatus = ownString(ready, 'status');
  const fact: ClusterFact = {
    name,
    apiVersion: ownString(o, 'apiVersion') ?? '',
    syncMode: spec.syncMode === 'Pull' ? 'Pull' : 'Push',
    ready: readyStatus === 'True' || readyStatus === 'False' ? readyStatus : 'Unknown',
    taints: list(spec.taints).map((t) => {
      const taint: TaintFact = { key: ownString(t, 'key') ?? '', effect: ownString(t, 'effect') ?? '' };
      setStrings(taint, t, { value: 'value', timeAdded: 'timeAdded' });
      return taint;
    }),
    capacity: capacityFacts(status),
    apiGroups: apiGroups(status),
    zones: Array.isArray(spec.zones) ? spec.zones.filter((z): z is string => typeof z === 'string') : [],
    labels: stringMap(meta.labels),
    notActedUpon: clusterNotActedUpon(spec),
  };
  setStrings(fact, ready, { readyReason: 'reason', readyMessage: 'message', readySince: 'lastTransitionTime' });
  if (fact.syncMode === 'Pull') fact.lease = leaseFact(leases.get(name), `${leaseNamespace}/${name}`, now);
  setStrings(fact, status, { kubernetesVersion: 'kubernetesVersion' });
  setStrings(fact, spec, { provider: 'provider', region: 'region' });
  setStrings(fact, meta, { createdAt: 'creationTimestamp' });
  return fact;
}

/** Every Cluster on the hub, by name; a name in both groups is shown once, from cluster.flotilla.io. */
export function clusterFacts(snapshot: HubSnapshot, now: number): ClusterFact[] {
  const leases = new Map<string, JsonObject>();
  for (const l of snapshot.leases) {
    const n = ownString(l.metadata, 'name');
    if (n) leases.set(n, l);
  }
  const seen = new Map<string, ClusterFact>();
  for (const c of snapshot.clusters) {
    const fact = clusterFact(c, leases, snapshot.leaseNamespace, now);
    const had = seen.get(fact.name);
    if (had && had.apiVersion.startsWith('cluster.flotilla.io/')) continue;
    seen.set(fact.name, fact);
  }
  return [...seen.values()].sort(byName);
}
