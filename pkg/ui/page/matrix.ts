// The placement matrix: templates × clusters, virtualised (only the rows in view exist in the DOM, so
// 5,000 templates cost what 50 do), with filters kept in the URL hash.

import { STATE_FILTERS, type UiCell, type UiCluster, type UiTemplateRow } from '../shared/model.js';
import {
  filterChoices,
  filterFromParams,
  filterToParams,
  rowMatches,
  visibleClusters,
  visibleRange,
  type MatrixFilter,
} from '../shared/filter.js';
import { el, replace, select } from './dom.js';
import type { Store } from './store.js';

const ROW_HEIGHT = 26;

/** The short text of a cell: the state, and what the state needs said (writer, replicas, deadline). */
export function cellText(cell: UiCell): string {
  const parts: string[] = [cell.state];
  if (cell.replicas !== undefined) parts.push(`×${cell.replicas}`);
  if (cell.state === 'Conflict' && cell.writer) parts.push(cell.writer);
  if (cell.state === 'Evicting' && cell.purgeMode) parts.push(cell.purgeMode);
  if (cell.requiredBy?.length) parts.push(`for ${cell.requiredBy.join(', ')}`);
  return parts.join(' · ');
}

function cellTitle(cluster: string, cell: UiCell): string {
  const lines = [`${cluster}: ${cell.state}`];
  if (cell.writer) lines.push(`other writer: ${cell.writer}`);
  if (cell.purgeMode) lines.push(`purge mode: ${cell.purgeMode}`);
  if (cell.deadline) lines.push(`kept until: ${cell.deadline}`);
  if (cell.requiredBy?.length) lines.push(`required by: ${cell.requiredBy.join(', ')}`);
  if (cell.message) lines.push(cell.message);
  return lines.join('\n');
}

export class MatrixView {
  private filter: MatrixFilter;
  private rows: UiTemplateRow[] = [];
  private columns: UiCluster[] = [];
  private readonly scroller = el('div', { className: 'matrix', dataset: { testid: 'matrix' } });
  private readonly spacer = el('div');
  private readonly head = el('div', { className: 'mhead' });
  private readonly body = el('div');
  private readonly filters = el('div', { className: 'filters' });
  private readonly count = el('span', { className: 'count' });
  private frame = 0;
  private dirty = true;
  private readonly stop: () => void;

  constructor(
    private readonly store: Store,
    private readonly root: HTMLElement,
    query: string,
  ) {
    this.filter = filterFromParams(query, STATE_FILTERS);
    this.spacer.style.position = 'relative';
    this.spacer.appendChild(this.body);
    this.scroller.append(this.head, this.spacer);
    root.className = 'matrix-view';
    replace(root, this.filters, this.scroller);
    this.scroller.addEventListener('scroll', () => this.schedule(false), { passive: true });
    window.addEventListener('resize', this.onResize);
    this.stop = store.onChange(() => this.schedule(true));
    this.schedule(true);
  }

  dispose(): void {
    this.stop();
    window.removeEventListener('resize', this.onResize);
    cancelAnimationFrame(this.frame);
  }

  private readonly onResize = () => this.schedule(false);

  private schedule(dataChanged: boolean): void {
    this.dirty ||= dataChanged;
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      if (this.dirty) this.recompute();
      this.dirty = false;
      this.draw();
    });
  }

  private setFilter(patch: Partial<MatrixFilter>): void {
    this.filter = { ...this.filter, ...patch };
    history.replaceState(null, '', `#/matrix?${filterToParams(this.filter)}`);
    this.schedule(true);
  }

  private recompute(): void {
    const all = this.store.templateRows();
    this.columns = visibleClusters(this.store.clusterList(), this.filter);
    const names = this.columns.map((c) => c.name);
    this.rows = all.filter((r) => rowMatches(r, this.filter, names));
    this.drawFilters(all);
    this.drawHead();
    this.spacer.style.height = `${this.rows.length * ROW_HEIGHT}px`;
    this.spacer.style.width = `calc(var(--first) + ${this.columns.length} * var(--col))`;
  }

  private drawFilters(all: UiTemplateRow[]): void {
    const choices = filterChoices(all);
    const any = (xs: string[]): Array<string | [string, string]> => [['', 'any'], ...xs];
    const f = this.filter;
    const text = el('input', { dataset: { filter: 'text' } });
    text.placeholder = 'name contains';
    text.value = f.text;
    text.addEventListener('change', () => this.setFilter({ text: text.value }));
    this.count.textContent = `${this.rows.length} of ${all.length} templates`;
    replace(
      this.filters,
      select('namespace', 'namespace', any(choices.namespaces), f.namespace, (v) => this.setFilter({ namespace: v })),
      select('kind', 'kind', any(choices.kinds), f.kind, (v) => this.setFilter({ kind: v })),
      select('policy', 'policy', any(choices.policies), f.policy, (v) => this.setFilter({ policy: v })),
      select('cluster', 'cluster', any(this.store.clusterList().map((c) => c.name)), f.cluster, (v) =>
        this.setFilter({ cluster: v }),
      ),
      select('state', 'state', any([...STATE_FILTERS]), f.state, (v) =>
        this.setFilter({ state: v as MatrixFilter['state'] }),
      ),
      text,
      this.count,
    );
  }

  private drawHead(): void {
    replace(
      this.head,
      el('div', { className: 'mname' }, 'template'),
      ...this.columns.map((c) => el('div', { className: 'mcell', title: `${c.name} (Ready ${c.ready})` }, c.name)),
    );
  }

  private draw(): void {
    const { start, end } = visibleRange(
      this.scroller.scrollTop,
      this.scroller.clientHeight,
      ROW_HEIGHT,
      this.rows.length,
    );
    const frag = document.createDocumentFragment();
    for (let i = start; i < end; i++) {
      const row = this.rows[i];
      if (row) frag.appendChild(this.drawRow(row, i));
    }
    replace(this.body, frag);
  }

  private drawRow(row: UiTemplateRow, index: number): HTMLElement {
    const link = el(
      'a',
      { href: `#/template?id=${encodeURIComponent(row.id)}` },
      el('span', { className: 'kind' }, row.kind),
      row.namespace ? `${row.namespace}/${row.name}` : row.name,
    );
    const r = el(
      'div',
      { className: 'mrow', dataset: { rowId: row.id } },
      el(
        'div',
        { className: 'mname', title: row.policy ? `claimed by ${row.policy.kind} ${row.policy.name}` : 'unclaimed' },
        link,
      ),
    );
    for (const c of this.columns) {
      const cell = Object.hasOwn(row.cells, c.name) ? row.cells[c.name] : undefined;
      r.appendChild(
        cell
          ? el(
              'div',
              {
                className: `mcell s-${cell.state}`,
                title: cellTitle(c.name, cell),
                dataset: { cluster: c.name, state: cell.state },
              },
              cellText(cell),
            )
          : el('div', { className: 'mcell', dataset: { cluster: c.name, state: '' } }),
      );
    }
    r.style.top = `${index * ROW_HEIGHT}px`;
    return r;
  }
}
