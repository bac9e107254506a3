// Gatekeeper's location syntax (pkg/mutation/path/token and path/parser): dot-separated keys, each
// optionally followed by one list segment `[keyField: keyValue]` or `[keyField: *]`. Keys and key values
// are identifiers (letters, digits, `_`, `-`) or quoted with `"` or `'` (a backslash takes the next
// character literally); whitespace between tokens is ignored. A key value written as digits is an integer
// and selects integers only; quoted (`"8080"`) it is a string, and a quoted `"*"` is a literal, not a glob.

export type PathNode =
  | { type: 'Object'; ref: string }
  | { type: 'List'; keyField: string; keyValue: string | number | undefined; glob: boolean };

/** Why a location or subPath is refused; `reason` names the rule for callers and tests. */
export class PathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathError';
  }
}

type TokenType = 'ERROR' | 'EOF' | 'IDENT' | 'INT' | 'LBRACKET' | 'RBRACKET' | 'SEPARATOR' | 'GLOB' | 'COLON';
interface Token {
  type: TokenType;
  literal: string;
}

const isDigit = (c: string): boolean => c >= '0' && c <= '9';
const isAlphaNum = (c: string): boolean =>
  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || isDigit(c) || c === '_' || c === '-';
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';

function tokenize(input: string): Token[] {
  const chars = Array.from(input); // by code point, as Go's scanner reads runes
  const out: Token[] = [];
  let i = 0;
  for (;;) {
    while (i < chars.length && isSpace(chars[i] as string)) i++;
    if (i >= chars.length) {
      out.push({ type: 'EOF', literal: '' });
      return out;
    }
    const c = chars[i] as string;
    if (isDigit(c)) {
      const start = i;
      while (i < chars.length && isDigit(chars[i] as string)) i++;
      out.push({ type: 'INT', literal: chars.slice(start, i).join('') });
      continue;
    }
    if (isAlphaNum(c)) {
      const start = i;
      while (i < chars.length && isAlphaNum(chars[i] as string)) i++;
      out.push({ type: 'IDENT', literal: chars.slice(start, i).join('') });
      continue;
    }
    const single: Record<string, TokenType> = {
      '.': 'SEPARATOR',
      '[': 'LBRACKET',
      ']': 'RBRACKET',
      '*': 'GLOB',
      ':': 'COLON',
    };
    if (Object.hasOwn(single, c)) {
      out.push({ type: single[c] as TokenType, literal: c });
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      let s = '';
      i++;
      for (;;) {
        if (i >= chars.length) {
          out.push({ type: 'ERROR', literal: s });
          return out; // unterminated string
        }
        const d = chars[i] as string;
        if (d === c) break;
        if (d === '\\') {
          i++;
          if (i < chars.length) s += chars[i] as string;
        } else s += d;
        i++;
      }
      i++;
      out.push({ type: 'IDENT', literal: s });
      continue;
    }
    out.push({ type: 'ERROR', literal: c });
    return out; // invalid character
  }
}

const MAX_LOCATION = 4096;

/** Parses a location as Gatekeeper's parser.Parse does; throws PathError. An empty string is an empty path. */
export function parsePath(input: string): PathNode[] {
  if (input.length > MAX_LOCATION) throw new PathError(`longer than ${MAX_LOCATION} characters`);
  const tokens = tokenize(input);
  let pos = 0;
  const cur = (): Token => tokens[Math.min(pos, tokens.length - 1)] as Token;
  const peek = (): Token => tokens[Math.min(pos + 1, tokens.length - 1)] as Token;
  const show = (t: Token) => `${t.type}: ${JSON.stringify(t.literal)}`;
  const expect = (t: TokenType): boolean => {
    if (peek().type !== t) return false;
    pos++;
    return true;
  };
  const nodes: PathNode[] = [];
  while (cur().type === 'IDENT') {
    nodes.push({ type: 'Object', ref: cur().literal });
    if (expect('LBRACKET')) {
      if (!expect('IDENT'))
        throw new PathError(`unexpected token: expected keyField in listSpec, got: ${show(peek())}`);
      const keyField = cur().literal;
      if (!expect('COLON'))
        throw new PathError(`unexpected token: expected ':' following keyField ${keyField}, got: ${show(peek())}`);
      let keyValue: string | number | undefined;
      let glob = false;
      if (expect('GLOB')) glob = true;
      else if (expect('IDENT')) keyValue = cur().literal;
      else if (expect('INT')) {
        const n = BigInt(cur().literal);
        if (n > 9223372036854775807n)
          throw new PathError(`invalid integer: overflow in integer string: ${cur().literal}`);
        if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new PathError(`integer key value ${cur().literal} is too large`);
        keyValue = Number(n);
      } else throw new PathError(`unexpected token: expected key value or glob in listSpec, got: ${show(peek())}`);
      if (!expect('RBRACKET'))
        throw new PathError(`unexpected token: expected ']' following listSpec, got: ${show(peek())}`);
      nodes.push({ type: 'List', keyField, keyValue, glob });
    }
    if (expect('SEPARATOR')) {
      if (peek().type === 'EOF') throw new PathError('trailing separators are forbidden');
      pos++;
    } else if (expect('EOF')) {
      // done
    } else throw new PathError(`unexpected token: expected '.' or eof, got: ${show(peek())}`);
  }
  if (cur().type !== 'EOF') throw new PathError(`unexpected token: expected field name or eof, got: ${show(cur())}`);
  return nodes;
}

export function sameNode(a: PathNode, b: PathNode): boolean {
  if (a.type === 'Object') return b.type === 'Object' && a.ref === b.ref;
  return b.type === 'List' && a.keyField === b.keyField && a.glob === b.glob && a.keyValue === b.keyValue;
}

export function isPathPrefix(short: readonly PathNode[], long: readonly PathNode[]): boolean {
  return short.length <= long.length && short.every((n, i) => sameNode(n, long[i] as PathNode));
}

/** Whether a list element's key value equals a location's: strings only to strings, integers to integers. */
export function keyEquals(keyValue: string | number | undefined, element: unknown): boolean {
  if (typeof keyValue === 'string') return element === keyValue;
  if (typeof keyValue === 'number')
    return typeof element === 'number' && Number.isInteger(element) && element === keyValue;
  return false;
}
