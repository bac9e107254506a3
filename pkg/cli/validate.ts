// `flotilla validate`: the webhook's admission rules, offline. Its flags and help are in commands.ts.

import { refOf } from '../engine/index.js';
import { checkDocuments, formatFieldError, nothingIn, readOrInterrupted } from './check.js';
import type { CommandIO } from './command.js';
import type { ValidateFlags } from './commands.js';
import { describeRef, dropDuplicates, type InputOptions } from './inputs.js';

export async function run(values: ValidateFlags, io: CommandIO): Promise<number> {
  const input: InputOptions = { filenames: values.filename, recursive: values.recursive };
  const read = await readOrInterrupted('validate', input, io);
  if (typeof read === 'number') return read;
  const { documents, errors } = read;
  for (const n of read.notes) io.stderr.write(`note: ${n}\n`);
  if (documents.length === 0 && errors.length === 0) errors.push(nothingIn('validate', input));
  for (const e of errors) io.stdout.write(`${e}\n`);
  // Every copy of a duplicated object is checked: kubectl apply sends each of them to the webhook.
  const { warnings: duplicates } = dropDuplicates(documents);
  const check = checkDocuments(documents);
  for (const d of check.denials)
    for (const e of d.errors)
      io.stdout.write(`${d.document.source}: ${describeRef(refOf(d.document.object))}: ${formatFieldError(e)}\n`);
  for (const w of check.warnings)
    io.stdout.write(`warning: ${w.document.source}: ${describeRef(refOf(w.document.object))}: ${w.message}\n`);
  for (const w of duplicates) io.stdout.write(`warning: ${w}\n`);
  const failed = errors.length > 0 || check.denials.length > 0;
  io.stderr.write(
    `${check.checked} object(s) checked, ${check.denials.length} denied, ${check.warnings.length + duplicates.length} warning(s)\n`,
  );
  return failed ? 1 : 0;
}
