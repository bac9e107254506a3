// What a member's watch keeps of an object the controller applied there: not the object, but what the
// controller decides with — its identity (name, namespace, uid, resourceVersion, generation, deletion),
// the marks that say whose it is (the template-uid label, the template annotation), what health and the
// template's status read (spec.replicas and spec.completions, status), the managedFields entries retain
// and the take-over of a previous field manager read (those alone), and a digest of the fields the
// controller owns (pkg/kube/field-digest.ts): enough for the no-op check and for drift. Everything else —
// data, the spec's other fields, other managers' field sets — is dropped as the watch delivers it. What
// every member's copy of a template has alike (name, namespace, the marks, the digest) is one string per
// process, not one per member (shared-values.ts).

import { ownedDigest } from '../kube/field-digest.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import { canonical } from '../kube/ownership.js';
import { SharedStrings } from './shared-values.js';
import {
  CONTROLLER_FIELD_MANAGER,
  PREVIOUS_MEMBER_FIELD_MANAGERS,
  TEMPLATE_ANNOTATION,
  TEMPLATE_UID_LABEL,
} from './ownership.js';

/** Where a kept copy holds the digest of the controller's fields (a name no Kubernetes object has at its top). */
export const OWNED_DIGEST = 'flotilla.io/owned-digest';

/** The managedFields entries a decision reads: a scaler's (retain.ts) and a previous manager's Apply (take-over). */
function keptEntry(e: unknown): JsonObject | undefined {
  if (!isObject(e)) return undefined;
  if (e.subresource === 'scale') return e;
  if (e.operation === 'Apply' && typeof e.manager === 'string' && PREVIOUS_MEMBER_FIELD_MANAGERS.includes(e.manager))
    return { manager: e.manager, operation: e.operation };
  return undefined;
}

/** The strings every member's copy of a template has alike, one instance each (shared-values.ts). */
const strings = new SharedStrings();

/** `s` as one string shared by every member's watch (an object's key, name, marks, digest). */
export function sharedString(s: string): string {
  return strings.share(s);
}

/** `from`'s own `keys` that are set; a string value shared with equal ones kept before when `shared`. */
function pick(from: unknown, keys: readonly string[], shared = false): JsonObject | undefined {
  if (!isObject(from)) return undefined;
  const out: JsonObject = {};
  for (const k of keys) {
    const v = Object.hasOwn(from, k) ? from[k] : undefined;
    if (v !== undefined) out[k] = shared && typeof v === 'string' ? strings.share(v) : v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The copy of `o` a member's watch keeps; `apiVersion` and `kind` are the watch's. */
export function keptCopy(o: JsonObject, apiVersion: string, kind: string): JsonObject {
  const meta = isObject(o.metadata) ? o.metadata : {};
  const kept: JsonObject = {
    ...pick(meta, ['name', 'namespace'], true),
    ...pick(meta, ['uid', 'resourceVersion', 'generation', 'deletionTimestamp']),
  };
  // The marks are the same on every member: one map each, shared (a kept copy is never changed in place).
  const labels = pick(meta.labels, [TEMPLATE_UID_LABEL], true);
  if (labels) kept.labels = strings.shareMap(labels as Record<string, string>);
  const annotations = pick(meta.annotations, [TEMPLATE_ANNOTATION], true);
  if (annotations) kept.annotations = strings.shareMap(annotations as Record<string, string>);
  const entries = Array.isArray(meta.managedFields) ? meta.managedFields.flatMap((e) => keptEntry(e) ?? []) : [];
  if (entries.length > 0) kept.managedFields = entries;
  const copy: JsonObject = { apiVersion, kind, metadata: kept };
  const spec = pick(o.spec, ['replicas', 'completions']);
  if (spec) copy.spec = spec;
  if (isObject(o.status)) copy.status = o.status;
  const digest = ownedDigest(o, CONTROLLER_FIELD_MANAGER);
  if (digest !== undefined) copy[OWNED_DIGEST] = strings.share(digest);
  return copy;
}

/** The digest of the controller's fields a kept copy holds (undefined: it owns none there). */
export function copyDigest(copy: JsonObject | undefined): string | undefined {
  return copy ? ownString(copy, OWNED_DIGEST) : undefined;
}

/** Whether a kept copy still carries a previous field manager's Apply entry: taking it over needs the object. */
export function fromPreviousManager(copy: JsonObject): boolean {
  const meta = isObject(copy.metadata) ? copy.metadata : {};
  return Array.isArray(meta.managedFields) && meta.managedFields.some((e) => isObject(e) && e.operation === 'Apply');
}

/** Whether two kept copies differ in anything the controller decides with (resourceVersion aside). */
export function copyChanged(a: JsonObject, b: JsonObject): boolean {
  const strip = (c: JsonObject) => ({
    ...c,
    metadata: { ...(isObject(c.metadata) ? c.metadata : {}), resourceVersion: '' },
  });
  return canonical(strip(a)) !== canonical(strip(b));
}
