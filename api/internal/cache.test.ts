import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedCache, ENTRY_OVERHEAD } from './cache.js';

describe('BoundedCache', () => {
  it('returns what was stored', () => {
    const c = new BoundedCache<number>({ maxEntries: 10, maxKeyLength: 100, maxTotalLength: 10_000 });
    c.set('a', 1);
    assert.equal(c.get('a'), 1);
    assert.equal(c.get('b'), undefined);
  });
  it('does not store keys longer than maxKeyLength', () => {
    const c = new BoundedCache<number>({ maxEntries: 10, maxKeyLength: 4, maxTotalLength: 10_000 });
    c.set('12345', 1);
    assert.equal(c.get('12345'), undefined);
    assert.equal(c.size, 0);
  });
  it('evicts the oldest entry at the entry limit', () => {
    const c = new BoundedCache<number>({ maxEntries: 2, maxKeyLength: 100, maxTotalLength: 10_000 });
    c.set('a', 1);
    c.set('b', 2);
    c.set('c', 3);
    assert.deepEqual([c.get('a'), c.get('b'), c.get('c')], [undefined, 2, 3]);
  });
  it('keeps the total charge within maxTotalLength however many distinct keys arrive', () => {
    const limit = 10 * (100 + ENTRY_OVERHEAD);
    const c = new BoundedCache<number>({ maxEntries: 1_000_000, maxKeyLength: 100, maxTotalLength: limit });
    for (let i = 0; i < 5_000; i++) {
      c.set(String(i).padStart(100, 'x'), i);
      assert.ok(c.totalLength <= limit, `total ${c.totalLength} after ${i + 1} keys`);
    }
    assert.equal(c.size, 10);
    assert.equal(c.get(String(4_999).padStart(100, 'x')), 4_999);
  });
  it('charges a re-stored key once', () => {
    const c = new BoundedCache<number>({ maxEntries: 10, maxKeyLength: 100, maxTotalLength: 10_000 });
    c.set('abc', 1);
    c.set('abc', 2);
    assert.equal(c.totalLength, 3 + ENTRY_OVERHEAD);
    assert.equal(c.get('abc'), 2);
  });
});
