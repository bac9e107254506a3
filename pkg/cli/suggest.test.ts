import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closest, editDistance } from './suggest.js';

describe('editDistance', () => {
  const cases: Array<[string, string, number]> = [
    ['', '', 0],
    ['render', 'render', 0],
    ['rendr', 'render', 1],
    ['rednre', 'render', 3],
    ['', 'abc', 3],
    ['kitten', 'sitting', 3],
  ];
  for (const [a, b, d] of cases)
    it(`is ${d} from ${JSON.stringify(a)} to ${JSON.stringify(b)}`, () => assert.equal(editDistance(a, b), d));
});

describe('closest', () => {
  const commands = ['render', 'validate', 'webhook', 'certs', 'version', 'completion'];
  const cases: Array<[string, string | undefined]> = [
    ['rendr', 'render'],
    ['Render', 'render'],
    ['valdiate', 'validate'],
    ['cert', 'certs'],
    ['ver', 'version'],
    ['webhok', 'webhook'],
    ['complete', 'completion'],
    ['deploy', undefined],
    ['', undefined],
  ];
  for (const [word, want] of cases) {
    it(`suggests ${JSON.stringify(want)} for ${JSON.stringify(word)}`, () =>
      assert.equal(closest(word, commands), want));
  }
});
