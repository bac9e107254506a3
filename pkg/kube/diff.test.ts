import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';

import { unifiedDiff } from './diff.js';

const labels = { fromLabel: 'a (live)', toLabel: 'a (after apply)' };

/** Applies a unified diff to `from`, checking every context and removed line on the way. */
function patch(from: string, diff: string): string {
  const src = from === '' ? [] : from.replace(/\n$/, '').split('\n');
  const out: string[] = [];
  let pos = 0;
  const lines = diff.replace(/\n$/, '').split('\n').slice(2);
  for (const line of lines) {
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@$/.exec(line);
    if (hunk) {
      const count = hunk[2] === undefined ? 1 : Number(hunk[2]);
      const start = count === 0 ? Number(hunk[1]) : Number(hunk[1]) - 1;
      while (pos < start) out.push(src[pos++] ?? '');
      continue;
    }
    const kind = line[0];
    const text = line.slice(1);
    if (kind === ' ' || kind === '-') {
      assert.equal(src[pos], text, `line ${pos + 1} of the old text`);
      pos++;
      if (kind === ' ') out.push(text);
    } else if (kind === '+') {
      out.push(text);
    } else {
      assert.fail(`unexpected diff line ${JSON.stringify(line)}`);
    }
  }
  while (pos < src.length) out.push(src[pos++] ?? '');
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

void describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    assert.equal(unifiedDiff('a\nb\n', 'a\nb\n', labels), '');
  });

  it('prints a hunk with three lines of context, as diff -u does', () => {
    const from = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].join('\n') + '\n';
    const to = ['a', 'b', 'c', 'd', 'E', 'f', 'g', 'h'].join('\n') + '\n';
    assert.equal(
      unifiedDiff(from, to, labels),
      [
        '--- a (live)',
        '+++ a (after apply)',
        '@@ -2,7 +2,7 @@',
        ' b',
        ' c',
        ' d',
        '-e',
        '+E',
        ' f',
        ' g',
        ' h',
        '',
      ].join('\n'),
    );
  });

  it('shows a new object as all added and a deleted one as all removed', () => {
    assert.equal(
      unifiedDiff('', 'x: 1\ny: 2\n', labels),
      ['--- a (live)', '+++ a (after apply)', '@@ -0,0 +1,2 @@', '+x: 1', '+y: 2', ''].join('\n'),
    );
    assert.equal(
      unifiedDiff('x: 1\n', '', labels),
      ['--- a (live)', '+++ a (after apply)', '@@ -1 +0,0 @@', '-x: 1', ''].join('\n'),
    );
  });

  it('keeps far-apart changes in separate hunks and near ones in one', () => {
    const from = Array.from({ length: 30 }, (_, i) => `l${i}`).join('\n') + '\n';
    const far = from.replace('l2\n', 'L2\n').replace('l25\n', 'L25\n');
    assert.equal((unifiedDiff(from, far, labels).match(/^@@/gm) ?? []).length, 2);
    const near = from.replace('l2\n', 'L2\n').replace('l7\n', 'L7\n');
    assert.equal((unifiedDiff(from, near, labels).match(/^@@/gm) ?? []).length, 1);
  });

  it('turns the old text into the new one, for any pair of texts', () => {
    const text = fc
      .array(fc.constantFrom('a', 'b', 'c', 'd', 'spec:', '  x: 1'), { maxLength: 40 })
      .map((l) => (l.length ? `${l.join('\n')}\n` : ''));
    fc.assert(
      fc.property(text, text, (a, b) => {
        const d = unifiedDiff(a, b, labels);
        assert.equal(d === '', a === b);
        if (d) assert.equal(patch(a, d), b);
      }),
      { numRuns: 500 },
    );
  });

  it('finds the shortest edit: one changed line in a long text is one removal and one addition', () => {
    const from = Array.from({ length: 200 }, (_, i) => `line ${i % 7}`).join('\n') + '\n';
    const lines = from.split('\n');
    lines[100] = 'changed';
    const d = unifiedDiff(from, lines.join('\n'), labels);
    assert.equal((d.match(/^-[^-]/gm) ?? []).length, 1);
    assert.equal((d.match(/^\+[^+]/gm) ?? []).length, 1);
  });
});
