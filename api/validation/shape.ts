// Typed reads of untrusted input. The rule modules run after the schema check has reported every shape
// problem, so they read through these helpers: a field of the wrong type reads as absent and the rule that
// needs it is skipped (the schema error already says what is wrong), which keeps every rule total.
// Members are read as own properties only: a key such as `constructor` never finds Object.prototype's.

import { isObject as isJsonObject, own, setOwn, type JsonObject } from '../internal/objects.js';

export type Obj = Readonly<JsonObject>;

/** A JSON object, read-only here: the rules read input and never write it. */
export const isObject: (v: unknown) => v is Obj = isJsonObject;

/** The own member `key` of `o` (inherited members read as absent). */
export function member(o: Obj | undefined, key: string): unknown {
  return o === undefined ? undefined : own(o, key);
}

/** The member as an object, or undefined when absent, null or of another type. */
export function obj(o: Obj | undefined, key: string): Obj | undefined {
  const v = member(o, key);
  return isObject(v) ? v : undefined;
}

/** The member as an array, or undefined when absent, null or of another type. */
export function arr(o: Obj | undefined, key: string): readonly unknown[] | undefined {
  const v = member(o, key);
  return Array.isArray(v) ? v : undefined;
}

export function str(o: Obj | undefined, key: string): string | undefined {
  const v = member(o, key);
  return typeof v === 'string' ? v : undefined;
}

export function num(o: Obj | undefined, key: string): number | undefined {
  const v = member(o, key);
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function bool(o: Obj | undefined, key: string): boolean | undefined {
  const v = member(o, key);
  return typeof v === 'boolean' ? v : undefined;
}

/** Present in the Go sense of a non-nil pointer or slice: there and not null (`[]` and `{}` count). */
export function isSet(o: Obj | undefined, key: string): boolean {
  const v = member(o, key);
  return v !== undefined && v !== null;
}

/** The array's object elements with their indices (other elements are the schema's to report). */
export function objectsOf(list: readonly unknown[] | undefined): Array<[number, Obj]> {
  const out: Array<[number, Obj]> = [];
  list?.forEach((v, i) => {
    if (isObject(v)) out.push([i, v]);
  });
  return out;
}

/** The array's string elements with their indices. */
export function stringsOf(list: readonly unknown[] | undefined): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  list?.forEach((v, i) => {
    if (typeof v === 'string') out.push([i, v]);
  });
  return out;
}

/** A map<string,string> member: its string-valued entries, in document order. */
export function stringMap(o: Obj | undefined, key: string): Array<[string, string]> | undefined {
  const m = obj(o, key);
  if (!m) return undefined;
  return Object.entries(m).filter((e): e is [string, string] => typeof e[1] === 'string');
}

/** JSON with object keys sorted: equal for deep-equal values, whatever the key order. */
export function canonicalJSON(v: unknown): string {
  return JSON.stringify(sortKeys(v)) ?? 'undefined';
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) setOwn(out, k, sortKeys(v[k]));
    return out;
  }
  return v;
}

const encoder = new TextEncoder();

/** Length in UTF-8 bytes, as Go's len() counts a string. */
export function byteLength(s: string): number {
  return encoder.encode(s).length;
}

/** Field-path builders in k8s field.Path style. */
export const child = (base: string, name: string): string => (base ? `${base}.${name}` : name);
export const index = (base: string, i: number): string => `${base}[${i}]`;
export const key = (base: string, k: string): string => `${base}[${k}]`;
