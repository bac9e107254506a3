// What a delivered copy changes against its template, field by field, each change annotated with the
// writer `--explain` names for that path (pkg/engine explainPlacement). Pure and bounded: at most
// MAX_CHANGES changes, at most MAX_DEPTH levels (deeper differences are reported whole).

import type { PathExplanation } from '../engine/explain.js';
import { isObject } from '../kube/objects.js';
import type { FieldChange, PolicyRef } from './types.js';

const MAX_CHANGES = 1_000;
const MAX_DEPTH = 64;

const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
  }
  return false;
}

/** Leaf changes from `before` (the template) to `after` (the delivered copy), JSON pointers in document order. */
export function fieldChanges(before: unknown, after: unknown): FieldChange[] {
  const out: FieldChange[] = [];
  const walk = (path: string, a: unknown, b: unknown, hasA: boolean, hasB: boolean, depth: number): void => {
    if (out.length >= MAX_CHANGES) return;
    if (hasA && hasB && same(a, b)) return;
    const container = (v: unknown) => isObject(v) || Array.isArray(v);
    const descend =
      depth < MAX_DEPTH &&
      ((hasA && hasB && ((isObject(a) && isObject(b)) || (Array.isArray(a) && Array.isArray(b)))) ||
        (!hasA && container(b) && Object.keys(b as object).length > 0) ||
        (!hasB && container(a) && Object.keys(a as object).length > 0));
    if (!descend) {
      if (!hasA) out.push({ path, op: 'add', after: b });
      else if (!hasB) out.push({ path, op: 'remove', before: a });
      else out.push({ path, op: 'replace', before: a, after: b });
      return;
    }
    const keys = new Set<string>();
    for (const v of [hasA ? a : undefined, hasB ? b : undefined])
      if (isObject(v) || Array.isArray(v)) for (const k of Object.keys(v)) keys.add(k);
    for (const k of keys) {
      const inA = hasA && (isObject(a) || Array.isArray(a)) && Object.hasOwn(a, k);
      const inB = hasB && (isObject(b) || Array.isArray(b)) && Object.hasOwn(b, k);
      walk(
        `${path}/${escape(k)}`,
        inA ? (a as Record<string, unknown>)[k] : undefined,
        inB ? (b as Record<string, unknown>)[k] : undefined,
        inA,
        inB,
        depth + 1,
      );
    }
  };
  walk('', before, after, true, true, 0);
  return out;
}

/** The explanation row that wrote `path`: the same path, or the closest ancestor (a whole object or list set). */
function writerOf(path: string, rows: readonly PathExplanation[]): PathExplanation | undefined {
  let best: PathExplanation | undefined;
  for (const r of rows) {
    if (path !== r.path && !path.startsWith(`${r.path}/`)) continue;
    if (!best || r.path.length > best.path.length) best = r;
  }
  return best;
}

/** `changes` with each one's writer from `rows`, and its policy when `policies` knows the writer's text. */
export function annotate(
  changes: readonly FieldChange[],
  rows: readonly PathExplanation[],
  policyOf: (setBy: string) => PolicyRef | undefined,
): FieldChange[] {
  return changes.map((c) => {
    const row = writerOf(c.path, rows);
    if (!row) return c;
    const policy = policyOf(row.setBy);
    return {
      ...c,
      setBy: row.setBy,
      ...(policy ? { policy } : {}),
      ...(row.overwritten.length > 0 ? { overwritten: [...row.overwritten] } : {}),
    };
  });
}
