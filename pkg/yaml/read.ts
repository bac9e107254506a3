// Reading manifests as kubectl reads them (sigs.k8s.io/yaml over go.yaml.in/yaml/v2): YAML 1.1 scalars
// (scalars.ts), merge keys (`<<`) merged with v2's precedence, tags v2 ignores ignored, `!!binary`
// decoded, timestamps kept as text, non-string keys turned into strings the way sigs.k8s.io/yaml does.
// The `yaml` package parses; everything after the syntax tree is done here, so no value passes through
// that package's own (YAML 1.2) scalar rules.
//
// Where kubectl would silently change or lose data, this reader refuses with the line and column
// instead: duplicate keys (kubectl keeps one of them), integers JavaScript cannot hold exactly, `!!binary`
// that is not UTF-8 text, YAML 1.1 line-break characters (U+0085, U+2028, U+2029) that kubectl folds.
// It also bounds what a hostile document can cost: nesting depth and the size aliases expand to.

import {
  Composer,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  Parser,
  type CST,
  type Document,
  type Node,
  type Pair,
} from 'yaml';
import { formatFloat32, MERGE_TAG, resolveScalar, ScalarError, type Resolved } from './scalars.js';

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

interface Converted {
  value: unknown;
  /** Approximate size as JSON, for the alias budget. */
  size: number;
  /** Nesting depth of the value (0 for scalars). */
  height: number;
  /** How a scalar resolved, for use as a map key through an alias. */
  scalar?: Resolved;
}

class ConvertError extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** A deep copy of a value this reader produced (plain objects, arrays, primitives). */
function copy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copy);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) setOwn(out, k, copy(v));
    return out;
  }
  return value;
}

function bytes(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / 1024 / 1024} MiB` : `${n} bytes`;
}

function offsetOf(node: Node | null | undefined, fallback: number): number {
  return node?.range?.[0] ?? fallback;
}

/** Turns one composed document into plain data, with sigs.k8s.io/yaml's meaning. */
class Converter {
  private readonly targets = new Map<Node, Node>();
  private readonly memo = new Map<Node, Converted>();
  private readonly open = new Set<Node>();
  private expanded = 0;

  constructor(
    private readonly limits: ReadLimits,
    private readonly docOffset: number,
    private readonly lines: LineCounter,
  ) {}

  convert(doc: Document.Parsed): unknown {
    this.bindAliases(doc.contents);
    return this.value(doc.contents, 0).value;
  }

  /** Aliases refer to the latest anchor of that name before them in the text (v2 binds at parse time). */
  private bindAliases(root: Node | null): void {
    const anchors = new Map<string, Node>();
    const visit = (node: unknown): void => {
      if (isAlias(node)) {
        const target = anchors.get(node.source);
        if (!target)
          throw new ConvertError(offsetOf(node, this.docOffset), `unknown anchor '${node.source}' referenced`);
        this.targets.set(node, target);
        return;
      }
      if (!isScalar(node) && !isMap(node) && !isSeq(node)) return;
      if (node.anchor) anchors.set(node.anchor, node);
      if (isMap(node)) {
        for (const pair of node.items) {
          visit(pair.key);
          visit(pair.value);
        }
      } else if (isSeq(node)) {
        for (const item of node.items) visit(item);
      }
    };
    visit(root);
  }

  private checkDepth(depth: number, offset: number): void {
    if (depth > this.limits.maxDepth)
      throw new ConvertError(offset, `nesting is deeper than ${this.limits.maxDepth} levels`);
  }

  private scalar(node: Node & { source?: string; type?: string; tag?: string }): Resolved {
    try {
      return resolveScalar(node.source ?? '', node.tag ?? '', node.type === 'PLAIN' || node.type === undefined);
    } catch (err: unknown) {
      if (err instanceof ScalarError) throw new ConvertError(offsetOf(node, this.docOffset), err.message);
      throw err;
    }
  }

  private text(bytes: Uint8Array, offset: number): string {
    try {
      return utf8.decode(bytes);
    } catch {
      throw new ConvertError(
        offset,
        '!!binary data is not UTF-8 text; kubectl would replace the invalid bytes with U+FFFD',
      );
    }
  }

  private scalarValue(r: Resolved, text: string, offset: number): unknown {
    switch (r.kind) {
      case 'null':
        return null;
      case 'bool':
        return r.value;
      case 'int':
        if (r.value > BigInt(Number.MAX_SAFE_INTEGER) || r.value < BigInt(Number.MIN_SAFE_INTEGER)) {
          throw new ConvertError(
            offset,
            `integer ${r.value} is beyond ±${Number.MAX_SAFE_INTEGER}, the range Flotilla holds exactly (write it as a string, or as a float such as ${Number(r.value)}.0)`,
          );
        }
        return Number(r.value);
      case 'float':
        if (!Number.isFinite(r.value))
          throw new ConvertError(
            offset,
            `${text} is not a JSON number, so kubectl cannot send it either; quote it to make it a string`,
          );
        return r.value;
      case 'binary':
        return this.text(r.value, offset);
      default:
        return r.value;
    }
  }

  /** A map key as sigs.k8s.io/yaml turns it into a JSON object key. */
  private keyOf(node: Node | null, depth: number, fallback: number): string {
    const offset = offsetOf(node, fallback);
    let r: Resolved;
    if (node === null) r = { kind: 'null' };
    else if (isAlias(node)) {
      const c = this.alias(node, depth);
      if (!c.scalar) throw new ConvertError(offset, 'a map or list cannot be a map key');
      r = c.scalar;
    } else if (isScalar(node)) r = this.scalar(node);
    else throw new ConvertError(offset, 'a map or list cannot be a map key');
    switch (r.kind) {
      case 'null':
        throw new ConvertError(offset, 'a map key is null; quote it ("~", "null" or "") to make it a string');
      case 'bool':
        return r.value ? 'true' : 'false';
      case 'int':
        if (r.unsigned)
          throw new ConvertError(
            offset,
            `map key ${r.value} is beyond the 64-bit signed range, which kubectl (sigs.k8s.io/yaml) cannot read as a key; quote it`,
          );
        return r.value.toString();
      case 'float': {
        const s = formatFloat32(r.value);
        return s === '+Inf' ? '.inf' : s === '-Inf' ? '-.inf' : s === 'NaN' ? '.nan' : s;
      }
      case 'binary':
        return this.text(r.value, offset);
      default:
        return r.value;
    }
  }

  private alias(node: Node & { source: string }, depth: number): Converted {
    const target = this.targets.get(node);
    const offset = offsetOf(node, this.docOffset);
    if (!target) throw new ConvertError(offset, `unknown anchor '${node.source}' referenced`);
    if (this.open.has(target)) throw new ConvertError(offset, `anchor '${node.source}' value contains itself`);
    const c = this.memo.get(target) ?? this.value(target, depth);
    this.expanded += c.size;
    if (this.expanded > this.limits.maxAliasExpansion) {
      throw new ConvertError(
        offset,
        `aliases expand this document by more than ${bytes(this.limits.maxAliasExpansion)} (a guard against "billion laughs" documents)`,
      );
    }
    this.checkDepth(depth + c.height, offset);
    return { ...c, value: copy(c.value) };
  }

  private value(node: unknown, depth: number): Converted {
    if (node === null || node === undefined) return { value: null, size: 4, height: 0 };
    if (isAlias(node)) return this.alias(node, depth);
    const n = node as Node;
    const offset = offsetOf(n, this.docOffset);
    let c: Converted;
    this.open.add(n);
    try {
      if (isScalar(n)) {
        const r = this.scalar(n);
        const value = this.scalarValue(r, n.source ?? '', offset);
        c = { value, size: typeof value === 'string' ? value.length + 2 : String(value).length, height: 0, scalar: r };
      } else if (isMap(n)) {
        this.checkDepth(depth + 1, offset);
        c = this.mapping(n.items, depth + 1);
      } else if (isSeq(n)) {
        this.checkDepth(depth + 1, offset);
        let size = 2;
        let height = 0;
        const out: unknown[] = [];
        for (const item of n.items) {
          const v = this.value(item, depth + 1);
          out.push(v.value);
          size += v.size + 1;
          height = Math.max(height, v.height);
        }
        c = { value: out, size, height: height + 1 };
      } else {
        throw new ConvertError(offset, 'unsupported YAML node');
      }
    } finally {
      this.open.delete(n);
    }
    if ((n as { anchor?: string }).anchor) this.memo.set(n, c);
    return c;
  }

  private isMergeKey(key: unknown): boolean {
    if (!isScalar(key) || key.source !== '<<') return false;
    return (key.type === 'PLAIN' && !key.tag) || key.tag === MERGE_TAG;
  }

  private mapping(pairs: Pair[], depth: number): Converted {
    const out: Record<string, unknown> = {};
    const explicit = new Map<string, number>();
    let size = 2;
    let height = 0;
    for (const pair of pairs) {
      const keyNode = pair.key as Node | null;
      if (this.isMergeKey(keyNode)) {
        const merged = this.merge(pair.value as Node | null, depth, offsetOf(keyNode, this.docOffset));
        for (const [k, v] of Object.entries(merged.value as Record<string, unknown>)) setOwn(out, k, v);
        size += merged.size;
        height = Math.max(height, merged.height - 1);
        continue;
      }
      const keyOffset = offsetOf(keyNode, this.docOffset);
      const key = this.keyOf(keyNode, depth, keyOffset);
      const first = explicit.get(key);
      if (first !== undefined) {
        const p = this.lines.linePos(first);
        throw new ConvertError(
          keyOffset,
          `duplicate key ${JSON.stringify(key)} (first at line ${p.line}, column ${p.col})`,
        );
      }
      explicit.set(key, keyOffset);
      const v = this.value(pair.value, depth);
      setOwn(out, key, v.value);
      size += key.length + 4 + v.size;
      height = Math.max(height, v.height);
    }
    return { value: out, size, height: height + 1 };
  }

  /** v2's merge: a map, an alias of one, or a list of those (earlier ones win); later keys override. */
  private merge(node: Node | null, depth: number, keyOffset: number): Converted {
    const offset = offsetOf(node, keyOffset);
    const want = (): never => {
      throw new ConvertError(offset, 'map merge requires map or sequence of maps as the value');
    };
    const one = (n: unknown): Converted => {
      if (isAlias(n)) {
        if (!isMap(this.targets.get(n))) want();
        return this.alias(n, depth - 1);
      }
      if (!isMap(n)) want();
      return this.value(n, depth - 1);
    };
    if (!isSeq(node)) return one(node);
    const out: Record<string, unknown> = {};
    let size = 2;
    let height = 0;
    for (const item of [...node.items].reverse()) {
      const c = one(item);
      for (const [k, v] of Object.entries(c.value as Record<string, unknown>)) setOwn(out, k, v);
      size += c.size;
      height = Math.max(height, c.height);
    }
    return { value: out, size, height };
  }
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

/**
 * Decodes the bytes of a manifest as libyaml does: UTF-8, or UTF-16 with a byte-order mark; a UTF-8 BOM
 * is dropped. Invalid text is refused with its line and column, never replaced with U+FFFD.
 */
export function decodeYamlBytes(bytes: Uint8Array): string {
  const b0 = bytes[0];
  const b1 = bytes[1];
  const utf16 = b0 === 0xff && b1 === 0xfe ? 'utf-16le' : b0 === 0xfe && b1 === 0xff ? 'utf-16be' : undefined;
  if (utf16) {
    try {
      return new TextDecoder(utf16, { fatal: true }).decode(bytes);
    } catch {
      const text = new TextDecoder(utf16).decode(bytes);
      const at = text.indexOf('\uFFFD');
      throw new YamlError({
        document: 0,
        ...lineCol(text, at < 0 ? text.length : at),
        message: `invalid ${utf16.toUpperCase()} text (an odd byte count or an unpaired surrogate)`,
      });
    }
  }
  try {
    return utf8.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    const before = utf8.decode(bytes.subarray(0, at));
    throw new YamlError({
      document: 0,
      ...lineCol(before, before.length),
      message: `invalid UTF-8 (byte 0x${(bytes[at] ?? 0).toString(16).padStart(2, '0')} at byte offset ${at}); kubectl refuses it too`,
    });
  }
}

function lineCol(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const nl = before.lastIndexOf('\n');
  return { line: before.split('\n').length, col: offset - nl };
}

/** Offset of the first byte that does not start a valid UTF-8 sequence. */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i] ?? 0;
    const n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n === 0 || i + n > b.length) return i;
    try {
      utf8.decode(b.subarray(i, i + n));
    } catch {
      return i;
    }
    i += n;
  }
  return b.length;
}
