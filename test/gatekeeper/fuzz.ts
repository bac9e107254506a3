// npm run fuzz:gatekeeper: random seeds, GATEKEEPER_FUZZ_CASES cases (default 2000) through Flotilla and
// Gatekeeper's own mutation system; each case that differs is written as a case file
// (gatekeeper-diff-<seed>-<n>.json: the case gatekeeper-mutate reads, plus the differences).

import { writeFileSync } from 'node:fs';
import { oracleBinary } from './oracle.js';
import { runDifferential } from './run.js';

const count = Number(process.env.GATEKEEPER_FUZZ_CASES ?? 2000);
const seed = Number(process.env.GATEKEEPER_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const binary = oracleBinary();
if (binary === undefined) {
  process.stderr.write('fuzz:gatekeeper: Go is not installed: cannot build hack/gatekeeper/mutate\n');
  process.exit(2);
}
const found = await runDifferential(binary, seed, count);
for (const f of found.slice(0, 20)) {
  const file = `gatekeeper-diff-${seed}-${f.index}.json`;
  writeFileSync(file, `${JSON.stringify({ ...f.case, differences: f.differences }, null, 2)}\n`);
  process.stdout.write(`case ${f.index}: ${f.differences.join('; ')}\n  written to ${file}\n`);
}
process.stdout.write(`seed ${seed}: ${count} cases, ${found.length} differ\n`);
process.exit(found.length > 0 ? 1 : 0);
