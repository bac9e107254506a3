// Generates cases and runs them through both implementations; shared by the test and the fuzzer.

import fc from 'fast-check';
import { diffCase, type DiffCase } from './cases.js';
import { differences, flotillaOutcome, gatekeeperOutcome } from './differential.js';
import { runOracle } from './oracle.js';

export interface Counterexample {
  index: number;
  case: DiffCase;
  differences: string[];
}

export async function runDifferential(binary: string, seed: number, count: number): Promise<Counterexample[]> {
  const cases = fc.sample(diffCase, { seed, numRuns: count });
  const answers = await runOracle(binary, cases);
  const found: Counterexample[] = [];
  cases.forEach((c, index) => {
    let diffs: string[];
    try {
      diffs = differences(flotillaOutcome(c), gatekeeperOutcome(answers[index] as never));
    } catch (err: unknown) {
      diffs = [`flotilla threw: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`];
    }
    if (diffs.length > 0) found.push({ index, case: c, differences: diffs });
  });
  return found;
}
