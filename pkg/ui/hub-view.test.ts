import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ClusterFact, PlacementMatrix, PolicyFact, TemplateRow } from '../fleet/index.js';
import { HubFleetView, type FleetReader } from './hub-view.js';
import type { UiChange } from './shared/model.js';

const row = (name: string, state: 'Applied' | 'Conflict', conflictWith?: string): TemplateRow => ({
  template: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name },
  binding: `shop/${name}-configmap`,
  applied: '1/1',
  ready: '1/1',
  cells: [{ cluster: 'm1', state, reportedBy: 'binding', ...(conflictWith ? { conflictWith } : {}) }],
});

/** A read model whose rows the test sets, and whose change notices it sends. */
class FakeFleet {
  rows: TemplateRow[] = [];
  private listener: (() => void) | undefined;
  reader(): FleetReader {
    return {
      start: () => Promise.resolve(),
      waitForSync: () => Promise.resolve(),
      subscribe: (fn: () => void) => {
        this.listener = fn;
        return () => (this.listener = undefined);
      },
      clusters: (): ClusterFact[] => [],
      matrix: (): PlacementMatrix => ({ clusters: ['m1'], rows: this.rows, total: this.rows.length }),
      policies: (): PolicyFact[] => [],
      template: () => Promise.reject(new Error('not in this test')),
      events: () => Promise.resolve([]),
    };
  }
  changed(): void {
    this.listener?.();
  }
}

const settled = () => new Promise((r) => setTimeout(r, 30));

void describe('the hub-backed view', () => {
  void it('sends a change only for the rows that differ, and a delete for a row gone; the snapshot agrees', async () => {
    const fake = new FakeFleet();
    fake.rows = [row('a', 'Applied'), row('b', 'Applied')];
    const view = new HubFleetView(fake.reader(), { settleMs: 1 });
    const stop = new AbortController();
    await view.start(stop.signal);
    assert.deepEqual(
      view.snapshot().templates.map((r) => r.name),
      ['a', 'b'],
    );
    const changes: UiChange[] = [];
    view.subscribe((c) => changes.push(c));

    fake.rows = [row('a', 'Applied'), row('b', 'Conflict', 'kubectl-edit')];
    fake.changed();
    fake.changed(); // a burst: one recompute
    await settled();
    assert.deepEqual(
      changes.map((c) => [c.type, c.type === 'template' ? c.row?.cells.m1?.writer : undefined]),
      [['template', 'kubectl-edit']],
    );

    fake.rows = [row('b', 'Conflict', 'kubectl-edit')];
    fake.changed();
    await settled();
    const last = changes.at(-1);
    assert.equal(last?.type === 'template' && last.row, undefined, 'a deleted row is sent without its row');
    assert.equal(view.snapshot().seq, last?.seq);
    assert.deepEqual(
      view.snapshot().templates.map((r) => r.name),
      ['b'],
    );
    stop.abort();
  });
});
