// A digest of the fields one field manager owns on an object, so that a writer can remember what it applied
// as a few bytes instead of the object, and tell from a watched object alone whether its fields changed.
//
// ownedDigest(live) reads the manager's Apply entry in managedFields (fieldsV1) and hashes the object's
// values at exactly those fields, in the shape of an applied body: maps by their `f:` keys, associative
// list elements by their `k:` keys, set elements by their `v:` values, a field owned as a whole as it is.
// appliedDigest(body) hashes a body as sent. Right after an apply that changed nothing else the two agree;
// values the apiserver normalizes (a quantity written `1000m`, stored `1`) make them differ, which is why a
// writer compares a live digest with the digest of the apiserver's answer to its own apply when it has one.
// Under server-side apply, a field someone else changes or removes leaves this manager's set and a field
// the manager owns changes value only when someone changes it: either moves the digest. A change to a
// field the manager does not own (status, another manager's label, managedFields' timestamps) does not.

import { createHash } from 'node:crypto';

import { isObject, type JsonObject } from './objects.js';
import { canonical, keyMatch, listKey } from './ownership.js';

/** Deepest field set followed; deeper nodes are hashed as they are (any change still moves the digest). */
const MAX_DEPTH = 64;

/** The object without its identity (apiVersion, kind, name, namespace): the fields an apply can own. */
function ownable(o: JsonObject): JsonObject {
  const { apiVersion: _v, kind: _k, ...rest } = o;
  if (isObject(o.metadata)) {
    const { name: _n, namespace: _ns, ...meta } = o.metadata;
    rest.metadata = meta;
  }
  return rest;
}

/** Whether the list element `e` is the one a field-set key (`k:{...}` or `v:<json>`) names. */
function elementIs(key: string, e: unknown): boolean {
  const k = listKey(key);
  if (k) return keyMatch(e, k) === 'exact';
  return key.startsWith('v:') && key.slice(2) === canonical(e);
}

/** `value` cut down to the fields the field set `fs` names, in the shape of an applied body. */
export function projectFields(fs: unknown, value: unknown, depth = 0): unknown {
  if (!isObject(fs) || depth > MAX_DEPTH) return value;
  const keys = Object.keys(fs).filter((k) => k !== '.');
  if (keys.length === 0) return value; // owned as a whole
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const e of value) {
      const key = keys.find((k) => elementIs(k, e));
      if (key !== undefined) out.push(projectFields(fs[key], e, depth + 1));
    }
    return out;
  }
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const k of keys) {
    const name = k.startsWith('f:') ? k.slice(2) : undefined;
    if (name !== undefined && Object.hasOwn(value, name)) out[name] = projectFields(fs[k], value[name], depth + 1);
  }
  return out;
}

/** A short digest (128 bits, base64url) of a value's canonical JSON. */
export function digestOf(value: unknown): string {
  return createHash('sha256').update(canonical(value)).digest('base64url').slice(0, 22);
}

/**
 * The digest of the fields `fieldManager`'s Apply entry owns on `live`; undefined when it has no single
 * such entry in the FieldsV1 form (nothing of the object is known to be its).
 */
export function ownedDigest(live: JsonObject, fieldManager: string): string | undefined {
  const meta = isObject(live.metadata) ? live.metadata : {};
  const entries = Array.isArray(meta.managedFields) ? meta.managedFields.filter(isObject) : [];
  const ours = entries.filter((e) => e.manager === fieldManager && e.operation === 'Apply' && !e.subresource);
  const entry = ours.length === 1 ? ours[0] : undefined;
  if (!entry || (entry.fieldsType !== undefined && entry.fieldsType !== 'FieldsV1')) return undefined;
  return digestOf(projectFields(entry.fieldsV1, ownable(live)));
}

/** The digest of a body as applied: what ownedDigest() gives on the object it made, when nothing was normalized. */
export function appliedDigest(body: JsonObject): string {
  return digestOf(ownable(body));
}
