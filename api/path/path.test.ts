import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { heapAfterGC } from '../../test/heap.js';
import { checkPath, formatPath, MAX_PATH_LENGTH, parsePath, PathError } from './index.js';

describe('parsePath', () => {
  const ok: Array<[string, string, unknown[]]> = [
    ['the empty path is the whole document', '', []],
    ['a plain pointer splits on slashes', '/spec/replicas', [{ key: 'spec' }, { key: 'replicas' }]],
    [
      '~1 and ~0 unescape to / and ~',
      '/metadata/labels/a~1b~0c',
      [{ key: 'metadata' }, { key: 'labels' }, { key: 'a/b~c' }],
    ],
    [
      'a keyed segment is the key then a selector',
      '/spec/containers[name=web]/image',
      [{ key: 'spec' }, { key: 'containers' }, { match: { field: 'name', value: 'web' } }, { key: 'image' }],
    ],
    [
      'a bare selector selects within the current list',
      '/items/[id=3]',
      [{ key: 'items' }, { match: { field: 'id', value: '3' } }],
    ],
    ['a selector value may be empty', '/a[name=]', [{ key: 'a' }, { match: { field: 'name', value: '' } }]],
    ['an empty segment is the empty key', '/a//b', [{ key: 'a' }, { key: '' }, { key: 'b' }]],
  ];
  for (const [name, path, want] of ok) it(name, () => assert.deepEqual(parsePath(path), want));

  const bad: Array<[string, string, RegExp]> = [
    ['a path must start with a slash', 'spec/replicas', /JSON pointer must be empty or start with a "\/"/],
    ['__proto__ is refused', '/metadata/__proto__/x', /"__proto__", which is not allowed/],
    ['constructor is refused', '/constructor/prototype', /"constructor"/],
    ['prototype is refused as a selector field too', '/a[prototype=x]', /"prototype"/],
    ['a stray tilde is refused', '/a~2b', /invalid escape "~2"/],
    ['a malformed selector is refused', '/containers[name]', /must read \[field=value\]/],
  ];
  for (const [name, path, message] of bad) {
    it(name, () => {
      assert.throws(
        () => parsePath(path),
        (err: unknown) => err instanceof PathError && message.test(err.message),
      );
      assert.match(checkPath(path) ?? '', message);
    });
  }

  it('round-trips through formatPath', () => {
    for (const p of ['/spec/containers[name=web]/image', '/metadata/labels/a~1b', ''])
      assert.equal(formatPath(parsePath(p)), p);
  });
});

describe('path bounds', () => {
  it('accepts a path of MAX_PATH_LENGTH characters', () => {
    const path = `/${'a'.repeat(MAX_PATH_LENGTH - 1)}`;
    assert.deepEqual(parsePath(path), [{ key: 'a'.repeat(MAX_PATH_LENGTH - 1) }]);
  });
  it('refuses a longer path, saying how long it is', () => {
    const path = `/${'a'.repeat(MAX_PATH_LENGTH)}`;
    assert.throws(
      () => parsePath(path),
      (e: unknown) =>
        e instanceof PathError &&
        e.message === `path is ${MAX_PATH_LENGTH + 1} characters long; at most ${MAX_PATH_LENGTH} are allowed`,
    );
  });
  it('does not keep long paths alive after parsing them', () => {
    // Every path is new; a parse cache that keeps paths of any length grows by each one.
    const before = heapAfterGC();
    for (let i = 0; i < 64; i++) {
      assert.match(checkPath(`/spec/${'x'.repeat(1024 * 1024)}${i}`) ?? '', /at most 4096/);
      assert.equal(checkPath(`/spec/${'y'.repeat(4000)}${i}`), undefined);
    }
    const grown = heapAfterGC() - before;
    assert.ok(grown < 16 * 1024 * 1024, `heap grew by ${(grown / 1024 / 1024).toFixed(1)} MiB`);
  });
});
