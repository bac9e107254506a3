// Preload (`node --import ./dist/test/module-trace.js …`) that records the URL of every module the process
// resolves, ESM and CommonJS, and writes them one per line to file descriptor 3 as the process exits.
// Tests use it to check which modules a command loads.

import { writeSync } from 'node:fs';
import { registerHooks } from 'node:module';

const loaded = new Set<string>();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    loaded.add(resolved.url);
    return resolved;
  },
});
process.on('exit', () => {
  writeSync(3, `${[...loaded].join('\n')}\n`);
});
