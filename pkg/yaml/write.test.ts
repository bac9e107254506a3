import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { readYaml, readsBackPlain, writeYaml } from './index.js';

void describe('writeYaml', () => {
  it('quotes strings YAML 1.1 reads as something else, in keys and values', () => {
    const value = { yes: 'on', y: 'n', '0644': '0o644', '1_000': '0b101', '<<': '12:30:45', plain: 'web' };
    assert.equal(
      writeYaml(value),
      '"yes": "on"\n"y": "n"\n"0644": "0o644"\n"1_000": "0b101"\n"<<": "12:30:45"\nplain: web\n',
    );
  });

  it("writes lists at their key's indent, as kubectl does, and keeps key order unless asked to sort", () => {
    assert.equal(writeYaml({ b: [1, { c: 2 }], a: 1 }), 'b:\n- 1\n- c: 2\na: 1\n');
    assert.equal(writeYaml({ b: 1, a: 1 }, { sortKeys: true }), 'a: 1\nb: 1\n');
  });

  it('writes an object used twice as two copies, not as an anchor and alias', () => {
    const shared = { k: 'v' };
    assert.equal(writeYaml({ a: shared, b: shared }), 'a:\n  k: v\nb:\n  k: v\n');
  });

  it('escapes YAML 1.1 line breaks and characters libyaml refuses raw', () => {
    const text = writeYaml({ a: 'x\u2028y', b: 'x\u007fy', c: 'x\u0085y' });
    assert.equal(text, 'a: "x\\u2028y"\nb: "x\\u007fy"\nc: "x\\u0085y"\n');
    assert.deepEqual(readYaml(text), { a: 'x\u2028y', b: 'x\u007fy', c: 'x\u0085y' });
  });

  it('round-trips through the reader', () => {
    const value = {
      s: ['yes', '0644', '', ' x', 'a: b', 'multi\nline\n', '~', '1e3'],
      n: [0, -1, 0.5, 420],
      b: [true, false],
      z: null,
      e: {},
    };
    assert.deepEqual(readYaml(writeYaml(value)), value);
  });
});

void describe('readsBackPlain', () => {
  const table: Array<[string, boolean]> = [
    ['web', true],
    ['12:30', false],
    ['12:30:45', false],
    ['2024-01-01', false],
    ['1:2:3:4:5:6:7:8:9:10:11:12:61', true],
    ['yes', false],
    ['0o644', false],
    ['1_000', false],
    ['.inf', false],
    ['<<', false],
    ['', false],
  ];
  for (const [s, plain] of table) {
    it(`${JSON.stringify(s)} ${plain ? 'can' : 'cannot'} be written without quotes`, () => {
      assert.equal(readsBackPlain(s), plain);
    });
  }
});
