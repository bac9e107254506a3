// Building the page with DOM calls only: text always goes in as text nodes (textContent), never as
// markup, so object names and label values from the hub cannot become elements or script.

type Child = Node | string | number | null | undefined | false;

export interface Props {
  className?: string;
  title?: string;
  href?: string;
  dataset?: Record<string, string>;
  onclick?: (ev: Event) => void;
}

/** An element with properties and children; strings become text nodes. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props) {
    if (props.className) e.className = props.className;
    if (props.title) e.title = props.title;
    if (props.href !== undefined && e instanceof HTMLAnchorElement) e.href = props.href;
    if (props.dataset) for (const [k, v] of Object.entries(props.dataset)) e.dataset[k] = v;
    if (props.onclick) e.addEventListener('click', props.onclick);
  }
  append(e, ...children);
  return e;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    parent.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** A table: a header row of `head`, then `rows`. */
export function table(props: Props | null, head: readonly string[], rows: readonly Node[]): HTMLTableElement {
  return el(
    'table',
    props,
    el('thead', null, el('tr', null, ...head.map((h) => el('th', null, h)))),
    el('tbody', null, ...rows),
  );
}

/** A table row: each cell a `<td>` holding it, or the `<td>` given. */
export function row(props: Props | null, ...cells: Array<Child | HTMLTableCellElement>): HTMLTableRowElement {
  return el('tr', props, ...cells.map((c) => (c instanceof HTMLTableCellElement ? c : el('td', null, c))));
}

/** Replaces every child of `parent`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, ...children);
}

/** A `<select>` whose options are `[value, label]` pairs (label defaults to the value). */
export function select(
  label: string,
  name: string,
  options: Array<string | [string, string]>,
  value: string,
  onchange: (v: string) => void,
): HTMLLabelElement {
  const s = el('select', { dataset: { filter: name } });
  for (const o of options) {
    const [v, text] = typeof o === 'string' ? [o, o] : o;
    const opt = el('option', null, text);
    opt.value = v;
    s.appendChild(opt);
  }
  s.value = value;
  s.addEventListener('change', () => onchange(s.value));
  return el('label', null, label, s);
}

/** How long ago an RFC 3339 time was, in kubectl's style (`45s`, `3m`, `2h`, `4d`); '' when absent. */
export function age(time: string | undefined, now = Date.now()): string {
  if (!time) return '';
  const t = Date.parse(time);
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}
