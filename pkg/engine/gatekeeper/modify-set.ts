// ModifySet (pkg/mutation/mutators/modifyset): treats a list as a set, adding (merge) or removing (prune)
// the values listed, compared as whole JSON values.

import { arr, cloneJson, jsonEqual, obj, setOwn, str, type JsonObject } from '../json.js';
import { MutationError } from './core.js';
import { hasMetadataRoot, MutatorError, mutatorHead, readStart, type Mutator } from './mutator.js';

export function readModifySet(o: JsonObject): Mutator {
  const start = readStart('ModifySet', o);
  const { name, path, params } = start;
  if (hasMetadataRoot(path)) throw new MutatorError(`modifyset ${name} can't change metadata`, 'metadata');
  if (path.length > 0 && path[path.length - 1]?.type === 'List')
    throw new MutatorError('final node in a modifyset location cannot be a keyed list', 'list-terminal');
  const head = mutatorHead('ModifySet', start);
  // The CRD defaults operation to merge; a ModifySet without values.fromList has an empty set.
  const operation = str(params.operation) ?? 'merge';
  const fromList = arr(obj(params.values)?.fromList) ?? [];
  return {
    ...head,
    terminalType: 'Set',
    mustTerminate: false,
    ignored: [],
    setter() {
      const values = cloneJson(fromList);
      return {
        keyedListOkay: false,
        keyedListValue() {
          throw new MutationError('modifyset does not handle keyed lists', 'keyed-list');
        },
        setValue(target: JsonObject, key: string) {
          const has = Object.hasOwn(target, key);
          if (operation !== 'merge' && operation !== 'prune')
            throw new MutationError(`unrecognized operation for modifyset: ${operation}`, 'not-a-set');
          if (!has) {
            if (operation === 'merge') setOwn(target, key, cloneJson(values));
            return;
          }
          const current = target[key];
          if (!Array.isArray(current))
            throw new MutationError(
              `${JSON.stringify(current)} is not a list of values, cannot treat it as a set`,
              'not-a-set',
            );
          if (operation === 'merge') {
            const out = current.slice();
            for (const v of values) if (!out.some((e) => jsonEqual(v, e))) out.push(v);
            setOwn(target, key, out);
          } else
            setOwn(
              target,
              key,
              current.filter((e) => !values.some((v) => jsonEqual(v, e))),
            );
        },
      };
    },
  };
}
