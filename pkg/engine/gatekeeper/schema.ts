// Gatekeeper's schema check (pkg/mutation/schema): for each kind and operation a mutator binds to, the
// mutators' locations make a tree; a key used as two types (an object by one mutator, a list by another,
// or a list keyed by two different fields), or a location below one that must end there (AssignImage's
// string), is a conflict, and every mutator involved is skipped until the conflict is gone.

import { effectiveOperations } from './match.js';
import type { Mutator } from './mutator.js';
import type { PathNode } from './path.js';

interface SchemaNode {
  referencedBy: Set<string>;
  mustTerminate: Set<string>;
  /** key → node type → child. */
  children: Map<string, Map<string, SchemaNode>>;
}

const newNode = (): SchemaNode => ({ referencedBy: new Set(), mustTerminate: new Set(), children: new Map() });
const keyOf = (n: PathNode): string => (n.type === 'Object' ? n.ref : n.keyField);
const headType = (path: readonly PathNode[], i: number, terminal: string): string =>
  i + 1 < path.length ? (path[i + 1] as PathNode).type : terminal;

function add(root: SchemaNode, m: Mutator): void {
  let n = root;
  n.referencedBy.add(m.id);
  for (let i = 0; i < m.path.length; i++) {
    const key = keyOf(m.path[i] as PathNode);
    const byType = n.children.get(key) ?? new Map<string, SchemaNode>();
    n.children.set(key, byType);
    const type = headType(m.path, i, m.terminalType as string);
    const child = byType.get(type) ?? newNode();
    byType.set(type, child);
    child.referencedBy.add(m.id);
    n = child;
  }
  if (m.mustTerminate) n.mustTerminate.add(m.id);
}

/** node.conflicts(childKey) */
function conflictsAt(n: SchemaNode, key: string, into: Set<string>): void {
  const byType = n.children.get(key);
  if (!byType) return;
  let types = byType.size;
  if (byType.has('Unknown')) types--;
  let mustTerminate = false;
  let grandchildren = false;
  for (const [type, child] of byType) {
    mustTerminate ||= child.mustTerminate.size > 0;
    grandchildren ||= child.children.size > 0;
    if (type === 'Unknown') continue;
    if (types > 1 || (type === 'List' && child.children.size > 1)) for (const id of child.referencedBy) into.add(id);
  }
  if (!mustTerminate || !grandchildren) return;
  for (const child of byType.values()) {
    for (const id of child.mustTerminate) into.add(id);
    for (const grand of child.children.values())
      for (const g of grand.values()) for (const id of g.referencedBy) into.add(id);
  }
}

function collect(n: SchemaNode, into: Set<string>): void {
  for (const [key, byType] of n.children) {
    conflictsAt(n, key, into);
    for (const child of byType.values()) collect(child, into);
  }
}

/** The ids of the mutators whose schemas conflict (AssignMetadata has none and never conflicts). */
export function schemaConflicts(mutators: readonly Mutator[]): Set<string> {
  const trees = new Map<string, SchemaNode>();
  for (const m of mutators) {
    if (m.terminalType === undefined || m.applyTo === undefined) continue;
    const bindings = new Set<string>();
    for (const a of m.applyTo)
      for (const g of a.groups)
        for (const v of a.versions)
          for (const k of a.kinds) for (const op of effectiveOperations(a)) bindings.add(JSON.stringify([g, v, k, op]));
    for (const b of bindings) {
      const root = trees.get(b) ?? newNode();
      trees.set(b, root);
      add(root, m);
    }
  }
  const out = new Set<string>();
  for (const root of trees.values()) collect(root, out);
  return out;
}
