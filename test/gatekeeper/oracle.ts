// Gatekeeper's own mutation system as a process (hack/gatekeeper/mutate, built and cached by
// hack/gatekeeper/build.sh): cases in as JSON lines, answers out, many cases per process.

import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export interface OracleAnswer {
  invalid: Record<string, string>;
  conflicts: string[];
  object?: unknown;
  error?: string;
  bad?: string;
}

const BUILD = fileURLToPath(new URL('../../../hack/gatekeeper/build.sh', import.meta.url));

/** Path of the gatekeeper-mutate binary (building it once); undefined when Go is not installed. */
export function oracleBinary(): string | undefined {
  const r = spawnSync('bash', [BUILD], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 30 * 60_000,
  });
  if (r.status === 3) return undefined;
  if (r.status !== 0) throw new Error(`hack/gatekeeper/build.sh failed (exit ${r.status ?? r.signal})`);
  const lines = r.stdout.trim().split('\n');
  return lines[lines.length - 1];
}

/** Runs all cases through one gatekeeper-mutate process; answers in case order. */
export async function runOracle(binary: string, cases: readonly unknown[]): Promise<OracleAnswer[]> {
  const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const answers: OracleAnswer[] = [];
  const lines = createInterface({ input: child.stdout });
  const done = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`gatekeeper-mutate exited with ${String(code)}`)),
    );
  });
  lines.on('line', (l) => answers.push(JSON.parse(l) as OracleAnswer));
  for (const c of cases) child.stdin.write(`${JSON.stringify(c)}\n`);
  child.stdin.end();
  await done;
  if (answers.length !== cases.length)
    throw new Error(`gatekeeper-mutate answered ${answers.length} of ${cases.length} cases`);
  return answers;
}

/** Gatekeeper's messages, by the reason Flotilla gives the same refusal (pkg/engine/gatekeeper/*). */
const REASONS: Array<[RegExp, string]> = [
  [/maximum name length/, 'name'],
  [/invalid location format/, 'location'],
  [/invalid location for assignmetadata/, 'metadata-location'],
  [/can't change metadata/, 'metadata'],
  [/changing the item key is not allowed|child of a list can't be a list/, 'key-changed'],
  [/^empty path$/, 'empty-location'],
  [/must set one of|must only set one of|is not recognized: invalid fromMetadata/, 'value'],
  [
    /can't append to a globbed list|only objects can be added to keyed lists|adding object to list with different key/,
    'keyed-value',
  ],
  [/cannot assign a metadata field to a list/, 'from-metadata-list'],
  [/problem parsing sub path/, 'path-test-location'],
  [/is not a prefix of location/, 'path-test-prefix'],
  [/conflicting path test conditions/, 'path-test-conflict'],
  [/applyTo/, 'apply-to'],
  [/must be a string for AssignMetadata/, 'metadata-value'],
  [/final node in a modifyset location cannot be a keyed list|cannot mutate list-type fields/, 'list-terminal'],
  [/has invalid parameters/, 'image-parameters'],
  [/external data|data source/, 'external-data'],
  [/unknown kind/, 'kind'],
];

const MUTATION_REASONS: Array<[RegExp, string]> = [
  [/matching for mutator/, 'match'],
  [/not converging/, 'not-converging'],
  [/mismatch between path entry|cast error|two consecutive list/, 'type-mismatch'],
  [/key value of replaced object must not change/, 'key-changed'],
  [/is not a list of values|unrecognized operation for modifyset/, 'not-a-set'],
  [/expected value at AssignImage location to be a string/, 'not-a-string'],
  [/does not understand keyed lists|last path entry can not be globbed|keyed list is not an object/, 'keyed-list'],
  [/empty target location/, 'empty-location'],
];

function reasonOf(table: Array<[RegExp, string]>, message: string): string {
  for (const [re, reason] of table) if (re.test(message)) return reason;
  return `unrecognised: ${message}`;
}

export const mutatorReason = (message: string): string => reasonOf(REASONS, message);
export const mutationReason = (message: string): string => reasonOf(MUTATION_REASONS, message);
