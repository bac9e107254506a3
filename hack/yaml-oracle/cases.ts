// The inputs hack/update-yaml-oracle sends through sigs.k8s.io/yaml. Add a case here, run the update
// script, and pkg/yaml/oracle.test.ts compares pkg/yaml's reading and writing with kubectl's for it.

import type { WriteOptions } from '../../pkg/yaml/index.js';

export interface ReadCase {
  yaml: string;
  /**
   * Set where Flotilla refuses, on purpose, a document sigs.k8s.io/yaml reads (it would lose or change
   * data there): the reason, and a pattern our error message must match.
   */
  refuse?: { why: string; message: string };
}

export interface WriteCase {
  /** Which writer configuration: the CLI's render output, fieldOverrider documents, deploy/crds. */
  style: keyof typeof WRITE_STYLES;
  value: unknown;
}

export const WRITE_STYLES = {
  render: {},
  fieldOverrider: { sortKeys: true, lineWidth: 80 },
  crds: { indentSeq: true },
} satisfies Record<string, WriteOptions>;

/** Scalars whose meaning YAML 1.1 and YAML 1.2 (or sigs.k8s.io/yaml and a naive reading) disagree on. */
export const SCALARS = [
  'yes',
  'no',
  'on',
  'off',
  'y',
  'n',
  'Y',
  'N',
  'Yes',
  'NO',
  'On',
  'OFF',
  'true',
  'True',
  'TRUE',
  'tRUE',
  'false',
  'False',
  'FALSE',
  '~',
  'null',
  'Null',
  'NULL',
  '',
  '0644',
  '0o644',
  '0O644',
  '0x1F',
  '0X1F',
  '-0x1F',
  '1_000',
  '1__0',
  '0x_1F',
  '+_1',
  '_1',
  '1_',
  '0_',
  '0b101',
  '0B101',
  '-0b101',
  '0b',
  '0x',
  '0o',
  '0b2',
  '0o8',
  '09',
  '08.5',
  '+12',
  '-12',
  '+',
  '-',
  '.',
  '-0',
  '-0.0',
  '0',
  '00',
  '1e3',
  '1E3',
  '1.e3',
  '1.5',
  '.5',
  '.5_5',
  '._5',
  '-.5',
  '+.5',
  '1e-5',
  '0.00001',
  '1e7',
  '100000',
  '1000000',
  '0.1',
  '3.14159265358979',
  '1_000.5',
  '.inf',
  '.Inf',
  '.INF',
  '+.inf',
  '-.inf',
  '-.Inf',
  '.nan',
  '.NaN',
  '.NAN',
  'inf',
  'Inf',
  'NaN',
  '+Inf',
  '.iNf',
  '1e400',
  '1e-400',
  '.1e400',
  '9007199254740991',
  '-9007199254740991',
  '9007199254740993',
  '9223372036854775807',
  '-9223372036854775808',
  '9223372036854775808',
  '18446744073709551615',
  '18446744073709551616',
  '-9223372036854775809',
  '0xFFFFFFFFFFFFFFFF',
  '0x1FFFFFFFFFFFFFFFF',
  '12:30:45',
  '1:20',
  '190:20:30',
  '-1:30',
  '1:30.5',
  '2024-01-01',
  '2024-1-1',
  '2024-01-01T12:00:00Z',
  '2024-01-01t12:00:00+01:00',
  '2024-01-01 12:00:00',
  '2024-01-01T12:00:00',
  '2024-13-01',
  '2023-02-29',
  '<<',
  '=',
  '1,000',
  'abc',
  'a b',
];

/** Integers sigs.k8s.io/yaml keeps exactly that a JavaScript number cannot hold. */
const UNSAFE_INTEGERS = new Set([
  '9007199254740993',
  '9223372036854775807',
  '-9223372036854775808',
  '9223372036854775808',
  '18446744073709551615',
  '0xFFFFFFFFFFFFFFFF',
]);

function scalarCases(): ReadCase[] {
  const out: ReadCase[] = [];
  for (const s of SCALARS) {
    const refuse = UNSAFE_INTEGERS.has(s)
      ? { why: 'a JavaScript number cannot hold this integer exactly', message: 'beyond ±9007199254740991' }
      : undefined;
    out.push({ yaml: `v: ${s}`, ...(refuse ? { refuse } : {}) });
    if (s !== '') out.push({ yaml: `${s}: v` });
    out.push({ yaml: `- ${s}`, ...(refuse ? { refuse } : {}) });
  }
  out.push(
    { yaml: 'v: "012"' },
    { yaml: "v: '0644'" },
    { yaml: "v: ''" },
    { yaml: 'v:' },
    { yaml: 'v: "yes"' },
    { yaml: 'v: |\n  yes\n' },
    { yaml: 'v: >-\n  0644\n' },
  );
  return out;
}

const TAGS: ReadCase[] = [
  { yaml: 'v: !!binary aGVsbG8=' },
  { yaml: 'v: !!binary |\n  aGVs\n  bG8=\n' },
  { yaml: 'v: !!binary aGk' },
  { yaml: 'v: !!binary "a Gk="' },
  {
    yaml: 'v: !!binary /w==',
    refuse: { why: 'not UTF-8: sigs.k8s.io/yaml replaces the bytes with U+FFFD', message: 'not UTF-8 text' },
  },
  { yaml: 'aGk=: 1' },
  { yaml: 'v: !!timestamp 2024-01-01' },
  { yaml: 'v: !!timestamp 2024-01-01T12:00:00Z' },
  { yaml: 'v: !!timestamp foo' },
  { yaml: 'v: !!timestamp 12' },
  { yaml: 'v: !!set {a, b}' },
  { yaml: 'v: !!set\n  ? a\n  ? b\n' },
  { yaml: 'v: !!omap [{a: 1}, {b: 2}]' },
  { yaml: 'v: !!pairs [{a: 1}, {a: 2}]' },
  { yaml: 'v: !!int "12"' },
  { yaml: 'v: !!int 0x1F' },
  { yaml: 'v: !!int 1.5' },
  { yaml: 'v: !!int yes' },
  { yaml: 'v: !!float 1' },
  { yaml: 'v: !!float "1.5"' },
  { yaml: 'v: !!float .inf' },
  { yaml: 'v: !!bool yes' },
  { yaml: 'v: !!bool "off"' },
  { yaml: 'v: !!bool 1' },
  { yaml: 'v: !!null ~' },
  { yaml: "v: !!null ''" },
  { yaml: 'v: !!null x' },
  { yaml: 'v: !!str 12' },
  { yaml: 'v: !!str yes' },
  { yaml: 'v: !!str ~' },
  { yaml: 'v: !<tag:yaml.org,2002:int> "7"' },
  { yaml: 'v: ! 12' },
  { yaml: 'v: !foo 12' },
  { yaml: 'v: !foo yes' },
  { yaml: 'v: !!str {a: 1}' },
  { yaml: 'v: !foo [1]' },
  { yaml: 'v: !!map [1]' },
  { yaml: 'v: !!merge <<' },
  { yaml: '%TAG !k! tag:yaml.org,2002:\n---\nv: !k!int "5"' },
  { yaml: '%YAML 1.1\n---\nv: yes' },
  { yaml: '%YAML 1.2\n---\nv: yes' },
];

const MERGES: ReadCase[] = [
  { yaml: 'a: &x {k: 1, j: 2}\nb:\n  <<: *x\n  k: 3' },
  { yaml: 'b:\n  k: 3\n  <<: {k: 1, j: 2}' },
  { yaml: 'b:\n  <<: [{k: 1}, {k: 2, j: 2}]' },
  { yaml: 'a: &a {k: 1}\nc: &c {k: 3, m: 3}\nb:\n  <<: [*a, {k: 2, j: 2}, *c]\n  m: 4' },
  { yaml: 'b:\n  <<: {k: 1}\n  <<: {k: 2}' },
  { yaml: 'b:\n  "<<": {k: 1}' },
  { yaml: "b:\n  '<<': 1" },
  { yaml: 'b:\n  !!merge <<: {k: 1}' },
  { yaml: 'b:\n  !!str <<: {k: 1}' },
  { yaml: 'b:\n  <<: 1' },
  { yaml: 'b:\n  <<: [1]' },
  { yaml: 'b:\n  <<: ~' },
  { yaml: 'a: &x [1]\nb:\n  <<: *x' },
  { yaml: 'a: &x {k: {deep: 1}}\nb:\n  <<: *x\nc:\n  <<: *x' },
  { yaml: 'v: <<' },
  { yaml: '- <<' },
];

const MAPS_AND_ALIASES: ReadCase[] = [
  {
    yaml: 'a: 1\na: 2',
    refuse: {
      why: 'duplicate key: sigs.k8s.io/yaml keeps the last, YAMLToJSONStrict refuses',
      message: 'duplicate key "a"',
    },
  },
  { yaml: 'yes: a\ntrue: b', refuse: { why: 'two keys that both read as true', message: 'duplicate key "true"' } },
  {
    yaml: '1: a\n"1": b',
    refuse: {
      why: 'int 1 and string "1" become the same JSON key; sigs.k8s.io/yaml keeps one at random',
      message: 'duplicate key "1"',
    },
  },
  { yaml: '0644: a\n420: b', refuse: { why: 'both keys read as 420', message: 'duplicate key "420"' } },
  { yaml: '~: 1' },
  { yaml: ': 1' },
  { yaml: '[1]: a' },
  { yaml: '{a: 1}: b' },
  { yaml: '? [a, b]\n: c' },
  { yaml: 'a: &x 1\nb: *x\nc: &x 2\nd: *x' },
  { yaml: 'a: &k key\n*k : v' },
  { yaml: 'a: &l [1]\n*l : v' },
  { yaml: 'a: &x [*x]' },
  { yaml: 'a: *nope' },
  { yaml: 'a: &x {b: 1}\nc: [*x, *x]' },
  { yaml: '__proto__: {polluted: true}' },
  { yaml: 'constructor: {prototype: 1}' },
  { yaml: 'toString: 1\nhasOwnProperty: 2' },
  { yaml: '"a\\x80": 1' },
  { yaml: 'v: "\\xff"' },
  { yaml: 'v: "\\u0001"' },
  { yaml: 'v: "\\L\\P\\N\\_"' },
  {
    yaml: 'v: "b\u2028c"',
    refuse: { why: 'U+2028 is a line break in YAML 1.1; sigs.k8s.io/yaml folds it into a space', message: 'U\\+2028' },
  },
  { yaml: 'v: b\u2028c' },
  { yaml: 'v: b\u0085c' },
  { yaml: 'v: b\u0001c' },
  { yaml: 'v: b\u007fc' },
  { yaml: 'v: b\ufeffc' },
  { yaml: '\ufeffa: 1' },
  { yaml: 'v: b\tc' },
  { yaml: 'v: 1 # comment' },
  { yaml: 'v: a #b' },
  { yaml: 'v: a#b' },
  { yaml: '{"a": 1, "b": [true, null, "x"], "c": 1.5e3}' },
  { yaml: 'v: [a, yes, 0644, "0644"]' },
  { yaml: 'v: {x: on, y: 1_0}' },
];

export const READ_CASES: ReadCase[] = [...scalarCases(), ...TAGS, ...MERGES, ...MAPS_AND_ALIASES];

/** Strings a writer must quote, escape or lay out with care. */
const TRICKY_STRINGS = [
  ...SCALARS,
  ' ',
  ' leading',
  'trailing ',
  'a: b',
  'a:b',
  'a #b',
  'a#b',
  '#x',
  '- x',
  '-x',
  '--- x',
  '---',
  '...',
  '? x',
  '?',
  ':x',
  'x:',
  '[x]',
  '{x}',
  'x, y',
  "'x",
  '"x',
  "it's",
  'say "hi"',
  '\\',
  '\\n',
  '@x',
  '`x',
  '%x',
  '!x',
  '!!str',
  '&x',
  '*x',
  '|x',
  '>x',
  '|',
  '>',
  'a\nb',
  'a\n',
  '\n',
  'a\n\nb',
  'a \nb',
  ' a\nb',
  'a\r\nb',
  'a\tb',
  '\tx',
  'x\t',
  'a\u2028b',
  'a\u0085b',
  'a\u2029b',
  '\u0001',
  'a\u007fb',
  '\ufeffx',
  'é',
  '日本語',
  'emoji 🚀',
  '\u00a0x',
  'x\u00a0',
  'a  b',
  'x'.repeat(100),
  `${'word '.repeat(30)}end`,
  `${'a: b #c '.repeat(15)}`,
  `${'yes '.repeat(30)}`,
  `line one\n${'long '.repeat(30)}\nline three\n`,
];

export function writeCases(): WriteCase[] {
  const out: WriteCase[] = [];
  for (const style of ['render', 'fieldOverrider'] as const) {
    for (const s of TRICKY_STRINGS) out.push({ style, value: { value: s, list: [s], key: { [s]: 'v' } } });
    out.push({
      style,
      value: {
        ints: [0, 1, -1, 420, 9007199254740991, -9007199254740991],
        floats: [0.5, 0.1, -2.5, 1.5e300, 1e21, 1e-7, 123456.789],
        other: [true, false, null, {}, []],
      },
    });
  }
  out.push({
    style: 'crds',
    value: {
      spec: { versions: [{ name: 'v1', schema: { enum: ['yes', 'no', 'Always', 'IfNotPresent'] }, served: true }] },
    },
  });
  return out;
}
