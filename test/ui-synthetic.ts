// A synthetic fleet for the ui's unit tests and benchmark: `templates` × `clusters`, every state the
// matrix draws, and changes on demand. Deterministic (no randomness), so two runs draw the same page.

import {
  CELL_STATES,
  templateId,
  type UiCell,
  type UiChange,
  type UiCluster,
  type UiPolicy,
  type UiSnapshot,
  type UiTemplateDetail,
  type UiTemplateRow,
} from '../pkg/ui/shared/model.js';
import type { FleetView } from '../pkg/ui/view.js';

function cluster(i: number): UiCluster {
  return {
    name: `member-${String(i).padStart(2, '0')}`,
    ready: i % 7 === 3 ? 'False' : 'True',
    syncMode: i % 4 === 0 ? 'Pull' : 'Push',
    taints: i % 5 === 0 ? [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }] : [],
    capacity: [
      { resource: 'cpu', allocatable: 64_000, allocated: (i * 7_919) % 64_000 },
      { resource: 'memory', allocatable: 256, allocated: (i * 37) % 256 },
    ],
    kubernetesVersion: 'v1.34.1',
    apiGroups: 30 + i,
    labels: { region: `region-${i % 3}` },
  };
}

function cell(t: number, c: number): UiCell | undefined {
  const k = (t * 31 + c * 17) % 23;
  if (k >= CELL_STATES.length + 6) return undefined; // not placed there
  const state = k < 6 ? 'Applied' : (CELL_STATES[k - 6] ?? 'Applied');
  const out: UiCell = { state };
  if (state === 'Conflict') out.writer = 'kubectl-client-side-apply';
  if (state === 'Evicting') Object.assign(out, { purgeMode: 'Gracefully', deadline: '2030-01-01T00:00:00Z' });
  if (t % 3 === 0) out.replicas = 1 + ((t + c) % 5);
  return out;
}

export class SyntheticFleet implements FleetView {
  private seq = 0;
  private readonly clusters: UiCluster[];
  private readonly rows = new Map<string, UiTemplateRow>();
  private readonly policies: UiPolicy[];
  private readonly listeners = new Set<(c: UiChange) => void>();

  constructor(templates: number, clusters: number) {
    this.clusters = Array.from({ length: clusters }, (_, i) => cluster(i));
    for (let t = 0; t < templates; t++) {
      const ref = {
        apiVersion: t % 2 ? 'apps/v1' : 'v1',
        kind: t % 2 ? 'Deployment' : 'ConfigMap',
        namespace: `team-${t % 40}`,
        name: `app-${t}`,
      };
      const cells: Record<string, UiCell> = {};
      this.clusters.forEach((c, ci) => {
        const x = cell(t, ci);
        if (x) cells[c.name] = x;
      });
      const row: UiTemplateRow = {
        id: templateId(ref),
        ...ref,
        policy: { kind: 'PropagationPolicy', namespace: ref.namespace, name: `policy-${t % 40}` },
        cells,
      };
      this.rows.set(row.id, row);
    }
    this.policies = Array.from({ length: 40 }, (_, i) => ({
      kind: 'PropagationPolicy',
      role: 'propagation' as const,
      namespace: `team-${i}`,
      name: `policy-${i}`,
      selects: ['apps/v1 Deployment'],
      claimed: Math.ceil(templates / 40),
      ready: 'True' as const,
      ignoredFields: [],
    }));
  }

  snapshot(): UiSnapshot {
    return { seq: this.seq, clusters: this.clusters, templates: [...this.rows.values()], policies: this.policies };
  }

  subscribe(listener: (change: UiChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  templateDetail(id: string): Promise<UiTemplateDetail | undefined> {
    const row = this.rows.get(id);
    if (!row) return Promise.resolve(undefined);
    return Promise.resolve({
      row,
      template: `apiVersion: ${row.apiVersion}\nkind: ${row.kind}\n`,
      placement: this.clusters.map((c) => ({
        cluster: c.name,
        selected: Object.hasOwn(row.cells, c.name),
        reason: Object.hasOwn(row.cells, c.name) ? 'chosen' : 'not in clusterAffinity',
      })),
      copies: Object.entries(row.cells).map(([cluster, cell]) => ({
        cluster,
        cell,
        diff: [
          {
            path: '/metadata/labels/cluster',
            op: 'add' as const,
            delivered: JSON.stringify(cluster),
            setBy: 'OverridePolicy x',
          },
        ],
      })),
      events: [],
      errors: [],
    });
  }

  /** Puts `row` (a new or changed template) and tells the listeners. */
  put(row: UiTemplateRow): void {
    this.rows.set(row.id, row);
    const change: UiChange = { seq: ++this.seq, type: 'template', id: row.id, row };
    for (const l of this.listeners) l(change);
  }

  row(id: string): UiTemplateRow | undefined {
    return this.rows.get(id);
  }

  ids(): string[] {
    return [...this.rows.keys()];
  }
}
