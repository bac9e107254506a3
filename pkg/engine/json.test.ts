import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cloneJson, own, stringMap } from './json.js';

describe('cloneJson', () => {
  it('copies a JSON value deeply', () => {
    const v = { a: [1, { b: 'c' }], d: null, e: true };
    const c = cloneJson(v);
    assert.deepEqual(c, v);
    assert.notEqual(c.a, v.a);
    assert.notEqual(c.a[1], v.a[1]);
  });
  it('keeps a __proto__ key as own data and leaves the prototype alone', () => {
    const v = JSON.parse('{"__proto__":{"polluted":"yes"},"a":{"__proto__":"x"}}') as Record<string, unknown>;
    const c = cloneJson(v);
    assert.equal(Object.getPrototypeOf(c), Object.prototype);
    assert.equal(c.polluted, undefined);
    assert.equal(JSON.stringify(c), '{"__proto__":{"polluted":"yes"},"a":{"__proto__":"x"}}');
    assert.notEqual(own(c, '__proto__'), own(v, '__proto__'));
  });
  it('copies own keys only', () => {
    const v = Object.create({ inherited: 1 }) as Record<string, unknown>;
    v.own = 2;
    assert.equal(JSON.stringify(cloneJson(v)), '{"own":2}');
  });
});

describe('stringMap', () => {
  it('keeps a key named __proto__ and reads no inherited key', () => {
    const m = stringMap(JSON.parse('{"__proto__":"p","env":"prod","n":1}'));
    assert.equal(JSON.stringify(m), '{"__proto__":"p","env":"prod"}');
    assert.equal(own(m, '__proto__'), 'p');
    assert.equal(own(m, 'constructor'), undefined);
  });
});
