// report.ts: ginkgo's JSON report read into one line per spec, and the run compared with the list of
// specs expected to pass.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { compare, focusOn, merged, readExpected, retried, summarise, type SpecLine } from './report.js';

const spec = (text: string, state: string, failure?: object) => ({
  ContainerHierarchyTexts: ['[BasicCase] PropagationPolicy testing', 'Deployment propagation testing'],
  LeafNodeText: text,
  LeafNodeType: 'It',
  LeafNodeLocation: { FileName: '/src/test/e2e/suites/base/propagationpolicy_test.go', LineNumber: 10 },
  State: state,
  ...(failure ? { Failure: failure } : {}),
});

void describe('karmada-e2e report', () => {
  void it('one line per spec: file, the container texts and the leaf, where a failure was raised', () => {
    const lines = summarise([
      {
        SpecReports: [
          spec('deployment propagation testing', 'passed'),
          spec('service propagation testing', 'failed', {
            Message: 'Timed out after 60.001s.\nExpected\n<bool>: false',
            Location: { FileName: '/src/test/e2e/framework/events.go', LineNumber: 38 },
          }),
          { LeafNodeType: 'SynchronizedBeforeSuite', State: 'passed' },
        ],
      },
    ]);
    assert.deepEqual(lines, [
      {
        file: 'propagationpolicy_test.go',
        name: '[BasicCase] PropagationPolicy testing / Deployment propagation testing / deployment propagation testing',
        state: 'passed',
      },
      {
        file: 'propagationpolicy_test.go',
        name: '[BasicCase] PropagationPolicy testing / Deployment propagation testing / service propagation testing',
        state: 'failed',
        reason: 'events.go:38: Timed out after 60.001s.',
      },
    ]);
    assert.throws(() => summarise({}), /expected an array of suite reports/);
  });

  void it('a listed spec that fails or did not run is a regression; a passing one not listed is new', () => {
    const lines: SpecLine[] = [
      { file: 'a_test.go', name: 'one', state: 'passed' },
      { file: 'a_test.go', name: 'two', state: 'failed', reason: 'x.go:1: boom' },
      { file: 'a_test.go', name: 'three', state: 'passed' },
    ];
    const expected = readExpected('# comment\n\na_test.go: one\na_test.go: two\n  a_test.go: gone  \n');
    assert.deepEqual(compare(lines, expected), {
      regressions: [
        { key: 'a_test.go: gone', state: 'not run' },
        { key: 'a_test.go: two', state: 'failed', reason: 'x.go:1: boom' },
      ],
      newlyPassing: ['a_test.go: three'],
    });
    // A focused run: what it skipped or left out is not compared.
    const focused = [...lines, { file: 'a_test.go', name: 'four', state: 'skipped' }];
    const listed = readExpected('a_test.go: one\na_test.go: four\na_test.go: gone\n');
    assert.deepEqual(compare(focused, listed, true).regressions, []);
    assert.equal(compare(focused, listed).regressions.length, 2);
  });

  void it('a second attempt: a focus that quotes the names, and its results in place of the first', () => {
    const failed: SpecLine = { file: 'a_test.go', name: '[BasicCase] pp / deploy (x+y) / works?', state: 'failed' };
    const other: SpecLine = { file: 'b_test.go', name: 'other', state: 'passed' };
    const focus = focusOn([failed, { file: 'c.go', name: 'a|b', state: 'failed' }]);
    assert.equal(focus, '\\[BasicCase\\] pp deploy \\(x\\+y\\) works\\?|a\\|b');
    const merged = retried(
      [failed, other],
      [
        { ...failed, state: 'passed' },
        { ...other, state: 'skipped' },
      ],
    );
    assert.deepEqual(merged, [{ ...failed, state: 'passed', retried: true }, other]);
    const expected = new Set(['a_test.go: [BasicCase] pp / deploy (x+y) / works?']);
    assert.deepEqual(compare(merged, expected).regressions, []);
    const twice = retried([failed], [failed]);
    assert.equal(compare(twice, expected).regressions.length, 1);
  });

  void it('a later run of the specs the first skipped: its results in their place, not marked as retried', () => {
    const skippedFirst: SpecLine = { file: 'failover_test.go', name: 'cluster failover testing / x', state: 'skipped' };
    const ranFirst: SpecLine = { file: 'a_test.go', name: 'a', state: 'passed' };
    const all = merged(
      [ranFirst, skippedFirst],
      [
        { ...ranFirst, state: 'skipped' },
        { ...skippedFirst, state: 'failed', reason: 'r' },
      ],
    );
    assert.deepEqual(all, [ranFirst, { ...skippedFirst, state: 'failed', reason: 'r' }]);
    assert.equal(compare(all, new Set(['failover_test.go: cluster failover testing / x'])).regressions.length, 1);
  });
});
