// Reading and writing maps that come from input (labels, annotations, matchLabels, ConfigMap data, any
// JSON object) by a key that also comes from input. A plain object inherits from Object.prototype, so
// `labels['constructor']` is a function and `labels['__proto__']` an object although neither label exists,
// and `out['__proto__'] = v` changes the prototype of `out` instead of adding a key. These helpers see own
// properties only and always write own data properties, whatever the key.

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
  if (key === '__proto__') Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  else o[key] = value;
}
