// From the `yaml` package's syntax tree to plain data, with sigs.k8s.io/yaml's meaning (over
// go.yaml.in/yaml/v2): YAML 1.1 scalars (scalars.ts), merge keys (`<<`) with v2's precedence, tags v2
// ignores ignored, `!!binary` decoded, non-string keys turned into strings; aliases expanded within the
// limits read.ts passes.

import { isAlias, isMap, isScalar, isSeq, type Document, type LineCounter, type Node, type Pair } from 'yaml';
import type { ReadLimits } from './read.js';
import { formatFloat32, MERGE_TAG, resolveScalar, ScalarError, type Resolved } from './scalars.js';

interface Converted {
  value: unknown;
  /** Approximate size as JSON, for the alias budget. */
  size: number;
  /** Nesting depth of the value (0 for scalars). */
  height: number;
  /** How a scalar resolved, for use as a map key through an alias. */
  scalar?: Resolved;
}

/** A document that cannot be converted: `offset` is where in the stream. */
export class ConvertError extends Error {
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
export class Converter {
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
