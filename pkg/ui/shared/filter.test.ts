import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { filterFromParams, filterToParams, NO_FILTER, rowMatches, visibleRange } from './filter.js';
import { STATE_FILTERS, type UiTemplateRow } from './model.js';

const row = (over: Partial<UiTemplateRow> = {}): UiTemplateRow => ({
  id: 'x',
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  namespace: 'shop',
  name: 'web',
  policy: { kind: 'PropagationPolicy', namespace: 'shop', name: 'web' },
  cells: {
    a: { state: 'Applied' },
    b: { state: 'Conflict', writer: 'kubectl' },
    c: { state: 'Applied', requiredBy: ['Deployment shop/web'] },
  },
  ...over,
});

void describe('matrix filters', () => {
  const cols = ['a', 'b', 'c'];
  const cases: Array<[string, Partial<typeof NO_FILTER>, boolean]> = [
    ['no filter keeps the row', {}, true],
    ['namespace', { namespace: 'shop' }, true],
    ['other namespace', { namespace: 'dev' }, false],
    ['kind', { kind: 'ConfigMap' }, false],
    ['policy', { policy: 'PropagationPolicy/shop/web' }, true],
    ['state found in some cluster', { state: 'Conflict' }, true],
    ['state found nowhere', { state: 'Evicting' }, false],
    ['RequiredBy: a dependency brought it', { state: 'RequiredBy' }, true],
    ['cluster and state together', { cluster: 'a', state: 'Conflict' }, false],
    ['name substring', { text: 'we' }, true],
  ];
  for (const [name, f, want] of cases) {
    void it(name, () => {
      const filter = { ...NO_FILTER, ...f };
      const columns = filter.cluster ? [filter.cluster] : cols;
      assert.equal(rowMatches(row(), filter, columns), want);
    });
  }

  void it('a cell map read from input is read as own properties only', () => {
    assert.equal(rowMatches(row({ cells: {} }), { ...NO_FILTER, cluster: 'toString' }, ['toString']), false);
  });

  void it('round-trip through the URL, dropping an unknown state', () => {
    const f = { ...NO_FILTER, namespace: 'a&b', state: 'Conflict' as const };
    assert.deepEqual(filterFromParams(filterToParams(f), STATE_FILTERS), f);
    assert.equal(filterFromParams('state=<script>', STATE_FILTERS).state, '');
  });
});

void describe('virtualised rows', () => {
  void it('draw the rows in view plus overscan, clamped to the list', () => {
    assert.deepEqual(visibleRange(0, 260, 26, 5000, 8), { start: 0, end: 19 });
    assert.deepEqual(visibleRange(26 * 1000, 260, 26, 5000, 8), { start: 992, end: 1019 });
    assert.deepEqual(visibleRange(1e9, 260, 26, 5000, 8), { start: 4981, end: 5000 });
    assert.deepEqual(visibleRange(-50, 260, 26, 3, 8), { start: 0, end: 3 });
  });
});
