// Telling, from an object's metadata alone, that applying the desired object again would change nothing,
// so that a no-change re-apply costs no request per object.
//
// A server-side apply that changes nothing still costs the apiserver a full apply (decode, merge, field
// ownership) — measured at more than twice a GET. The metadata LIST the applier makes anyway carries
// what is needed to skip it safely:
//   1. the hash annotation: the desired object is byte for byte (canonical JSON) what this field manager
//      last applied successfully;
//   2. this manager's Apply entry in managedFields still covers every field of the desired object;
//   3. no other manager (status subresource writers aside) owns any field of the desired object.
// Under server-side apply, any change to a field by someone else moves or shares its ownership (2 or 3
// fail), and removing a field drops it from its owner's set (2 fails); so when all three hold, the live
// values of the desired fields are the ones last applied. Whenever the check is unsure it says "apply".

import { createHash } from 'node:crypto';

import { isObject, type JsonObject } from './objects.js';

/** Annotation holding the hash of what the field manager last applied. */
export const APPLIED_HASH_ANNOTATION = 'flotilla.io/applied-hash';

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
}

/** JSON with every object's keys sorted and undefined members left out: equal values, equal text. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** sha256 of the object's canonical JSON, the hash annotation itself left out. */
export function appliedHash(body: JsonObject): string {
  const meta = isObject(body.metadata) ? body.metadata : undefined;
  const annotations = meta && isObject(meta.annotations) ? meta.annotations : undefined;
  let text: string;
  if (annotations && Object.prototype.hasOwnProperty.call(annotations, APPLIED_HASH_ANNOTATION)) {
    const { [APPLIED_HASH_ANNOTATION]: _dropped, ...rest } = annotations;
    text = canonical({ ...body, metadata: { ...meta, annotations: rest } });
  } else {
    text = canonical(body);
  }
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** Sets the hash annotation on `body` (in place) and returns the hash; `known`: the hash, already computed. */
export function stampAppliedHash(body: JsonObject, known?: string): string {
  const hash = known ?? appliedHash(body);
  const meta = isObject(body.metadata) ? body.metadata : (body.metadata = {});
  const annotations = isObject(meta.annotations) ? meta.annotations : (meta.annotations = {});
  annotations[APPLIED_HASH_ANNOTATION] = hash;
  return hash;
}

const hasChildren = (fs: JsonObject) => Object.keys(fs).some((k) => k !== '.');
/** `{}`: the node is owned as a whole (a scalar, or an atomic map or list). */
const isLeaf = (fs: JsonObject) => Object.keys(fs).length === 0;

/** Parses a `k:{...}` key; undefined when it is not one. */
export function listKey(key: string): JsonObject | undefined {
  if (!key.startsWith('k:')) return undefined;
  try {
    const parsed: unknown = JSON.parse(key.slice(2));
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How an element of the desired object matches a list key: 'exact' when it has every key field with the
 * same value; 'partial' when the fields it has agree and some are missing (the apiserver defaults them,
 * as a port's protocol); undefined when it does not match.
 */
export function keyMatch(element: unknown, key: JsonObject): 'exact' | 'partial' | undefined {
  if (!isObject(element)) return undefined;
  let missing = 0;
  for (const k of Object.keys(key)) {
    if (!Object.prototype.hasOwnProperty.call(element, k)) {
      missing++;
      continue;
    }
    if (canonical(element[k]) !== canonical(key[k])) return undefined;
  }
  if (missing === 0) return 'exact';
  return missing < Object.keys(key).length ? 'partial' : undefined;
}

/**
 * The field-set key of a desired list element: the one it matches exactly, else the only one it
 * matches partially; 'ambiguous' when several match partially; undefined when none does.
 */
function elementKey(fs: JsonObject, element: unknown): { key: string } | 'ambiguous' | undefined {
  const partial: string[] = [];
  for (const key of Object.keys(fs)) {
    const k = listKey(key);
    if (k) {
      const m = keyMatch(element, k);
      if (m === 'exact') return { key };
      if (m === 'partial') partial.push(key);
    } else if (key.startsWith('v:') && key.slice(2) === canonical(element)) {
      return { key };
    }
  }
  if (partial.length > 1) return 'ambiguous';
  return partial[0] === undefined ? undefined : { key: partial[0] };
}

/** True when the field set owns every field of `value` (conservative: false when unsure). */
export function covers(fs: unknown, value: unknown): boolean {
  if (!isObject(fs)) return false;
  if (isLeaf(fs)) return true; // owned as a whole
  if (Array.isArray(value)) {
    return value.every((e) => {
      const found = elementKey(fs, e);
      if (found === undefined || found === 'ambiguous') return false;
      const child = fs[found.key];
      return isObject(e) ? covers(child, e) : true;
    });
  }
  if (isObject(value)) {
    return Object.keys(value).every((k) => {
      const child = fs[`f:${k}`];
      return child !== undefined && covers(child, value[k]);
    });
  }
  return true;
}

/** True when the field set owns any field of `value`, the node itself included (conservative: true when unsure). */
export function overlaps(fs: unknown, value: unknown): boolean {
  if (!isObject(fs) || value === undefined) return false;
  for (const key of Object.keys(fs)) {
    const child = fs[key];
    if (key === '.') return true;
    if (key.startsWith('f:')) {
      if (!isObject(value)) return true;
      const name = key.slice(2);
      if (!Object.prototype.hasOwnProperty.call(value, name)) continue;
      if (!isObject(child) || !hasChildren(child) || overlaps(child, value[name])) return true;
      continue;
    }
    if (!Array.isArray(value)) return true;
    const k = listKey(key);
    if (k) {
      const matching = value.filter((e) => keyMatch(e, k) !== undefined);
      if (matching.some((e) => !isObject(child) || !hasChildren(child) || overlaps(child, e))) return true;
      continue;
    }
    if (key.startsWith('v:')) {
      if (value.some((e) => canonical(e) === key.slice(2))) return true;
      continue;
    }
    return true; // i:N or anything unknown
  }
  return false;
}

/**
 * True when applying `body` (already carrying its hash annotation) with `fieldManager` would change
 * nothing on an object whose live metadata is `live`.
 */
export function unchangedSinceApply(
  live: { annotations: Readonly<Record<string, unknown>>; managedFields: readonly ManagedFieldsEntry[] },
  body: JsonObject,
  fieldManager: string,
): boolean {
  const meta = isObject(body.metadata) ? body.metadata : {};
  const annotations = isObject(meta.annotations) ? meta.annotations : {};
  const hash = annotations[APPLIED_HASH_ANNOTATION];
  if (typeof hash !== 'string' || live.annotations[APPLIED_HASH_ANNOTATION] !== hash) return false;
  // apiVersion, kind, name and namespace are the object's identity, not fields anyone owns.
  const fields: JsonObject = { ...body };
  delete fields.apiVersion;
  delete fields.kind;
  const m: JsonObject = { ...meta };
  delete m.name;
  delete m.namespace;
  fields.metadata = m;
  let ours = 0;
  for (const e of live.managedFields) {
    if (e.subresource === 'status') continue;
    if (e.fieldsType !== undefined && e.fieldsType !== 'FieldsV1') return false;
    if (e.manager === fieldManager && e.operation === 'Apply' && !e.subresource) {
      ours++;
      if (!covers(e.fieldsV1, fields)) return false;
    } else if (overlaps(e.fieldsV1, fields)) {
      return false;
    }
  }
  return ours === 1;
}
