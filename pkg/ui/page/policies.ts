// The policies view: what each propagation policy claims, whether it is READY, and the Karmada fields it
// sets that Flotilla accepts without acting on them.

import { el, replace } from './dom.js';
import type { Store } from './store.js';

export function renderPolicies(store: Store, root: HTMLElement): () => void {
  const draw = () => {
    const policies = [...store.policies.values()].sort(
      (a, b) => (a.namespace ?? '').localeCompare(b.namespace ?? '') || a.name.localeCompare(b.name),
    );
    replace(
      root,
      el('h2', null, `Policies (${policies.length})`),
      el(
        'table',
        { dataset: { testid: 'policies' } },
        el(
          'thead',
          null,
          el(
            'tr',
            null,
            ...['kind', 'namespace', 'name', 'selects', 'templates', 'READY', 'accepted, not acted upon'].map((h) =>
              el('th', null, h),
            ),
          ),
        ),
        el(
          'tbody',
          null,
          ...policies.map((p) =>
            el(
              'tr',
              { dataset: { policy: p.name } },
              el('td', null, p.kind),
              el('td', null, p.namespace ?? ''),
              el('td', null, p.name),
              el('td', null, ...p.selects.map((x) => el('div', { className: 'mono' }, x))),
              el('td', null, p.role === 'propagation' ? p.claimed : ''),
              el('td', null, el('span', { className: `pill ${p.ready}`, title: p.readyMessage ?? '' }, p.ready)),
              el('td', null, ...p.ignoredFields.map((f) => el('div', { className: 'mono' }, f))),
            ),
          ),
        ),
      ),
    );
  };
  root.className = '';
  draw();
  return store.onChange(draw);
}
