// `flotilla validate`: the webhook's admission rules, offline.

import { refOf } from '../engine/index.js';
import { checkDocuments, formatFieldError } from './check.js';
import { parseFlags, UsageError, type Command, type CommandIO } from './command.js';
import { readInputs } from './inputs.js';

const usage = `Check policies and Clusters against the rules the admission webhook enforces, without any cluster.

Usage:
  flotilla validate -f PATH...

Options:
  -f, --filename PATH   file, directory (recursive: *.yaml, *.yml, *.json) or '-'; repeatable
  -h, --help            this help

Prints one line per problem: FILE: KIND/NAMESPACE/NAME: field.path: Type: value: detail
(warnings start with "warning:"). Resource templates are read but not checked.
Exit status: 0 every object is allowed; 1 a denial or unreadable input; 2 usage.`;

function who(o: unknown): string {
  const r = refOf(o);
  return `${r.kind || '<no kind>'}/${r.namespace ? `${r.namespace}/` : ''}${r.name || '<no name>'}`;
}

async function run(args: string[], io: CommandIO): Promise<number> {
  const values = parseFlags(args, { filename: { type: 'string', short: 'f', multiple: true } });
  if (values.help) {
    io.stdout.write(`${usage}\n`);
    return 0;
  }
  const files = values.filename ?? [];
  if (files.length === 0) throw new UsageError('at least one -f PATH is required');
  const { documents, errors } = await readInputs(files, io.stdin);
  for (const e of errors) io.stdout.write(`${e}\n`);
  const check = checkDocuments(documents);
  for (const d of check.denials) for (const e of d.errors) io.stdout.write(`${d.document.source}: ${who(d.document.object)}: ${formatFieldError(e)}\n`);
  for (const w of check.warnings) io.stdout.write(`warning: ${w.document.source}: ${who(w.document.object)}: ${w.message}\n`);
  const failed = errors.length > 0 || check.denials.length > 0;
  io.stderr.write(`${check.checked} object(s) checked, ${check.denials.length} denied, ${check.warnings.length} warning(s)\n`);
  return failed ? 1 : 0;
}

export const command: Command = {
  name: 'validate',
  summary: "Check policies and Clusters against the webhook's admission rules (offline)",
  usage,
  run,
};
