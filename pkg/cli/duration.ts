// Durations in Go's syntax (time.ParseDuration), as kubectl and every Kubernetes component read them:
// an optional sign, then one or more decimal numbers each with a unit, e.g. `90s`, `1m30s`, `1h2m3.5s`,
// `500ms`, `-1.5h`; units ns, us (or µs/μs), ms, s, m, h. A bare `0` is the only number without a unit.

export class DurationError extends Error {
  readonly code = 'DURATION';
  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 MICRO SIGN
  μs: 1e-3, // U+03BC GREEK SMALL LETTER MU
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's limit: a time.Duration is an int64 count of nanoseconds (about 292 years). */
const MAX_MS = 9_223_372_036_854.775;

const EXAMPLES = 'e.g. 500ms, 90s, 1m30s or 1h';

/**
 * Parses a Go duration into milliseconds (fractional below 1 ms). Throws DurationError saying what is
 * wrong; the message does not name the flag, so callers prefix it.
 */
export function parseDuration(text: string): number {
  const quoted = JSON.stringify(text);
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    sign = s.startsWith('-') ? -1 : 1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw new DurationError(`invalid duration ${quoted}: expected a number with a unit, ${EXAMPLES}`);
  let total = 0;
  while (s !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(s);
    const whole = m?.[1] ?? '';
    const fraction = m?.[2] ?? '';
    if (!m || (whole === '' && fraction === ''))
      throw new DurationError(`invalid duration ${quoted}: expected a number at ${JSON.stringify(s)}, ${EXAMPLES}`);
    s = s.slice(m[0].length);
    const unit = /^[^\d.]*/.exec(s)?.[0] ?? '';
    if (unit === '') {
      const hint =
        total === 0 && /^\d+$/.test(text) ? `; did you mean ${text}s?` : ` (units: ns, us, ms, s, m, h), ${EXAMPLES}`;
      throw new DurationError(`invalid duration ${quoted}: missing unit${hint}`);
    }
    const factor = UNIT_MS[unit];
    if (factor === undefined)
      throw new DurationError(
        `invalid duration ${quoted}: unknown unit ${JSON.stringify(unit)} (units: ns, us, ms, s, m, h)`,
      );
    s = s.slice(unit.length);
    total += Number(`${whole || '0'}.${fraction || '0'}`) * factor;
  }
  if (total > MAX_MS) throw new DurationError(`invalid duration ${quoted}: longer than Go's limit of about 292 years`);
  return sign * total;
}
