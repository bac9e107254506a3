// The clusters view: readiness and Lease age, sync mode, taints, capacity bars, version, API groups.

import type { UiCapacity, UiCluster } from '../shared/model.js';
import { age, el, replace, table } from './dom.js';
import type { Store } from './store.js';

function bar(c: UiCapacity): HTMLElement {
  const ratio = c.allocatable > 0 ? Math.min(1, c.allocated / c.allocatable) : 0;
  const fill = el('span');
  fill.style.width = `${Math.round(ratio * 100)}%`;
  return el(
    'div',
    { title: `${c.resource}: ${c.allocated} of ${c.allocatable} allocated` },
    el('span', { className: ratio >= 0.9 ? 'bar full' : 'bar' }, fill),
    `${c.resource} ${Math.round(ratio * 100)}%`,
  );
}

function clusterRow(c: UiCluster): HTMLElement {
  return el(
    'tr',
    { dataset: { cluster: c.name } },
    el(
      'td',
      null,
      el('strong', null, c.name),
      el('div', { className: 'muted' }, [c.provider, c.region].filter(Boolean).join(' · ')),
    ),
    el('td', null, el('span', { className: `pill ${c.ready}`, title: c.readyMessage ?? '' }, c.ready)),
    el('td', null, c.leaseRenewed ? age(c.leaseRenewed) : '—'),
    el('td', null, c.syncMode),
    el(
      'td',
      null,
      ...c.taints.map((t) =>
        el(
          'span',
          { className: 'pill taint', title: t.timeAdded ? `added ${t.timeAdded}` : '' },
          `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}${t.timeAdded ? ` (${age(t.timeAdded)})` : ''}`,
        ),
      ),
    ),
    el('td', null, ...c.capacity.map(bar)),
    el('td', null, c.kubernetesVersion ?? '—'),
    el('td', null, c.apiGroups ?? '—'),
    el(
      'td',
      null,
      ...Object.entries(c.labels).map(([k, v]) =>
        el('span', { className: 'pill Unknown', dataset: { label: k } }, `${k}=${v}`),
      ),
    ),
  );
}

export function renderClusters(store: Store, root: HTMLElement): () => void {
  const draw = () => {
    const head = ['cluster', 'Ready', 'Lease', 'sync', 'taints', 'capacity', 'version', 'API groups', 'labels'];
    replace(
      root,
      el('h2', null, `Clusters (${store.clusters.size})`),
      table({ dataset: { testid: 'clusters' } }, head, store.clusterList().map(clusterRow)),
    );
  };
  root.className = '';
  draw();
  return store.onChange(draw);
}
