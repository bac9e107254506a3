// The placement matrix: one row per ResourceBinding (template), one cell per cluster the binding names,
// filtered by namespace, kind, policy, cluster and state. Pure.

import { executionSpace } from '../controller/work.js';
import { TEMPLATE_UID_LABEL } from '../../api/work/v1alpha1/types.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { HubSnapshot } from './hub.js';
import { templateRow, type WorkIndex } from './rows.js';
import type { MatrixFilter, PlacementCell, PlacementMatrix, PolicyRef, TemplateRow } from './types.js';

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The Works of the snapshot by template uid, each with the cluster its namespace belongs to. */
export function workIndex(snapshot: HubSnapshot, clusterNames: Iterable<string>): WorkIndex {
  const spaceToCluster = new Map<string, string>();
  for (const name of clusterNames) spaceToCluster.set(executionSpace(name), name);
  const byUid = new Map<string, Array<{ cluster: string; work: JsonObject }>>();
  for (const work of snapshot.works) {
    const meta = isObject(work.metadata) ? work.metadata : {};
    const cluster = spaceToCluster.get(ownString(meta, 'namespace') ?? '');
    const uid = ownString(meta.labels, TEMPLATE_UID_LABEL);
    if (!cluster || !uid) continue;
    const l = byUid.get(uid) ?? [];
    l.push({ cluster, work });
    byUid.set(uid, l);
  }
  return { worksOf: (uid) => byUid.get(uid) ?? [] };
}

export function clusterNames(snapshot: HubSnapshot): string[] {
  const names = new Set<string>();
  for (const c of snapshot.clusters) {
    const n = ownString(c.metadata, 'name');
    if (n) names.add(n);
  }
  return [...names];
}

/** Every row of the snapshot, unfiltered, sorted by namespace, kind and name. */
export function templateRows(snapshot: HubSnapshot): TemplateRow[] {
  const works = workIndex(snapshot, clusterNames(snapshot));
  const rows: TemplateRow[] = [];
  for (const b of snapshot.bindings) {
    const row = templateRow(b, works);
    if (row) rows.push(row);
  }
  return rows.sort(
    (a, b) =>
      compare(a.template.namespace ?? '', b.template.namespace ?? '') ||
      compare(a.template.kind, b.template.kind) ||
      compare(a.template.name, b.template.name),
  );
}

function policyMatches(p: PolicyRef | undefined, wanted: string): boolean {
  if (!p) return false;
  const slash = wanted.indexOf('/');
  if (slash < 0) return p.name === wanted;
  const [head, name] = [wanted.slice(0, slash), wanted.slice(slash + 1)];
  if (name !== p.name) return false;
  return head === p.namespace || head.toLowerCase() === p.kind.toLowerCase();
}

export function cellMatches(cell: PlacementCell, state: MatrixFilter['state']): boolean {
  if (state === undefined) return true;
  if (state === 'RequiredBy') return (cell.requiredBy?.length ?? 0) > 0;
  return cell.state === state;
}

/**
 * Whether a row passes the filter. With `cluster` and `state` together, one cell must satisfy both; with
 * `cluster` alone the template must name that cluster; with `state` alone some cell must be in it.
 */
export function rowMatches(row: TemplateRow, f: MatrixFilter): boolean {
  if (f.namespace !== undefined && (row.template.namespace ?? '') !== f.namespace) return false;
  if (f.kind !== undefined && row.template.kind.toLowerCase() !== f.kind.toLowerCase()) return false;
  if (f.policy !== undefined && !policyMatches(row.policy, f.policy)) return false;
  if (f.cluster === undefined && f.state === undefined) return true;
  return row.cells.some((c) => (f.cluster === undefined || c.cluster === f.cluster) && cellMatches(c, f.state));
}

/** The matrix of the snapshot; `rows` when the caller already has templateRows(snapshot). */
export function placementMatrix(
  snapshot: HubSnapshot,
  filter: MatrixFilter = {},
  rows: readonly TemplateRow[] = templateRows(snapshot),
): PlacementMatrix {
  const clusters = new Set(clusterNames(snapshot));
  for (const r of rows) for (const c of r.cells) clusters.add(c.cluster);
  return {
    clusters: [...clusters].sort(compare),
    rows: rows.filter((r) => rowMatches(r, filter)),
    total: rows.length,
  };
}
