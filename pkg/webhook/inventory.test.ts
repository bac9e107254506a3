import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { eventually } from '../../test/eventually.js';
import { PollingInventory } from './inventory.js';

void describe('PollingInventory', () => {
  void it('knows no clusters until a list succeeds, then keeps the last good list through failures', async () => {
    const results: Array<() => Promise<Array<{ metadata: { name: string } }>>> = [
      () => Promise.reject(new Error('forbidden')),
      () => Promise.resolve([{ metadata: { name: 'east' } }]),
      () => Promise.reject(new Error('timeout')),
    ];
    const errors: string[] = [];
    const inventory = new PollingInventory({
      list: () => (results.shift() ?? (() => Promise.resolve([])))(),
      logger: {
        info: () => undefined,
        warn: () => undefined,
        debug: () => undefined,
        error: (m) => void errors.push(m),
      },
    });
    await inventory.refresh();
    assert.equal(inventory.clusters(), undefined);
    await inventory.refresh();
    assert.deepStrictEqual(inventory.clusters(), [{ metadata: { name: 'east' } }]);
    await inventory.refresh();
    assert.deepStrictEqual(inventory.clusters(), [{ metadata: { name: 'east' } }]);
    assert.equal(errors.length, 2);
  });

  void it('polls on its interval until the signal aborts', async () => {
    let calls = 0;
    const abort = new AbortController();
    const inventory = new PollingInventory({
      list: () => Promise.resolve(Array.from({ length: ++calls }, (_, i) => ({ metadata: { name: `c${i}` } }))),
      intervalMs: 10,
    });
    await inventory.start(abort.signal);
    // Lists come every 10 ms when the machine is idle; a loaded one may give the timers far less often.
    await eventually(
      () => calls,
      (n) => n >= 3,
      10_000,
      5,
    );
    abort.abort();
    const after = calls;
    assert.ok(after >= 3, `${after} lists`);
    await new Promise((r) => setTimeout(r, 40));
    assert.equal(calls, after);
    assert.equal(inventory.clusters()?.length, after);
  });
});
