// AssignMetadata (pkg/mutation/mutators/assignmeta): adds one label or annotation, never changing one that
// is there (its path test is MustNotExist on the key); every kind, every operation.

import { obj, type JsonObject } from '../json.js';
import { assignSetter, readAssignField } from './assign.js';
import { MutatorError, readStart, type Mutator } from './mutator.js';
import { newTester } from './tester.js';

export function readAssignMetadata(o: JsonObject): Mutator {
  const { name, spec, params, location, path } = readStart('AssignMetadata', o);
  const [a, b, c] = path;
  if (
    path.length !== 3 ||
    a?.type !== 'Object' ||
    b?.type !== 'Object' ||
    c?.type !== 'Object' ||
    a.ref !== 'metadata' ||
    (b.ref !== 'labels' && b.ref !== 'annotations')
  )
    throw new MutatorError(
      `invalid location for assignmetadata ${name}: ${location} (only metadata.labels.<key> or metadata.annotations.<key>)`,
      'metadata-location',
    );
  const value = readAssignField('AssignMetadata', name, obj(params.assign) ?? {});
  if ('literal' in value && typeof value.literal !== 'string')
    throw new MutatorError(
      `spec.parameters.assign.value field must be a string for AssignMetadata ${JSON.stringify(name)}`,
      'metadata-value',
    );
  return {
    kind: 'AssignMetadata',
    name,
    id: `AssignMetadata/${name}`,
    location,
    path,
    tester: newTester(path, [{ subPath: location, condition: 'MustNotExist' }]),
    applyTo: undefined,
    match: obj(spec.match) ?? {},
    terminalType: undefined,
    mustTerminate: false,
    ignored: Object.hasOwn(params, 'assignIf') ? ['spec.parameters.assignIf'] : [],
    setter: assignSetter(value, () => {
      throw new MutatorError('unreachable: AssignMetadata locations have no list', 'metadata-location');
    }),
  };
}
