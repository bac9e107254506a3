// Paths accepted wherever a policy names a field: RFC 6901 JSON pointers, extended with keyed list
// segments so list items are addressed by what they are rather than where they happen to sit:
//
//   /spec/template/spec/containers[name=web]/image     ≡ /spec/template/spec/containers/<i>/image
//                                                         where containers[i].name == "web"
//
// A segment `key[field=value]` is the member `key` followed by a selector on the list it holds; a segment
// that is only `[field=value]` selects within the list reached so far. `~0`/`~1` escapes apply to keys.
// Segments that could reach the object prototype (`__proto__`, `constructor`, `prototype`) are rejected, so
// no path can write outside the document. The resolution rules (first match wins; `add` with an unmatched
// selector appends) live with the code that applies paths, in pkg/engine/patch.ts.
//
// A path longer than MAX_PATH_LENGTH is refused, and only paths up to MAX_CACHED_LENGTH have their parse
// cached (a bounded cache, see api/internal/cache.ts).

import { BoundedCache } from '../internal/cache.js';
import { errorClass } from '../internal/errors.js';

export type PathSegment =
  { readonly key: string } | { readonly match: { readonly field: string; readonly value: string } };

export class PathError extends errorClass('PathError', 'INVALID_PATH') {}

export const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

const SELECTOR = /^(.*)\[([^[\]=]+)=([^[\]]*)\]$/;

function unescape(raw: string, path: string): string {
  if (!raw.includes('~')) return raw;
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c !== '~') {
      out += c;
      continue;
    }
    const next = raw[i + 1];
    if (next === '0') out += '~';
    else if (next === '1') out += '/';
    else
      throw new PathError(
        `invalid escape "~${next ?? ''}" in path ${JSON.stringify(path)}: only ~0 and ~1 are allowed`,
      );
    i++;
  }
  return out;
}

function checkKey(key: string, path: string): string {
  if (FORBIDDEN_SEGMENTS.has(key))
    throw new PathError(`path ${JSON.stringify(path)} has the segment ${JSON.stringify(key)}, which is not allowed`);
  return key;
}

/**
 * Longest path accepted, in UTF-16 code units (admission counts the same limit in UTF-8 bytes). The
 * longest keys a Kubernetes object has are annotation keys (317 bytes: a 253-byte prefix, "/", 63 bytes)
 * and ConfigMap data keys (253); a path through a dozen of those still fits, and real paths are well
 * under 200 characters.
 */
export const MAX_PATH_LENGTH = 4096;

/** Longest path whose parse is cached; paths people write are far shorter. */
export const MAX_CACHED_LENGTH = 1024;

const cache = new BoundedCache<readonly PathSegment[]>({
  maxEntries: 10_000,
  maxKeyLength: MAX_CACHED_LENGTH,
  maxTotalLength: 1024 * 1024,
});

/** Parses a path; throws PathError naming the problem. `""` is the whole document. */
export function parsePath(path: string): readonly PathSegment[] {
  const hit = cache.get(path);
  if (hit) return hit;
  if (path === '') return [];
  if (path.length > MAX_PATH_LENGTH)
    throw new PathError(`path is ${path.length} characters long; at most ${MAX_PATH_LENGTH} are allowed`);
  if (!path.startsWith('/')) throw new PathError('JSON pointer must be empty or start with a "/"');
  const segments: PathSegment[] = [];
  for (const raw of path.slice(1).split('/')) {
    const m = SELECTOR.exec(raw);
    if (m) {
      const [, key = '', field = '', value = ''] = m;
      if (key !== '') segments.push({ key: checkKey(unescape(key, path), path) });
      segments.push({ match: { field: checkKey(field, path), value } });
    } else {
      if (raw.includes('[') && raw.endsWith(']')) {
        throw new PathError(`list selector in ${JSON.stringify(raw)} must read [field=value]`);
      }
      segments.push({ key: checkKey(unescape(raw, path), path) });
    }
  }
  cache.set(path, segments);
  return segments;
}

/** Returns the parse error message for a path, or undefined when it parses. */
export function checkPath(path: string): string | undefined {
  try {
    parsePath(path);
    return undefined;
  } catch (err: unknown) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Renders segments back to the path form (keys escaped). */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = '';
  for (const s of segments) {
    if ('key' in s) out += `/${s.key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    else out += `[${s.match.field}=${s.match.value}]`;
  }
  return out;
}

/** The keyed-segment value that selects every item having the field: `[name=*]` (plaintext paths only). */
export const GLOB = '*';

export function isGlob(s: PathSegment): boolean {
  return 'match' in s && s.match.value === GLOB;
}

/** True when the path parses and has a `[field=*]` segment. */
export function hasGlob(path: string): boolean {
  return checkPath(path) === undefined && parsePath(path).some(isGlob);
}

/** True when `prefix` is `path` or one of its ancestors, segment by segment (a glob matches only a glob). */
export function isSegmentPrefix(prefix: readonly PathSegment[], path: readonly PathSegment[]): boolean {
  return (
    prefix.length <= path.length &&
    prefix.every((s, i) => {
      const t = path[i] as PathSegment;
      return 'key' in s
        ? 'key' in t && t.key === s.key
        : 'match' in t && t.match.field === s.match.field && t.match.value === s.match.value;
    })
  );
}
