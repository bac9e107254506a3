// The policies view: what each propagation policy claims, whether it is READY, and the Karmada fields it
// sets that Flotilla accepts without acting on them.

import { el, replace, row, table } from './dom.js';
import type { Store } from './store.js';

export function renderPolicies(store: Store, root: HTMLElement): () => void {
  const draw = () => {
    const policies = [...store.policies.values()].sort(
      (a, b) => (a.namespace ?? '').localeCompare(b.namespace ?? '') || a.name.localeCompare(b.name),
    );
    replace(
      root,
      el('h2', null, `Policies (${policies.length})`),
      table(
        { dataset: { testid: 'policies' } },
        ['kind', 'namespace', 'name', 'selects', 'templates', 'READY', 'accepted, not acted upon'],
        policies.map((p) =>
          row(
            { dataset: { policy: p.name } },
            p.kind,
            p.namespace ?? '',
            p.name,
            el('td', null, ...p.selects.map((x) => el('div', { className: 'mono' }, x))),
            p.role === 'propagation' ? p.claimed : '',
            el('span', { className: `pill ${p.ready}`, title: p.readyMessage ?? '' }, p.ready),
            el('td', null, ...p.ignoredFields.map((f) => el('div', { className: 'mono' }, f))),
          ),
        ),
      ),
    );
  };
  root.className = '';
  draw();
  return store.onChange(draw);
}
