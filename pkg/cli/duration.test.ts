import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DurationError, parseDuration } from './duration.js';

describe('parseDuration (Go syntax)', () => {
  const good: Array<[string, number]> = [
    ['0', 0],
    ['90s', 90_000],
    ['1m30s', 90_000],
    ['1h', 3_600_000],
    ['500ms', 500],
    ['1h2m3.5s', 3_723_500],
    ['1.5s', 1500],
    ['.5s', 500],
    ['5.s', 5000],
    ['2m', 120_000],
    ['+10s', 10_000],
    ['-1.5h', -5_400_000],
    ['1500us', 1.5],
    ['1µs', 0.001],
    ['1μs', 0.001],
    ['250ns', 0.00025],
    ['1h1h', 7_200_000],
  ];
  for (const [text, ms] of good) {
    it(`reads ${JSON.stringify(text)} as ${ms} ms`, () => assert.equal(parseDuration(text), ms));
  }

  const bad: Array<[string, RegExp]> = [
    ['', /expected a number with a unit/],
    ['3', /missing unit; did you mean 3s\?/],
    ['1m30', /missing unit \(units: ns, us, ms, s, m, h\)/],
    ['often', /expected a number at "often"/],
    ['10sec', /unknown unit "sec"/],
    ['1d', /unknown unit "d"/],
    ['1h 2m', /unknown unit "h "/],
    ['.s', /expected a number at "\.s"/],
    ['-', /expected a number with a unit/],
    ['1.5.5s', /missing unit/],
    ['3000000h', /longer than Go's limit/],
  ];
  for (const [text, message] of bad) {
    it(`rejects ${JSON.stringify(text)} and says why`, () => {
      assert.throws(
        () => parseDuration(text),
        (e: unknown) =>
          e instanceof DurationError && message.test(e.message) && e.message.includes(JSON.stringify(text)),
      );
    });
  }
});
