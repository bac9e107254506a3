import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { cycles, importGraph, runtimeImports } from './import-cycles.js';

describe('import-cycles', () => {
  it('counts imports that load a module, not type-only ones', () => {
    const src = [
      "import { a } from './a.js';",
      "import type { B } from './b.js';",
      "import { type C, type D } from './c.js';",
      "import { type E, f } from './e.js';",
      "export { g } from './g.js';",
      "export type { H } from './h.js';",
      "import './side.js';",
      "export * from './star.js';",
    ].join('\n');
    assert.deepEqual(runtimeImports(src), ['./a.js', './e.js', './g.js', './side.js', './star.js']);
  });

  it('finds a cycle through runtime imports and names every file in it', () => {
    const files: Record<string, string> = {
      '/p/a.ts': "import { b } from './b.js';",
      '/p/b.ts': "import { c } from './c.js';",
      '/p/c.ts': "import { a } from './a.js';",
      '/p/d.ts': "import { a } from './a.js';",
    };
    const found = cycles(importGraph(Object.keys(files), (f) => files[f] ?? ''));
    assert.deepEqual(
      found.map((c) => [...c].sort()),
      [['/p/a.ts', '/p/b.ts', '/p/c.ts']],
    );
  });

  it('finds none when the way back is type-only', () => {
    const files: Record<string, string> = {
      '/p/a.ts': "import { b } from './b.js';",
      '/p/b.ts': "import type { A } from './a.js';",
    };
    assert.deepEqual(cycles(importGraph(Object.keys(files), (f) => files[f] ?? '')), []);
  });
});
