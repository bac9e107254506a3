// Assign (pkg/mutation/mutators/assign): writes a value (or the object's name or namespace) at a location
// outside metadata, for the kinds and operations `applyTo` names.

import { cloneJson, isObject, obj, setOwn, str, type JsonObject } from '../json.js';
import { MutationError } from './core.js';
import { checkKeyNotChanged, hasMetadataRoot, MutatorError, mutatorHead, readStart, type Mutator } from './mutator.js';
import type { PathNode } from './path.js';

export type AssignValue = { literal: unknown } | { fromMetadata: 'namespace' | 'name' };

/**
 * AssignField.Validate: exactly one of value, fromMetadata, externalData (a null is absent), and a known
 * fromMetadata field. externalData passes Gatekeeper's check but Flotilla calls no providers: refused.
 */
export function readAssignField(kind: string, name: string, assign: JsonObject): AssignValue {
  const present = (k: string) => Object.hasOwn(assign, k) && assign[k] !== null && assign[k] !== undefined;
  const set = ['value', 'fromMetadata', 'externalData'].filter(present);
  if (set.length === 0)
    throw new MutatorError(
      'assign must set one of `externalData`, `value` or `fromMetadata`: invalid assign field',
      'value',
    );
  if (set.length > 1)
    throw new MutatorError(
      'assign must only set one of `externalData`, `value` or `fromMetadata`: invalid assign field',
      'value',
    );
  if (present('fromMetadata')) {
    const field = str(obj(assign.fromMetadata)?.field) ?? '';
    if (field !== 'namespace' && field !== 'name')
      throw new MutatorError(
        `fromMetadata field ${JSON.stringify(field)} is not recognized: invalid fromMetadata field`,
        'value',
      );
    return { fromMetadata: field };
  }
  if (present('externalData'))
    throw new MutatorError(`Unsupported: Flotilla calls no external data providers (${kind} ${name})`, 'external-data');
  return { literal: assign.value };
}

export function valueFor(v: AssignValue, object: JsonObject): unknown {
  if ('literal' in v) return cloneJson(v.literal);
  const meta = obj(object.metadata);
  return str(meta?.[v.fromMetadata]) ?? '';
}

/**
 * The setter of Assign and AssignMetadata: the value (copied, or read from the object's metadata) set at
 * the location, once per call; `keyed` says what a keyed list gets.
 */
export function assignSetter(value: AssignValue, keyed: (v: unknown) => JsonObject): Mutator['setter'] {
  return (m) => {
    const v = valueFor(value, m.object);
    return { keyedListOkay: true, keyedListValue: () => keyed(v), setValue: (target, key) => setOwn(target, key, v) };
  };
}

/** validateObjectAssignedToList: a whole list item must be an object carrying the location's key value. */
function checkListValue(path: readonly PathNode[], value: unknown): void {
  const lastNode = path[path.length - 1] as PathNode;
  if (lastNode.type !== 'List') return;
  if (lastNode.glob) throw new MutatorError("can't append to a globbed list", 'keyed-value');
  if (!isObject(value))
    throw new MutatorError(
      `invalid value: ${JSON.stringify(value)}, only objects can be added to keyed lists`,
      'keyed-value',
    );
  // An integer key value never equals a value's number: Gatekeeper reads values as floats.
  if (typeof lastNode.keyValue !== 'string' || value[lastNode.keyField] !== lastNode.keyValue)
    throw new MutatorError(
      `adding object to list with different key ${lastNode.keyField}: list key ${String(lastNode.keyValue)}, object key ${JSON.stringify(value[lastNode.keyField]) ?? '<nil>'}`,
      'keyed-value',
    );
}

export function readAssign(o: JsonObject): Mutator {
  const start = readStart('Assign', o);
  const { name, path, params } = start;
  if (hasMetadataRoot(path))
    throw new MutatorError(`assign ${name} can't change metadata (use AssignMetadata)`, 'metadata');
  checkKeyNotChanged(path);
  const value = readAssignField('Assign', name, obj(params.assign) ?? {});
  if ('literal' in value) checkListValue(path, value.literal);
  if ((path[path.length - 1] as PathNode).type === 'List' && 'fromMetadata' in value)
    throw new MutatorError('cannot assign a metadata field to a list', 'from-metadata-list');
  return {
    ...mutatorHead('Assign', start),
    terminalType: 'Unknown',
    mustTerminate: false,
    ignored: Object.hasOwn(params, 'assignIf') ? ['spec.parameters.assignIf'] : [],
    setter: assignSetter(value, (v) => {
      if (!isObject(v)) throw new MutationError('assign.value for keyed list is not an object', 'keyed-list');
      return v;
    }),
  };
}
