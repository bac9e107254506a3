// Kubernetes resource quantities (`500m`, `2`, `1.5Gi`, `1e3`, `64Mi`), read as integer milli-units the
// way Kubernetes' MilliValue() reads them (rounded up), and written back as resource.Quantity's String()
// writes them (`16Gi`, `3500m`, `2k`). Pure; hostile strings are bounded (length) and anything
// unreadable is undefined, never NaN.

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

/**
 * How a quantity was written, which decides how it is written back (apimachinery's Format): `Ki`…`Ei` is
 * BinarySI, `e3` DecimalExponent, anything else (`m`, `k`, `G`, no suffix) DecimalSI.
 */
export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  /** The value in milli-units, rounded up (Kubernetes' MilliValue()), exactly. */
  milli: bigint;
  format: QuantityFormat;
}

const TEN = 10n;

/** A quantity string read exactly, in milli-units rounded up, with its format; undefined when it is not one. */
export function parseQuantity(q: unknown): Quantity | undefined {
  if (typeof q !== 'string' || q.length === 0 || q.length > MAX_LENGTH) return undefined;
  const m = QUANTITY.exec(q.trim());
  if (!m) return undefined;
  const number = m[1] as string;
  const negative = number.startsWith('-');
  const [whole = '', fraction = ''] = number.replace(/^[+-]/, '').split('.');
  const suffix = m[2] ?? '';
  const binary = Object.hasOwn(BINARY, suffix);
  const exponent = m[3] !== undefined ? Number(m[3]) : binary ? 0 : Math.round(Math.log10(DECIMAL[suffix] as number));
  // value = digits × 10^(exponent - fraction digits) × 2^binary; milli-units multiply it by 10^3.
  let numerator = BigInt(`${whole}${fraction}` || '0') * (binary ? BigInt(BINARY[suffix] as number) : 1n);
  let denominator = 1n;
  const power = exponent - fraction.length + 3;
  if (power >= 0) numerator *= TEN ** BigInt(power);
  else denominator = TEN ** BigInt(-power);
  let milli = numerator / denominator;
  if (numerator % denominator !== 0n) milli += 1n; // round up, as MilliValue() does
  const format: QuantityFormat = m[3] !== undefined ? 'DecimalExponent' : binary ? 'BinarySI' : 'DecimalSI';
  return { milli: negative ? -milli : milli, format };
}

/** A quantity in milli-units (1 CPU = 1000; 1 byte = 1000), rounded up; undefined when it is not one. */
export function parseMilli(q: unknown): number | undefined {
  if (typeof q === 'number') return Number.isFinite(q) ? Math.ceil(q * 1000) : undefined;
  const parsed = parseQuantity(q);
  if (!parsed) return undefined;
  const milli = Number(parsed.milli);
  return Number.isFinite(milli) ? milli : undefined;
}

/** Milli-units written as a quantity: whole units when exact, else `<n>m`. */
export function formatMilli(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

const DECIMAL_SUFFIX: Readonly<Record<number, string>> = {
  [-3]: 'm',
  0: '',
  3: 'k',
  6: 'M',
  9: 'G',
  12: 'T',
  15: 'P',
  18: 'E',
};
const BINARY_SUFFIX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;

/**
 * `milli` milli-units written as resource.Quantity's String() writes a quantity of that format
 * (apimachinery's CanonicalizeBytes): BinarySI with the largest of Ki…Ei that divides it exactly, unless
 * it is below 1024 or not whole (then DecimalSI); DecimalSI as a whole number times 10^(3k) with that
 * suffix (m, k, M, G, T, P, E), `2000` being `2k` and `1.5` being `1500m`; DecimalExponent as `<n>e<3k>`.
 * Past `E` (and `Ei`) the number grows instead (apimachinery would drop the suffix there).
 */
export function formatQuantity(milli: bigint, format: QuantityFormat): string {
  if (milli === 0n) return '0';
  const sign = milli < 0n ? '-' : '';
  const magnitude = milli < 0n ? -milli : milli;
  if (format === 'BinarySI' && magnitude >= 1024_000n && magnitude % 1000n === 0n) {
    let amount = magnitude / 1000n;
    let power = 0;
    while (power < BINARY_SUFFIX.length - 1 && amount % 1024n === 0n) {
      amount /= 1024n;
      power++;
    }
    return `${sign}${amount}${BINARY_SUFFIX[power]}`;
  }
  let amount = magnitude;
  let exponent = -3;
  while (amount % TEN === 0n) {
    amount /= TEN;
    exponent++;
  }
  const rest = exponent % 3;
  if (rest === 1 || rest === -2) {
    amount *= TEN;
    exponent -= 1;
  } else if (rest === 2 || rest === -1) {
    amount *= 100n;
    exponent -= 2;
  }
  if (format === 'DecimalExponent') return `${sign}${amount}${exponent === 0 ? '' : `e${exponent}`}`;
  if (exponent > 18) {
    amount *= TEN ** BigInt(exponent - 18);
    exponent = 18;
  }
  return `${sign}${amount}${DECIMAL_SUFFIX[exponent] ?? ''}`;
}

/** A quantity sum as apimachinery's Quantity.Add keeps it: the first term's format, unless the sum so far is zero. */
export function addQuantity(sum: Quantity | undefined, term: Quantity): Quantity {
  if (!sum) return { ...term };
  return { milli: sum.milli + term.milli, format: sum.milli === 0n ? term.format : sum.format };
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
