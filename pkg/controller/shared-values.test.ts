import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { SharedStrings, SharedValues } from './shared-values.js';

describe('SharedValues', () => {
  it('hands out one object for equal values, and keeps unequal ones apart', () => {
    const v = new SharedValues();
    const a = v.share({ name: 'm1', state: 'Applied', health: { state: 'Healthy' } });
    assert.equal(v.share({ name: 'm1', state: 'Applied', health: { state: 'Healthy' } }), a);
    assert.notEqual(v.share({ name: 'm2', state: 'Applied', health: { state: 'Healthy' } }), a);
    assert.equal(v.size, 2);
  });

  it('does not pool a long value, and starts again past its bound', () => {
    const v = new SharedValues();
    const long = { message: 'x'.repeat(1000) };
    assert.equal(v.share(long), long);
    assert.equal(v.size, 0);
    for (let i = 0; i < 5000; i++) v.share({ i });
    assert.ok(v.size <= 4096, `${v.size} values held`);
  });
});

describe('SharedStrings', () => {
  it('holds at most two generations: a string no longer asked for is dropped', () => {
    const s = new SharedStrings(2);
    for (const x of ['a', 'b', 'c', 'd', 'e']) assert.equal(s.share(x), x);
    assert.ok(s.size <= 4, `${s.size} strings held`);
    // Asked for again while in the previous generation, a string moves on to the current one.
    assert.equal(s.share('d'), 'd');
    for (const x of ['f', 'g']) s.share(x);
    assert.equal(s.share('d'), 'd');
    assert.ok(s.size <= 4, `${s.size} strings held`);
  });
});

describe('SharedStrings.shareMap', () => {
  it('hands out one map for equal maps', () => {
    const s = new SharedStrings();
    const a = s.shareMap({ k: 'v' });
    assert.equal(s.shareMap({ k: 'v' }), a);
    assert.notEqual(s.shareMap({ k: 'w' }), a);
  });
});
