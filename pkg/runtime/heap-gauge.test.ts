import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { HEAP_METRIC, HEAP_METRIC_ENV, registerHeapGauge } from './heap-gauge.js';
import { Registry } from './metrics.js';

void describe('registerHeapGauge', () => {
  void it('adds nothing unless the environment asks for it', () => {
    const r = new Registry();
    assert.equal(registerHeapGauge(r, {}), false);
    assert.equal(registerHeapGauge(r, { [HEAP_METRIC_ENV]: '1' }), false);
    assert.equal(r.render(), '');
  });

  void it('with gc exposed, renders the heap in use after a collection at each scrape', () => {
    const g = globalThis as { gc?: () => void };
    const had = g.gc;
    setFlagsFromString('--expose-gc');
    g.gc ??= runInNewContext('gc') as () => void;
    let collections = 0;
    const real = g.gc;
    g.gc = () => {
      collections++;
      real();
    };
    try {
      const r = new Registry();
      assert.equal(registerHeapGauge(r, { [HEAP_METRIC_ENV]: 'true' }), true);
      const value = (text: string) => Number(new RegExp(`^${HEAP_METRIC} (\\d+)$`, 'm').exec(text)?.[1]);
      const first = value(r.render());
      const second = value(r.render());
      assert.equal(collections, 2);
      assert.ok(first > 1_000_000 && second > 1_000_000, `${first}, ${second}`);
      assert.match(r.render(), new RegExp(`^# TYPE ${HEAP_METRIC} gauge$`, 'm'));
    } finally {
      if (had) g.gc = had;
      else delete g.gc;
    }
  });
});
