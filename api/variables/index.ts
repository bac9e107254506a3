// Per-cluster variables in override values: `${cluster.name}`, `${cluster.region}`, `${cluster.provider}`,
// `${cluster.zone}`, `${cluster.labels['key']}` (or `["key"]`). They are expanded per target cluster in
// every string inside an overrider's value. `$${` writes a literal `${`. Any other `${…}` is an unknown
// variable: denied at admission, and an error for the (template, cluster) pair if it reaches the engine.
//
// Bounds: parses are cached for strings up to MAX_CACHED_LENGTH only (a bounded cache, see
// api/internal/cache.ts), and one expanded string may not pass MAX_EXPANDED_LENGTH, so a value with many
// variables and a cluster with long labels cannot multiply into an unbounded string.

import { BoundedCache } from '../internal/cache.js';
import { own, setOwn } from '../internal/objects.js';

export class VariableError extends Error {
  readonly code = 'VARIABLE';
  constructor(message: string) {
    super(message);
    this.name = 'VariableError';
  }
}

export const KNOWN_VARIABLES = [
  'cluster.name',
  'cluster.region',
  'cluster.provider',
  'cluster.zone',
  "cluster.labels['<key>']",
] as const;

/** What a cluster offers to variables. `zone` is the first of spec.zones (or the deprecated spec.zone). */
export interface ClusterFacts {
  name: string;
  labels: Readonly<Record<string, string>>;
  region?: string | undefined;
  provider?: string | undefined;
  zone?: string | undefined;
}

type Part = string | { readonly variable: 'name' | 'region' | 'provider' | 'zone' } | { readonly label: string };

const LABEL = /^cluster\.labels\[(?:'([^']*)'|"([^"]*)")\]$/;
// A Map, not an object literal: `${constructor}` or `${__proto__}` must not find Object.prototype's members.
const SIMPLE: ReadonlyMap<string, 'name' | 'region' | 'provider' | 'zone'> = new Map([
  ['cluster.name', 'name'],
  ['cluster.region', 'region'],
  ['cluster.provider', 'provider'],
  ['cluster.zone', 'zone'],
]);

/**
 * Longest string whose parse is cached. Templated values people write (an image registry, a label, a flag)
 * are a few dozen characters; longer ones are parsed again each time, in linear time.
 */
export const MAX_CACHED_LENGTH = 1024;

/**
 * Longest string one expansion may produce (UTF-16 code units). Four times the 1 MiB a ConfigMap or
 * Secret can hold, so every value that could be applied to a member expands; anything longer is an error
 * for that (template, cluster) pair instead of a heap that grows with the product of variables and labels.
 */
export const MAX_EXPANDED_LENGTH = 4 * 1024 * 1024;

const cache = new BoundedCache<readonly Part[]>({
  maxEntries: 10_000,
  maxKeyLength: MAX_CACHED_LENGTH,
  maxTotalLength: 1024 * 1024,
});

function parse(text: string): readonly Part[] {
  const hit = cache.get(text);
  if (hit) return hit;
  const parts: Part[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const at = text.indexOf('$', i);
    if (at < 0) {
      literal += text.slice(i);
      break;
    }
    literal += text.slice(i, at);
    if (text.startsWith('$${', at)) {
      literal += '${';
      i = at + 3;
      continue;
    }
    if (text[at + 1] !== '{') {
      literal += '$';
      i = at + 1;
      continue;
    }
    const end = text.indexOf('}', at + 2);
    if (end < 0)
      throw new VariableError(
        `unterminated variable in ${JSON.stringify(text)}: "\${" needs a closing "}" (write "$\${" for a literal "\${")`,
      );
    const expr = text.slice(at + 2, end).trim();
    const simple = SIMPLE.get(expr);
    const label = LABEL.exec(expr);
    let part: Part;
    if (simple) part = { variable: simple };
    else if (label) part = { label: label[1] ?? label[2] ?? '' };
    else
      throw new VariableError(
        `unknown variable "\${${expr}}"; known variables: ${KNOWN_VARIABLES.map((v) => `\${${v}}`).join(', ')}`,
      );
    if (literal) parts.push(literal);
    literal = '';
    parts.push(part);
    i = end + 1;
  }
  if (literal) parts.push(literal);
  cache.set(text, parts);
  return parts;
}

/** True when the string holds `${` (a variable, or a malformed one): cheap check before parsing. */
export function mayHaveVariables(text: string): boolean {
  return text.includes('${');
}

/** The problem with a string's variables, or undefined when every variable is known and well formed. */
export function checkVariables(text: string): string | undefined {
  if (!mayHaveVariables(text)) return undefined;
  try {
    parse(text);
    return undefined;
  } catch (err: unknown) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * Replaces every variable with `sample` (default "x"): lets validators check the shape of a templated
 * label value or image reference without knowing the cluster.
 */
export function sampleVariables(text: string, sample = 'x'): string {
  if (!mayHaveVariables(text)) return text;
  return parse(text)
    .map((p) => (typeof p === 'string' ? p : sample))
    .join('');
}

/** Expands one string for one cluster; throws VariableError for an unknown variable or a missing fact. */
export function expandString(text: string, facts: ClusterFacts): string {
  if (!mayHaveVariables(text)) return text;
  let out = '';
  for (const p of parse(text)) {
    let piece: string;
    if (typeof p === 'string') piece = p;
    else if ('label' in p) {
      const v = own(facts.labels, p.label);
      if (typeof v !== 'string')
        throw new VariableError(`cluster ${facts.name} has no label ${JSON.stringify(p.label)}`);
      piece = v;
    } else {
      const v = facts[p.variable];
      if (v === undefined || v === '') throw new VariableError(`cluster ${facts.name} has no ${p.variable}`);
      piece = v;
    }
    if (out.length + piece.length > MAX_EXPANDED_LENGTH) {
      throw new VariableError(
        `expanding a value of ${text.length} characters for cluster ${facts.name} gives more than ${MAX_EXPANDED_LENGTH} characters`,
      );
    }
    out += piece;
  }
  return out;
}

/**
 * Expands every string inside a JSON value (keys are left as written, `__proto__` included, as own data);
 * returns the input when unchanged.
 */
export function expandValue<T>(value: T, facts: ClusterFacts): T {
  if (typeof value === 'string') return expandString(value, facts) as T;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v: unknown) => {
      const e = expandValue(v, facts);
      if (e !== v) changed = true;
      return e;
    });
    return (changed ? out : value) as T;
  }
  if (value !== null && typeof value === 'object') {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const e = expandValue(v, facts);
      if (e !== v) changed = true;
      setOwn(out, k, e);
    }
    return (changed ? out : value) as T;
  }
  return value;
}

/** Every string inside a JSON value, with its JSON-pointer-ish suffix, for validators. */
export function* stringsIn(value: unknown, at = ''): Generator<{ at: string; text: string }> {
  if (typeof value === 'string') yield { at, text: value };
  else if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield* stringsIn(value[i], `${at}[${i}]`);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) yield* stringsIn(v, `${at}.${k}`);
}
