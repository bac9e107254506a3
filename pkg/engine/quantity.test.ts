import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { addQuantity, formatQuantity, parseMilli, parseQuantity, type Quantity } from './quantity.js';

// Every right-hand side below is what k8s.io/apimachinery v0.33.13's resource.Quantity String() printed
// for the same input (ParseQuantity, Quantity.Add, NewQuantity, NewMilliQuantity).

const canonical = (s: string): string => {
  const q = parseQuantity(s);
  assert.ok(q, `${s} parses`);
  return formatQuantity(q.milli, q.format);
};

describe('formatQuantity(parseQuantity(s)): ParseQuantity(s).String()', () => {
  const cases: Array<[string, string]> = [
    ['16Gi', '16Gi'],
    ['17179869184', '17179869184'],
    ['1.5Gi', '1536Mi'],
    ['1536Mi', '1536Mi'],
    ['1024Mi', '1Gi'],
    ['1000Ki', '1000Ki'],
    ['16331024Ki', '16331024Ki'],
    ['1Ki', '1Ki'],
    ['0.5Ki', '512'],
    ['.001Ki', '1024m'],
    ['1000M', '1G'],
    ['129M', '129M'],
    ['95491281146', '95491281146'],
    ['2000', '2k'],
    ['1500', '1500'],
    ['110', '110'],
    ['4', '4'],
    ['3.5', '3500m'],
    ['3500m', '3500m'],
    ['1.5', '1500m'],
    ['0.5', '500m'],
    ['0.1', '100m'],
    ['100m', '100m'],
    ['1e3', '1e3'],
    ['1.5e3', '1500'],
    ['12e2', '1200'],
    ['1E', '1E'],
    ['0', '0'],
  ];
  for (const [input, want] of cases) it(`${input} → ${want}`, () => assert.equal(canonical(input), want));

  it('past E and Ei the number grows (apimachinery prints 1000E as "1" and caps 8Ei at 2^63-1)', () => {
    assert.equal(canonical('1000E'), '1000E');
    assert.equal(canonical('8Ei'), '8Ei');
    assert.equal(canonical('1024Ei'), '1024Ei');
  });
});

describe('formatQuantity of a value made in code: NewQuantity / NewMilliQuantity(v, format).String()', () => {
  const cases: Array<[bigint, Quantity['format'], string]> = [
    [1610612736_000n, 'BinarySI', '1536Mi'],
    [17179869184_000n, 'BinarySI', '16Gi'],
    [134217728_000n, 'BinarySI', '128Mi'],
    [2048000_000n, 'BinarySI', '2000Ki'],
    [1000_000n, 'BinarySI', '1k'],
    [1000000000_000n, 'BinarySI', '1000000000'],
    [1025_000n, 'BinarySI', '1025'],
    [1_000n, 'BinarySI', '1'],
    [2500n, 'DecimalSI', '2500m'],
    [300n, 'DecimalSI', '300m'],
    [4000n, 'DecimalSI', '4'],
    [1500n, 'DecimalSI', '1500m'],
    [100000n, 'DecimalSI', '100'],
    [2_000n, 'DecimalSI', '2'],
    [110_000n, 'DecimalSI', '110'],
    [1000_000n, 'DecimalSI', '1k'],
    [2000000_000n, 'DecimalSI', '2M'],
  ];
  for (const [milli, format, want] of cases)
    it(`${milli}m ${format} → ${want}`, () => assert.equal(formatQuantity(milli, format), want));
});

describe('addQuantity: the sum keeps the first term’s format (Quantity.Add)', () => {
  const cases: Array<[string[], string]> = [
    [['16Gi', '16Gi'], '32Gi'],
    [['16331024Ki', '16331024Ki'], '32662048Ki'],
    [['17179869184', '16Gi'], '34359738368'],
    [['16Gi', '17179869184'], '32Gi'],
    [['0', '4Gi'], '4Gi'],
    [['4', '3500m'], '7500m'],
    [['1e3', '1e3'], '2e3'],
    [['2', '2'], '4'],
    [['110', '110', '110'], '330'],
    [['500Mi', '524288000'], '1000Mi'],
  ];
  for (const [terms, want] of cases)
    it(`${terms.join(' + ')} → ${want}`, () => {
      let sum: Quantity | undefined;
      for (const t of terms) sum = addQuantity(sum, parseQuantity(t) as Quantity);
      assert.ok(sum);
      assert.equal(formatQuantity(sum.milli, sum.format), want);
    });
});

describe('parseMilli reads raw numbers and suffixed quantities alike', () => {
  it('16Gi and 17179869184 are the same amount, as are 3.5 and 3500m', () => {
    assert.equal(parseMilli('16Gi'), parseMilli('17179869184'));
    assert.equal(parseMilli('16Gi'), 17179869184_000);
    assert.equal(parseMilli('3.5'), parseMilli('3500m'));
    assert.equal(parseMilli('0.1'), 100);
    assert.equal(parseMilli('1n'), 1, 'rounded up to a milli-unit');
    assert.equal(parseMilli('-1.5'), -1500);
    assert.equal(parseMilli('1.5Gx'), undefined);
    assert.equal(parseMilli('1'.repeat(65)), undefined, 'longer than 64 characters');
  });
});
