// The walk every mutator shares (Gatekeeper's pkg/mutation/mutators/core/mutation_function.go): follow the
// location through the object, judging the path tests at each depth, creating what is missing on the way
// (objects, lists, and the list item `{keyField: keyValue}` a non-glob list segment names), and let the
// mutator's setter write the last key. A glob visits every item of the list; a non-glob segment every item
// whose key field equals the key value. A part of the object whose type differs from what the location
// says (a list where it names a key) fails the whole mutation, as in Gatekeeper.
//
// Values are written by reference (one copy per mutator call, shared by every place a glob reaches) and
// lists are replaced, never changed in place, as Gatekeeper's Go maps and slices behave.

import { isObject, jsonEqual, setOwn, type JsonObject } from '../json.js';
import { keyEquals, type PathNode } from './path.js';
import type { Tester } from './tester.js';

export type MutationReason =
  | 'type-mismatch'
  | 'key-changed'
  | 'not-a-set'
  | 'not-a-string'
  | 'keyed-list'
  | 'empty-location'
  | 'not-converging'
  | 'match';

/** Applying a mutator failed on this object; Gatekeeper then admits nothing of the mutation. */
export class MutationError extends Error {
  constructor(
    message: string,
    readonly reason: MutationReason,
  ) {
    super(message);
    this.name = 'MutationError';
  }
}

export interface Setter {
  /** Writes `obj[key]`; throws MutationError. */
  setValue(obj: JsonObject, key: string): void;
  /** Whether the mutator can write a whole list item (Assign only). */
  readonly keyedListOkay: boolean;
  /** The item a keyed-list location writes. */
  keyedListValue(): JsonObject;
}

/** Where a write happened, for `--explain`-style provenance: a JSON pointer and whether the key was new. */
export type ChangeNote = (pointer: string, op: 'add' | 'replace') => void;

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);
const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');

function typeName(v: unknown): string {
  if (v === null) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  if (isObject(v)) return 'map[string]interface {}';
  return typeof v;
}

/** Runs one mutator's walk over `root` (changed in place); true when the setter ran. */
export function mutatePath(
  path: readonly PathNode[],
  tester: Tester,
  setter: Setter,
  root: JsonObject,
  note?: ChangeNote,
): boolean {
  if (path.length === 0) throw new MutationError('attempting to mutate an empty target location', 'empty-location');
  const last = path.length - 1;

  const createMissing = (depth: number): unknown => {
    const here = path[depth] as PathNode;
    const next = path[depth + 1] as PathNode;
    const created: unknown = next.type === 'Object' ? {} : [];
    if (here.type === 'List') {
      if (!isObject(created)) throw new MutationError('two consecutive list path entries not allowed', 'type-mismatch');
      setOwn(created, here.keyField, here.keyValue);
    }
    return created;
  };

  const walk = (current: unknown, depth: number, pointer: string): { mutated: boolean; value: unknown } => {
    const node = path[depth] as PathNode;
    if (node.type === 'Object') {
      if (!isObject(current))
        throw new MutationError(
          `mismatch between path entry (type: object) and received object (type: ${typeName(current)}) at ${pointer || '/'}`,
          'type-mismatch',
        );
      const exists = hasOwn(current, node.ref);
      if (exists ? !tester.existsOkay(depth) : !tester.missingOkay(depth)) return { mutated: false, value: undefined };
      const at = `${pointer}/${esc(node.ref)}`;
      if (depth === last) {
        const before = exists ? current[node.ref] : undefined;
        setter.setValue(current, node.ref);
        if (note && (!exists || !jsonEqual(before, current[node.ref]))) note(at, exists ? 'replace' : 'add');
        return { mutated: true, value: current };
      }
      const next = exists ? current[node.ref] : createMissing(depth);
      const r = walk(next, depth + 1, at);
      if (r.mutated) setOwn(current, node.ref, r.value);
      return { mutated: r.mutated, value: current };
    }

    if (!Array.isArray(current))
      throw new MutationError(
        `mismatch between path entry (type: List) and received object (type: ${typeName(current)}) at ${pointer || '/'}`,
        'type-mismatch',
      );
    const copy = current.slice();
    if (depth === last) {
      if (!setter.keyedListOkay) throw new MutationError('mutator does not understand keyed lists', 'keyed-list');
      return setListItem(copy, node, depth, pointer);
    }
    if (node.glob && !tester.existsOkay(depth)) return { mutated: false, value: undefined };
    let mutated = false;
    let found = false;
    for (const [i, item] of copy.entries()) {
      if (node.glob) {
        mutated = walk(item, depth + 1, `${pointer}/${i}`).mutated || mutated;
        found = true;
      } else if (isObject(item) && hasOwn(item, node.keyField) && keyEquals(node.keyValue, item[node.keyField])) {
        if (!tester.existsOkay(depth)) return { mutated: false, value: undefined };
        mutated = walk(item, depth + 1, `${pointer}/${i}`).mutated || mutated;
        found = true;
      }
    }
    if (!node.glob && !found) {
      if (!tester.missingOkay(depth)) return { mutated: false, value: undefined };
      const created = createMissing(depth);
      copy.push(created);
      mutated = walk(created, depth + 1, `${pointer}/${copy.length - 1}`).mutated || mutated;
    }
    return { mutated, value: copy };
  };

  const setListItem = (
    list: unknown[],
    node: Extract<PathNode, { type: 'List' }>,
    depth: number,
    pointer: string,
  ): { mutated: boolean; value: unknown } => {
    if (node.glob) throw new MutationError('last path entry can not be globbed', 'keyed-list');
    const value = setter.keyedListValue();
    for (const [i, item] of list.entries()) {
      if (!isObject(item))
        throw new MutationError(
          `cast error, unable to cast ${typeName(item)} to map[string]interface{}`,
          'type-mismatch',
        );
      if (hasOwn(item, node.keyField) && keyEquals(node.keyValue, item[node.keyField])) {
        if (!hasOwn(value, node.keyField) || !keyEquals(node.keyValue, value[node.keyField]))
          throw new MutationError('key value of replaced object must not change', 'key-changed');
        if (!tester.existsOkay(depth)) return { mutated: false, value: undefined };
        if (note && !jsonEqual(item, value)) note(`${pointer}/${i}`, 'replace');
        list[i] = value;
        return { mutated: true, value: list };
      }
    }
    if (!tester.missingOkay(depth)) return { mutated: false, value: undefined };
    note?.(`${pointer}/${list.length}`, 'add');
    list.push(value);
    return { mutated: true, value: list };
  };

  return walk(root, 0, '').mutated;
}
