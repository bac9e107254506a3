// The matrix filters: which rows and columns show. Pure, shared by the page and its tests.

import type { StateFilter, UiCell, UiCluster, UiTemplateRow } from './model.js';
import { policyId } from './model.js';

/** Empty strings mean "any". `text` matches a substring of the template's name. */
export interface MatrixFilter {
  namespace: string;
  kind: string;
  policy: string;
  cluster: string;
  state: '' | StateFilter;
  text: string;
}

export const NO_FILTER: MatrixFilter = { namespace: '', kind: '', policy: '', cluster: '', state: '', text: '' };

/** The clusters (columns) the filter keeps, in the given order. */
export function visibleClusters(clusters: readonly UiCluster[], f: MatrixFilter): UiCluster[] {
  return f.cluster ? clusters.filter((c) => c.name === f.cluster) : [...clusters];
}

/** Whether a row passes the filter; the state and cluster filters look at the kept columns only. */
export function rowMatches(row: UiTemplateRow, f: MatrixFilter, columns: readonly string[]): boolean {
  if (f.namespace && (row.namespace ?? '') !== f.namespace) return false;
  if (f.kind && row.kind !== f.kind) return false;
  if (f.policy && (row.policy ? policyId(row.policy) : '') !== f.policy) return false;
  if (f.text && !row.name.includes(f.text)) return false;
  if (f.cluster || f.state) {
    const has = columns.some((c) => {
      const cell = Object.hasOwn(row.cells, c) ? row.cells[c] : undefined;
      return cell !== undefined && stateMatches(cell, f.state);
    });
    if (!has) return false;
  }
  return true;
}

/** Whether a cell is in `state` ('' matches any; RequiredBy: a dependency brought it there). */
export function stateMatches(cell: UiCell, state: '' | StateFilter): boolean {
  if (!state) return true;
  if (state === 'RequiredBy') return (cell.requiredBy?.length ?? 0) > 0;
  return cell.state === state;
}

/** The distinct values each filter offers, sorted. */
export function filterChoices(rows: readonly UiTemplateRow[]): {
  namespaces: string[];
  kinds: string[];
  policies: string[];
} {
  const namespaces = new Set<string>();
  const kinds = new Set<string>();
  const policies = new Set<string>();
  for (const r of rows) {
    if (r.namespace) namespaces.add(r.namespace);
    kinds.add(r.kind);
    if (r.policy) policies.add(policyId(r.policy));
  }
  const sorted = (s: Set<string>) => [...s].sort();
  return { namespaces: sorted(namespaces), kinds: sorted(kinds), policies: sorted(policies) };
}

/** Rows in display order: namespace, kind, name. */
export function compareRows(a: UiTemplateRow, b: UiTemplateRow): number {
  return (
    (a.namespace ?? '').localeCompare(b.namespace ?? '') || a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name)
  );
}

/**
 * The rows a virtualised list draws: those that intersect the viewport, plus `overscan` on each side.
 * `end` is exclusive. Fixed row height; negative offsets and offsets past the end are clamped.
 */
export function visibleRange(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  total: number,
  overscan = 8,
): { start: number; end: number } {
  const count = Math.ceil(Math.max(0, viewportHeight) / rowHeight) + 1;
  // Past the end (a list that shrank under the scroll position): the last screenful.
  const first = Math.min(Math.floor(Math.max(0, scrollTop) / rowHeight), Math.max(0, total - count));
  const start = Math.max(0, Math.min(total, first - overscan));
  const end = Math.max(start, Math.min(total, first + count + overscan));
  return { start, end };
}

const FILTER_KEYS = ['namespace', 'kind', 'policy', 'cluster', 'state', 'text'] as const satisfies ReadonlyArray<
  keyof MatrixFilter
>;

/** The filter as URL hash parameters, and back; unknown keys are ignored. */
export function filterToParams(f: MatrixFilter): string {
  const p = new URLSearchParams();
  for (const k of FILTER_KEYS) if (f[k]) p.set(k, f[k]);
  return p.toString();
}

export function filterFromParams(query: string, states: readonly string[]): MatrixFilter {
  const p = new URLSearchParams(query);
  const get = (k: string) => p.get(k) ?? '';
  const state = get('state');
  return {
    namespace: get('namespace'),
    kind: get('kind'),
    policy: get('policy'),
    cluster: get('cluster'),
    state: states.includes(state) ? (state as StateFilter) : '',
    text: get('text'),
  };
}
