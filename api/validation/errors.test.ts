import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_DETAIL_CHARS,
  MAX_QUOTED_CHARS,
  aggregate,
  formatFieldError,
  invalid,
  renderValue,
  truncate,
} from './errors.js';

describe('truncate', () => {
  it('keeps text up to the limit', () => {
    assert.equal(truncate('abc', 3), 'abc');
  });
  it('cuts longer text and marks the cut', () => {
    assert.equal(truncate('abcdef', 3), 'abc... (truncated)');
  });
  it('never splits a surrogate pair', () => {
    assert.equal(truncate('a\u{1F600}bc', 2), 'a... (truncated)');
  });
});

describe('field error messages quote long input only in part', () => {
  const long = 'x'.repeat(3 * 1024 * 1024);

  it('quotes a string value up to MAX_QUOTED_CHARS, closing the quote before the mark', () => {
    assert.equal(renderValue(long), `"${'x'.repeat(MAX_QUOTED_CHARS)}"... (truncated)`);
  });
  it('escapes only the part it shows', () => {
    const quotes = '"'.repeat(3 * 1024 * 1024);
    assert.equal(renderValue(quotes), `${JSON.stringify('"'.repeat(MAX_QUOTED_CHARS))}... (truncated)`);
  });
  it('cuts JSON of other values', () => {
    const rendered = renderValue({ a: long });
    assert.equal(rendered, `{"a":"${'x'.repeat(MAX_QUOTED_CHARS - 6)}... (truncated)`);
  });
  it('shows names and annotation keys whole', () => {
    const key = `${'a'.repeat(253)}/${'b'.repeat(63)}`;
    assert.equal(renderValue(key), JSON.stringify(key));
  });
  it('cuts the field path and the detail too', () => {
    const message = formatFieldError(invalid(`spec.${long}`, long, `path "${long}" is bad`));
    assert.ok(message.length < 2 * MAX_QUOTED_CHARS + MAX_DETAIL_CHARS + 100, `${message.length} characters`);
    assert.match(
      message,
      /^spec\.x+\.\.\. \(truncated\): Invalid value: "x+"\.\.\. \(truncated\): path "x+\.\.\. \(truncated\)$/,
    );
  });
  it('keeps a denial of one huge value repeated by several rules near the size of the limits, not of the value', () => {
    const errors = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((rule) =>
      invalid(`spec.${rule}`, long, `rule ${rule}`),
    );
    assert.ok(aggregate(errors).length < 8 * (MAX_QUOTED_CHARS + 100));
  });
});
