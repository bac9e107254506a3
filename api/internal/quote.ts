// Input quoted back in a message: bounded in depth and length whatever the value, so a hostile value (an
// array nested thousands deep, a megabyte string) can neither overflow the stack of JSON.stringify nor make
// a message large. Strings and numbers are quoted as JSON; objects and arrays are shown to QUOTE_DEPTH
// levels, deeper ones as `[…]` / `{…}`; the result is cut at `maxChars` with `…`.

const QUOTE_DEPTH = 3;
const QUOTE_ITEMS = 8;
export const QUOTE_CHARS = 200;

function render(v: unknown, depth: number, budget: { left: number }): string {
  if (budget.left <= 0) return '…';
  let out: string;
  if (v === undefined) out = 'undefined';
  else if (v === null || typeof v === 'boolean' || typeof v === 'number') out = String(v);
  else if (typeof v === 'string') out = JSON.stringify(v.length > budget.left ? `${v.slice(0, budget.left)}…` : v);
  else if (Array.isArray(v)) {
    if (depth >= QUOTE_DEPTH) out = v.length === 0 ? '[]' : '[…]';
    else {
      const items = v.slice(0, QUOTE_ITEMS).map((x: unknown) => render(x, depth + 1, budget));
      out = `[${items.join(',')}${v.length > QUOTE_ITEMS ? ',…' : ''}]`;
    }
  } else if (typeof v === 'object') {
    const keys = Object.keys(v);
    if (depth >= QUOTE_DEPTH) out = keys.length === 0 ? '{}' : '{…}';
    else {
      const entries = keys
        .slice(0, QUOTE_ITEMS)
        .map(
          (k) => `${render(k, QUOTE_DEPTH, budget)}:${render((v as Record<string, unknown>)[k], depth + 1, budget)}`,
        );
      out = `{${entries.join(',')}${keys.length > QUOTE_ITEMS ? ',…' : ''}}`;
    }
  } else out = typeof v;
  budget.left -= out.length;
  return out;
}

/** `value` as it can be quoted in a message: JSON-like, at most `maxChars` characters and QUOTE_DEPTH levels. */
export function quote(value: unknown, maxChars = QUOTE_CHARS): string {
  const text = render(value, 0, { left: maxChars });
  return text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text;
}

/** `name value` for a present value, `name is missing` for an absent one. */
export function describeField(name: string, value: unknown): string {
  return value === undefined || value === null ? `${name} is missing` : `${name} ${quote(value)}`;
}
