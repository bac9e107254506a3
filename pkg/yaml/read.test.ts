import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { decodeYamlBytes, DEFAULT_LIMITS, readYaml, readYamlStream, YamlError } from './index.js';

function errorsOf(text: string, limits = DEFAULT_LIMITS): string[] {
  return readYamlStream(text, limits).errors.map((e) => `${e.document} ${e.line}:${e.col} ${e.message}`);
}

/** Nine levels of nine aliases each: a billion "lol"s once expanded. */
function billionLaughs(): string {
  let text = 'a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n';
  let previous = 'a';
  for (const name of 'bcdefghi') {
    text += `${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]\n`;
    previous = name;
  }
  return text;
}

void describe('readYamlStream', () => {
  it('numbers documents from 1 and keeps empty ones as null', () => {
    const r = readYamlStream('a: 1\n---\n---\n- x\n');
    assert.deepEqual(r.documents, [
      { index: 1, value: { a: 1 } },
      { index: 2, value: null },
      { index: 3, value: ['x'] },
    ]);
    assert.equal(r.count, 3);
    assert.deepEqual(
      r.starts.map((s) => s.line),
      [1, 2, 3],
    );
  });

  it('reports a broken document with its number, line and column and still reads the others', () => {
    const r = readYamlStream('a: 1\n---\nb: [\n---\nc: 3\n');
    assert.deepEqual(
      r.documents.map((d) => d.value),
      [{ a: 1 }, { c: 3 }],
    );
    assert.equal(r.errors.length > 0, true);
    assert.equal(r.errors[0]?.document, 2);
    assert.match(r.errors[0]?.message ?? '', /^invalid YAML: /);
  });

  it('refuses duplicate keys, naming both places', () => {
    assert.deepEqual(errorsOf('a: 1\nb:\n  c: 1\n  c: 2\n'), ['1 4:3 duplicate key "c" (first at line 3, column 3)']);
  });

  // The timeout only turns a hang into a failure: with a quadratic check 100,000 keys took minutes.
  // How fast it is, is measured by test/bench/yaml.bench.ts.
  it('reads 100,000 keys and finds the one duplicate among them', { timeout: 60_000 }, () => {
    const keys = Array.from({ length: 100_000 }, (_, i) => `  k${i}: v`);
    const text = `data:\n${keys.join('\n')}\n  k7: again\n`;
    assert.deepEqual(errorsOf(text), ['1 100002:3 duplicate key "k7" (first at line 9, column 3)']);
  });

  it('lets one scalar alias be used hundreds of times', () => {
    const text = `v: &v value\nlist:\n${Array(1000).fill('- *v').join('\n')}\n`;
    const r = readYamlStream(text);
    assert.deepEqual(r.errors, []);
    assert.equal((r.documents[0]?.value as { list: string[] }).list.filter((x) => x === 'value').length, 1000);
  });

  it('stops a billion-laughs document by expanded size, with the line of the alias that crossed the limit', () => {
    const errors = errorsOf(billionLaughs());
    assert.equal(errors.length, 1);
    assert.match(errors[0] ?? '', /^1 \d+:\d+ aliases expand this document by more than 8 MiB/);
  });

  it('counts expansion against the limit it is given', () => {
    const text = 'a: &a [x, x, x, x, x, x, x, x, x, x]\nb: [*a, *a, *a]\n';
    assert.deepEqual(errorsOf(text, { ...DEFAULT_LIMITS, maxAliasExpansion: 1000 }), []);
    assert.match(
      errorsOf(text, { ...DEFAULT_LIMITS, maxAliasExpansion: 80 })[0] ?? '',
      /^1 2:\d+ aliases expand this document by more than 80 bytes/,
    );
  });

  it('gives every alias its own copy', () => {
    const v = readYaml('a: &x {k: [1]}\nb: *x\nc: *x\n') as Record<string, { k: number[] }>;
    v.b?.k.push(2);
    assert.deepEqual(v.a, { k: [1] });
    assert.deepEqual(v.c, { k: [1] });
  });

  it('refuses a self-containing anchor and an unknown one', () => {
    assert.deepEqual(errorsOf('a: &x [1, *x]'), ["1 1:11 anchor 'x' value contains itself"]);
    assert.deepEqual(errorsOf('a: 1\nb: *nope'), ["1 2:4 unknown anchor 'nope' referenced"]);
  });

  it('bounds nesting depth, in the text and through aliases', () => {
    const limits = { ...DEFAULT_LIMITS, maxDepth: 5 };
    assert.deepEqual(errorsOf('[[[[[1]]]]]', limits), []);
    assert.deepEqual(errorsOf('[[[[[[1]]]]]]', limits), ['1 1:6 nesting is deeper than 5 levels']);
    assert.deepEqual(errorsOf('a: &a [[[1]]]\nb: [[*a]]', limits), ['1 2:6 nesting is deeper than 5 levels']);
  });

  it('refuses input nested deeper than 500 levels without exhausting the stack', () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    assert.deepEqual(errorsOf(deep), ['1 1:501 nesting is deeper than 500 levels']);
    assert.deepEqual(errorsOf(`${'['.repeat(500)}${']'.repeat(500)}`), []);
  });

  it('merges `<<` as go-yaml v2 does: the merge overrides keys before it, keys after it override the merge', () => {
    const v = readYaml('base: &b {a: 1, b: 1}\nm:\n  a: 0\n  <<: *b\n  b: 2\n') as { m: object };
    assert.deepEqual(v.m, { a: 1, b: 2 });
  });

  it('reads __proto__ as an own key and leaves prototypes alone', () => {
    const v = readYaml('__proto__: {polluted: true}\nb: {__proto__: 1}') as Record<string, unknown>;
    assert.deepEqual(Object.keys(v), ['__proto__', 'b']);
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepEqual(Object.getOwnPropertyDescriptor(v.b, '__proto__')?.value, 1);
  });

  it('refuses control characters and YAML 1.1 line breaks with their position, in their document only', () => {
    const r = readYamlStream('a: 1\n---\nb: "x\u2028y"\n---\nc: x\u0007\n');
    assert.deepEqual(
      r.documents.map((d) => d.value),
      [{ a: 1 }],
    );
    assert.deepEqual(
      r.errors.map((e) => `${e.document} ${e.line}:${e.col}`),
      ['2 3:6', '3 5:5'],
    );
    assert.match(r.errors[0]?.message ?? '', /U\+2028 is a line break in YAML 1\.1/);
    assert.match(r.errors[1]?.message ?? '', /control character U\+0007/);
  });
});

void describe('readYaml', () => {
  it('reads one document; empty text is null', () => {
    assert.deepEqual(readYaml('a: yes'), { a: true });
    assert.equal(readYaml(''), null);
  });
  it('throws a YamlError with the position for bad input and for a second document', () => {
    assert.throws(
      () => readYaml('a: 1\na: 2'),
      (e: unknown) => e instanceof YamlError && e.message === '2:1: duplicate key "a" (first at line 1, column 1)',
    );
    assert.throws(
      () => readYaml('a: 1\n---\nb: 2'),
      (e: unknown) => e instanceof YamlError && /^2:1: expected one YAML document/.test(e.message),
    );
  });
});

void describe('decodeYamlBytes', () => {
  it('reads UTF-8 and drops a byte-order mark', () => {
    assert.equal(decodeYamlBytes(Buffer.from('\uFEFFa: é')), 'a: é');
  });
  it('reads UTF-16 with a byte-order mark, as libyaml does', () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a: ü', 'utf16le')]);
    assert.equal(decodeYamlBytes(le), 'a: ü');
    const be = Buffer.from(le.subarray(2)).swap16();
    assert.equal(decodeYamlBytes(Buffer.concat([Buffer.from([0xfe, 0xff]), be])), 'a: ü');
  });
  it('refuses invalid UTF-8 with its line and column instead of replacing it with U+FFFD', () => {
    const bytes = Buffer.concat([Buffer.from('a: 1\nb: x'), Buffer.from([0xff]), Buffer.from('y\n')]);
    assert.throws(
      () => decodeYamlBytes(bytes),
      (e: unknown) =>
        e instanceof YamlError &&
        e.problem.line === 2 &&
        e.problem.col === 5 &&
        /invalid UTF-8 \(byte 0xff at byte offset 9\)/.test(e.message),
    );
  });
});
