import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as shape from './shape.js';

describe('shape readers', () => {
  it('read inherited members as absent', () => {
    const o = {};
    assert.equal(shape.obj(o, '__proto__'), undefined);
    assert.equal(shape.isSet(o, 'constructor'), false);
    assert.equal(shape.member(o, 'toString'), undefined);
  });
  it('read an own __proto__ member', () => {
    const o = JSON.parse('{"__proto__":{"a":"b"}}') as Record<string, unknown>;
    assert.deepEqual(shape.obj(o, '__proto__'), { a: 'b' });
  });
  it('canonicalJSON keeps __proto__ keys, so policies that differ there do not compare equal', () => {
    assert.equal(shape.canonicalJSON(JSON.parse('{"b":1,"__proto__":{"x":1}}')), '{"__proto__":{"x":1},"b":1}');
  });
});
