import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_DEPTH, own, setOwn, tooDeepUnder } from './objects.js';

describe('own', () => {
  const labels: Record<string, string> = { env: 'prod' };
  const cases: Array<[string, string, string | undefined]> = [
    ['reads an own key', 'env', 'prod'],
    ['does not read constructor from the prototype', 'constructor', undefined],
    ['does not read __proto__ from the prototype', '__proto__', undefined],
    ['does not read toString from the prototype', 'toString', undefined],
    ['does not read hasOwnProperty from the prototype', 'hasOwnProperty', undefined],
  ];
  for (const [name, key, want] of cases) it(name, () => assert.equal(own(labels, key), want));

  it('reads an own __proto__ key as data', () => {
    const parsed = JSON.parse('{"__proto__": "x"}') as Record<string, string>;
    assert.equal(own(parsed, '__proto__'), 'x');
  });
});

describe('setOwn', () => {
  it('writes __proto__ as an own data key and leaves the prototype alone', () => {
    const o: Record<string, unknown> = {};
    setOwn(o, '__proto__', { polluted: true });
    assert.equal(Object.getPrototypeOf(o), Object.prototype);
    assert.deepEqual(Object.keys(o), ['__proto__']);
    assert.equal((o as { polluted?: unknown }).polluted, undefined);
    assert.equal(JSON.stringify(o), '{"__proto__":{"polluted":true}}');
  });
  it('writes other keys as plain assignment does', () => {
    const o: Record<string, unknown> = {};
    setOwn(o, 'constructor', 1);
    setOwn(o, 'a', 2);
    assert.deepEqual(Object.entries(o), [
      ['constructor', 1],
      ['a', 2],
    ]);
  });
  it('overwrites an own __proto__ key', () => {
    const o: Record<string, unknown> = {};
    setOwn(o, '__proto__', 1);
    setOwn(o, '__proto__', 2);
    assert.equal(own(o, '__proto__'), 2);
  });
});

describe('tooDeepUnder', () => {
  const nest = (levels: number, leaf: unknown = 'x'): unknown => {
    let v = leaf;
    for (let i = 0; i < levels; i++) v = { a: v };
    return v;
  };
  it('accepts a document nested exactly MAX_DEPTH levels', () =>
    assert.equal(tooDeepUnder({ spec: nest(MAX_DEPTH - 1) }), undefined));
  it('names the top-level key of a document nested one level more', () =>
    assert.equal(tooDeepUnder({ kind: 'x', spec: nest(MAX_DEPTH) }), 'spec'));
  it('counts arrays as levels', () => {
    let v: unknown = 1;
    for (let i = 0; i < 10; i++) v = [v];
    assert.equal(tooDeepUnder({ data: v }, 10), 'data');
    assert.equal(tooDeepUnder({ data: v }, 11), undefined);
  });
  it('measures a million levels without recursion', () => assert.equal(tooDeepUnder(nest(1_000_000)), 'a'));
  it('takes scalars and shallow values as they are', () => {
    assert.equal(tooDeepUnder('x'), undefined);
    assert.equal(tooDeepUnder(null), undefined);
    assert.equal(tooDeepUnder({ a: [1, { b: 2 }] }), undefined);
  });
});
