// The page's entry: one event stream (the snapshot, then changes) feeds the store; the URL hash picks
// the view (#/matrix?filters, #/clusters, #/policies, #/template?id=ID).

import type { UiChange, UiSnapshot } from '../shared/model.js';
import { renderClusters } from './clusters.js';
import { el, replace } from './dom.js';
import { MatrixView } from './matrix.js';
import { renderPolicies } from './policies.js';
import { Store } from './store.js';
import { renderTemplate } from './template.js';

const store = new Store();
const view = document.getElementById('view') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
const status = document.getElementById('status') as HTMLElement;
let dispose: () => void = () => undefined;

const VIEWS = [
  ['matrix', 'Placement'],
  ['clusters', 'Clusters'],
  ['policies', 'Policies'],
] as const;

function route(): void {
  dispose();
  const hash = location.hash.replace(/^#\/?/, '');
  const [name = 'matrix', query = ''] = hash.split('?', 2) as [string?, string?];
  replace(nav, ...VIEWS.map(([v, label]) => el('a', { href: `#/${v}`, className: v === name ? 'active' : '' }, label)));
  if (name === 'clusters') dispose = renderClusters(store, view);
  else if (name === 'policies') dispose = renderPolicies(store, view);
  else if (name === 'template') {
    dispose = renderTemplate(store, view, new URLSearchParams(query).get('id') ?? '');
  } else {
    const m = new MatrixView(store, view, query);
    dispose = () => m.dispose();
  }
}

function connect(): void {
  const source = new EventSource('/api/stream');
  // Changes arrive in bursts; applying them once per frame keeps a busy hub from redrawing per event.
  let pending: UiChange[] = [];
  let frame = 0;
  source.addEventListener('snapshot', (e: MessageEvent<string>) => {
    pending = [];
    store.reset(JSON.parse(e.data) as UiSnapshot);
    status.textContent = 'live';
    status.className = 'status live';
    document.body.dataset.seq = String(store.seq);
  });
  source.addEventListener('change', (e: MessageEvent<string>) => {
    pending.push(JSON.parse(e.data) as UiChange);
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      const batch = pending;
      pending = [];
      store.apply(batch);
      document.body.dataset.seq = String(store.seq);
    });
  });
  source.addEventListener('error', () => {
    status.textContent = 'reconnecting…';
    status.className = 'status down';
  });
}

window.addEventListener('hashchange', route);
route();
connect();
