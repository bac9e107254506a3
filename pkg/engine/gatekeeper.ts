// Gatekeeper's mutators (mutations.gatekeeper.sh Assign and AssignMetadata, v1, v1beta1 and v1alpha1),
// read unchanged and applied with Gatekeeper's documented semantics:
//
// - `location` is Gatekeeper's path: dot-separated keys, `"quoted.keys"`, and list segments
//   `[field: value]` / `[field: *]`. Assign creates what is missing on the way (objects, lists, and the
//   list item `{field: value}` a literal list segment names); a glob visits every item that has the field
//   and creates nothing. AssignMetadata sets `metadata.labels.<key>` / `metadata.annotations.<key>` only
//   when the key is absent.
// - `parameters.assign.value` or `.fromMetadata.field` (`namespace` / `name`); `parameters.pathTests`
//   (`MustExist` / `MustNotExist` on a prefix of the location, per list item under a glob);
//   `parameters.assignIf` (`in` / `notIn` on the current value).
// - `applyTo` (groups, versions, kinds: exact) for Assign; `match` (kinds, scope, namespaces and
//   excludedNamespaces with `prefix*` / `*suffix` globs, name, labelSelector, namespaceSelector).
// - Mutators apply in the order Gatekeeper sorts them: by kind, then namespace, then name.
//
// Not supported, refused with a message when read: `assign.externalData` (Flotilla calls no external
// providers at admission), and ModifySet / AssignImage (not read yet).

import { isSegmentPrefix, type PathSegment } from '../../api/path/index.js';
import { arr, isObject, obj, setOwn, str, stringList, stringMap, type JsonObject } from './json.js';
import { matchLabelSelector } from './selectors.js';
import type { Change } from './types.js';

export const MUTATION_GROUP = 'mutations.gatekeeper.sh';
export const MUTATION_VERSIONS: readonly string[] = ['v1', 'v1beta1', 'v1alpha1'];
export const MUTATOR_KINDS: readonly string[] = ['Assign', 'AssignMetadata'];

export class MutatorError extends Error {
  readonly code = 'MUTATOR';
  constructor(message: string) {
    super(message);
    this.name = 'MutatorError';
  }
}

export interface Mutator {
  kind: 'Assign' | 'AssignMetadata';
  name: string;
  /** `Assign/name`, as messages and provenance name it. */
  id: string;
  location: string;
  segments: readonly PathSegment[];
  applyTo: ReadonlyArray<{ groups: string[]; versions: string[]; kinds: string[] }>;
  match: JsonObject;
  value: { literal: unknown } | { fromMetadata: 'namespace' | 'name' };
  pathTests: ReadonlyArray<{ subPath: readonly PathSegment[]; condition: string }>;
  assignIf: { in?: unknown[]; notIn?: unknown[] } | undefined;
}

/** True when the object is one of Gatekeeper's mutators (whatever it says inside). */
export function isMutator(o: unknown): boolean {
  if (!isObject(o) || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string') return false;
  const [group, version] = o.apiVersion.split('/');
  return group === MUTATION_GROUP && MUTATION_VERSIONS.includes(version ?? '') && o.kind !== '';
}

/** Parses Gatekeeper's location syntax; throws MutatorError naming the problem. */
export function parseLocation(location: string): PathSegment[] {
  const out: PathSegment[] = [];
  let i = 0;
  const n = location.length;
  const fail = (why: string): never => {
    throw new MutatorError(`location ${JSON.stringify(location)}: ${why}`);
  };
  const readQuoted = (): string => {
    let s = '';
    i++;
    while (i < n && location[i] !== '"') {
      if (location[i] === '\\' && i + 1 < n) i++;
      s += location[i];
      i++;
    }
    if (i >= n) fail('unterminated quote');
    i++;
    return s;
  };
  while (i < n) {
    let key: string;
    if (location[i] === '"') key = readQuoted();
    else {
      const start = i;
      while (i < n && location[i] !== '.' && location[i] !== '[') i++;
      key = location.slice(start, i);
    }
    if (key === '') fail(`empty key at position ${i}`);
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') fail(`the key ${key} is not allowed`);
    out.push({ key });
    if (location[i] === '[') {
      const close = location.indexOf(']', i);
      if (close < 0) fail('unterminated [');
      const inner = location.slice(i + 1, close);
      const colon = inner.indexOf(':');
      if (colon < 0) fail(`list segment [${inner}] must read [field: value]`);
      const field = inner.slice(0, colon).trim();
      let value = inner.slice(colon + 1).trim();
      if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
      if (field === '' || value === '') fail(`list segment [${inner}] must read [field: value]`);
      out.push({ match: { field, value } });
      i = close + 1;
    }
    if (i < n) {
      if (location[i] !== '.') fail(`expected "." at position ${i}`);
      i++;
      if (i >= n) fail('ends with "."');
    }
  }
  if (out.length === 0) fail('is empty');
  return out;
}

/** Reads one mutator; a string is why it cannot be used (naming the field). */
export function readMutator(o: JsonObject): Mutator | string {
  const kind = str(o.kind) ?? '';
  const name = str(obj(o.metadata)?.name) ?? '';
  if (kind !== 'Assign' && kind !== 'AssignMetadata')
    return `kind: Unsupported value: ${JSON.stringify(kind)}: supported values: "Assign", "AssignMetadata"`;
  const spec = obj(o.spec);
  if (!spec) return 'spec: Required value';
  const location = str(spec.location);
  if (!location) return 'spec.location: Required value';
  let segments: PathSegment[];
  try {
    segments = parseLocation(location);
  } catch (err: unknown) {
    return `spec.location: ${(err as Error).message}`;
  }
  const params = obj(spec.parameters) ?? {};
  const assign = obj(params.assign);
  if (!assign) return 'spec.parameters.assign: Required value';
  if (Object.hasOwn(assign, 'externalData'))
    return 'spec.parameters.assign.externalData: Unsupported: Flotilla calls no external data providers';
  let value: Mutator['value'];
  const from = obj(assign.fromMetadata);
  if (from) {
    const field = str(from.field);
    if (field !== 'namespace' && field !== 'name')
      return `spec.parameters.assign.fromMetadata.field: Unsupported value: ${JSON.stringify(from.field)}: supported values: "namespace", "name"`;
    value = { fromMetadata: field };
  } else if (Object.hasOwn(assign, 'value')) value = { literal: assign.value };
  else return 'spec.parameters.assign: one of value, fromMetadata is required';

  if (kind === 'AssignMetadata') {
    const first = segments[0];
    const second = segments[1];
    if (
      segments.length !== 3 ||
      !first ||
      !('key' in first) ||
      first.key !== 'metadata' ||
      !second ||
      !('key' in second) ||
      (second.key !== 'labels' && second.key !== 'annotations') ||
      !('key' in (segments[2] as PathSegment))
    )
      return 'spec.location: AssignMetadata can only set metadata.labels.<key> or metadata.annotations.<key>';
    if ('literal' in value && typeof value.literal !== 'string')
      return 'spec.parameters.assign.value: Invalid value: labels and annotations take a string';
  } else {
    const first = segments[0];
    if (first && 'key' in first && first.key === 'metadata') {
      const second = segments[1];
      if (!second || !('key' in second) || (second.key !== 'labels' && second.key !== 'annotations'))
        return 'spec.location: Assign cannot change metadata other than labels and annotations (use AssignMetadata)';
    }
  }

  const pathTests: Array<{ subPath: readonly PathSegment[]; condition: string }> = [];
  for (const [i, t] of (arr(params.pathTests) ?? []).entries()) {
    if (!isObject(t)) return `spec.parameters.pathTests[${i}]: must be an object`;
    const condition = str(t.condition);
    if (condition !== 'MustExist' && condition !== 'MustNotExist')
      return `spec.parameters.pathTests[${i}].condition: Unsupported value: ${JSON.stringify(t.condition)}: supported values: "MustExist", "MustNotExist"`;
    let sub: PathSegment[];
    try {
      sub = parseLocation(str(t.subPath) ?? '');
    } catch (err: unknown) {
      return `spec.parameters.pathTests[${i}].subPath: ${(err as Error).message}`;
    }
    if (!isSegmentPrefix(sub, segments))
      return `spec.parameters.pathTests[${i}].subPath: Invalid value: must be a prefix of spec.location`;
    pathTests.push({ subPath: sub, condition });
  }
  const assignIf = obj(params.assignIf);
  const applyTo = (arr(spec.applyTo) ?? []).filter(isObject).map((a) => ({
    groups: stringList(a.groups),
    versions: stringList(a.versions),
    kinds: stringList(a.kinds),
  }));
  if (kind === 'Assign' && applyTo.length === 0) return 'spec.applyTo: Required value';
  return {
    kind,
    name,
    id: `${kind}/${name}`,
    location,
    segments,
    applyTo,
    match: obj(spec.match) ?? {},
    value,
    pathTests,
    assignIf: assignIf ? { in: arr(assignIf.in), notIn: arr(assignIf.notIn) } : undefined,
  };
}

/** Gatekeeper's order: kind, then name (mutators are cluster-scoped). */
export function sortMutators(list: Mutator[]): Mutator[] {
  return list.sort((a, b) =>
    a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
}

/** What `match` and `applyTo` look at. */
export interface MutationTarget {
  group: string;
  version: string;
  kind: string;
  name: string;
  /** Absent for cluster-scoped objects. */
  namespace: string | undefined;
  labels: Readonly<Record<string, string>>;
  /** Labels of the object's namespace, when known. */
  namespaceLabels: Readonly<Record<string, string>> | undefined;
}

function nameGlob(pattern: string, name: string): boolean {
  if (pattern.endsWith('*')) return name.startsWith(pattern.slice(0, -1));
  if (pattern.startsWith('*')) return name.endsWith(pattern.slice(1));
  return pattern === name;
}

export function targetOf(o: JsonObject, namespaceLabels?: Readonly<Record<string, string>>): MutationTarget {
  const apiVersion = str(o.apiVersion) ?? '';
  const slash = apiVersion.indexOf('/');
  const meta = obj(o.metadata) ?? {};
  return {
    group: slash < 0 ? '' : apiVersion.slice(0, slash),
    version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
    kind: str(o.kind) ?? '',
    name: str(meta.name) ?? '',
    namespace: str(meta.namespace),
    labels: stringMap(meta.labels),
    namespaceLabels,
  };
}

/** Gatekeeper's applyTo and match, for one object. */
export function mutatorMatches(m: Mutator, t: MutationTarget): boolean {
  if (
    m.kind === 'Assign' &&
    !m.applyTo.some((a) => a.groups.includes(t.group) && a.versions.includes(t.version) && a.kinds.includes(t.kind))
  )
    return false;
  const match = m.match;
  const kinds = (arr(match.kinds) ?? []).filter(isObject);
  if (
    kinds.length > 0 &&
    !kinds.some((k) => {
      const groups = stringList(k.apiGroups);
      const names = stringList(k.kinds);
      return (
        (groups.length === 0 || groups.includes('*') || groups.includes(t.group)) &&
        (names.length === 0 || names.includes('*') || names.includes(t.kind))
      );
    })
  )
    return false;
  const scope = str(match.scope) ?? '*';
  if (scope === 'Cluster' && t.namespace !== undefined) return false;
  if (scope === 'Namespaced' && t.namespace === undefined) return false;
  // A Namespace counts as being in itself, as in Gatekeeper.
  const ns = t.namespace ?? (t.kind === 'Namespace' && t.group === '' ? t.name : undefined);
  const namespaces = stringList(match.namespaces);
  if (namespaces.length > 0 && (ns === undefined || !namespaces.some((p) => nameGlob(p, ns)))) return false;
  const excluded = stringList(match.excludedNamespaces);
  if (ns !== undefined && excluded.some((p) => nameGlob(p, ns))) return false;
  const name = str(match.name);
  if (name !== undefined && name !== '' && !nameGlob(name, t.name)) return false;
  if (match.labelSelector !== undefined && !matchLabelSelector(match.labelSelector, t.labels)) return false;
  if (match.namespaceSelector !== undefined) {
    // A Namespace is judged by its own labels, a namespaced object by its namespace's; other
    // cluster-scoped objects pass, as in Gatekeeper.
    const isNamespace = t.kind === 'Namespace' && t.group === '';
    const labels = isNamespace ? t.labels : t.namespaceLabels;
    const judged = isNamespace || t.namespace !== undefined;
    if (judged && (labels === undefined || !matchLabelSelector(match.namespaceSelector, labels))) return false;
  }
  return true;
}

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

function findItem(list: unknown[], field: string, value: string): number {
  return list.findIndex((el) => isObject(el) && hasOwn(el, field) && String(el[field]) === value);
}

/**
 * Whether every pathTest holds where the walk stands: `depth` segments of the location exist in the
 * object as it was, and segment `depth` (0-based) exists or not as `present` says. Tests are judged once
 * per branch, before anything is created on it, so a failing test leaves the object as it was.
 */
function testsHold(m: Mutator, depth: number, present: boolean): boolean {
  for (const t of m.pathTests) {
    const L = t.subPath.length;
    const found = L <= depth ? true : L === depth + 1 ? present : false;
    if (t.condition === 'MustExist' ? !found : found) return false;
  }
  return true;
}

/** Applies one mutator to `doc` in place (the caller checked the match) and returns it. */
export function applyMutator(doc: JsonObject, m: Mutator, changes?: Change[]): JsonObject {
  const meta = obj(doc.metadata) ?? {};
  const value =
    'literal' in m.value ? m.value.literal : m.value.fromMetadata === 'name' ? str(meta.name) : str(meta.namespace);
  if (value === undefined) return doc;
  const segs = m.segments;
  const note = (pointer: string, op: Change['op']) =>
    changes?.push({ path: pointer, op, source: { policy: { kind: m.kind, name: m.name }, overrider: 'location' } });
  // `judged`: the pathTests were already judged for this branch (something was created on it).
  const walk = (cur: unknown, i: number, pointer: string, judged: boolean): void => {
    const seg = segs[i] as PathSegment;
    const last = i === segs.length - 1;
    if ('key' in seg) {
      if (!isObject(cur)) return;
      const present = hasOwn(cur, seg.key) && cur[seg.key] !== null;
      const here = `${pointer}/${seg.key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (last) {
        if (m.kind === 'AssignMetadata' && hasOwn(cur, seg.key)) return;
        if (!judged && !testsHold(m, i, present)) return;
        if (m.assignIf && !assignIfHolds(m.assignIf, present ? cur[seg.key] : undefined)) return;
        if (present && JSON.stringify(cur[seg.key]) === JSON.stringify(value)) return;
        setOwn(cur, seg.key, structuredClone(value));
        note(here, present ? 'replace' : 'add');
        return;
      }
      let next = judged;
      if (!present) {
        const following = segs[i + 1] as PathSegment;
        // A glob over a list that is not there visits nothing, so nothing is created for it.
        if ('match' in following && following.match.value === '*') return;
        if (!judged && !testsHold(m, i, false)) return;
        next = true;
        setOwn(cur, seg.key, 'match' in following ? [] : {});
      }
      walk(cur[seg.key], i + 1, here, next);
      return;
    }
    if (!Array.isArray(cur)) return;
    const { field, value: key } = seg.match;
    if (key === '*') {
      cur.forEach((el, k) => {
        if (!isObject(el) || !hasOwn(el, field)) return;
        if (!last) return walk(el, i + 1, `${pointer}/${k}`, judged);
        // A whole item under a glob: only when the value keeps the item's key.
        if (!isObject(value) || String(value[field]) !== String(el[field])) return;
        if (!judged && !testsHold(m, i, true)) return;
        cur[k] = structuredClone(value);
        note(`${pointer}/${k}`, 'replace');
      });
      return;
    }
    let k = findItem(cur, field, key);
    if (last) {
      if (!isObject(value) || String(value[field]) !== key) return;
      if (!judged && !testsHold(m, i, k >= 0)) return;
      if (k < 0) cur.push(structuredClone(value));
      else if (JSON.stringify(cur[k]) === JSON.stringify(value)) return;
      else cur[k] = structuredClone(value);
      note(`${pointer}/${k < 0 ? cur.length - 1 : k}`, k < 0 ? 'add' : 'replace');
      return;
    }
    let next = judged;
    if (k < 0) {
      if (!judged && !testsHold(m, i, false)) return;
      next = true;
      cur.push({ [field]: key });
      k = cur.length - 1;
    }
    walk(cur[k], i + 1, `${pointer}/${k}`, next);
  };
  walk(doc, 0, '', false);
  return doc;
}

function assignIfHolds(cond: { in?: unknown[]; notIn?: unknown[] }, current: unknown): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (cond.in && !cond.in.some((v) => same(v, current))) return false;
  if (cond.notIn?.some((v) => same(v, current))) return false;
  return true;
}
