// Admission rules applied to the policies and Clusters among the input documents, as the webhook would
// apply them before they could exist on a control plane. Shared by `render`, `admit`, `apply` and `diff`
// (which leave denied objects out, as the API server would) and `validate`; with the opening those
// commands share: read the inputs, drop duplicates, check them.

import { formatFieldError, type FieldError } from '../../api/validation/index.js';
import { admissionCheck, groupOf, isAdmitted } from '../engine/admission.js';
import { refOf } from '../engine/index.js';
import type { CommandIO } from './command.js';
import {
  describeRef,
  dropDuplicates,
  readInputs,
  type InputOptions,
  type InputResult,
  type SourcedDocument,
} from './inputs.js';
import { Interrupted } from './interrupt.js';

export { groupOf, isAdmitted };

export interface Denial {
  document: SourcedDocument;
  errors: FieldError[];
}

export interface CheckResult {
  /** Denied documents, with every field error. */
  denials: Denial[];
  warnings: Array<{ document: SourcedDocument; message: string }>;
  /** Number of documents the rules applied to. */
  checked: number;
}

export function checkDocuments(documents: readonly SourcedDocument[]): CheckResult {
  const clusters = documents
    .map((d) => d.object)
    .filter((o) => groupOf(o).startsWith('cluster.') && refOf(o).kind === 'Cluster') as Array<{
    metadata?: { name?: string };
  }>;
  const result: CheckResult = { denials: [], warnings: [], checked: 0 };
  for (const d of documents) {
    if (!isAdmitted(d.object)) continue;
    result.checked++;
    const { errors, warnings } = admissionCheck(d.object, { clusters });
    if (errors.length > 0) result.denials.push({ document: d, errors });
    for (const w of warnings) result.warnings.push({ document: d, message: w });
  }
  return result;
}

export { formatFieldError };

/**
 * The command's inputs, read; or, when a signal interrupted the reading, the exit code for it (the
 * interruption is said on stderr as `flotilla COMMAND: interrupted by SIGINT`).
 */
export async function readOrInterrupted(
  command: string,
  input: InputOptions,
  io: CommandIO,
): Promise<InputResult | number> {
  try {
    return await readInputs(input, io);
  } catch (err: unknown) {
    if (!(err instanceof Interrupted)) throw err;
    io.stderr.write(`flotilla ${command}: ${err.message}\n`);
    return err.exitCode;
  }
}

/** `nothing to VERB: no objects in FILE, …`, for input that held no object and no error. */
export function nothingIn(verb: string, input: InputOptions): string {
  return `nothing to ${verb}: no objects in ${input.filenames.map((f) => (f === '-' ? 'stdin (-f -)' : f)).join(', ')}`;
}

export interface CheckedInputs {
  /** The documents read, a later copy of a duplicated object left out. */
  documents: SourcedDocument[];
  /** Those of `documents` the admission rules deny. */
  denied: Set<SourcedDocument>;
  /** Unreadable input and every denial's field errors, one line each. */
  problems: string[];
  /** The reader's notes and the warnings (duplicates, admission), as `note: …` and `warning: …` lines. */
  notes: string[];
}

/** Duplicates dropped and the admission rules applied, with every problem and note as a line. */
export function checkInputs(read: InputResult): CheckedInputs {
  const problems = [...read.errors];
  const notes = read.notes.map((n) => `note: ${n}`);
  const { kept: documents, warnings: duplicates } = dropDuplicates(read.documents);
  for (const w of duplicates) notes.push(`warning: ${w}`);
  const check = checkDocuments(documents);
  for (const d of check.denials)
    for (const e of d.errors)
      problems.push(`${d.document.source}: ${describeRef(refOf(d.document.object))}: ${formatFieldError(e)}`);
  for (const w of check.warnings)
    notes.push(`warning: ${w.document.source}: ${describeRef(refOf(w.document.object))}: ${w.message}`);
  return { documents, denied: new Set(check.denials.map((d) => d.document)), problems, notes };
}
