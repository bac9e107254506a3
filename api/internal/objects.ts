// Reading and writing maps that come from input (labels, annotations, matchLabels, ConfigMap data, any
// JSON object) by a key that also comes from input. A plain object inherits from Object.prototype, so
// `labels['constructor']` is a function and `labels['__proto__']` an object although neither label exists,
// and `out['__proto__'] = v` changes the prototype of `out` instead of adding a key. These helpers see own
// properties only and always write own data properties, whatever the key.

/** A JSON object as parsed from YAML or JSON: string keys, any values. */
export type JsonObject = Record<string, unknown>;

/** True for a JSON object: not null, not an array. */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The own property `key` of `o`, or undefined when `o` does not have it (inherited members never count). */
export function own<T>(o: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}

/**
 * Sets `o[key] = value` as an own, enumerable data property. The one key a plain assignment gets wrong is
 * `__proto__` (Object.prototype's accessor turns it into a prototype change); it is defined instead, as
 * JSON.parse does, so the key is kept as data and no prototype changes.
 */
export function setOwn<T>(o: Record<string, T>, key: string, value: NoInfer<T>): void {
  if (key === '__proto__')
    Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  else o[key] = value;
}

/**
 * Deepest nesting of objects and arrays accepted in a document (the document itself is level 1). The
 * deepest objects people apply, CustomResourceDefinitions with their schemas, nest well under a hundred
 * levels. 512 leaves room for those many times over and keeps every recursive walk over a document
 * (copying, expanding variables, validating, and the yaml library's output, which runs out of stack
 * between 700 and 1,000 levels) within the stack, where an unbounded depth would end in a RangeError.
 */
export const MAX_DEPTH = 512;

/**
 * The top-level key under which `value` nests more than `max` levels (`''` when the document itself is
 * an array that does), or undefined when it does not. Walks with an explicit stack, never by recursion,
 * so any depth can be measured.
 */
export function tooDeepUnder(value: unknown, max: number = MAX_DEPTH): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const stack: Array<{ v: object; depth: number; top: string }> = [];
  if (Array.isArray(value)) stack.push({ v: value, depth: 1, top: '' });
  else for (const k of Object.keys(value)) pushChild(stack, (value as Record<string, unknown>)[k], 2, k);
  while (stack.length > 0) {
    const { v, depth, top } = stack.pop() as { v: object; depth: number; top: string };
    if (depth > max) return top;
    if (Array.isArray(v)) for (const child of v as unknown[]) pushChild(stack, child, depth + 1, top);
    else for (const k of Object.keys(v)) pushChild(stack, (v as Record<string, unknown>)[k], depth + 1, top);
  }
  return undefined;
}

function pushChild(
  stack: Array<{ v: object; depth: number; top: string }>,
  child: unknown,
  depth: number,
  top: string,
): void {
  if (typeof child === 'object' && child !== null) stack.push({ v: child, depth, top });
}
