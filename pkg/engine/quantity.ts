// Kubernetes resource quantities (`500m`, `2`, `1.5Gi`, `1e3`, `64Mi`), read as integer milli-units the
// way Kubernetes' MilliValue() reads them (rounded up), and written back in a form every apiserver
// accepts. Pure; hostile strings are bounded (length) and anything unreadable is undefined, never NaN.

import { isObject, setOwn } from './json.js';

const MAX_LENGTH = 64;
const BINARY: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};
const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d{1,3}))?$/;

/** A quantity in milli-units (1 CPU = 1000; 1 byte = 1000), rounded up; undefined when it is not one. */
export function parseMilli(q: unknown): number | undefined {
  if (typeof q === 'number') return Number.isFinite(q) ? Math.ceil(q * 1000) : undefined;
  if (typeof q !== 'string' || q.length === 0 || q.length > MAX_LENGTH) return undefined;
  const m = QUANTITY.exec(q.trim());
  if (!m) return undefined;
  const base = Number(m[1]);
  const suffix = m[2] ?? '';
  const factor =
    m[3] !== undefined
      ? 10 ** Number(m[3])
      : Object.hasOwn(BINARY, suffix)
        ? (BINARY[suffix] as number)
        : (DECIMAL[suffix] as number);
  const milli = base * factor * 1000;
  if (!Number.isFinite(milli)) return undefined;
  // Round up as Kubernetes does, but not past float noise (0.1 * 1000 is 100.00000000000001).
  const rounded = Math.round(milli);
  return Math.abs(milli - rounded) < 1e-6 * Math.max(1, Math.abs(milli)) ? rounded : Math.ceil(milli);
}

/** Milli-units written as a quantity: whole units when exact, else `<n>m`. */
export function formatMilli(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

/** A ResourceList (`{cpu: "2", memory: "4Gi"}`) in milli-units; entries that are not quantities are left out. */
export function readResourceList(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!isObject(v)) return out;
  for (const [k, q] of Object.entries(v)) {
    const milli = parseMilli(q);
    if (milli !== undefined && milli >= 0) setOwn(out, k, milli);
  }
  return out;
}
