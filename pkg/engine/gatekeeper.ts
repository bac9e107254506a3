// Gatekeeper's mutators (mutations.gatekeeper.sh Assign, AssignMetadata, ModifySet and AssignImage, v1,
// v1beta1 and v1alpha1), read unchanged and applied as Gatekeeper v3.23's mutation system applies them.
// The parts live in ./gatekeeper/, one module per concern of Gatekeeper's pkg/mutation:
//
// - path.ts      location syntax (path/token, path/parser)
// - tester.ts    pathTests (path/tester)
// - match.ts     applyTo and match (match/, pkg/wildcard)
// - core.ts      the walk and its writes (mutators/core)
// - assign.ts, assign-metadata.ts, modify-set.ts, assign-image.ts: each kind's checks and setter
// - schema.ts    conflicting schemas (schema/)
// - system.ts    order, repeated passes until nothing changes (system.go)
//
// Gatekeeper's own code is the referee: hack/gatekeeper/mutate runs it, and the differential test
// (test/gatekeeper/differential.test.ts) compares the two on generated mutators and objects.
//
// Where Flotilla differs on purpose: `assign.externalData` is refused (Flotilla calls no external data
// providers at admission), and `assignIf` (removed from Gatekeeper in v3.7; its CRDs prune it) is
// ignored with a warning, as in a cluster.

import { isObject } from './json.js';
import { readAssignImage } from './gatekeeper/assign-image.js';
import { readAssignMetadata } from './gatekeeper/assign-metadata.js';
import { readAssign } from './gatekeeper/assign.js';
import { readModifySet } from './gatekeeper/modify-set.js';
import {
  MUTATION_GROUP,
  MUTATION_VERSIONS,
  MUTATOR_KINDS,
  MutatorError,
  type Mutator,
  type MutatorReason,
} from './gatekeeper/mutator.js';
import type { JsonObject } from './json.js';

export { MUTATION_GROUP, MUTATION_VERSIONS, MUTATOR_KINDS, MutatorError, type Mutator, type MutatorReason };
export { MutationError, type MutationReason } from './gatekeeper/core.js';
export { MutationSystem, sortMutators } from './gatekeeper/system.js';
export { parsePath, PathError, type PathNode } from './gatekeeper/path.js';

/** True when the object is one of Gatekeeper's mutators (whatever it says inside). */
export function isMutator(o: unknown): boolean {
  if (!isObject(o) || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string') return false;
  const [group, version] = o.apiVersion.split('/');
  return group === MUTATION_GROUP && MUTATION_VERSIONS.includes(version ?? '') && o.kind !== '';
}

/** Reads one mutator as Gatekeeper's MutatorForX does; throws MutatorError with Gatekeeper's reason. */
export function readMutatorStrict(o: JsonObject): Mutator {
  switch (o.kind) {
    case 'Assign':
      return readAssign(o);
    case 'AssignMetadata':
      return readAssignMetadata(o);
    case 'ModifySet':
      return readModifySet(o);
    case 'AssignImage':
      return readAssignImage(o);
  }
  throw new MutatorError(
    `kind: Unsupported value: ${JSON.stringify(o.kind)}: supported values: ${MUTATOR_KINDS.map((k) => JSON.stringify(k)).join(', ')}`,
    'kind',
  );
}

const FIELD: Record<MutatorReason, string> = {
  kind: '',
  name: 'metadata.name',
  location: 'spec.location',
  'empty-location': 'spec.location',
  metadata: 'spec.location',
  'key-changed': 'spec.location',
  'metadata-location': 'spec.location',
  'list-terminal': 'spec.location',
  value: 'spec.parameters.assign',
  'keyed-value': 'spec.parameters.assign.value',
  'from-metadata-list': 'spec.parameters.assign.fromMetadata',
  'metadata-value': 'spec.parameters.assign.value',
  'path-test-location': 'spec.parameters.pathTests',
  'path-test-prefix': 'spec.parameters.pathTests',
  'path-test-conflict': 'spec.parameters.pathTests',
  'apply-to': 'spec.applyTo',
  'image-parameters': 'spec.parameters',
  'external-data': 'spec.parameters.assign.externalData',
};

/** Reads one mutator; a string is why it cannot be used, naming the field (Gatekeeper's reason after it). */
export function readMutator(o: JsonObject): Mutator | string {
  try {
    return readMutatorStrict(o);
  } catch (err: unknown) {
    if (!(err instanceof MutatorError)) throw err;
    const field = FIELD[err.reason];
    return field === '' ? err.message : `${field}: ${err.message}`;
  }
}
