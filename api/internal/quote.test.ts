import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { describeField, quote } from './quote.js';

function nested(depth: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

describe('quote', () => {
  it('quotes strings and numbers as JSON', () => {
    assert.equal(quote('apps/v1'), '"apps/v1"');
    assert.equal(quote(3), '3');
    assert.equal(quote(null), 'null');
  });

  it('shows a value nested thousands deep to three levels, without overflowing the stack', () => {
    assert.equal(quote(nested(100_000)), '[[[[…]]]]');
  });

  it('cuts a long value at the limit', () => {
    const q = quote('a'.repeat(1_000_000), 50);
    assert.ok(q.length <= 50, q);
    assert.match(q, /…/);
    assert.ok(quote(Array.from({ length: 10_000 }, (_, i) => ({ ['k' + String(i)]: 'v'.repeat(100) }))).length <= 200);
  });

  it('says a missing field is missing', () => {
    assert.equal(describeField('apiVersion', undefined), 'apiVersion is missing');
    assert.equal(describeField('apiVersion', 'apps/v1'), 'apiVersion "apps/v1"');
  });
});
