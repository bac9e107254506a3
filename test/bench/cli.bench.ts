// Start-up benchmark for the `flotilla` binary (`npm run bench:cli`): spawns the built CLI per command and
// prints the median and p90 wall time of RUNS runs (after WARMUP unmeasured runs that fill the OS file
// cache). Targets on a 2-core machine: `--version` under 150 ms and `render -f examples/quickstart` under
// 400 ms (median). The figures include Node's own start-up (`node -e 0` is the floor, printed first).
//
// Usage: node dist/test/bench/cli.bench.js [--runs N]

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const main = fileURLToPath(new URL('../../cmd/flotilla/main.js', import.meta.url));

interface Case {
  name: string;
  argv: string[];
  /** Target median in ms; undefined: reported only. */
  targetMs?: number;
}

const CASES: Case[] = [
  { name: 'node -e 0 (floor)', argv: ['-e', '0'] },
  { name: 'flotilla --version', argv: [main, '--version'], targetMs: 150 },
  { name: 'flotilla --help', argv: [main, '--help'] },
  {
    name: 'flotilla render -f examples/quickstart',
    argv: [main, 'render', '-f', 'examples/quickstart'],
    targetMs: 400,
  },
  { name: 'flotilla validate -f examples/quickstart', argv: [main, 'validate', '-f', 'examples/quickstart'] },
  { name: 'flotilla certs --help', argv: [main, 'certs', '--help'] },
];

const WARMUP = 2;

function once(argv: string[]): number {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, argv, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr}`);
  return ms;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
}

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`--runs must be a positive integer, got ${JSON.stringify(values.runs)}`);
  process.exit(2);
}

console.log(`flotilla start-up, ${runs} runs per command after ${WARMUP} warm-up runs (node ${process.version})`);
console.log(`${'command'.padEnd(44)} ${'median'.padStart(9)} ${'p90'.padStart(9)}  target`);
let missed = 0;
for (const c of CASES) {
  for (let i = 0; i < WARMUP; i++) once(c.argv);
  const times = Array.from({ length: runs }, () => once(c.argv)).sort((a, b) => a - b);
  const median = quantile(times, 0.5);
  const verdict =
    c.targetMs === undefined ? '' : median < c.targetMs ? `< ${c.targetMs} ms ok` : `< ${c.targetMs} ms MISSED`;
  if (c.targetMs !== undefined && median >= c.targetMs) missed++;
  console.log(
    `${c.name.padEnd(44)} ${`${median.toFixed(0)} ms`.padStart(9)} ${`${quantile(times, 0.9).toFixed(0)} ms`.padStart(9)}  ${verdict}`,
  );
}
if (missed > 0) console.log(`${missed} target(s) missed`);
