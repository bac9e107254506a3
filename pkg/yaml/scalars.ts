// YAML 1.1 scalars as kubectl and the apiserver read them: sigs.k8s.io/yaml hands YAML to
// go.yaml.in/yaml/v2 (`resolve` in resolve.go) and converts the result to JSON. This file restates those
// rules so that a manifest means the same here as it does to kubectl: `yes`/`on`/`y` are booleans, `0644`
// and `0o644` are octal, `1_000` is 1000, `12:30:45` is a string (no base-60), timestamps stay strings.
// Checked against the real thing by pkg/yaml/oracle.test.ts (test/fixtures/yaml-oracle.json).

export const TAG_PREFIX = 'tag:yaml.org,2002:';
export const STR_TAG = `${TAG_PREFIX}str`;
export const BOOL_TAG = `${TAG_PREFIX}bool`;
export const INT_TAG = `${TAG_PREFIX}int`;
export const FLOAT_TAG = `${TAG_PREFIX}float`;
export const NULL_TAG = `${TAG_PREFIX}null`;
export const TIMESTAMP_TAG = `${TAG_PREFIX}timestamp`;
export const BINARY_TAG = `${TAG_PREFIX}binary`;
export const MERGE_TAG = `${TAG_PREFIX}merge`;

/**
 * What go-yaml v2 makes of a scalar. `int` holds the exact value (int64, or uint64 above 2^63-1 when
 * `unsigned`); `timestamp` keeps the text, because v2 hands timestamps to untyped targets as strings;
 * `binary` is the decoded bytes; `other` is a scalar with a tag v2 does not resolve (`!foo`, `!!set`),
 * which reads as its text.
 */
export type Resolved =
  | { kind: 'null' }
  | { kind: 'bool'; value: boolean }
  | { kind: 'int'; value: bigint; unsigned: boolean }
  | { kind: 'float'; value: number }
  | { kind: 'str'; value: string }
  | { kind: 'timestamp'; value: string }
  | { kind: 'binary'; value: Uint8Array }
  | { kind: 'other'; value: string };

export class ScalarError extends Error {
  readonly code = 'YAML_SCALAR';
  constructor(message: string) {
    super(message);
    this.name = 'ScalarError';
  }
}

const MAP = new Map<string, Resolved>();
for (const [value, words] of [
  [true, ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']],
  [false, ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']],
] as const) {
  for (const w of words) MAP.set(w, { kind: 'bool', value });
}
for (const w of ['', '~', 'null', 'Null', 'NULL']) MAP.set(w, { kind: 'null' });
for (const w of ['.nan', '.NaN', '.NAN']) MAP.set(w, { kind: 'float', value: NaN });
for (const w of ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']) MAP.set(w, { kind: 'float', value: Infinity });
for (const w of ['-.inf', '-.Inf', '-.INF']) MAP.set(w, { kind: 'float', value: -Infinity });

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** strconv.ParseInt/ParseUint with base 0 (prefixes 0x, 0o, 0b, and a leading 0 for octal), no underscores. */
function parseGoInt(s: string): { value: bigint; unsigned: boolean } | undefined {
  const m = /^([+-]?)(?:0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)|0([0-7]*)|([1-9][0-9]*))$/.exec(s);
  if (!m) return undefined;
  const [, sign, prefixed, octal, decimal] = m;
  let magnitude: bigint;
  if (prefixed !== undefined) magnitude = BigInt(`0${prefixed.toLowerCase()}`);
  else if (octal !== undefined) magnitude = octal === '' ? 0n : BigInt(`0o${octal}`);
  else magnitude = BigInt(decimal ?? '0');
  const value = sign === '-' ? -magnitude : magnitude;
  if (value >= INT64_MIN && value <= INT64_MAX) return { value, unsigned: false };
  // ParseUint takes no sign.
  if (sign === '' && value <= UINT64_MAX) return { value, unsigned: true };
  return undefined;
}

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
// strconv.ParseFloat on text that starts with '.': underscores only between digits.
const DOT_FLOAT = /^\.[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+(?:_[0-9]+)*)?$/;

/** strconv.ParseFloat's answer for decimal text: out-of-range values are an error there, not ±Inf. */
function parseGoFloat(s: string): number | undefined {
  const f = Number(s.replace(/_/g, ''));
  return Number.isFinite(f) ? f : undefined;
}

/** v2's parseTimestamp: the layouts it accepts, with the field ranges time.Parse checks. */
export function isTimestamp(s: string): boolean {
  const m =
    /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:([Tt ])([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$/.exec(
      s,
    );
  if (!m) return false;
  const [, y, mo, d, sep, h, mi, se, zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12) return false;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > days) return false;
  if (sep === undefined) return true;
  if (Number(h) > 23 || Number(mi) > 59 || Number(se) > 59) return false;
  // "2006-1-2T15:4:5Z07:00" needs a zone; "2006-1-2 15:4:5" has none.
  if (sep === ' ') return zone === undefined;
  if (zone === undefined) return false;
  if (zone !== 'Z' && (Number(zone.slice(1, 3)) > 23 || Number(zone.slice(4, 6)) > 59)) return false;
  return true;
}

function hintOf(s: string): 'S' | 'D' | 'M' | '.' | 'N' | undefined {
  if (s === '') return 'N';
  const c = s[0] ?? '';
  if (c === '+' || c === '-') return 'S';
  if (c >= '0' && c <= '9') return 'D';
  if ('yYnNtTfFoO~'.includes(c)) return 'M';
  if (c === '.') return '.';
  return undefined;
}

const RESOLVABLE = new Set(['', STR_TAG, BOOL_TAG, INT_TAG, FLOAT_TAG, NULL_TAG, TIMESTAMP_TAG]);

function shortTag(tag: string): string {
  return tag.startsWith(TAG_PREFIX) ? `!!${tag.slice(TAG_PREFIX.length)}` : tag;
}

const TAG_OF: Record<Resolved['kind'], string> = {
  null: NULL_TAG,
  bool: BOOL_TAG,
  int: INT_TAG,
  float: FLOAT_TAG,
  str: STR_TAG,
  timestamp: TIMESTAMP_TAG,
  binary: BINARY_TAG,
  other: '',
};

function resolveImplicit(tag: string, s: string): Resolved {
  const hint = hintOf(s);
  if (hint === undefined || tag === STR_TAG) return { kind: 'str', value: s };
  const known = MAP.get(s);
  if (known) return known;
  if (hint === '.') {
    if (DOT_FLOAT.test(s)) {
      const f = parseGoFloat(s);
      if (f !== undefined) return { kind: 'float', value: f };
    }
  } else if (hint === 'D' || hint === 'S') {
    if ((tag === '' || tag === TIMESTAMP_TAG) && isTimestamp(s)) return { kind: 'timestamp', value: s };
    const plain = s.replace(/_/g, '');
    const int = parseGoInt(plain);
    if (int) return { kind: 'int', ...int };
    if (YAML_STYLE_FLOAT.test(plain)) {
      const f = parseGoFloat(plain);
      if (f !== undefined) return { kind: 'float', value: f };
    }
  }
  return { kind: 'str', value: s };
}

// encoding/base64 StdEncoding.DecodeString: padded, '\r' and '\n' ignored, nothing else.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Resolves a scalar as v2 does. `tag` is the explicit tag in long form ('' for none); `plain` is whether
 * it was written without quotes and without block style (quoted and block scalars without a tag are
 * strings). Throws ScalarError where v2 fails ("cannot decode !!str `x` as a !!int").
 */
export function resolveScalar(text: string, tag: string, plain: boolean): Resolved {
  if (tag === '' && !plain) return { kind: 'str', value: text };
  if (tag === '!') return { kind: 'other', value: text };
  if (tag === BINARY_TAG) {
    const compact = text.replace(/[\r\n]/g, '');
    if (!BASE64.test(compact)) throw new ScalarError('!!binary value contains invalid base64 data');
    return { kind: 'binary', value: Uint8Array.from(Buffer.from(compact, 'base64')) };
  }
  if (!RESOLVABLE.has(tag)) return { kind: 'other', value: text };
  const r = resolveImplicit(tag, text);
  if (tag === '' || tag === STR_TAG || tag === TAG_OF[r.kind]) return r;
  if (tag === FLOAT_TAG && r.kind === 'int') return { kind: 'float', value: Number(r.value) };
  throw new ScalarError(`cannot decode ${shortTag(TAG_OF[r.kind])} \`${text}\` as a ${shortTag(tag)}`);
}

/** How a plain, untagged scalar with this text reads. */
export function resolvePlain(text: string): Resolved {
  return resolveImplicit('', text);
}

/**
 * strconv.FormatFloat(f, 'g', -1, 32), which sigs.k8s.io/yaml uses for float map keys: the value is
 * rounded to float32 and printed with the fewest digits that read back as that float32.
 */
export function formatFloat32(f: number): string {
  const x = Math.fround(f);
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  let digits = '';
  let exp = 0;
  for (let p = 1; p <= 9; p++) {
    const e = Math.abs(x).toExponential(p - 1);
    if (Math.fround(Number(e)) === Math.abs(x) || p === 9) {
      const [mant = '', ex = '0'] = e.split('e');
      digits = mant.replace('.', '').replace(/0+$/, '') || '0';
      exp = Number(ex);
      break;
    }
  }
  const sign = x < 0 ? '-' : '';
  if (exp < -4 || exp >= 6) {
    const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const ex = Math.abs(exp) < 10 ? `0${Math.abs(exp)}` : String(Math.abs(exp));
    return `${sign}${mant}e${exp < 0 ? '-' : '+'}${ex}`;
  }
  const point = exp + 1; // digits before the decimal point
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
