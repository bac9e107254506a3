// Conversion between policy.flotilla.io v1alpha1 (the Karmada shape) and v1beta1 (the normalized storage
// shape). Pure: objects in, new objects out; the input is never mutated.
//
// Round trips are lossless in both directions:
//   v1alpha1 → v1beta1 → v1alpha1  gives back an equal object, and
//   v1beta1  → v1alpha1 → v1beta1  gives back an equal object
// for every object the other direction could have produced (the annotation named CONVERSION_ANNOTATION
// is reserved for the conversion; a hand-written value there is consumed, not preserved).
//
// Only `apiVersion`, `spec` and `metadata.annotations[CONVERSION_ANNOTATION]` ever change.

import { isObject, type JsonObject } from '../internal/objects.js';
import { quote } from '../internal/quote.js';
import { CONVERSION_ANNOTATION } from '../policy/v1beta1/types.js';
import { errorClass } from '../internal/errors.js';

export { CONVERSION_ANNOTATION } from '../policy/v1beta1/types.js';

export const V1ALPHA1 = 'policy.flotilla.io/v1alpha1';
export const V1BETA1 = 'policy.flotilla.io/v1beta1';
/** Karmada documents have the v1alpha1 shape; they are accepted as input and converted like v1alpha1. */
export const KARMADA_V1ALPHA1 = 'policy.karmada.io/v1alpha1';

/** The versions conversion can produce. */
export const CONVERTIBLE_VERSIONS: readonly string[] = [V1ALPHA1, V1BETA1];

const PROPAGATION_KINDS = new Set(['PropagationPolicy', 'ClusterPropagationPolicy']);
const OVERRIDE_KINDS = new Set(['OverridePolicy', 'ClusterOverridePolicy']);

export class ConversionError extends errorClass('ConversionError', 'CONVERSION') {}

/**
 * What a v1alpha1 object says that v1beta1 has no field for, stored as JSON in CONVERSION_ANNOTATION.
 * Each member is absent when there is nothing to remember.
 */
interface V1alpha1Fields {
  /** `spec.association`, as it was. */
  association?: unknown;
  /**
   * The single v1beta1 rule was folded from the deprecated `spec.targetCluster`/`spec.overriders`.
   * `rules`: the value `spec.overrideRules` had (`[]` or `null`) when it was present but empty.
   * `noOverriders`: `spec.overriders` was absent (the folded rule got `overriders: {}`).
   */
  folded?: { rules?: [] | null; noOverriders?: true };
  /** Deprecated fields that sat next to a non-empty `overrideRules`, where Karmada ignores them. */
  ignored?: { targetCluster?: unknown; overriders?: unknown };
  /** `metadata.annotations` was this empty value before the annotation was added. */
  annotations?: Record<string, never> | null;
  /** The object had no `metadata` before the annotation was added. */
  noMetadata?: true;
}

const has = (o: JsonObject, key: string): boolean =>
  Object.prototype.hasOwnProperty.call(o, key) && o[key] !== undefined;

function versionOf(apiVersion: unknown): 'v1alpha1' | 'v1beta1' | undefined {
  if (apiVersion === V1ALPHA1 || apiVersion === KARMADA_V1ALPHA1) return 'v1alpha1';
  if (apiVersion === V1BETA1) return 'v1beta1';
  return undefined;
}

/** Converts one policy.flotilla.io object (any kind, either version) to the desired apiVersion; returns a new object, never mutates. */
export function convertObject(object: Record<string, unknown>, desiredAPIVersion: string): Record<string, unknown> {
  if (!isObject(object)) throw new ConversionError('object must be a JSON object');
  const from = versionOf(object.apiVersion);
  if (from === undefined) {
    throw new ConversionError(
      `${object.apiVersion === undefined || object.apiVersion === null ? 'apiVersion is missing' : `apiVersion ${quote(object.apiVersion)} is not convertible`}; supported: ${[V1ALPHA1, V1BETA1, KARMADA_V1ALPHA1].join(', ')}`,
    );
  }
  if (desiredAPIVersion !== V1ALPHA1 && desiredAPIVersion !== V1BETA1) {
    throw new ConversionError(
      `desired apiVersion ${quote(desiredAPIVersion)} is not supported; supported: ${CONVERTIBLE_VERSIONS.join(', ')}`,
    );
  }
  const kind = object.kind;
  if (typeof kind !== 'string' || (!PROPAGATION_KINDS.has(kind) && !OVERRIDE_KINDS.has(kind))) {
    throw new ConversionError(
      kind === undefined || kind === null ? 'kind is missing' : `kind ${quote(kind)} is not a policy.flotilla.io kind`,
    );
  }
  if (has(object, 'metadata') && !isObject(object.metadata)) throw new ConversionError('metadata must be an object');
  if (has(object, 'spec') && object.spec !== null && !isObject(object.spec))
    throw new ConversionError('spec must be an object');

  const out = structuredClone(object);
  const to = desiredAPIVersion === V1ALPHA1 ? 'v1alpha1' : 'v1beta1';
  if (from !== to) {
    if (to === 'v1beta1') toV1beta1(out, kind);
    else toV1alpha1(out, kind);
  }
  out.apiVersion = desiredAPIVersion;
  return out;
}

// ---- v1alpha1 → v1beta1 ---------------------------------------------------------------------------------

function toV1beta1(obj: JsonObject, kind: string): void {
  const fields: V1alpha1Fields = {};
  const spec = obj.spec;
  if (isObject(spec)) {
    if (PROPAGATION_KINDS.has(kind)) foldPropagationSpec(spec, fields);
    else foldOverrideSpec(spec, fields);
  }
  writeFields(obj, fields);
}

function foldPropagationSpec(spec: JsonObject, fields: V1alpha1Fields): void {
  if (has(spec, 'association')) {
    fields.association = spec.association;
    delete spec.association;
  }
}

function foldOverrideSpec(spec: JsonObject, fields: V1alpha1Fields): void {
  const hasTarget = has(spec, 'targetCluster');
  const hasOverriders = has(spec, 'overriders');
  if (!hasTarget && !hasOverriders) return;
  const rules = spec.overrideRules;
  if (rules !== undefined && rules !== null && !Array.isArray(rules))
    throw new ConversionError('spec.overrideRules must be an array');

  if (Array.isArray(rules) && rules.length > 0) {
    // Karmada ignores the deprecated fields when rules exist (the validating webhook denies the mix, the
    // schema does not): keep them aside, unused, so v1alpha1 readers see what was written.
    const ignored: NonNullable<V1alpha1Fields['ignored']> = {};
    if (hasTarget) ignored.targetCluster = spec.targetCluster;
    if (hasOverriders) ignored.overriders = spec.overriders;
    fields.ignored = ignored;
  } else {
    // Karmada's own reading of the deprecated form: one rule made of the two fields.
    const rule: JsonObject = {};
    if (hasTarget) rule.targetCluster = spec.targetCluster;
    rule.overriders = hasOverriders ? spec.overriders : {};
    const folded: NonNullable<V1alpha1Fields['folded']> = {};
    if (rules !== undefined) folded.rules = rules === null ? null : [];
    if (!hasOverriders) folded.noOverriders = true;
    fields.folded = folded;
    spec.overrideRules = [rule];
  }
  delete spec.targetCluster;
  delete spec.overriders;
}

function writeFields(obj: JsonObject, fields: V1alpha1Fields): void {
  const metadata = isObject(obj.metadata) ? obj.metadata : undefined;
  const annotations = metadata?.annotations;
  const hasFields = 'association' in fields || fields.folded !== undefined || fields.ignored !== undefined;
  if (!hasFields) {
    // The key is reserved: a v1beta1 object carries it only when it has something to restore.
    if (isObject(annotations) && has(annotations, CONVERSION_ANNOTATION)) {
      delete annotations[CONVERSION_ANNOTATION];
    }
    return;
  }
  if (metadata === undefined) fields.noMetadata = true;
  const target = metadata ?? (obj.metadata = {} as JsonObject);
  if (isObject(annotations)) {
    if (Object.keys(annotations).length === 0) fields.annotations = {};
  } else if (annotations === null) {
    fields.annotations = null;
  } else if (annotations !== undefined) {
    throw new ConversionError('metadata.annotations must be an object');
  }
  const record: JsonObject = isObject(annotations) ? annotations : {};
  record[CONVERSION_ANNOTATION] = JSON.stringify(fields);
  target.annotations = record;
}

// ---- v1beta1 → v1alpha1 ---------------------------------------------------------------------------------

function toV1alpha1(obj: JsonObject, kind: string): void {
  const fields = takeFields(obj);
  const spec = obj.spec;
  if (!isObject(spec)) return;
  if (PROPAGATION_KINDS.has(kind)) {
    if (has(spec, 'association')) throw new ConversionError('spec.association is not a v1beta1 field');
    if (fields && has(fields as JsonObject, 'association')) spec.association = fields.association;
    return;
  }
  for (const key of ['targetCluster', 'overriders']) {
    if (has(spec, key)) throw new ConversionError(`spec.${key} is not a v1beta1 field; use spec.overrideRules`);
  }
  const rules = spec.overrideRules;
  if (rules !== undefined && rules !== null && !Array.isArray(rules))
    throw new ConversionError('spec.overrideRules must be an array');
  if (!fields || !Array.isArray(rules)) return;

  // Restore only what still fits the rules as they are now: a v1beta1 writer may have changed them since
  // the annotation was written, and a stale hint must not change what the policy does.
  if (fields.folded && rules.length === 1 && isObject(rules[0])) {
    const rule = rules[0];
    if (has(rule, 'targetCluster')) spec.targetCluster = rule.targetCluster;
    const overriders = rule.overriders;
    const wasAbsent =
      fields.folded.noOverriders === true && isObject(overriders) && Object.keys(overriders).length === 0;
    if (!wasAbsent && has(rule, 'overriders')) spec.overriders = overriders;
    if (has(fields.folded, 'rules')) spec.overrideRules = fields.folded.rules === null ? null : [];
    else delete spec.overrideRules;
  } else if (fields.ignored && rules.length > 0) {
    if (has(fields.ignored, 'targetCluster')) spec.targetCluster = fields.ignored.targetCluster;
    if (has(fields.ignored, 'overriders')) spec.overriders = fields.ignored.overriders;
  }
}

/** Removes CONVERSION_ANNOTATION and returns what it held; undefined when absent or unreadable. */
function takeFields(obj: JsonObject): V1alpha1Fields | undefined {
  const metadata = obj.metadata;
  if (!isObject(metadata)) return undefined;
  const annotations = metadata.annotations;
  if (!isObject(annotations) || !has(annotations, CONVERSION_ANNOTATION)) return undefined;
  const raw = annotations[CONVERSION_ANNOTATION];
  delete annotations[CONVERSION_ANNOTATION];
  let fields: unknown;
  try {
    fields = typeof raw === 'string' ? JSON.parse(raw) : undefined;
  } catch {
    fields = undefined;
  }
  if (Object.keys(annotations).length === 0) {
    if (
      isObject(fields) &&
      has(fields, 'annotations') &&
      (fields.annotations === null || isObject(fields.annotations))
    ) {
      metadata.annotations = fields.annotations === null ? null : {};
    } else {
      delete metadata.annotations;
      if (isObject(fields) && fields.noMetadata === true && Object.keys(metadata).length === 0) delete obj.metadata;
    }
  }
  if (!isObject(fields)) return undefined;
  const out: V1alpha1Fields = {};
  if (has(fields, 'association')) out.association = fields.association;
  if (isObject(fields.folded)) {
    const folded: NonNullable<V1alpha1Fields['folded']> = {};
    if (fields.folded.rules === null) folded.rules = null;
    else if (Array.isArray(fields.folded.rules)) folded.rules = [];
    if (fields.folded.noOverriders === true) folded.noOverriders = true;
    out.folded = folded;
  }
  if (isObject(fields.ignored)) {
    const ignored: NonNullable<V1alpha1Fields['ignored']> = {};
    if (has(fields.ignored, 'targetCluster')) ignored.targetCluster = fields.ignored.targetCluster;
    if (has(fields.ignored, 'overriders')) ignored.overriders = fields.ignored.overriders;
    out.ignored = ignored;
  }
  return out;
}

/** True when `apiVersion` is one conversion reads. */
export function isConvertible(apiVersion: unknown): boolean {
  return versionOf(apiVersion) !== undefined;
}

/**
 * The v1alpha1 form of a policy, for validation. The conversion annotation is dropped first, so a v1beta1
 * object is judged as it is stored (its rules stay at spec.overrideRules).
 */
export function toValidationShape(object: Record<string, unknown>): Record<string, unknown> {
  if (object.apiVersion !== V1BETA1) return object;
  const copy = { ...object };
  if (
    isObject(object.metadata) &&
    isObject(object.metadata.annotations) &&
    Object.hasOwn(object.metadata.annotations, CONVERSION_ANNOTATION)
  ) {
    const annotations = { ...object.metadata.annotations };
    delete annotations[CONVERSION_ANNOTATION];
    copy.metadata = { ...object.metadata, annotations };
  }
  return convertObject(copy, V1ALPHA1);
}
