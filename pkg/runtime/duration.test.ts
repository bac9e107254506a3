import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { formatDuration } from './duration.js';

describe("formatDuration: Go's time.Duration.String() of a number of milliseconds", () => {
  // Each right-hand side is what Go prints for time.Duration(ms) * time.Millisecond.
  const cases: Array<[number, string]> = [
    [0, '0s'],
    [1, '1ms'],
    [500, '500ms'],
    [999, '999ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [2000, '2s'],
    [2050, '2.05s'],
    [5000, '5s'],
    [59_999, '59.999s'],
    [60_000, '1m0s'],
    [90_000, '1m30s'],
    [600_000, '10m0s'],
    [3_600_000, '1h0m0s'],
    [3_723_400, '1h2m3.4s'],
    [-1500, '-1.5s'],
  ];
  for (const [ms, want] of cases) it(`${ms} ms → ${want}`, () => assert.equal(formatDuration(ms), want));
});
