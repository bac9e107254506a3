// What the webhook accepts and what it sends, in numbers. The webhook sits in the apiserver's request path,
// so every request, however hostile, must be answered within bounded memory and time: bodies, the objects
// in them, the messages and warnings about them, and whole answers all have a ceiling here. README.md
// lists them with the answer each gets when exceeded.

import { formatFieldError, truncate } from '../../api/validation/index.js';

/** Largest body accepted; the apiserver caps review bodies at 3 MiB as well. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/**
 * Deepest nesting of objects and lists in an object under review (the object itself is level 1). Defaulting,
 * conversion, diffing and validation walk objects recursively and run out of stack between ~2,000 and
 * ~4,000 levels; the apiserver accepts JSON nested up to 10,000. Real policies nest a few dozen levels,
 * and values copied from CRD-sized documents well under a hundred.
 */
export const MAX_OBJECT_DEPTH = 512;

/**
 * Most JSON values (objects, lists, strings, numbers, booleans and nulls, each counted once) in an object
 * under review. The work and memory spent on an object grow with its values, not its bytes: a 3 MB body of
 * a million `{}` selectors made validation build two million errors (1.3 GB) and defaulting a 100 MB
 * patch. etcd stores objects of at most 1.5 MiB, and a real policy of that size holds far fewer values.
 */
export const MAX_OBJECT_VALUES = 100_000;

/** Longest message in a denial, a failed conversion or an HTTP error, in characters. */
export const MAX_MESSAGE_CHARS = 16 * 1024;
/** How many field errors a denial lists before saying how many more there are. */
export const MAX_ERRORS_SHOWN = 100;
/** How many warnings an answer carries, and the longest (the apiserver shortens any beyond 256). */
export const MAX_WARNINGS = 50;
export const MAX_WARNING_CHARS = 1024;

/**
 * Largest answer, in bytes of JSON. Denials are kept small by the limits above; what can still grow with
 * the request is a defaulting patch or converted objects. An answer that would be larger is replaced by an
 * error inside the review saying so.
 */
export const MAX_RESPONSE_BYTES = 2 * MAX_BODY_BYTES;

export function boundMessage(message: string): string {
  return truncate(message, MAX_MESSAGE_CHARS);
}

/** At most MAX_WARNINGS warnings of at most MAX_WARNING_CHARS; a last one says how many were left out. */
export function boundWarnings(warnings: readonly string[]): string[] {
  const shown = warnings.slice(0, MAX_WARNINGS).map((w) => truncate(w, MAX_WARNING_CHARS));
  if (warnings.length > MAX_WARNINGS) shown.push(`${warnings.length - MAX_WARNINGS} more warnings not shown`);
  return shown;
}

/**
 * Why `object` is too big to judge — nested deeper than MAX_OBJECT_DEPTH or holding more than
 * MAX_OBJECT_VALUES values — as a field error message naming the top-level field that nests too deep
 * (`spec: Forbidden: must not be nested more than 512 levels deep`; `field` prefixes it), or undefined
 * when it is within both. Walks with an explicit stack, own keys only, and stops at the first limit it
 * passes, so it takes at most MAX_OBJECT_VALUES steps whatever the input.
 */
export function objectTooBig(object: unknown, field = ''): string | undefined {
  if (typeof object !== 'object' || object === null) return undefined;
  const at = (key: string): string => [field, key].filter((s) => s !== '').join('.') || '<root>';
  // Each entry: a list or map to look into, its depth, and the top-level key it sits under.
  const stack: Array<{ value: object; depth: number; top: string }> = [{ value: object, depth: 1, top: '' }];
  let values = 1;
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value, depth, top } = next;
    if (depth > MAX_OBJECT_DEPTH)
      return formatFieldError({
        type: 'Forbidden',
        field: at(top),
        detail: `must not be nested more than ${MAX_OBJECT_DEPTH} levels deep`,
      });
    const keys = Array.isArray(value) ? undefined : Object.keys(value);
    const children: readonly unknown[] =
      keys === undefined ? (value as unknown[]) : keys.map((k) => (value as Record<string, unknown>)[k]);
    values += children.length;
    if (values > MAX_OBJECT_VALUES)
      return formatFieldError({
        type: 'Too many',
        field: at(''),
        detail: `must hold at most ${MAX_OBJECT_VALUES} values (objects, lists and scalars counted together)`,
      });
    children.forEach((child, i) => {
      if (typeof child === 'object' && child !== null)
        stack.push({ value: child, depth: depth + 1, top: depth === 1 ? (keys?.[i] ?? '') : top });
    });
  }
  return undefined;
}
