// Field errors in the shape and wording of k8s.io/apimachinery's field.Error, so messages read the way
// Kubernetes users already know: `spec.overrideRules[0].overriders.plaintext[1].path: Invalid value: "x": detail`.

export type FieldErrorType =
  'Invalid value' | 'Required value' | 'Unsupported value' | 'Forbidden' | 'Duplicate value' | 'Too long' | 'Too many';

export interface FieldError {
  type: FieldErrorType;
  /** Dotted field path with [i] indices, e.g. `spec.overrideRules[0].overriders.plaintext[1].path`. */
  field: string;
  /** The offending value; omitted for `Required value`. */
  value?: unknown;
  detail: string;
}

/**
 * Longest field path or rendered value a message quotes, and longest detail, in characters. Values come
 * from the object under review and can be megabytes; quoting each in full (once per error, and one value
 * can fail several rules) made a 3 MB request produce a denial several times its size. Beyond the limit
 * the text is cut and marked, as apimachinery marks the long values it shortens. The longest values the
 * messages exist to show (names: 253 bytes, annotation keys: 317) fit whole.
 */
export const MAX_QUOTED_CHARS = 1024;
export const MAX_DETAIL_CHARS = 4096;

const TRUNCATED = '... (truncated)';

/** `text` when it has at most `max` characters; else its first `max` followed by `... (truncated)`. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${head(text, max)}${TRUNCATED}`;
}

/** The first `max` characters, one fewer rather than half a surrogate pair, so the cut text is well-formed. */
function head(text: string, max: number): string {
  const code = max > 0 ? text.charCodeAt(max - 1) : 0;
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** Renders a bad value as field.Error does: strings quoted, null for nil, other values as JSON; cut at MAX_QUOTED_CHARS. */
export function renderValue(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  // Only the part shown is quoted (a huge string is never escaped whole), and the closing quote stays.
  if (typeof value === 'string')
    return value.length <= MAX_QUOTED_CHARS
      ? JSON.stringify(value)
      : `${JSON.stringify(head(value, MAX_QUOTED_CHARS))}${TRUNCATED}`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  try {
    // JSON.stringify gives undefined for functions and symbols, and throws on cycles and bigints.
    const json: string | undefined = JSON.stringify(value);
    return truncate(json ?? Object.prototype.toString.call(value), MAX_QUOTED_CHARS);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

export function formatFieldError(e: FieldError): string {
  const field = truncate(e.field, MAX_QUOTED_CHARS);
  const detail = e.detail ? `: ${truncate(e.detail, MAX_DETAIL_CHARS)}` : '';
  // As field.Error.ErrorBody: these types never print the bad value.
  if (e.type === 'Required value' || e.type === 'Forbidden' || e.type === 'Too long' || e.type === 'Too many')
    return `${field}: ${e.type}${detail}`;
  return `${field}: ${e.type}: ${renderValue(e.value)}${detail}`;
}

/** One error: the error itself; several: `[e1, e2, …]` with duplicates dropped (utilerrors.NewAggregate). */
export function aggregate(errors: readonly FieldError[]): string {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const e of errors) {
    const s = formatFieldError(e);
    if (!seen.has(s)) {
      seen.add(s);
      parts.push(s);
    }
  }
  if (parts.length === 0) return '';
  if (parts.length === 1) return parts[0] ?? '';
  return `[${parts.join(', ')}]`;
}

export const invalid = (field: string, value: unknown, detail: string): FieldError => ({
  type: 'Invalid value',
  field,
  value,
  detail,
});
export const required = (field: string, detail: string): FieldError => ({ type: 'Required value', field, detail });
export const unsupported = (field: string, value: unknown, supported: readonly string[]): FieldError => ({
  type: 'Unsupported value',
  field,
  value,
  detail: `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
});
export const forbidden = (field: string, detail: string): FieldError => ({ type: 'Forbidden', field, detail });
/** field.TooLong: the value is not repeated in the message (it is the long thing). */
export const tooLong = (field: string, maxBytes: number): FieldError => ({
  type: 'Too long',
  field,
  detail: `may not be more than ${maxBytes} bytes`,
});
