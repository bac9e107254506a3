// Manifest reading benchmark (`npm run bench:yaml`): pkg/yaml on inputs whose cost used to grow faster
// than their size. Each case is read at three sizes; time per key (or per alias) should stay flat as the
// size grows tenfold. Targets on this machine: 100,000 map keys (1.2 MB) in under 2 s; a billion-laughs
// document refused in under 100 ms.

import { performance } from 'node:perf_hooks';

import { readYamlStream } from '../../pkg/yaml/index.js';

function time(text: string): { ms: number; errors: number } {
  const t0 = performance.now();
  const r = readYamlStream(text);
  return { ms: performance.now() - t0, errors: r.errors.length };
}

function keys(n: number): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n${Array.from({ length: n }, (_, i) => `  key-${i}: value`).join('\n')}\n`;
}

function aliases(n: number): string {
  return `v: &v value\nlist:\n${Array.from({ length: n }, () => '- *v').join('\n')}\n`;
}

function billionLaughs(): string {
  let text = 'a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n';
  let previous = 'a';
  for (const name of 'bcdefghi') {
    text += `${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]\n`;
    previous = name;
  }
  return text;
}

time(keys(10_000)); // warm up
const rows: string[][] = [['case', 'size', 'bytes', 'ms', 'µs per item', 'errors']];
for (const [name, make] of [
  ['map keys', keys],
  ['scalar aliases', aliases],
] as const) {
  for (const n of [10_000, 40_000, 100_000]) {
    const text = make(n);
    const r = time(text);
    rows.push([
      name,
      String(n),
      String(text.length),
      r.ms.toFixed(0),
      ((r.ms * 1000) / n).toFixed(1),
      String(r.errors),
    ]);
  }
}
const laughs = time(billionLaughs());
rows.push([
  'billion laughs (refused)',
  '9^9',
  String(billionLaughs().length),
  laughs.ms.toFixed(1),
  '',
  String(laughs.errors),
]);

const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ')}\n`);
