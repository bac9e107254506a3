// OverridePolicy / ClusterOverridePolicy admission rules: Karmada's ValidateOverrideSpec in its order and
// with its messages, plus Flotilla's: every path parses (pointer or keyed form, no prototype segments),
// plaintext values present exactly when the operator needs one, variables known, and the deprecated
// top-level overriders held to the same rules as the ones inside overrideRules.

import { checkPath, parsePath, formatPath, hasGlob, isSegmentPrefix, MAX_PATH_LENGTH } from '../path/index.js';
import { checkVariables, mayHaveVariables, sampleVariables, stringsIn } from '../variables/index.js';
import { forbidden, invalid, required, tooLong, type FieldError } from './errors.js';
import { isValidLabelValue, validateAnnotations, validateLabelName } from './names.js';
import { checkResourceSelectors, unknownClusterWarnings, validateClusterAffinity } from './selectors.js';
import {
  arr,
  byteLength,
  canonicalJSON,
  child,
  index,
  isSet,
  key,
  obj,
  objectsOf,
  str,
  stringMap,
  stringsOf,
  type Obj,
} from './shape.js';

/** Longest path admission accepts, in UTF-8 bytes: api/path's limit (see MAX_PATH_LENGTH for the reasons). */
export const MAX_PATH_BYTES = MAX_PATH_LENGTH;

/**
 * Longest string holding a variable (`${`) that admission accepts, in UTF-8 bytes: 1 MiB, what a whole
 * ConfigMap or Secret may hold, so any templated value that could ever be applied to a member fits, and
 * the per-cluster expansion of each one starts from a bounded string.
 */
export const MAX_TEMPLATED_BYTES = 1024 * 1024;

/** Whether `s` is longer than `max` UTF-8 bytes, without encoding strings that are clearly within it. */
function longerThan(s: string, max: number): boolean {
  if (s.length > max) return true; // at least one byte per UTF-16 code unit
  if (s.length * 3 <= max) return false; // at most three
  return byteLength(s) > max;
}

/** The problem with one string's variables: too long to template, or unknown/malformed variables. */
function templateError(text: string, at: string): FieldError | undefined {
  if (!mayHaveVariables(text)) return undefined;
  if (longerThan(text, MAX_TEMPLATED_BYTES)) return tooLong(at, MAX_TEMPLATED_BYTES);
  const problem = checkVariables(text);
  return problem === undefined ? undefined : invalid(at, text, problem);
}

export interface OverrideContext {
  /** The policy's namespace (Karmada's request namespace); undefined for COP or when not known. */
  namespace: string | undefined;
  /** The policy's API group: policy.karmada.io denies Flotilla's extension fields. */
  group?: string | undefined;
  knownClusters: ReadonlySet<string> | undefined;
}

export interface Findings {
  errors: FieldError[];
  warnings: string[];
}

/** Karmada's emptyOverrides: note that fieldOverrider is not looked at. */
export function emptyOverriders(overriders: Obj | undefined): boolean {
  return [
    'plaintext',
    'imageOverrider',
    'commandOverrider',
    'argsOverrider',
    'labelsOverrider',
    'annotationsOverrider',
  ].every((k) => (arr(overriders, k)?.length ?? 0) === 0);
}

function anyOverriders(overriders: Obj | undefined): boolean {
  return !emptyOverriders(overriders) || (arr(overriders, 'fieldOverrider')?.length ?? 0) > 0;
}

/** The PathError message for a path that does not parse (Karmada's exact text when it lacks the "/"). */
function pathError(path: string, at: string): FieldError | undefined {
  if (longerThan(path, MAX_PATH_BYTES)) return tooLong(at, MAX_PATH_BYTES);
  const problem = checkPath(path);
  return problem === undefined ? undefined : invalid(at, path, problem);
}

/** A path that can never name a string field: the empty path is the whole object. */
function stringFieldPathError(path: string, at: string): FieldError | undefined {
  if (path === '')
    return invalid(at, path, 'must name a field: the empty path is the whole object, which is not a string');
  return pathError(path, at);
}

/** Unknown or malformed variables, or templated strings too long, in every string inside `value`, each at its own path. */
function variableErrors(value: unknown, at: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const { at: suffix, text } of stringsIn(value)) {
    const e = templateError(text, `${at}${suffix}`);
    if (e) errs.push(e);
  }
  return errs;
}

/**
 * Karmada's rule for JSON/YAML patch values, applied by Flotilla to plaintext too: add and replace need a
 * value, remove must not have one. JSON null counts as no value (Karmada's apiextensions JSON reads it so).
 */
function operatorValueErrors(op: Obj, at: string): FieldError[] {
  const operator = str(op, 'operator');
  const hasValue = isSet(op, 'value');
  if ((operator === 'add' || operator === 'replace') && !hasValue)
    return [invalid(at, null, 'value is required for add or replace operation')];
  if (operator === 'remove' && hasValue) return [invalid(at, op.value, 'value is not allowed for remove operation')];
  return [];
}

const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;
const REGISTRY =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?$/;

/** Image values that Karmada's image overrider would silently ignore or turn into an unparsable image. */
function imageValueWarning(image: Obj, at: string): string | undefined {
  const value = str(image, 'value');
  if (value === undefined || str(image, 'operator') !== 'replace' || templateError(value, at) !== undefined)
    return undefined;
  const sample = sampleVariables(value);
  const component = str(image, 'component');
  if (component === 'Tag' && !TAG.test(sample) && !DIGEST.test(sample)) {
    return `${at}: ${JSON.stringify(value)} is neither a tag nor a digest, so replacing the Tag with it leaves the image unchanged`;
  }
  if (component === 'Registry' && value !== '' && !REGISTRY.test(sample)) {
    return `${at}: ${JSON.stringify(value)} does not look like a registry host (host[:port]); the rewritten image may not parse`;
  }
  return undefined;
}

function validateImageOverriders(overriders: Obj, path: string, warnings: string[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const [i, image] of objectsOf(arr(overriders, 'imageOverrider'))) {
    const at = index(child(path, 'imageOverrider'), i);
    const predicatePath = str(obj(image, 'predicate'), 'path');
    if (predicatePath !== undefined) {
      const e = stringFieldPathError(predicatePath, `${at}.predicate.path`);
      if (e) errs.push(e);
    }
    const value = str(image, 'value');
    if (value !== undefined) errs.push(...variableErrors(value, child(at, 'value')));
    const w = imageValueWarning(image, child(at, 'value'));
    if (w) warnings.push(w);
  }
  return errs;
}

/** onlyIfAbsent means something with `add` only. */
function onlyIfAbsentErrors(overriders: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const field of ['labelsOverrider', 'annotationsOverrider']) {
    for (const [i, o] of objectsOf(arr(overriders, field))) {
      if (o.onlyIfAbsent === true && str(o, 'operator') !== 'add')
        errs.push(
          invalid(child(index(child(path, field), i), 'onlyIfAbsent'), true, 'only applies with operator "add"'),
        );
    }
  }
  return errs;
}

/** A `[field=*]` glob outside plaintext paths. */
function globErrors(overriders: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [i, f] of objectsOf(arr(overriders, 'fieldOverrider'))) {
    const fieldPath = str(f, 'fieldPath');
    if (fieldPath !== undefined && hasGlob(fieldPath))
      errs.push(
        invalid(
          child(index(child(path, 'fieldOverrider'), i), 'fieldPath'),
          fieldPath,
          'a [field=*] glob is only allowed in plaintext paths',
        ),
      );
  }
  for (const [i, o] of objectsOf(arr(overriders, 'imageOverrider'))) {
    const p = str(obj(o, 'predicate'), 'path');
    if (p !== undefined && hasGlob(p))
      errs.push(
        invalid(
          child(child(index(child(path, 'imageOverrider'), i), 'predicate'), 'path'),
          p,
          'a [field=*] glob is only allowed in plaintext paths',
        ),
      );
  }
  return errs;
}

/** Flotilla's extension fields in a policy.karmada.io object: each is denied, naming where it is. */
function extensionFieldErrors(spec: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const why = (f: string) =>
    `${f} is a Flotilla extension: use apiVersion policy.flotilla.io/v1beta1 (policy.karmada.io/v1alpha1 has no such field)`;
  const forbid = (at: string, f: string) => errs.push(forbidden(at, why(f)));
  const inOverriders = (overriders: Obj | undefined, at: string) => {
    if (!overriders) return;
    for (const [i, p] of objectsOf(arr(overriders, 'plaintext'))) {
      if (isSet(p, 'pathTests')) forbid(child(index(child(at, 'plaintext'), i), 'pathTests'), 'pathTests');
      const target = str(p, 'path');
      if (target !== undefined && hasGlob(target))
        forbid(child(index(child(at, 'plaintext'), i), 'path'), 'the [field=*] glob');
    }
    for (const field of ['labelsOverrider', 'annotationsOverrider'])
      for (const [i, o] of objectsOf(arr(overriders, field)))
        if (isSet(o, 'onlyIfAbsent')) forbid(child(index(child(at, field), i), 'onlyIfAbsent'), 'onlyIfAbsent');
  };
  for (const [r, rule] of objectsOf(arr(spec, 'overrideRules'))) {
    const at = index('spec.overrideRules', r);
    if (isSet(rule, 'targetOperations')) forbid(child(at, 'targetOperations'), 'targetOperations');
    inOverriders(obj(rule, 'overriders'), child(at, 'overriders'));
  }
  inOverriders(obj(spec, 'overriders'), 'spec.overriders');
  return errs;
}

function validateLabelOverriders(overriders: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [i, o] of objectsOf(arr(overriders, 'labelsOverrider'))) {
    const at = child(index(child(path, 'labelsOverrider'), i), 'value');
    // metav1validation.ValidateLabels, with templated values checked after their variables are sampled.
    for (const [k, v] of stringMap(o, 'value') ?? []) {
      errs.push(...validateLabelName(k, at));
      const e = templateError(v, key(at, k));
      if (e) errs.push(e);
      else for (const m of isValidLabelValue(sampleVariables(v))) errs.push(invalid(at, v, m));
    }
  }
  return errs;
}

function validateAnnotationOverriders(overriders: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [i, o] of objectsOf(arr(overriders, 'annotationsOverrider'))) {
    const at = child(index(child(path, 'annotationsOverrider'), i), 'value');
    const entries = stringMap(o, 'value') ?? [];
    errs.push(...validateAnnotations(entries, at));
    for (const [k, v] of entries) {
      const e = templateError(v, key(at, k));
      if (e) errs.push(e);
    }
  }
  return errs;
}

function validatePatchOperations(fo: Obj, kind: 'json' | 'yaml', at: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, op] of objectsOf(arr(fo, kind))) {
    const opAt = index(child(at, kind), k);
    const subPath = str(op, 'subPath');
    if (subPath !== undefined) {
      const e = pathError(subPath, child(opAt, 'subPath'));
      if (e) errs.push(e);
    }
    errs.push(...operatorValueErrors(op, child(opAt, 'value')));
    if (isSet(op, 'value')) errs.push(...variableErrors(op.value, child(opAt, 'value')));
  }
  return errs;
}

function validateFieldOverriders(overriders: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [i, fo] of objectsOf(arr(overriders, 'fieldOverrider'))) {
    const at = index(child(path, 'fieldOverrider'), i);
    const jsonOps = arr(fo, 'json')?.length ?? 0;
    const yamlOps = arr(fo, 'yaml')?.length ?? 0;
    if (jsonOps > 0 && yamlOps > 0)
      errs.push(invalid(at, fo, 'FieldOverrider has both YAML and JSON set. Only one is allowed'));
    if (jsonOps === 0 && yamlOps === 0) errs.push(required(at, 'FieldOverrider must have either JSON or YAML set'));
    const fieldPath = str(fo, 'fieldPath');
    if (fieldPath !== undefined) {
      const e = stringFieldPathError(fieldPath, child(at, 'fieldPath'));
      if (e) errs.push(e);
    }
    errs.push(...validatePatchOperations(fo, 'json', at));
    errs.push(...validatePatchOperations(fo, 'yaml', at));
  }
  return errs;
}

function validateCommandArgs(overriders: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const field of ['commandOverrider', 'argsOverrider'] as const) {
    for (const [i, o] of objectsOf(arr(overriders, field))) {
      const at = child(index(child(path, field), i), 'value');
      for (const [j, v] of stringsOf(arr(o, 'value'))) errs.push(...variableErrors(v, index(at, j)));
    }
  }
  return errs;
}

function validatePlaintext(overriders: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [i, p] of objectsOf(arr(overriders, 'plaintext'))) {
    const at = index(child(path, 'plaintext'), i);
    const target = str(p, 'path');
    if (target !== undefined) {
      const e = pathError(target, child(at, 'path'));
      if (e) errs.push(e);
      else
        for (const [t, test] of objectsOf(arr(p, 'pathTests'))) {
          const subPath = str(test, 'subPath');
          if (subPath === undefined) continue;
          const tat = child(index(child(at, 'pathTests'), t), 'subPath');
          const se = pathError(subPath, tat);
          if (se) errs.push(se);
          else if (!isSegmentPrefix(parsePath(subPath), parsePath(target)))
            errs.push(invalid(tat, subPath, `must be a prefix of the path ${JSON.stringify(target)}`));
        }
    }
    errs.push(...operatorValueErrors(p, child(at, 'value')));
    if (isSet(p, 'value')) errs.push(...variableErrors(p.value, child(at, 'value')));
  }
  return errs;
}

/**
 * One Overriders block at `path`: Karmada's checks first, in its order (annotations, labels, image
 * predicate paths, field overriders), then Flotilla's (command/args and plaintext).
 */
function validateOverriders(overriders: Obj, path: string, warnings: string[]): FieldError[] {
  return [
    ...validateAnnotationOverriders(overriders, path),
    ...validateLabelOverriders(overriders, path),
    ...validateImageOverriders(overriders, path, warnings),
    ...validateFieldOverriders(overriders, path),
    ...validateCommandArgs(overriders, path),
    ...validatePlaintext(overriders, path),
    ...onlyIfAbsentErrors(overriders, path),
    ...globErrors(overriders, path),
  ];
}

/** A path written in two spellings (`~1` vs keyed) still compares equal; unparsable paths compare raw. */
function normalizedPath(p: string): string {
  try {
    return formatPath(parsePath(p));
  } catch {
    return p;
  }
}

/**
 * Warnings for two rules that write the same path for the same target clusters: the later rule silently
 * decides, which is seldom what was meant.
 */
function overlapWarnings(rules: readonly unknown[] | undefined): string[] {
  const out: string[] = [];
  const firstWriter = new Map<string, { rule: number; at: string }>();
  // A path over the limit is denied already; it is neither compared nor repeated in a warning.
  const usable = (p: string | undefined): p is string => p !== undefined && p.length <= MAX_PATH_BYTES;
  const note = (rule: number, target: string, what: string, at: string, shown: string): void => {
    const k = `${target}\u0000${what}`;
    const first = firstWriter.get(k);
    if (!first) firstWriter.set(k, { rule, at });
    else if (first.rule !== rule)
      out.push(
        `${at}: ${shown} is also written by ${first.at} for the same target clusters; rules apply in order, so this one decides`,
      );
  };
  for (const [r, rule] of objectsOf(rules)) {
    const target = canonicalJSON(rule.targetCluster ?? null);
    const base = `spec.overrideRules[${r}].overriders`;
    const overriders = obj(rule, 'overriders');
    for (const [i, p] of objectsOf(arr(overriders, 'plaintext'))) {
      const path = str(p, 'path');
      if (usable(path))
        note(r, target, `plaintext\u0000${normalizedPath(path)}`, `${base}.plaintext[${i}].path`, JSON.stringify(path));
    }
    for (const [i, fo] of objectsOf(arr(overriders, 'fieldOverrider'))) {
      const fieldPath = str(fo, 'fieldPath');
      if (!usable(fieldPath)) continue;
      for (const kind of ['json', 'yaml'] as const) {
        for (const [k, op] of objectsOf(arr(fo, kind))) {
          const subPath = str(op, 'subPath');
          if (!usable(subPath)) continue;
          note(
            r,
            target,
            `field\u0000${normalizedPath(fieldPath)}\u0000${normalizedPath(subPath)}`,
            `${base}.fieldOverrider[${i}].${kind}[${k}].subPath`,
            `${JSON.stringify(subPath)} in ${JSON.stringify(fieldPath)}`,
          );
        }
      }
    }
  }
  return out;
}

/** The webhook-level rules for an OP/COP whose apiVersion, kind and metadata have been checked. */
export function validateOverridePolicy(policy: Obj, ctx: OverrideContext): Findings {
  const errors: FieldError[] = [];
  const warnings: string[] = [];
  const spec = obj(policy, 'spec');
  if (!spec) return { errors, warnings };

  const targetCluster = obj(spec, 'targetCluster');
  if (targetCluster) errors.push(...validateClusterAffinity(targetCluster, 'spec.targetCluster'));
  if (isSet(spec, 'targetCluster') && isSet(spec, 'overrideRules')) {
    errors.push(invalid('spec.targetCluster', spec.targetCluster, "overrideRules and targetCluster can't co-exist"));
  }
  const deprecatedOverriders = obj(spec, 'overriders');
  if (!emptyOverriders(deprecatedOverriders) && isSet(spec, 'overrideRules')) {
    errors.push(invalid('spec.overriders', deprecatedOverriders, "overrideRules and overriders can't co-exist"));
  }

  if (ctx.group === 'policy.karmada.io') errors.push(...extensionFieldErrors(spec));
  const rules = arr(spec, 'overrideRules');
  for (const [r, rule] of objectsOf(rules)) {
    const at = index('spec.overrideRules', r);
    const overriders = obj(rule, 'overriders');
    if (overriders) errors.push(...validateOverriders(overriders, child(at, 'overriders'), warnings));
    const target = obj(rule, 'targetCluster');
    if (target) {
      errors.push(...validateClusterAffinity(target, child(at, 'targetCluster')));
      warnings.push(...unknownClusterWarnings(target, child(at, 'targetCluster'), ctx.knownClusters));
    }
  }
  // Karmada leaves the deprecated block unchecked; it is applied all the same, so Flotilla checks it.
  if (deprecatedOverriders) errors.push(...validateOverriders(deprecatedOverriders, 'spec.overriders', warnings));

  const rs = checkResourceSelectors(arr(spec, 'resourceSelectors'), 'spec.resourceSelectors', ctx.namespace);
  errors.push(...rs.errors);
  warnings.push(...rs.warnings);

  if (targetCluster) warnings.push(...unknownClusterWarnings(targetCluster, 'spec.targetCluster', ctx.knownClusters));
  if (isSet(spec, 'targetCluster'))
    warnings.push('spec.targetCluster is deprecated: move it into spec.overrideRules[].targetCluster');
  if (anyOverriders(deprecatedOverriders))
    warnings.push('spec.overriders is deprecated: move it into spec.overrideRules[].overriders');
  warnings.push(...overlapWarnings(rules));
  return { errors, warnings };
}
