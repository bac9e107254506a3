// Flotilla's Gatekeeper mutators against Gatekeeper's own mutation system (v3.23, built from the Go module
// proxy by hack/gatekeeper/build.sh and cached): a few hundred generated cases on a fixed seed must come
// out identical. `npm run fuzz:gatekeeper` runs more on random seeds.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { oracleBinary } from './oracle.js';
import { runDifferential } from './run.js';

const SEED = 3323;
const CASES = 400;

describe('Gatekeeper mutation, differential against Gatekeeper v3.23', () => {
  const binary = oracleBinary();
  it(
    `${CASES} generated cases (seed ${SEED}) give what Gatekeeper gives`,
    {
      skip: binary === undefined ? 'Go is not installed: cannot build hack/gatekeeper/mutate' : false,
      timeout: 40 * 60_000,
    },
    async () => {
      const found = await runDifferential(binary as string, SEED, CASES);
      const report = found
        .slice(0, 5)
        .map((f) => `case ${f.index}:\n  ${f.differences.join('\n  ')}\n  ${JSON.stringify(f.case)}`)
        .join('\n');
      assert.equal(found.length, 0, `${found.length} of ${CASES} cases differ:\n${report}`);
    },
  );
});
