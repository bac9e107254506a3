// What the admission overrides added to lists, recorded on the object so that a later admission of the
// same object recognises its own additions instead of adding them again.
//
// The apiserver gives a webhook nothing stable to tell a repeated call by: every call (a reinvocation
// too) has a new request uid, and an UPDATE carries the stored object (oldObject) and the new one, both
// with whatever earlier admissions added. Most overriders converge by themselves (set a label, replace an
// image, a keyed `add`); the ones that append (command/args `add`, an `add` at a list position, in the
// object or in a JSON/YAML document held in a field) do not. For those, every addition is recorded in
// ADDED_ANNOTATION as a short digest of (policy, rule, overrider item, list, values); the list is named
// by a path that survives reordering (list items with a `name` are named by it). An addition is made
// again only when its digest is not recorded, or its values are no longer in the list (someone removed
// them): so whatever the object went through, each appending override is in it once.
//
// "In the list" tolerates what others do to an added item after it was added: an object item still
// counts when it gained fields (apiserver defaulting, another webhook) or, when it has a `name`, when
// its other fields changed; a run of added strings (command/args) counts when it is still contiguous.

import { createHash } from 'node:crypto';
import { isObject, jsonEqual, obj, str, type JsonObject } from './json.js';
import { getValue } from './patch.js';
import { OverrideError, type AdditionGuard, type OverrideContext } from './overriders/context.js';

/** Digests of the additions the admission overrides made to the object's lists, comma-separated. */
export const ADDED_ANNOTATION = 'override.flotilla.io/added';
/** Written by earlier releases; an object carrying it (and no ADDED_ANNOTATION) is read as "all added". */
export const LEGACY_DIGEST_ANNOTATION = 'override.flotilla.io/admitted-digest';
/** At most this many additions are recorded for one object (13 bytes each in the annotation). */
export const MAX_ADDITIONS = 256;

const DIGEST = /^[0-9a-f]{12}$/;

/** Additions recorded on an object: digests, "all" for an object marked by an earlier release, or none. */
export type AdditionRecord = ReadonlySet<string> | 'all' | undefined;

/** Reads the record of an object (undefined: none). A malformed record is an error naming the annotation. */
export function readAdditions(o: unknown): AdditionRecord {
  const ann = obj(obj(isObject(o) ? o.metadata : undefined)?.annotations);
  if (!ann) return undefined;
  const value = Object.hasOwn(ann, ADDED_ANNOTATION) ? ann[ADDED_ANNOTATION] : undefined;
  if (value === undefined) return Object.hasOwn(ann, LEGACY_DIGEST_ANNOTATION) ? 'all' : undefined;
  const text = str(value);
  const parts = text === undefined || text === '' || text.length > MAX_ADDITIONS * 13 ? [] : text.split(',');
  if (
    text === undefined ||
    text.length > MAX_ADDITIONS * 13 ||
    parts.length > MAX_ADDITIONS ||
    !parts.every((p) => DIGEST.test(p))
  )
    throw new OverrideError(
      `metadata.annotations["${ADDED_ANNOTATION}"]: must be at most ${MAX_ADDITIONS} comma-separated 12-digit hex digests, as the admission override writes it`,
    );
  return new Set(parts);
}

/** Both records together (an UPDATE's object and oldObject). */
export function mergeAdditions(a: AdditionRecord, b: AdditionRecord): AdditionRecord {
  if (a === 'all' || b === 'all') return 'all';
  if (a === undefined) return b;
  if (b === undefined) return a;
  return new Set([...a, ...b]);
}

/** Writes the record of this admission on `o` (in place), or removes it when nothing was added. */
export function writeAdditions(o: JsonObject, digests: readonly string[]): void {
  const meta = obj(o.metadata);
  const ann = obj(meta?.annotations);
  if (ann && Object.hasOwn(ann, LEGACY_DIGEST_ANNOTATION)) delete ann[LEGACY_DIGEST_ANNOTATION];
  if (digests.length === 0) {
    if (ann && Object.hasOwn(ann, ADDED_ANNOTATION)) delete ann[ADDED_ANNOTATION];
    return;
  }
  const m = meta ?? (o.metadata = {});
  const a = ann ?? (m.annotations = {});
  a[ADDED_ANNOTATION] = [...digests].sort().join(',');
}

/**
 * The guard one admission applies its rules with: it tells the overriders which additions are already
 * there, and collects the digests of every addition the output holds.
 */
export class AdditionLedger implements AdditionGuard {
  private readonly made = new Set<string>();
  /** Copies of a run in a list that earlier rule items of this admission account for, by list and run. */
  private readonly claimed = new Map<string, number>();

  constructor(private readonly before: AdditionRecord) {}

  /** Digests of this admission's additions, for writeAdditions. */
  get digests(): string[] {
    return [...this.made];
  }

  shouldAdd(ctx: OverrideContext, overrider: string, site: string, values: readonly unknown[], list: unknown): boolean {
    const id = digestOf(ctx, overrider, site, values);
    if (!this.made.has(id)) {
      if (this.made.size >= MAX_ADDITIONS)
        throw new OverrideError(
          `${overrider}: more than ${MAX_ADDITIONS} additions to lists of one object; Flotilla cannot record which of them it made`,
        );
      this.made.add(id);
    }
    // Two items may add the same values to the same list: each needs its own copy there.
    const claim = `${site}\u0000${stableJson(values)}`;
    const claimed = this.claimed.get(claim) ?? 0;
    this.claimed.set(claim, claimed + 1);
    const known = this.before === 'all' || (this.before !== undefined && this.before.has(id));
    return !(known && Array.isArray(list) && countRuns(list, values, claimed + 1) > claimed);
  }
}

function digestOf(ctx: OverrideContext, overrider: string, site: string, values: readonly unknown[]): string {
  const p = ctx.source.policy;
  const key = [p.kind, p.namespace ?? '', p.name, String(ctx.source.rule ?? -1), overrider, site, stableJson(values)];
  return createHash('sha256').update(key.join('\u0000')).digest('hex').slice(0, 12);
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/**
 * The list at `pointer` (a concrete JSON pointer into `doc`) named so that reordering does not rename it:
 * every list item on the way that has a string `name` is named by it, others by their index.
 */
export function stableSite(doc: unknown, pointer: string): string {
  if (pointer === '') return '';
  let cur: unknown = doc;
  let out = '';
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) {
      const item: unknown = cur[Number(key)];
      const name = isObject(item) ? str(item.name) : undefined;
      out += name === undefined ? `/${key}` : `/[name=${JSON.stringify(name)}]`;
      cur = item;
    } else {
      out += `/${raw}`;
      cur = isObject(cur) && Object.hasOwn(cur, key) ? cur[key] : undefined;
    }
  }
  return out;
}

/** The list a `path` ending in a list position (`-` or an index) adds to, when there is one. */
export function insertionTarget(doc: unknown, path: string): { pointer: string; list: unknown[] } | undefined {
  const slash = path.lastIndexOf('/');
  const last = path.slice(slash + 1);
  if (slash < 0 || !(last === '-' || /^\d+$/.test(last))) return undefined;
  const got = getValue(doc, path.slice(0, slash));
  return got.found && Array.isArray(got.value) ? { pointer: got.pointer, list: got.value } : undefined;
}

/** How many times (up to `enough`) `values` appear in `list` one after the other, each matched by `holds`. */
function countRuns(list: readonly unknown[], values: readonly unknown[], enough: number): number {
  if (values.length === 0) return enough;
  let found = 0;
  for (let i = 0; i + values.length <= list.length && found < enough;) {
    let j = 0;
    while (j < values.length && holds(list[i + j], values[j])) j++;
    if (j === values.length) {
      found++;
      i += values.length;
    } else i++;
  }
  return found;
}

/** Whether a list item is still the value that was added: equal, grown by fields, or the same named item. */
function holds(item: unknown, added: unknown): boolean {
  if (jsonEqual(item, added)) return true;
  if (!isObject(item) || !isObject(added)) return false;
  const name = str(added.name);
  if (name !== undefined && str(item.name) === name) return true;
  return within(added, item, 0);
}

/** Every field of `a` is in `b` with the same value (objects recursively; lists item by item). */
function within(a: unknown, b: unknown, depth: number): boolean {
  if (depth > 64) return false;
  if (isObject(a) && isObject(b))
    return Object.keys(a).every((k) => Object.hasOwn(b, k) && within(a[k], b[k], depth + 1));
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => within(x, b[i], depth + 1));
  return jsonEqual(a, b);
}
