// Small helpers over Kubernetes objects as plain JSON.

import { isObject, type JsonObject } from '../../api/internal/objects.js';

export { isObject, type JsonObject };

export interface ObjectId {
  apiVersion: string;
  kind: string;
  /** Absent for cluster-scoped objects. */
  namespace?: string;
  name: string;
}

export function metadataOf(o: JsonObject): JsonObject {
  if (!isObject(o.metadata)) o.metadata = {};
  return o.metadata as JsonObject;
}

/** Own string property, or undefined. */
export function ownString(o: unknown, key: string): string | undefined {
  if (!isObject(o) || !Object.prototype.hasOwnProperty.call(o, key)) return undefined;
  const v = o[key];
  return typeof v === 'string' ? v : undefined;
}

/** `Kind ns/name` or `Kind name`, with the group when there is one: `Deployment.apps shop/web`. */
export function describeObject(id: ObjectId): string {
  const slash = id.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : id.apiVersion.slice(0, slash);
  return `${id.kind}${group ? `.${group}` : ''} ${id.namespace ? `${id.namespace}/` : ''}${id.name}`;
}

export function deepClone<T>(v: T): T {
  return structuredClone(v);
}

/** Structural equality of JSON values (object key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * What `diff` compares: the object without the fields the server keeps for itself (status,
 * managedFields, resourceVersion, generation, uid, creationTimestamp). A copy; the input is not changed.
 */
export function withoutServerFields(o: JsonObject): JsonObject {
  const out = deepClone(o);
  delete out.status;
  const meta = isObject(out.metadata) ? out.metadata : undefined;
  if (meta) {
    for (const k of ['managedFields', 'resourceVersion', 'generation', 'uid', 'creationTimestamp', 'selfLink'])
      delete meta[k];
  }
  return out;
}
