// `--explain`: for each rendered object, which policy and rule set each changed path, last writer first.

import type { DetailedPlacement } from './render.js';
import type { Change, PolicyRef } from './types.js';

export interface PathExplanation {
  path: string;
  op: Change['op'];
  /** The writer whose value is in the object. */
  setBy: string;
  /** Earlier writers of the same path, overwritten (in order). */
  overwritten: string[];
}

export function describePolicy(p: PolicyRef): string {
  return `${p.kind} ${p.namespace ? `${p.namespace}/` : ''}${p.name}`;
}

export function describeSource(c: Change): string {
  const s = c.source;
  const where =
    s.rule === undefined
      ? s.overrider
      : `${s.rule < 0 ? 'spec.overriders' : `spec.overrideRules[${s.rule}].overriders`}.${s.overrider}`;
  return `${describePolicy(s.policy)} ${where}`;
}

/** One row per changed path, in the order paths were first written. */
export function explainPlacement(p: DetailedPlacement): PathExplanation[] {
  const rows = new Map<string, PathExplanation>();
  for (const c of p.changes) {
    const by = describeSource(c);
    const row = rows.get(c.path);
    if (row) {
      row.overwritten.push(row.setBy);
      row.setBy = by;
      row.op = c.op;
    } else {
      rows.set(c.path, { path: c.path, op: c.op, setBy: by, overwritten: [] });
    }
  }
  return [...rows.values()];
}

/** Plain-text rendering used by the CLI. */
export function formatExplanation(p: DetailedPlacement): string {
  const t = p.template;
  const head = `# ${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name} -> cluster ${p.cluster}\n#   claimed by ${describePolicy(p.policy)}\n`;
  const rows = explainPlacement(p);
  if (rows.length === 0) return `${head}#   no field changed\n`;
  const width = Math.min(60, Math.max(...rows.map((r) => r.path.length)));
  return (
    head +
    rows
      .map((r) => {
        const path = (r.path || '/').padEnd(width);
        const extra = r.overwritten.length ? ` (overwrote: ${r.overwritten.join('; ')})` : '';
        return `#   ${path}  ${r.op === 'remove' ? 'removed by' : 'set by'} ${r.setBy}${extra}`;
      })
      .join('\n') +
    '\n'
  );
}
