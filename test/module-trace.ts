// Preload (`node --import ./dist/test/module-trace.js …`) that records the URL of every module the process
// resolves, ESM and CommonJS, and Node's own modules it loaded (`node-internal:internal/…`), and writes them
// one per line to file descriptor 3 as the process exits.
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
  const list = (process as unknown as { moduleLoadList?: string[] }).moduleLoadList ?? [];
  const internal = list.filter((m) => m.startsWith('NativeModule ')).map((m) => `node-internal:${m.slice(13)}`);
  writeSync(3, `${[...loaded, ...internal].join('\n')}\n`);
});
