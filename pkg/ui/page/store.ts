// The page's copy of the fleet: the last snapshot with the changes after it applied, and who to tell.

import type { UiChange, UiCluster, UiPolicy, UiSnapshot, UiTemplateRow } from '../shared/model.js';
import { policyId } from '../shared/model.js';
import { compareRows } from '../shared/filter.js';

export class Store {
  seq = -1;
  readonly clusters = new Map<string, UiCluster>();
  readonly rows = new Map<string, UiTemplateRow>();
  readonly policies = new Map<string, UiPolicy>();
  private sorted: UiTemplateRow[] | undefined;
  private sortedClusters: UiCluster[] | undefined;
  private readonly listeners = new Set<(ids: ReadonlySet<string> | 'all') => void>();

  reset(s: UiSnapshot): void {
    this.seq = s.seq;
    this.clusters.clear();
    this.rows.clear();
    this.policies.clear();
    for (const c of s.clusters) this.clusters.set(c.name, c);
    for (const r of s.templates) this.rows.set(r.id, r);
    for (const p of s.policies) this.policies.set(policyId(p), p);
    this.sorted = undefined;
    this.sortedClusters = undefined;
    this.emit('all');
  }

  apply(changes: readonly UiChange[]): void {
    const ids = new Set<string>();
    for (const c of changes) {
      if (c.seq <= this.seq) continue;
      this.seq = c.seq;
      ids.add(c.id);
      if (c.type === 'template') {
        if (c.row) this.rows.set(c.id, c.row);
        else this.rows.delete(c.id);
        this.sorted = undefined;
      } else if (c.type === 'cluster') {
        if (c.cluster) this.clusters.set(c.id, c.cluster);
        else this.clusters.delete(c.id);
        this.sortedClusters = undefined;
      } else {
        if (c.policy) this.policies.set(c.id, c.policy);
        else this.policies.delete(c.id);
      }
    }
    if (ids.size > 0) this.emit(ids);
  }

  /** Templates in display order (namespace, kind, name). */
  templateRows(): UiTemplateRow[] {
    this.sorted ??= [...this.rows.values()].sort(compareRows);
    return this.sorted;
  }

  clusterList(): UiCluster[] {
    this.sortedClusters ??= [...this.clusters.values()].sort((a, b) => a.name.localeCompare(b.name));
    return this.sortedClusters;
  }

  /** `listener` gets the ids that changed, or 'all' after a snapshot. */
  onChange(listener: (ids: ReadonlySet<string> | 'all') => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(ids: ReadonlySet<string> | 'all'): void {
    for (const l of this.listeners) l(ids);
  }
}
