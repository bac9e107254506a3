// `flotilla validate`: the webhook's admission rules, offline.

import { refOf } from '../engine/index.js';
import { checkDocuments, formatFieldError } from './check.js';
import { parseFlags, type Command, type CommandIO } from './command.js';
import { describeRef, dropDuplicates, INPUT_FLAGS, INPUT_USAGE, inputOptions, readInputs } from './inputs.js';
import { Interrupted } from './interrupt.js';

const usage = `Check policies and Clusters against the rules the admission webhook enforces, without any cluster.

Usage:
  flotilla validate -f PATH... [-R]

Options:
${INPUT_USAGE}
  -h, --help            this help

Prints one line per problem: FILE: KIND/NAMESPACE/NAME: field.path: Type: value: detail
(warnings start with "warning:"). Every document must be a Kubernetes object (apiVersion, kind,
metadata.name); resource templates are not checked further. YAML is read as kubectl reads it (YAML 1.1).
Exit status: 0 every object is allowed; 1 a denial, unreadable input or no objects; 2 usage;
130/143 interrupted by SIGINT/SIGTERM.`;

async function run(args: string[], io: CommandIO): Promise<number> {
  const values = parseFlags(args, { ...INPUT_FLAGS });
  if (values.help) {
    io.stdout.write(`${usage}\n`);
    return 0;
  }
  const input = inputOptions(values);
  let read;
  try {
    read = await readInputs(input, io);
  } catch (err: unknown) {
    if (!(err instanceof Interrupted)) throw err;
    io.stderr.write(`flotilla validate: ${err.message}\n`);
    return err.exitCode;
  }
  const { documents, errors } = read;
  for (const n of read.notes) io.stderr.write(`note: ${n}\n`);
  if (documents.length === 0 && errors.length === 0) errors.push(`nothing to validate: no objects in ${input.filenames.map((f) => (f === '-' ? 'stdin (-f -)' : f)).join(', ')}`);
  for (const e of errors) io.stdout.write(`${e}\n`);
  // Every copy of a duplicated object is checked: kubectl apply sends each of them to the webhook.
  const { warnings: duplicates } = dropDuplicates(documents);
  const check = checkDocuments(documents);
  for (const d of check.denials) for (const e of d.errors) io.stdout.write(`${d.document.source}: ${describeRef(refOf(d.document.object))}: ${formatFieldError(e)}\n`);
  for (const w of check.warnings) io.stdout.write(`warning: ${w.document.source}: ${describeRef(refOf(w.document.object))}: ${w.message}\n`);
  for (const w of duplicates) io.stdout.write(`warning: ${w}\n`);
  const failed = errors.length > 0 || check.denials.length > 0;
  io.stderr.write(`${check.checked} object(s) checked, ${check.denials.length} denied, ${check.warnings.length + duplicates.length} warning(s)\n`);
  return failed ? 1 : 0;
}

export const command: Command = {
  name: 'validate',
  summary: "Check policies and Clusters against the webhook's admission rules (offline)",
  usage,
  run,
};
