// How EngineState files what it holds: the identity of an object (identify), and the indexes it keeps
// across calls, both directions between templates and policies:
//   PolicyBuckets   template → the policies whose selectors could match it (renderTemplate's lookup);
//   TemplateIndex   selector → the templates it could match (what a policy change can affect).
// Both answer with a superset that the caller checks in full with the engine's own matching functions, so
// a bucket-key collision (hostile strings) can only cost time, never change an answer.

import {
  KARMADA_API_VERSION as KARMADA_CLUSTER,
  API_VERSION as CLUSTER_API_VERSION,
} from '../../api/cluster/v1alpha1/types.js';
import {
  GROUP as POLICY_GROUP,
  KARMADA_API_VERSION as KARMADA_POLICY,
  POLICY_KINDS,
} from '../../api/policy/v1alpha1/types.js';
import { isClusterScoped, type PolicyEntry, type Template } from './inputs.js';
import { arr, isObject, str } from './json.js';
import { propagationPriority } from './match.js';
import { MatchPriority, selectorsPriority } from './selectors.js';
import type { ObjectRef } from './types.js';

/** "Any namespace" in bucket keys: a cluster-wide selector without a namespace. */
const ANY = '\u0000*';
const bucket = (...parts: string[]): string => parts.join('\u0000');

/** The identity of a template; injective, so distinct templates never share a key. */
export function templateKey(ref: ObjectRef): string {
  return JSON.stringify([ref.apiVersion, ref.kind, ref.namespace ?? '', ref.name]);
}

/** Where EngineState holds an object: which map, and the key in it. */
export type Identity = { type: 'template' | 'propagation' | 'override' | 'cluster'; key: string };

const CLUSTER_POLICY_KINDS = new Set(['ClusterPropagationPolicy', 'ClusterOverridePolicy']);
const PROPAGATION_KINDS = new Set(['PropagationPolicy', 'ClusterPropagationPolicy']);

/** The key a policy is held under: (kind, namespace, name), whatever its group and version. */
export const policyKey = (kind: string, namespace: string, name: string): string =>
  JSON.stringify([kind, namespace, name]);

/**
 * Where an object is held, by the rules sortInputs reads objects with: policies by (kind, namespace, name)
 * whatever their group and version, Clusters by name, templates by (apiVersion, kind, namespace, name)
 * with a namespaced kind's missing namespace read as "default". Undefined when it cannot be held.
 */
export function identify(ref: ObjectRef): Identity | undefined {
  const { apiVersion, kind, name } = ref;
  if (!apiVersion || !kind || !name) return undefined;
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  if (group === POLICY_GROUP || group === 'policy.karmada.io') {
    if (!(POLICY_KINDS as readonly string[]).includes(kind)) return undefined;
    if (group === 'policy.karmada.io' && apiVersion !== KARMADA_POLICY) return undefined;
    const namespace = CLUSTER_POLICY_KINDS.has(kind) ? '' : ref.namespace || 'default';
    return { type: PROPAGATION_KINDS.has(kind) ? 'propagation' : 'override', key: policyKey(kind, namespace, name) };
  }
  if (apiVersion === CLUSTER_API_VERSION || apiVersion === KARMADA_CLUSTER)
    return kind === 'Cluster' ? { type: 'cluster', key: name } : undefined;
  if (group === 'cluster.flotilla.io' || group === 'cluster.karmada.io') return undefined;
  const namespace = isClusterScoped(kind) ? undefined : ref.namespace || 'default';
  return {
    type: 'template',
    key: templateKey(namespace === undefined ? { apiVersion, kind, name } : { apiVersion, kind, namespace, name }),
  };
}

function isNamespacedKind(p: PolicyEntry): boolean {
  return p.kind === 'PropagationPolicy' || p.kind === 'OverridePolicy';
}

function isOverrideKind(p: PolicyEntry): boolean {
  return p.kind === 'OverridePolicy' || p.kind === 'ClusterOverridePolicy';
}

/**
 * The buckets a policy is filed under: one per selector (apiVersion, kind, namespace, name), where a
 * namespaced policy's selectors only ever match its own namespace and a cluster-wide selector without a
 * namespace goes under ANY. An override policy without selectors matches everything (in its namespace).
 */
function bucketsOf(p: PolicyEntry): string[] {
  const selectors = arr(p.spec.resourceSelectors);
  const ns = (s: Record<string, unknown>) => (isNamespacedKind(p) ? p.namespace : str(s.namespace) || ANY);
  if (isOverrideKind(p) && (!selectors || selectors.length === 0))
    return [bucket('all', isNamespacedKind(p) ? p.namespace : ANY)];
  const out = new Set<string>();
  for (const s of selectors ?? []) {
    if (!isObject(s)) continue;
    out.add(bucket(str(s.apiVersion) ?? '', str(s.kind) ?? '', ns(s), str(s.name) ?? ''));
  }
  return [...out];
}

/** Policies by the templates their selectors could match. Add and delete cost the policy's selector count. */
export class PolicyBuckets {
  private readonly buckets = new Map<string, Set<PolicyEntry>>();
  private readonly filed = new Map<PolicyEntry, string[]>();

  add(p: PolicyEntry): void {
    const keys = bucketsOf(p);
    for (const k of keys) {
      const set = this.buckets.get(k);
      if (set) set.add(p);
      else this.buckets.set(k, new Set([p]));
    }
    this.filed.set(p, keys);
  }

  delete(p: PolicyEntry): void {
    for (const k of this.filed.get(p) ?? []) {
      const set = this.buckets.get(k);
      if (!set) continue;
      set.delete(p);
      if (set.size === 0) this.buckets.delete(k);
    }
    this.filed.delete(p);
  }

  /** Every policy with a selector that could match the template (a superset; match in full). */
  candidates(t: Template): PolicyEntry[] {
    const { apiVersion, kind, name, namespace } = t.ref;
    const out = new Set<PolicyEntry>();
    const take = (k: string) => {
      const set = this.buckets.get(k);
      if (set) for (const p of set) out.add(p);
    };
    for (const ns of namespace !== undefined ? [namespace, ANY] : [ANY]) {
      take(bucket(apiVersion, kind, ns, name));
      take(bucket(apiVersion, kind, ns, ''));
      take(bucket('all', ns));
    }
    return [...out];
  }
}

/** Held templates by key, and grouped so that a selector finds the few it could match. */
export class TemplateIndex {
  private readonly byKey = new Map<string, Template>();
  private readonly groups = new Map<string, Map<string, Template>>();

  get size(): number {
    return this.byKey.size;
  }

  get(key: string): Template | undefined {
    return this.byKey.get(key);
  }

  keys(): IterableIterator<string> {
    return this.byKey.keys();
  }

  values(): IterableIterator<Template> {
    return this.byKey.values();
  }

  private static groupsOf(t: Template): string[] {
    const { apiVersion, kind, namespace, name } = t.ref;
    const out = [bucket('gvk', apiVersion, kind), bucket('gvk-name', apiVersion, kind, name)];
    if (namespace !== undefined) out.push(bucket('gvk-ns', apiVersion, kind, namespace), bucket('ns', namespace));
    return out;
  }

  set(key: string, t: Template): void {
    this.delete(key);
    this.byKey.set(key, t);
    for (const g of TemplateIndex.groupsOf(t)) {
      const m = this.groups.get(g);
      if (m) m.set(key, t);
      else this.groups.set(g, new Map([[key, t]]));
    }
  }

  delete(key: string): boolean {
    const t = this.byKey.get(key);
    if (!t) return false;
    this.byKey.delete(key);
    for (const g of TemplateIndex.groupsOf(t)) {
      const m = this.groups.get(g);
      if (!m) continue;
      m.delete(key);
      if (m.size === 0) this.groups.delete(g);
    }
    return true;
  }

  private group(...parts: string[]): Iterable<[string, Template]> {
    return this.groups.get(bucket(...parts)) ?? [];
  }

  /**
   * Templates one resource selector could match (a superset; match in full): `namespace` undefined means
   * any namespace and cluster-scoped templates, `name` '' any name.
   */
  select(apiVersion: string, kind: string, namespace: string | undefined, name: string): Iterable<[string, Template]> {
    if (namespace === undefined)
      return name ? this.group('gvk-name', apiVersion, kind, name) : this.group('gvk', apiVersion, kind);
    if (!name) return this.group('gvk-ns', apiVersion, kind, namespace);
    const key = templateKey({ apiVersion, kind, namespace, name });
    const t = this.byKey.get(key);
    return t ? [[key, t]] : [];
  }

  /** Every namespaced template of a namespace, or every template when `namespace` is undefined. */
  everyIn(namespace: string | undefined): Iterable<[string, Template]> {
    return namespace === undefined ? this.byKey : this.group('ns', namespace);
  }

  /**
   * Adds to `into` the held templates a policy's selectors match, in full, by the same rules claiming and
   * override ordering use (what a change of that policy can affect).
   */
  matching(p: PolicyEntry, into: Map<string, Template>): void {
    const namespaced = p.kind === 'PropagationPolicy' || p.kind === 'OverridePolicy';
    const propagation = PROPAGATION_KINDS.has(p.kind);
    const selectors = arr(p.spec.resourceSelectors);
    const all = !propagation && (!selectors || selectors.length === 0);
    const test = (t: Template): boolean => {
      if (namespaced && t.ref.namespace !== p.namespace) return false;
      if (propagation) return propagationPriority(p, t) !== MatchPriority.MisMatch;
      return all || selectorsPriority(selectors, t.ref, t.labels) !== MatchPriority.MisMatch;
    };
    const scan = (found: Iterable<[string, Template]>) => {
      for (const [k, t] of found) if (!into.has(k) && test(t)) into.set(k, t);
    };
    if (all) return scan(this.everyIn(namespaced ? p.namespace : undefined));
    for (const s of selectors ?? []) {
      if (!isObject(s)) continue;
      const apiVersion = str(s.apiVersion);
      const kind = str(s.kind);
      if (apiVersion === undefined || kind === undefined) continue;
      // A propagation policy's selector without a namespace means the policy's namespace (Karmada's default).
      let ns: string | undefined = str(s.namespace) || undefined;
      if (namespaced) {
        if (ns !== undefined && ns !== p.namespace) continue;
        ns = p.namespace;
      }
      scan(this.select(apiVersion, kind, ns, str(s.name) ?? ''));
    }
  }
}
