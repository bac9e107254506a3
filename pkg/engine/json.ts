// JSON helpers shared by the engine. Objects flowing through the engine are plain JSON values (parsed
// YAML/JSON); nothing here knows about Kubernetes. Maps from input are read by own key only (`own`) and
// written with `setOwn`, so a key such as `constructor` or `__proto__` is data like any other.

import { isObject, own, setOwn, type JsonObject } from '../../api/internal/objects.js';

export { isObject, own, setOwn, type JsonObject };

/**
 * Deep copy of a JSON value; faster than structuredClone for the plain data the engine handles. Copies own
 * enumerable keys only, and keeps a `__proto__` key as an own data property (as JSON.parse makes it)
 * rather than turning it into the copy's prototype.
 */
export function cloneJson<T>(v: T): T {
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = cloneJson(v[i] as unknown);
    return out as T;
  }
  if (v !== null && typeof v === 'object') {
    const out: JsonObject = {};
    const src = v as JsonObject;
    for (const k of Object.keys(src)) {
      if (k === '__proto__') setOwn(out, k, cloneJson(src[k]));
      else out[k] = cloneJson(src[k]);
    }
    return out as T;
  }
  return v;
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function obj(v: unknown): JsonObject | undefined {
  return isObject(v) ? v : undefined;
}

export function arr(v: unknown): unknown[] | undefined {
  return Array.isArray(v) ? v : undefined;
}

/** String map (labels, annotations), of `v`'s first `max` entries; non-string values are dropped. Read it with `own`. */
export function stringMap(v: unknown, max = Infinity): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObject(v)) return out;
  for (const [k, val] of Object.entries(v).slice(0, max)) if (typeof val === 'string') setOwn(out, k, val);
  return out;
}

export function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** Byte-wise comparison of strings, as Go's `<` on strings (UTF-16 code units agree for BMP text). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) if (!Object.hasOwn(b, k) || !deepEqual(a[k], b[k])) return false;
  return true;
}

/** JSON equality (object key order ignored); false when the values are too deep to compare. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  try {
    return deepEqual(a, b);
  } catch {
    return false;
  }
}
