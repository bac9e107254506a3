// Reading manifests as kubectl reads them (sigs.k8s.io/yaml over go.yaml.in/yaml/v2): YAML 1.1 scalars
// (scalars.ts), merge keys (`<<`) merged with v2's precedence, tags v2 ignores ignored, `!!binary`
// decoded, timestamps kept as text, non-string keys turned into strings the way sigs.k8s.io/yaml does.
// The `yaml` package parses; everything after the syntax tree is done here and in convert.ts, so no value
// passes through that package's own (YAML 1.2) scalar rules. Bytes become text in decode.ts.
//
// Where kubectl would silently change or lose data, this reader refuses with the line and column
// instead: duplicate keys (kubectl keeps one of them), integers JavaScript cannot hold exactly, `!!binary`
// that is not UTF-8 text, YAML 1.1 line-break characters (U+0085, U+2028, U+2029) that kubectl folds.
// It also bounds what a hostile document can cost: nesting depth and the size aliases expand to.

import { Composer, LineCounter, Parser, type CST } from 'yaml';
import { ConvertError, Converter } from './convert.js';

export interface ReadLimits {
  /** Deepest nesting of maps and lists, after aliases are expanded. */
  maxDepth: number;
  /** Bytes (counted as JSON) that aliases may add to one document. */
  maxAliasExpansion: number;
}

/**
 * 500 levels is far beyond any Kubernetes object (deep CRD schemas stay under 100) and well inside what
 * the `yaml` package's recursive composer survives on Node's default stack (it fails near 800 on cold
 * code). 8 MiB of alias expansion is more than twice what an apiserver accepts in one request (3 MiB),
 * so no object kubectl could apply is refused, while a "billion laughs" document stops after a few
 * milliseconds of work.
 */
export const DEFAULT_LIMITS: Readonly<ReadLimits> = { maxDepth: 500, maxAliasExpansion: 8 * 1024 * 1024 };

export interface YamlProblem {
  /** 1-based index of the document in the stream; 0 when the problem is not inside one. */
  document: number;
  line: number;
  col: number;
  message: string;
}

export class YamlError extends Error {
  readonly code = 'YAML';
  constructor(
    readonly problem: YamlProblem,
    options?: { cause?: unknown },
  ) {
    super(`${problem.line}:${problem.col}: ${problem.message}`, options);
    this.name = 'YamlError';
  }
}

export interface ReadResult {
  /** Every document that could be read, in order; empty documents have the value null. */
  documents: Array<{ index: number; value: unknown }>;
  errors: YamlProblem[];
  /** How many documents the stream has, read or not. */
  count: number;
  /** Where each document starts, by index - 1. */
  starts: Array<{ line: number; col: number }>;
}

/** Characters libyaml refuses ("control characters are not allowed"). */
const FORBIDDEN = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uFFFE\uFFFF]/gu; // eslint-disable-line no-control-regex
/** Line breaks in YAML 1.1 (kubectl) but ordinary characters in YAML 1.2 (the `yaml` package). */
const LINE_BREAKS_1_1 = /[\u0085\u2028\u2029]/g;

function codePoint(c: string): string {
  return `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Problems with single characters, by offset: ones kubectl refuses and ones it reads differently. */
function characterProblems(text: string): Array<{ offset: number; message: string }> {
  const out: Array<{ offset: number; message: string }> = [];
  for (const m of text.matchAll(FORBIDDEN)) {
    out.push({
      offset: m.index,
      message: `control character ${codePoint(m[0])} is not allowed in YAML (write it as an escape inside double quotes)`,
    });
  }
  for (const m of text.matchAll(LINE_BREAKS_1_1)) {
    out.push({
      offset: m.index,
      message: `${codePoint(m[0])} is a line break in YAML 1.1, which kubectl reads, so its meaning here is ambiguous; write it as "\\u${(m[0].codePointAt(0) ?? 0).toString(16).padStart(4, '0')}" inside double quotes`,
    });
  }
  return out.sort((a, b) => a.offset - b.offset);
}

/** The offset of a CST node nested deeper than `max` collections, or undefined when there is none. */
function tooDeep(token: CST.Token | null | undefined, max: number): number | undefined {
  const stack: Array<{ token: CST.Token; depth: number }> = token ? [{ token, depth: 0 }] : [];
  while (stack.length > 0) {
    const { token: t, depth } = stack.pop() as { token: CST.Token; depth: number };
    if (t.type === 'block-map' || t.type === 'block-seq' || t.type === 'flow-collection') {
      if (depth + 1 > max) return t.offset;
      for (const item of t.items) {
        if (item.key) stack.push({ token: item.key, depth: depth + 1 });
        if (item.value) stack.push({ token: item.value, depth: depth + 1 });
      }
    }
  }
  return undefined;
}

const COMPOSE_OPTIONS = {
  version: '1.1',
  schema: 'failsafe',
  resolveKnownTags: false,
  uniqueKeys: false,
  merge: false,
} as const;

/** Reads a stream of YAML documents. Never throws for bad input: problems come back with line and column. */
export function readYamlStream(text: string, limits: ReadLimits = DEFAULT_LIMITS): ReadResult {
  const lines = new LineCounter();
  const tokens = Array.from(new Parser(lines.addNewLine).parse(text));
  const errors: YamlProblem[] = [];
  const problem = (document: number, offset: number, message: string): YamlProblem => {
    const p = lines.linePos(offset);
    return { document, line: p.line, col: p.col, message };
  };

  // Too deep for the composer: replace the document's content before it recurses into it.
  const failed = new Set<number>();
  let index = 0;
  for (const t of tokens) {
    if (t.type !== 'document') continue;
    index++;
    const deep = tooDeep(t.value, limits.maxDepth);
    if (deep !== undefined) {
      errors.push(problem(index, deep, `nesting is deeper than ${limits.maxDepth} levels`));
      failed.add(index);
      delete t.value;
    }
  }

  const composer = new Composer(COMPOSE_OPTIONS);
  const docs = Array.from(composer.compose(tokens, false, text.length));
  const chars = characterProblems(text);
  const documents: ReadResult['documents'] = [];
  docs.forEach((doc, i) => {
    const n = i + 1;
    if (failed.has(n)) return;
    const [start, , end] = doc.range;
    const bad = chars.filter((c) => c.offset >= start && c.offset < Math.max(end, start + 1));
    // libyaml reads YAML 1.1 only: "found incompatible YAML document".
    const version = doc.directives?.yaml.explicit ? doc.directives.yaml.version : '1.1';
    if (doc.errors.length > 0 || bad.length > 0 || version !== '1.1') {
      for (const e of doc.errors)
        errors.push(problem(n, e.pos[0], `invalid YAML: ${e.message.split('\n')[0] ?? e.message}`));
      for (const c of bad) errors.push(problem(n, c.offset, c.message));
      if (version !== '1.1')
        errors.push(problem(n, start, `%YAML ${version}: kubectl reads only YAML 1.1 documents; remove the directive`));
      return;
    }
    try {
      documents.push({ index: n, value: new Converter(limits, start, lines).convert(doc) });
    } catch (err: unknown) {
      if (!(err instanceof ConvertError)) throw err;
      errors.push(problem(n, err.offset, err.message));
    }
  });
  // Problems outside every document: stream-level errors, bad characters in trailing comments.
  for (const e of composer.streamInfo().errors)
    errors.push(problem(0, e.pos[0], `invalid YAML: ${e.message.split('\n')[0] ?? e.message}`));
  for (const c of chars) {
    if (!docs.some((d) => c.offset >= d.range[0] && c.offset < Math.max(d.range[2], d.range[0] + 1)))
      errors.push(problem(0, c.offset, c.message));
  }
  errors.sort((a, b) => a.line - b.line || a.col - b.col);
  const starts = docs.map((d) => lines.linePos(d.range[0]));
  return { documents, errors, count: docs.length, starts };
}

/**
 * Reads text that must hold at most one document (a fieldOverrider's YAML string); empty text is null.
 * Throws YamlError for the first problem.
 */
export function readYaml(text: string, limits: ReadLimits = DEFAULT_LIMITS): unknown {
  const r = readYamlStream(text, limits);
  const first = r.errors[0];
  if (first) throw new YamlError(first);
  const second = r.starts[1];
  if (second) throw new YamlError({ document: 2, ...second, message: 'expected one YAML document, found more' });
  return r.documents[0]?.value ?? null;
}
