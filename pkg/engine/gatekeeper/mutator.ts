// What the four mutator kinds share: the reading of name, location, pathTests, applyTo and match with
// Gatekeeper's refusals (and its reasons), and the shape the system applies.

import { arr, isObject, obj, str, type JsonObject } from '../json.js';
import type { ChangeNote, Setter } from './core.js';
import { applyToProblem, appliesTo, matches, readApplyTo, type ApplyTo, type Mutable } from './match.js';
import { parsePath, PathError, type PathNode } from './path.js';
import { newTester, TesterError, type Tester } from './tester.js';

export const MUTATION_GROUP = 'mutations.gatekeeper.sh';
export const MUTATION_VERSIONS: readonly string[] = ['v1', 'v1beta1', 'v1alpha1'];
export const MUTATOR_KINDS: readonly string[] = ['Assign', 'AssignImage', 'AssignMetadata', 'ModifySet'];

/** Why Gatekeeper refuses a mutator (MutatorForX), as a stable name; the message says it in words. */
export type MutatorReason =
  | 'kind'
  | 'name'
  | 'location'
  | 'empty-location'
  | 'metadata'
  | 'key-changed'
  | 'value'
  | 'keyed-value'
  | 'from-metadata-list'
  | 'path-test-location'
  | 'path-test-prefix'
  | 'path-test-conflict'
  | 'apply-to'
  | 'metadata-location'
  | 'metadata-value'
  | 'list-terminal'
  | 'image-parameters'
  | 'external-data';

export class MutatorError extends Error {
  readonly code = 'MUTATOR';
  constructor(
    message: string,
    readonly reason: MutatorReason,
  ) {
    super(message);
    this.name = 'MutatorError';
  }
}

/** Schema terminal types (pkg/mutation/schema): what the last key of a location holds. */
export type TerminalType = 'Unknown' | 'Set' | 'String';

export interface Mutator {
  kind: 'Assign' | 'AssignMetadata' | 'ModifySet' | 'AssignImage';
  name: string;
  /** `Kind/name`, as messages and provenance name it. */
  id: string;
  location: string;
  path: readonly PathNode[];
  tester: Tester;
  /** Absent for AssignMetadata (every kind, every operation). */
  applyTo: readonly ApplyTo[] | undefined;
  match: JsonObject;
  /** Absent for AssignMetadata, which Gatekeeper keeps out of its schema checks. */
  terminalType: TerminalType | undefined;
  mustTerminate: boolean;
  /** What the mutator carries that Gatekeeper ignores (e.g. assignIf), to warn about. */
  ignored: readonly string[];
  /** The setter for one call on this object (values are copied once per call). */
  setter(m: Mutable, note?: ChangeNote): Setter;
}

export function mutatorMatches(mu: Mutator, m: Mutable): boolean {
  if (mu.applyTo !== undefined && !appliesTo(mu.applyTo, m)) return false;
  return matches(mu.match, m);
}

/** What every mutator reads first: its name, spec, parameters and location. */
export interface MutatorStart {
  name: string;
  spec: JsonObject;
  /** `spec.parameters`; `{}` when absent. */
  params: JsonObject;
  location: string;
  path: PathNode[];
}

/**
 * The name (≤ 63 characters, as core.ValidateName), then the location, read from a mutator of `kind`;
 * refused in that order, as each of Gatekeeper's MutatorFor functions refuses them.
 */
export function readStart(kind: Mutator['kind'], o: JsonObject): MutatorStart {
  const name = str(obj(o.metadata)?.name) ?? '';
  if (name.length > 63) throw new MutatorError('maximum name length is 63 characters', 'name');
  const spec = obj(o.spec) ?? {};
  const { location, path } = readLocation(kind, name, spec);
  return { name, spec, params: obj(spec.parameters) ?? {}, location, path };
}

/** The fields of a Mutator that are not the kind's own. */
export type MutatorHead<K extends Mutator['kind']> = Pick<
  Mutator,
  'name' | 'id' | 'location' | 'path' | 'tester' | 'applyTo' | 'match'
> & { kind: K };

/**
 * The head of an Assign, AssignImage or ModifySet: after the kind's own checks, the path tests and then
 * applyTo are read, refused in that order as Gatekeeper's MutatorFor functions refuse them.
 */
export function mutatorHead<K extends Exclude<Mutator['kind'], 'AssignMetadata'>>(
  kind: K,
  s: MutatorStart,
): MutatorHead<K> {
  const tester = readTester(s.path, s.params);
  const applyTo = readBindings(kind, s.name, s.spec);
  return {
    kind,
    name: s.name,
    id: `${kind}/${s.name}`,
    location: s.location,
    path: s.path,
    tester,
    applyTo,
    match: obj(s.spec.match) ?? {},
  };
}

function readLocation(kind: string, name: string, spec: JsonObject): { location: string; path: PathNode[] } {
  const location = str(spec.location) ?? '';
  try {
    return { location, path: parsePath(location) };
  } catch (err: unknown) {
    if (!(err instanceof PathError)) throw err;
    throw new MutatorError(
      `invalid location format ${JSON.stringify(location)} for ${kind} ${name}: ${err.message}`,
      'location',
    );
  }
}

export function hasMetadataRoot(path: readonly PathNode[]): boolean {
  const first = path[0];
  return first !== undefined && first.type === 'Object' && first.ref === 'metadata';
}

/** core.CheckKeyNotChanged: a location may not end on the key field of the list item it is in. */
export function checkKeyNotChanged(path: readonly PathNode[]): void {
  if (path.length === 0) throw new MutatorError('empty path', 'empty-location');
  if (path.length < 2) return;
  const lastNode = path[path.length - 1] as PathNode;
  const list = path[path.length - 2] as PathNode;
  if (list.type !== 'List') return;
  if (lastNode.type === 'Object' && lastNode.ref === list.keyField)
    throw new MutatorError('invalid path format: changing the item key is not allowed', 'key-changed');
}

function readTester(path: readonly PathNode[], params: JsonObject): Tester {
  const raw = (arr(params.pathTests) ?? []).map((t) => {
    const o = isObject(t) ? t : {};
    return { subPath: str(o.subPath) ?? '', condition: str(o.condition) ?? '' };
  });
  try {
    return newTester(path, raw);
  } catch (err: unknown) {
    if (!(err instanceof TesterError)) throw err;
    throw new MutatorError(err.message, err.reason);
  }
}

function readBindings(kind: string, name: string, spec: JsonObject): ApplyTo[] {
  const applyTo = readApplyTo(spec.applyTo);
  const why = applyToProblem(kind, name, applyTo);
  if (why !== undefined) throw new MutatorError(why, 'apply-to');
  return applyTo;
}
