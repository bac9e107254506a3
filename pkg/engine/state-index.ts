// The indexes EngineState keeps across calls, both directions between templates and policies:
//   PolicyBuckets   template → the policies whose selectors could match it (renderTemplate's lookup);
//   TemplateIndex   selector → the templates it could match (what a policy change can affect).
// Both answer with a superset that the caller checks in full with the engine's own matching functions, so
// a bucket-key collision (hostile strings) can only cost time, never change an answer.

import { arr, isObject, str } from './json.js';
import type { PolicyEntry, Template } from './inputs.js';
import type { ObjectRef } from './types.js';

/** "Any namespace" in bucket keys: a cluster-wide selector without a namespace. */
const ANY = '\u0000*';
const bucket = (...parts: string[]): string => parts.join('\u0000');

/** The identity of a template; injective, so distinct templates never share a key. */
export function templateKey(ref: ObjectRef): string {
  return JSON.stringify([ref.apiVersion, ref.kind, ref.namespace ?? '', ref.name]);
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
}
