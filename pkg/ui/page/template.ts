// One template: its claiming policy, why each cluster was chosen or not, per cluster the copy as
// delivered against the template as a diff (each changed field with the override rule that set it), and
// its recent Events. Fetched again whenever the template's row changes.

import type { UiClusterCopy, UiDiffLine, UiTemplateDetail } from '../shared/model.js';
import { age, el, replace, row, table } from './dom.js';
import { cellText } from './matrix.js';
import type { Store } from './store.js';

function diffTable(lines: UiDiffLine[]): HTMLElement {
  if (lines.length === 0) return el('p', { className: 'muted' }, 'same as the template');
  return table(
    { className: 'diff' },
    ['field', 'template', 'delivered', 'set by'],
    lines.map((d) =>
      row(
        { dataset: { path: d.path } },
        d.path,
        el('td', { className: 'old' }, d.template ?? ''),
        el('td', { className: 'new' }, d.delivered ?? ''),
        el('td', { className: 'override' }, d.setBy ?? ''),
      ),
    ),
  );
}

function copyBox(c: UiClusterCopy): HTMLElement {
  const body = el('div');
  const show = (which: 'diff' | 'yaml') => {
    replace(body, which === 'diff' ? diffTable(c.diff) : el('pre', null, c.delivered ?? ''));
    diffBtn.className = which === 'diff' ? 'active' : '';
    yamlBtn.className = which === 'yaml' ? 'active' : '';
  };
  const diffBtn = el('button', { onclick: () => show('diff') }, 'diff');
  const yamlBtn = el('button', { onclick: () => show('yaml') }, 'as delivered');
  show('diff');
  return el(
    'section',
    { className: 'copy', dataset: { copy: c.cluster } },
    el('h3', null, c.cluster, ' ', c.cell ? el('span', { className: `pill s-${c.cell.state}` }, cellText(c.cell)) : ''),
    c.cell?.message ? el('p', { className: 'muted' }, c.cell.message) : null,
    el('div', { className: 'tabs' }, diffBtn, yamlBtn),
    body,
  );
}

function render(d: UiTemplateDetail): HTMLElement[] {
  const r = d.row;
  const policy = r.policy
    ? `${r.policy.kind} ${r.policy.namespace ? `${r.policy.namespace}/` : ''}${r.policy.name}`
    : 'no policy claims it';
  return [
    el('h2', null, `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`),
    el('p', null, 'claimed by ', el('strong', { dataset: { testid: 'policy' } }, policy)),
    ...d.errors.map((e) => el('p', { className: 'error' }, e)),
    el('h3', null, 'Placement'),
    table(
      { dataset: { testid: 'placement' } },
      ['cluster', 'chosen', 'why'],
      d.placement.map((p) => row(null, p.cluster, p.selected ? 'yes' : 'no', p.reason)),
    ),
    el('h3', null, 'Per cluster'),
    ...d.copies.map(copyBox),
    el('h3', null, 'Recent events'),
    d.events.length === 0
      ? el('p', { className: 'muted' }, 'none')
      : table(
          { dataset: { testid: 'events' } },
          ['type', 'reason', 'age', 'count', 'message'],
          d.events.map((e) => row(null, e.type, e.reason, age(e.lastSeen), e.count, e.message)),
        ),
    el('details', null, el('summary', null, 'template'), el('pre', null, d.template)),
  ];
}

export function renderTemplate(store: Store, root: HTMLElement, id: string): () => void {
  root.className = '';
  let generation = 0;
  const load = async () => {
    const mine = ++generation;
    const res = await fetch(`/api/template?id=${encodeURIComponent(id)}`);
    if (mine !== generation) return;
    if (!res.ok) {
      replace(
        root,
        el('p', { className: 'error' }, `${id}: ${res.status === 404 ? 'no such template' : `HTTP ${res.status}`}`),
      );
      return;
    }
    const d = (await res.json()) as UiTemplateDetail;
    if (mine !== generation) return;
    root.dataset.loadedSeq = String(store.seq);
    replace(root, ...render(d));
  };
  const reload = () => void load().catch((e: unknown) => replace(root, el('p', { className: 'error' }, String(e))));
  replace(root, el('p', { className: 'muted' }, 'loading…'));
  reload();
  const stop = store.onChange((ids) => {
    if (ids === 'all' || ids.has(id)) reload();
  });
  return () => {
    generation++;
    stop();
  };
}
