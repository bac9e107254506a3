// The disruption rule: which mixes of ready and not-ready clusters evict nothing.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { disruption } from './disruption.js';

const push = (ready: boolean) => ({ ready, pull: false });
const pull = (ready: boolean) => ({ ready, pull: true });
const mode = (cs: Array<{ ready: boolean; pull: boolean }>, t?: number) => disruption(cs, t).mode;

describe('disruption', () => {
  it('normal while few are down: one of two, two of three (kube counts partial from three)', () => {
    assert.equal(mode([]), 'normal');
    assert.equal(mode([push(true), push(true)]), 'normal');
    assert.equal(mode([push(true), pull(false)]), 'normal');
    assert.equal(mode([push(true), push(false), pull(true)]), 'normal');
    assert.equal(mode([push(false), push(false), push(true)]), 'normal');
  });

  it('full when none is ready', () => {
    assert.equal(mode([push(false)]), 'full');
    assert.equal(mode([push(false), pull(false), pull(false)]), 'full');
  });

  it('partial from three not ready at or above the threshold', () => {
    const six = [push(false), push(false), push(false), push(true), push(true), pull(true)];
    assert.equal(mode(six), 'normal'); // 3 of 6 = 0.5 < 0.55
    assert.equal(mode(six, 0.5), 'partial');
    assert.equal(mode([...six.slice(0, 3), push(false), push(true), pull(true)]), 'partial'); // 4 of 6
    assert.deepEqual(disruption([push(false), push(false), push(false), pull(true)]), {
      mode: 'partial',
      ready: 1,
      notReady: 3,
    });
  });

  it('every push member unreachable (two or more) while pull clusters renew; and the reverse', () => {
    assert.equal(mode([push(false), push(false), pull(true), pull(true), pull(true)]), 'push-unreachable');
    assert.equal(mode([push(false), pull(true), pull(true)]), 'normal');
    assert.equal(mode([push(true), push(true), push(true), pull(false), pull(false)]), 'pull-unreachable');
  });
});
