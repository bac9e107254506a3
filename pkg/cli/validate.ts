// `flotilla validate`: the webhook's admission rules, offline. Its flags and help are in commands.ts.

import { refOf } from '../engine/index.js';
import { checkDocuments, formatFieldError } from './check.js';
import type { CommandIO } from './command.js';
import type { ValidateFlags } from './commands.js';
import { readInputs } from './inputs.js';

function who(o: unknown): string {
  const r = refOf(o);
  return `${r.kind || '<no kind>'}/${r.namespace ? `${r.namespace}/` : ''}${r.name || '<no name>'}`;
}

export async function run(values: ValidateFlags, io: CommandIO): Promise<number> {
  const { documents, errors } = await readInputs(values.filename, io.stdin);
  for (const e of errors) io.stdout.write(`${e}\n`);
  const check = checkDocuments(documents);
  for (const d of check.denials) for (const e of d.errors) io.stdout.write(`${d.document.source}: ${who(d.document.object)}: ${formatFieldError(e)}\n`);
  for (const w of check.warnings) io.stdout.write(`warning: ${w.document.source}: ${who(w.document.object)}: ${w.message}\n`);
  const failed = errors.length > 0 || check.denials.length > 0;
  io.stderr.write(`${check.checked} object(s) checked, ${check.denials.length} denied, ${check.warnings.length} warning(s)\n`);
  return failed ? 1 : 0;
}
