// Which objects a mutator acts on, as Gatekeeper decides it (pkg/mutation/match: match.go, apply_to.go;
// pkg/wildcard): `applyTo` (exact group, version, kind, and the admission operation) for the kinds that
// have it, then `match`. Everything is read from the object as it is at that moment of the mutation,
// so a label one mutator adds can make the next one match.

import { arr, isObject, obj, str, stringList, stringMap, type JsonObject } from '../json.js';
import { matchLabelSelector } from '../selectors.js';

/** A `*` at the start, the end or both: suffix, prefix, contains. */
export function wildcardMatches(pattern: string, candidate: string): boolean {
  const head = pattern.startsWith('*');
  const tail = pattern.endsWith('*');
  if (head && tail) return candidate.includes(pattern.slice(1, -1));
  if (head) return candidate.endsWith(pattern.slice(1));
  if (tail) return candidate.startsWith(pattern.slice(0, -1));
  return pattern === candidate;
}

/** For metadata.generateName: only a pattern that can name a prefix (`pre*`, `*mid*`) matches it. */
export function wildcardMatchesGenerateName(pattern: string, candidate: string): boolean {
  const head = pattern.startsWith('*');
  const tail = pattern.endsWith('*');
  if (head && tail) return candidate.includes(pattern.slice(1, -1));
  if (tail) return candidate.startsWith(pattern.slice(0, -1));
  return false;
}

export interface ApplyTo {
  groups: string[];
  versions: string[];
  kinds: string[];
  operations: string[];
}

const SUPPORTED_OPERATIONS = ['CREATE', 'UPDATE'];

/** Checks applyTo as core.NewValidatedBindings does; returns why it is refused, if it is. */
export function applyToProblem(kind: string, name: string, applies: readonly ApplyTo[]): string | undefined {
  for (const a of applies)
    if (a.groups.length === 0 || a.versions.length === 0 || a.kinds.length === 0)
      return `invalid applyTo for ${kind} mutator ${name}, all of group, version and kind must be specified`;
  const errs: string[] = [];
  applies.forEach((a, i) => {
    const seen = new Set<string>();
    for (const op of a.operations) {
      if (seen.has(op)) errs.push(`duplicate operation ${JSON.stringify(op)} in applyTo[${i}].operations`);
      seen.add(op);
      if (op !== 'CREATE' && op !== 'UPDATE' && op !== '*')
        errs.push(
          `invalid operation ${JSON.stringify(op)} in applyTo[${i}].operations: must be one of CREATE, UPDATE, *`,
        );
    }
    if (a.operations.includes('*') && a.operations.length > 1)
      errs.push(`wildcard "*" in applyTo[${i}].operations must not be combined with other operations`);
  });
  if (errs.length > 0) return `invalid applyTo for ${kind} mutator ${name}: ${errs.join('; ')}`;
  if (applies.length === 0) return `applyTo required for ${kind} mutator ${name}`;
  return undefined;
}

/** The operations an applyTo entry stands for (CREATE and UPDATE unless it names some). */
export function effectiveOperations(a: ApplyTo): string[] {
  if (a.operations.length === 0 || a.operations.includes('*')) return [...SUPPORTED_OPERATIONS];
  return SUPPORTED_OPERATIONS.filter((op) => a.operations.includes(op));
}

function operationMatches(a: ApplyTo, operation: string): boolean {
  if (!SUPPORTED_OPERATIONS.includes(operation)) return false;
  return a.operations.length === 0 || a.operations.includes('*') || a.operations.includes(operation);
}

export function readApplyTo(v: unknown): ApplyTo[] {
  return (arr(v) ?? []).filter(isObject).map((a) => ({
    groups: stringList(a.groups),
    versions: stringList(a.versions),
    kinds: stringList(a.kinds),
    operations: stringList(a.operations),
  }));
}

/** What a mutator is matched against: the object now, its Namespace, and the admission's operation. */
export interface Mutable {
  object: JsonObject;
  /** The Namespace the object is in (the object itself for a Namespace); undefined when cluster-scoped. */
  namespace: { name: string; labels: Readonly<Record<string, string>> | undefined } | undefined;
  operation: string;
}

/** A match block that cannot be evaluated (an invalid label selector): Gatekeeper fails the mutation. */
export class MatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MatchError';
  }
}

function gvk(o: JsonObject): { group: string; version: string; kind: string } {
  const apiVersion = str(o.apiVersion) ?? '';
  const slash = apiVersion.indexOf('/');
  return {
    group: slash < 0 ? '' : apiVersion.slice(0, slash),
    version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
    kind: str(o.kind) ?? '',
  };
}

export function appliesTo(applies: readonly ApplyTo[], m: Mutable): boolean {
  const t = gvk(m.object);
  return applies.some(
    (a) =>
      a.groups.includes(t.group) &&
      a.versions.includes(t.version) &&
      a.kinds.includes(t.kind) &&
      operationMatches(a, m.operation),
  );
}

const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** validation.IsQualifiedName, as labels.NewRequirement checks a key. */
function keyProblem(key: unknown): string | undefined {
  if (typeof key !== 'string') return 'a label key must be a string';
  const slash = key.lastIndexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (key.split('/').length > 2) return `invalid label key ${JSON.stringify(key)}`;
  if (prefix !== undefined && (prefix === '' || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)))
    return `invalid label key ${JSON.stringify(key)}: prefix must be a DNS subdomain`;
  if (name === '' || name.length > 63 || !LABEL_NAME.test(name)) return `invalid label key ${JSON.stringify(key)}`;
  return undefined;
}

/** validation.IsValidLabelValue. */
function valueProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'a label value must be a string';
  if (value !== '' && (value.length > 63 || !LABEL_NAME.test(value)))
    return `invalid label value ${JSON.stringify(value)}`;
  return undefined;
}

/** metav1.LabelSelectorAsSelector's refusals (keys, values, operators, value counts). */
function selectorProblem(selector: unknown): string | undefined {
  if (!isObject(selector)) return 'not an object';
  const labels = obj(selector.matchLabels) ?? {};
  for (const [k, v] of Object.entries(labels)) {
    const why = keyProblem(k) ?? valueProblem(v);
    if (why) return why;
  }
  const exprs = arr(selector.matchExpressions) ?? [];
  for (const e of exprs) {
    if (!isObject(e)) return 'matchExpressions: not an object';
    const values = arr(e.values) ?? [];
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) return `for 'in', 'notin' operators, values set can't be empty`;
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) return `values set must be empty for exists and does not exist`;
        break;
      default:
        return `${JSON.stringify(e.operator)} is not a valid label selector operator`;
    }
    const why = keyProblem(e.key) ?? values.map(valueProblem).find((p) => p !== undefined);
    if (why) return why;
  }
  return undefined;
}

function isNamespace(o: JsonObject): boolean {
  const t = gvk(o);
  return t.kind === 'Namespace' && t.group === '';
}

/** match.Matches: every criterion in Gatekeeper's order; throws MatchError where it errs. */
export function matches(match: JsonObject, m: Mutable): boolean {
  const o = m.object;
  const meta = obj(o.metadata) ?? {};
  const t = gvk(o);
  const labels = stringMap(meta.labels);
  const objNamespace = str(meta.namespace) ?? '';
  const nsObject = isNamespace(o);

  const kinds = (arr(match.kinds) ?? []).filter(isObject);
  if (
    kinds.length > 0 &&
    !kinds.some((k) => {
      const names = stringList(k.kinds);
      const groups = stringList(k.apiGroups);
      return (
        (names.length === 0 || names.includes('*') || names.includes(t.kind)) &&
        (groups.length === 0 || groups.includes('*') || groups.includes(t.group))
      );
    })
  )
    return false;

  const hasNamespace = objNamespace !== '' || m.namespace !== undefined;
  const scope = str(match.scope);
  if (scope === 'Cluster' && !(nsObject || !hasNamespace)) return false;
  if (scope === 'Namespaced' && !(!nsObject && hasNamespace)) return false;

  // The namespace match.namespaces and excludedNamespaces judge; cluster-scoped objects pass both.
  const judged = nsObject
    ? (str(meta.name) ?? '')
    : m.namespace !== undefined
      ? m.namespace.name
      : objNamespace !== ''
        ? objNamespace
        : undefined;
  const namespaces = stringList(match.namespaces);
  if (namespaces.length > 0 && judged !== undefined && !namespaces.some((p) => wildcardMatches(p, judged)))
    return false;
  const excluded = stringList(match.excludedNamespaces);
  if (excluded.length > 0 && judged !== undefined && excluded.some((p) => wildcardMatches(p, judged))) return false;

  if (match.labelSelector !== undefined && match.labelSelector !== null) {
    const why = selectorProblem(match.labelSelector);
    if (why) throw new MatchError(`labelSelector: ${why}`);
    if (!matchLabelSelector(match.labelSelector, labels)) return false;
  }
  if (match.namespaceSelector !== undefined && match.namespaceSelector !== null) {
    if (nsObject || m.namespace !== undefined || objNamespace !== '') {
      const why = selectorProblem(match.namespaceSelector);
      if (why) throw new MatchError(`namespaceSelector: ${why}`);
      const nsLabels = nsObject ? labels : m.namespace?.labels;
      if (nsLabels === undefined)
        throw new MatchError('namespace selector for namespace-scoped object but missing Namespace');
      if (!matchLabelSelector(match.namespaceSelector, nsLabels)) return false;
    }
  }

  const name = str(match.name) ?? '';
  if (
    name !== '' &&
    !wildcardMatches(name, str(meta.name) ?? '') &&
    !wildcardMatchesGenerateName(name, str(meta.generateName) ?? '')
  )
    return false;

  const source = str(match.source) ?? '';
  if (source !== '' && source !== 'All' && source !== 'Original') {
    if (source !== 'Generated') throw new MatchError(`invalid source field ${JSON.stringify(source)}`);
    return false;
  }
  return true;
}
