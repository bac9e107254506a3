// The ApplySet convention (KEP-3659), as kubectl implements it in pkg/cmd/apply/applyset.go, so that
// `kubectl get -l applyset.kubernetes.io/part-of=<id>` sees the same set Flotilla applied and pruned.
//
// Layout, per member cluster:
//   parent  a Secret <namespace>/<name> (default flotilla-system/<derived from the input>) labelled
//           applyset.kubernetes.io/id=<id> and annotated with
//             applyset.kubernetes.io/tooling               flotilla/<version>
//             applyset.kubernetes.io/contains-group-kinds  Kind.group,… (sorted; core kinds bare)
//             applyset.kubernetes.io/additional-namespaces ns,… (sorted; the parent's own namespace left out)
//   members every applied object labelled applyset.kubernetes.io/part-of=<id>
// id = "applyset-" + base64url(sha256("<name>.<namespace>.<kind>.<group>")) + "-v1", no padding.
//
// Before applying, the parent is updated to the union of what it recorded and what is about to be applied
// (so an interrupted run leaks nothing); after a complete prune, to exactly what was applied.

import { createHash } from 'node:crypto';

export const PART_OF_LABEL = 'applyset.kubernetes.io/part-of';
export const ID_LABEL = 'applyset.kubernetes.io/id';
export const TOOLING_ANNOTATION = 'applyset.kubernetes.io/tooling';
export const GROUP_KINDS_ANNOTATION = 'applyset.kubernetes.io/contains-group-kinds';
export const NAMESPACES_ANNOTATION = 'applyset.kubernetes.io/additional-namespaces';
/** kubectl's older annotation; a parent carrying only it is read (kubectl still reads it too). */
export const DEPRECATED_GROUP_RESOURCES_ANNOTATION = 'applyset.kubernetes.io/contains-group-resources';

export const TOOL_NAME = 'flotilla';

export interface ParentRef {
  name: string;
  namespace: string;
}

/** kubectl's ApplySet.ID() for a Secret parent. */
export function applySetId(parent: ParentRef, kind = 'Secret', group = ''): string {
  const hashed = createHash('sha256').update([parent.name, parent.namespace, kind, group].join('.')).digest();
  return `applyset-${hashed.toString('base64url')}-v1`;
}

/** `Kind.group` (schema.GroupKind.String()); core kinds have no suffix. */
export function groupKindString(group: string, kind: string): string {
  return group === '' ? kind : `${kind}.${group}`;
}

/** schema.ParseGroupKind: the kind is everything before the first dot. */
export function parseGroupKind(s: string): { group: string; kind: string } {
  const i = s.indexOf('.');
  return i < 0 ? { group: '', kind: s } : { group: s.slice(i + 1), kind: s.slice(0, i) };
}

/** What a live parent says about the set. */
export interface ParentState {
  exists: boolean;
  /** The tooling annotation's value (`flotilla/v0.1.0`). */
  tooling?: string;
  /** Group-kinds recorded (`Kind.group`). */
  groupKinds: Set<string>;
  /** Namespaces recorded, the parent's own included. */
  namespaces: Set<string>;
}

/** A parent that belongs to someone else or is malformed: Flotilla must not use it. */
export class ParentError extends Error {
  readonly code = 'APPLYSET_PARENT';
  constructor(message: string) {
    super(message);
    this.name = 'ParentError';
  }
}

function stringRecord(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return out;
  for (const k of Object.keys(v)) {
    const val = (v as Record<string, unknown>)[k];
    if (typeof val === 'string') out[k] = val;
  }
  return out;
}

function splitList(v: string | undefined): string[] {
  return v
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
    : [];
}

/**
 * Reads a live parent (undefined: there is none yet) with kubectl's checks: the tooling annotation must
 * name this tool, the id label must match. `resolveGroupResource` maps the deprecated group-resources
 * annotation (`deployments.apps`) to a group-kind; it is only called for such old parents.
 */
export function readParent(
  live: unknown,
  ref: ParentRef,
  id: string,
  resolveGroupResource?: (groupResource: string) => string | undefined,
): ParentState {
  if (live === undefined) return { exists: false, groupKinds: new Set(), namespaces: new Set([ref.namespace]) };
  const meta = (typeof live === 'object' && live !== null ? (live as { metadata?: unknown }).metadata : undefined) as
    { labels?: unknown; annotations?: unknown } | undefined;
  const labels = stringRecord(meta?.labels);
  const annotations = stringRecord(meta?.annotations);
  const what = `ApplySet parent Secret ${ref.namespace}/${ref.name}`;
  const tooling = annotations[TOOLING_ANNOTATION];
  if (tooling === undefined)
    throw new ParentError(
      `${what} already exists and has no ${TOOLING_ANNOTATION} annotation; it was not made by an ApplySet tool, so Flotilla leaves it alone (choose another --applyset name)`,
    );
  const base = toolingBaseName(tooling);
  if (base !== TOOL_NAME)
    throw new ParentError(
      `${what} is managed by ${JSON.stringify(base)}, not ${TOOL_NAME} (${TOOLING_ANNOTATION}: ${tooling}); choose another --applyset name`,
    );
  if (labels[ID_LABEL] !== id)
    throw new ParentError(`${what} has ${ID_LABEL}=${JSON.stringify(labels[ID_LABEL] ?? '')}, expected ${id}`);
  const groupKinds = new Set<string>();
  if (annotations[GROUP_KINDS_ANNOTATION] !== undefined) {
    for (const gk of splitList(annotations[GROUP_KINDS_ANNOTATION])) groupKinds.add(gk);
  } else if (annotations[DEPRECATED_GROUP_RESOURCES_ANNOTATION] !== undefined) {
    for (const gr of splitList(annotations[DEPRECATED_GROUP_RESOURCES_ANNOTATION])) {
      const gk = resolveGroupResource?.(gr);
      if (gk === undefined)
        throw new ParentError(
          `${what}: cannot map ${JSON.stringify(gr)} of ${DEPRECATED_GROUP_RESOURCES_ANNOTATION} to a kind`,
        );
      groupKinds.add(gk);
    }
  } else {
    throw new ParentError(`${what} has no ${GROUP_KINDS_ANNOTATION} annotation`);
  }
  const namespaces = new Set(splitList(annotations[NAMESPACES_ANNOTATION]));
  namespaces.add(ref.namespace);
  return { exists: true, tooling, groupKinds, namespaces };
}

/** kubectl's toolingBaseName: everything before the last slash. */
export function toolingBaseName(tooling: string): string {
  const i = tooling.lastIndexOf('/');
  return i < 0 ? tooling : tooling.slice(0, i);
}

/** The parent Secret to server-side apply, recording `groupKinds` and `namespaces`. */
export function parentObject(
  ref: ParentRef,
  id: string,
  tooling: string,
  groupKinds: Iterable<string>,
  namespaces: Iterable<string>,
): Record<string, unknown> {
  const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: ref.name,
      namespace: ref.namespace,
      labels: { [ID_LABEL]: id },
      annotations: {
        [TOOLING_ANNOTATION]: tooling,
        [GROUP_KINDS_ANNOTATION]: sorted(groupKinds).join(','),
        [NAMESPACES_ANNOTATION]: sorted([...namespaces].filter((n) => n !== '' && n !== ref.namespace)).join(','),
      },
    },
  };
}
