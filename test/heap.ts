// Heap size after a full garbage collection, for tests that check a cache or buffer does not keep input
// alive. Collecting needs --expose-gc, which node:test does not pass; the flag is set at run time instead.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Bytes of heap in use once everything unreachable has been collected. */
export function heapAfterGC(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
