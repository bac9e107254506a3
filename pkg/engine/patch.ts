// JSON patch (RFC 6902 add/remove/replace) over paths with keyed list segments (api/path). Semantics follow
// evanphx/json-patch v5 with Karmada's options: `add` needs the parent to exist, `replace` and `remove` need
// the target to exist, negative array indices count from the end, `-` appends.
//
// Keyed segments: `[field=value]` selects the FIRST element of the list whose `field`, as a string, equals
// `value`. As the last segment of an `add`, an unmatched selector appends the value and a matched one
// replaces that element (add = upsert); `replace` and `remove` need a match.
//
// Every written value is a deep copy, so the result never shares structure with a policy.

import { formatPath, GLOB, isGlob, parsePath, type PathSegment } from '../../api/path/index.js';
import { cloneJson, isObject, setOwn, type JsonObject } from './json.js';
import { errorClass } from '../../api/internal/errors.js';

export class PatchError extends errorClass('PatchError', 'PATCH') {}

export interface PatchOperation {
  op: string;
  path: string;
  value?: unknown;
}

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

function arrayIndex(key: string, length: number, forInsert: boolean): number | undefined {
  if (!/^-?\d+$/.test(key)) return undefined;
  let i = Number(key);
  const limit = forInsert ? length + 1 : length;
  if (i < 0) {
    if (-i > length) return undefined;
    i += length;
  }
  return i < limit ? i : undefined;
}

function findKeyed(list: unknown[], field: string, value: string): number {
  for (let i = 0; i < list.length; i++) {
    const el = list[i];
    if (isObject(el) && hasOwn(el, field)) {
      const v = el[field];
      if ((typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') && String(v) === value) return i;
    }
  }
  return -1;
}

interface Located {
  /** The container holding the target (object or array), or undefined when the path is the root. */
  parent: JsonObject | unknown[] | undefined;
  last: PathSegment | undefined;
  /** Concrete pointer of the parent (selectors resolved). */
  parentPointer: string;
}

export function escapeKey(k: string): string {
  if (!k.includes('~') && !k.includes('/')) return k;
  return k.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Walks to the parent of the last segment; throws PatchError("…missing…") when it does not exist. */
function locate(doc: unknown, segments: readonly PathSegment[], describe: () => string): Located {
  if (segments.length === 0) return { parent: undefined, last: undefined, parentPointer: '' };
  let cur: unknown = doc;
  let pointer = '';
  for (let s = 0; s < segments.length - 1; s++) {
    const seg = segments[s] as PathSegment;
    if ('key' in seg) {
      if (Array.isArray(cur)) {
        const i = arrayIndex(seg.key, cur.length, false);
        if (i === undefined)
          throw new PatchError(`${describe()}: index ${seg.key} is out of range or not a number at ${pointer || '/'}`);
        cur = cur[i];
        pointer += `/${i}`;
      } else if (isObject(cur)) {
        if (!hasOwn(cur, seg.key))
          throw new PatchError(`${describe()}: ${pointer}/${escapeKey(seg.key)} does not exist`);
        cur = cur[seg.key];
        pointer += `/${escapeKey(seg.key)}`;
      } else {
        throw new PatchError(`${describe()}: ${pointer || '/'} is not an object or a list`);
      }
    } else {
      if (!Array.isArray(cur))
        throw new PatchError(
          `${describe()}: ${pointer || '/'} is not a list, so [${seg.match.field}=${seg.match.value}] selects nothing`,
        );
      const i = findKeyed(cur, seg.match.field, seg.match.value);
      if (i < 0)
        throw new PatchError(`${describe()}: no item of ${pointer || '/'} has ${seg.match.field}=${seg.match.value}`);
      cur = cur[i];
      pointer += `/${i}`;
    }
  }
  if (!isObject(cur) && !Array.isArray(cur)) {
    throw new PatchError(`${describe()}: ${pointer || '/'} does not exist or is not an object or a list`);
  }
  return { parent: cur, last: segments[segments.length - 1], parentPointer: pointer };
}

/**
 * Applies one operation to `doc` in place and returns the (possibly new, for path "") root and the concrete
 * pointer written. Throws PatchError naming the operation and path.
 */
export function applyOperation(doc: unknown, operation: PatchOperation): { doc: unknown; pointer: string } {
  const { op, path } = operation;
  if (op !== 'add' && op !== 'replace' && op !== 'remove') throw new PatchError(`Unexpected kind: ${op}`);
  const segments = parsePath(path);
  const missing = () =>
    op === 'replace'
      ? `replace operation does not apply: doc is missing key: ${path}`
      : `${op} operation does not apply: doc is missing path: ${JSON.stringify(path)}`;
  const { parent, last, parentPointer } = locate(doc, segments, missing);
  const value = operation.value === undefined ? null : operation.value;
  if (parent === undefined || last === undefined) {
    if (op === 'remove') throw new PatchError('remove operation does not apply: cannot remove the whole document');
    return { doc: cloneJson(value), pointer: '' };
  }
  if (Array.isArray(parent)) {
    let index: number;
    if ('match' in last) {
      index = findKeyed(parent, last.match.field, last.match.value);
      if (index < 0) {
        if (op !== 'add')
          throw new PatchError(
            `${missing()}: no item of ${parentPointer || '/'} has ${last.match.field}=${last.match.value}`,
          );
        parent.push(cloneJson(value));
        return { doc, pointer: `${parentPointer}/${parent.length - 1}` };
      }
      if (op === 'remove') parent.splice(index, 1);
      else parent[index] = cloneJson(value);
      return { doc, pointer: `${parentPointer}/${index}` };
    }
    if (op === 'add' && last.key === '-') {
      parent.push(cloneJson(value));
      return { doc, pointer: `${parentPointer}/${parent.length - 1}` };
    }
    const i = arrayIndex(last.key, parent.length, op === 'add');
    if (i === undefined) throw new PatchError(`${missing()}: index ${last.key} is out of range or not a number`);
    if (op === 'add') parent.splice(i, 0, cloneJson(value));
    else if (op === 'replace') parent[i] = cloneJson(value);
    else parent.splice(i, 1);
    return { doc, pointer: `${parentPointer}/${i}` };
  }
  if ('match' in last) throw new PatchError(`${missing()}: ${parentPointer || '/'} is not a list`);
  const key = last.key;
  const pointer = `${parentPointer}/${escapeKey(key)}`;
  if (op === 'add') {
    setOwn(parent, key, cloneJson(value));
  } else {
    if (!hasOwn(parent, key)) throw new PatchError(`${missing()}: missing value`);
    if (op === 'replace') setOwn(parent, key, cloneJson(value));
    else delete parent[key];
  }
  return { doc, pointer };
}

/** Reads the value at a path; `found: false` when any segment is missing. Never throws for a missing path. */
export function getValue(doc: unknown, path: string): { found: boolean; value?: unknown; pointer: string } {
  const segments = parsePath(path);
  let cur: unknown = doc;
  let pointer = '';
  for (const seg of segments) {
    if ('key' in seg) {
      if (Array.isArray(cur)) {
        const i = arrayIndex(seg.key, cur.length, false);
        if (i === undefined) return { found: false, pointer };
        cur = cur[i];
        pointer += `/${i}`;
      } else if (isObject(cur) && hasOwn(cur, seg.key)) {
        cur = cur[seg.key];
        pointer += `/${escapeKey(seg.key)}`;
      } else {
        return { found: false, pointer };
      }
    } else {
      if (!Array.isArray(cur)) return { found: false, pointer };
      const i = findKeyed(cur, seg.match.field, seg.match.value);
      if (i < 0) return { found: false, pointer };
      cur = cur[i];
      pointer += `/${i}`;
    }
  }
  return { found: true, value: cur, pointer };
}

/**
 * The concrete paths a path with `[field=*]` segments stands for in `doc`: one per list item that has the
 * field, each glob replaced by the item's index, in document order. Items that lack the field, and
 * branches whose prefix does not exist, give nothing. A path without globs is returned as it is. The
 * count is bounded by the number of list items in `doc`.
 */
export function expandGlobs(doc: unknown, path: string): string[] {
  const segments = parsePath(path);
  let lastGlob = -1;
  segments.forEach((s, i) => {
    if (isGlob(s)) lastGlob = i;
  });
  if (lastGlob < 0) return [path];
  const out: string[] = [];
  const walk = (cur: unknown, i: number, prefix: PathSegment[]): void => {
    if (i > lastGlob) {
      out.push(formatPath([...prefix, ...segments.slice(i)]));
      return;
    }
    const seg = segments[i] as PathSegment;
    if ('match' in seg) {
      if (!Array.isArray(cur)) return;
      if (seg.match.value === GLOB) {
        cur.forEach((el, k) => {
          if (isObject(el) && hasOwn(el, seg.match.field)) walk(el, i + 1, [...prefix, { key: String(k) }]);
        });
        return;
      }
      const k = findKeyed(cur, seg.match.field, seg.match.value);
      if (k >= 0) walk(cur[k], i + 1, [...prefix, seg]);
      return;
    }
    if (Array.isArray(cur)) {
      const k = arrayIndex(seg.key, cur.length, false);
      if (k !== undefined) walk(cur[k], i + 1, [...prefix, seg]);
    } else if (isObject(cur) && hasOwn(cur, seg.key)) {
      walk(cur[seg.key], i + 1, [...prefix, seg]);
    }
  };
  walk(doc, 0, []);
  return out;
}

/**
 * Whether every test holds for the concrete `path` (globs already expanded): each test's subPath, a
 * prefix of the path as written, is read at the same depth of the concrete path. MustExist needs a value
 * there, MustNotExist needs none.
 */
export function pathTestsHold(
  doc: unknown,
  path: string,
  tests: ReadonlyArray<{ subPath: string; condition: string }>,
): boolean {
  if (tests.length === 0) return true;
  const concrete = parsePath(path);
  for (const t of tests) {
    const depth = parsePath(t.subPath).length;
    const found = getValue(doc, formatPath(concrete.slice(0, depth))).found;
    if (t.condition === 'MustExist' ? !found : t.condition === 'MustNotExist' ? found : true) return false;
  }
  return true;
}
