// Field errors in the shape and wording of k8s.io/apimachinery's field.Error, so messages read the way
// Kubernetes users already know: `spec.overrideRules[0].overriders.plaintext[1].path: Invalid value: "x": detail`.

export type FieldErrorType =
  | 'Invalid value'
  | 'Required value'
  | 'Unsupported value'
  | 'Forbidden'
  | 'Duplicate value'
  | 'Too long'
  | 'Too many';

export interface FieldError {
  type: FieldErrorType;
  /** Dotted field path with [i] indices, e.g. `spec.overrideRules[0].overriders.plaintext[1].path`. */
  field: string;
  /** The offending value; omitted for `Required value`. */
  value?: unknown;
  detail: string;
}

/** Renders a bad value as field.Error does: strings quoted, null for nil, other values as JSON. */
export function renderValue(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  try {
    // JSON.stringify gives undefined for functions and symbols, and throws on cycles and bigints.
    const json: string | undefined = JSON.stringify(value);
    return json ?? Object.prototype.toString.call(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

export function formatFieldError(e: FieldError): string {
  // As field.Error.ErrorBody: these types never print the bad value.
  if (e.type === 'Required value' || e.type === 'Forbidden' || e.type === 'Too long' || e.type === 'Too many') {
    return `${e.field}: ${e.type}${e.detail ? `: ${e.detail}` : ''}`;
  }
  return `${e.field}: ${e.type}: ${renderValue(e.value)}${e.detail ? `: ${e.detail}` : ''}`;
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

export const invalid = (field: string, value: unknown, detail: string): FieldError => ({ type: 'Invalid value', field, value, detail });
export const required = (field: string, detail: string): FieldError => ({ type: 'Required value', field, detail });
export const unsupported = (field: string, value: unknown, supported: readonly string[]): FieldError => ({
  type: 'Unsupported value',
  field,
  value,
  detail: `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
});
export const forbidden = (field: string, detail: string): FieldError => ({ type: 'Forbidden', field, detail });
/** field.TooLong: the value is not repeated in the message (it is the long thing). */
export const tooLong = (field: string, maxBytes: number): FieldError => ({ type: 'Too long', field, detail: `may not be more than ${maxBytes} bytes` });
