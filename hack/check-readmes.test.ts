import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';

import { unnamed } from './check-readmes.js';

describe('check-readmes', () => {
  const root = mkdtempSync(join(tmpdir(), 'check-readmes-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text = '') => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };

  it('names each unnamed source file with the README it is missing from; tests and folders with their own README are not asked', () => {
    write('pkg/a/README.md', '| `one.ts` | one |\n| `sub/two.ts` | two |\n| `three.ts` |');
    for (const f of ['one.ts', 'sub/two.ts', 'sub/three.ts', 'four.ts', 'index.ts', 'sub/index.ts', 'one.test.ts'])
      write(`pkg/a/${f}`);
    write('pkg/a/core-tests/fleet.ts');
    write('pkg/a/own/README.md', '`x.ts`');
    write('pkg/a/own/x.ts');
    write('pkg/a/own/y.ts');
    write('api/README.md', '`v1/types.ts`');
    write('api/v1/types.ts');
    assert.deepEqual(unnamed(root).sort(), [
      'pkg/a/four.ts: not named in pkg/a/README.md',
      'pkg/a/index.ts: not named in pkg/a/README.md',
      'pkg/a/own/y.ts: not named in pkg/a/own/README.md',
      'pkg/a/sub/index.ts: not named in pkg/a/README.md',
    ]);
  });
});
