// One case through Flotilla's admission path (OverrideSet.admit, as `flotilla admit` and the /override
// route run it) and through Gatekeeper's (gatekeeper-mutate), reduced to what must agree: which mutators
// are refused and why, which are skipped for conflicting schemas, and the object admitted or the reason
// the mutation failed.

import { isDeepStrictEqual } from 'node:util';
import { AdmissionOverrideError, clusterInfo, OverrideSet } from '../../pkg/engine/index.js';
import { MutationError, MutatorError, readMutatorStrict } from '../../pkg/engine/gatekeeper.js';
import { mutationSystem } from '../../pkg/engine/copy.js';
import type { Mutator } from '../../pkg/engine/gatekeeper.js';
import type { DiffCase } from './cases.js';
import { mutationReason, mutatorReason, type OracleAnswer } from './oracle.js';

export interface Outcome {
  invalid: Record<string, string>;
  conflicts: string[];
  object?: unknown;
  error?: string;
}

export function flotillaOutcome(c: DiffCase): Outcome {
  const invalid: Record<string, string> = {};
  const valid: Mutator[] = [];
  const set = new OverrideSet(clusterInfo({ metadata: { name: 'member' } }));
  for (const m of c.mutators) {
    const id = `${String(m.kind)}/${String((m.metadata as { name: string }).name)}`;
    try {
      valid.push(readMutatorStrict(m));
    } catch (err: unknown) {
      if (!(err instanceof MutatorError)) throw err;
      invalid[id] = err.reason;
    }
    set.upsert(m);
  }
  const conflicts = [...mutationSystem(valid).conflicts].sort();
  try {
    const r = set.admit({ object: c.object, operation: c.operation, namespaceLabels: c.namespaceLabels });
    return { invalid, conflicts, object: r.object };
  } catch (err: unknown) {
    if (err instanceof AdmissionOverrideError && err.cause instanceof MutationError)
      return { invalid, conflicts, error: err.cause.reason };
    throw err;
  }
}

export function gatekeeperOutcome(a: OracleAnswer): Outcome {
  if (a.bad !== undefined) throw new Error(`gatekeeper-mutate could not read the case: ${a.bad}`);
  const invalid: Record<string, string> = {};
  for (const [id, message] of Object.entries(a.invalid)) invalid[id] = mutatorReason(message);
  return a.error !== undefined
    ? { invalid, conflicts: a.conflicts, error: mutationReason(a.error) }
    : { invalid, conflicts: a.conflicts, object: a.object };
}

/** Where the two disagree, in words; empty when they agree. */
export function differences(ours: Outcome, theirs: Outcome): string[] {
  const out: string[] = [];
  if (!isDeepStrictEqual(ours.invalid, theirs.invalid))
    out.push(
      `refused mutators: flotilla ${JSON.stringify(ours.invalid)}, gatekeeper ${JSON.stringify(theirs.invalid)}`,
    );
  if (!isDeepStrictEqual(ours.conflicts, theirs.conflicts))
    out.push(`conflicting: flotilla ${JSON.stringify(ours.conflicts)}, gatekeeper ${JSON.stringify(theirs.conflicts)}`);
  if (ours.error !== theirs.error)
    out.push(`mutation failure: flotilla ${ours.error ?? 'none'}, gatekeeper ${theirs.error ?? 'none'}`);
  else if (ours.error === undefined && !isDeepStrictEqual(ours.object, theirs.object))
    out.push(`object: flotilla ${JSON.stringify(ours.object)}\n        gatekeeper ${JSON.stringify(theirs.object)}`);
  return out;
}
