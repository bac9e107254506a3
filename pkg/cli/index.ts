// The `flotilla` dispatcher. cmd/flotilla/main.ts calls `run` with the process's streams; `run` finds the
// command in the table (commands.ts), parses its flags, and imports and runs its module.

import {
  parseCommandLine,
  UsageError,
  type CommandIO,
  type CommandSpec,
  type FlagValues,
  type Flags,
} from './command.js';
import { ROOT } from './commands.js';
import { commandHelp } from './help.js';
import { closest } from './suggest.js';

export { ROOT } from './commands.js';
export type { CommandIO } from './command.js';

/**
 * Splits argv into the command it names and that command's arguments. `flotilla help A B` is
 * `flotilla A B --help`. Returns a message for a word that names no command.
 */
function resolve(
  argv: readonly string[],
):
  | { path: string[]; spec: CommandSpec; rest: string[] }
  | { path: string[]; unknown: string; suggestion: string | undefined } {
  const words = argv[0] === 'help' ? [...argv.slice(1), '--help'] : [...argv];
  const path = [ROOT.name];
  let spec = ROOT;
  let i = 0;
  for (; i < words.length && spec.subcommands; i++) {
    const word = words[i] ?? '';
    if (word.startsWith('-')) break;
    const next = spec.subcommands.find((c) => c.name === word);
    if (!next)
      return {
        path,
        unknown: word,
        suggestion: closest(word, [...spec.subcommands.map((c) => c.name), ...(spec === ROOT ? ['help'] : [])]),
      };
    spec = next;
    path.push(word);
  }
  return { path, spec, rest: words.slice(i) };
}

/** Runs one invocation; returns the exit code (0 ok, 1 failed, 2 usage). Never throws. */
export async function run(argv: readonly string[], io: CommandIO): Promise<number> {
  const found = resolve(argv);
  const name = found.path.join(' ');
  if ('unknown' in found) {
    io.stderr.write(
      `${name}: unknown command ${JSON.stringify(found.unknown)}${found.suggestion ? `; did you mean ${found.suggestion}?` : ''}\nSee '${name} --help' for the commands.\n`,
    );
    return 2;
  }
  const { spec, path, rest } = found;
  try {
    const parsed = parseCommandLine(spec, rest);
    if (parsed.help) {
      io.stdout.write(commandHelp(path, spec));
      return 0;
    }
    let target = spec;
    if (spec === ROOT && parsed.flags.version === true)
      target = ROOT.subcommands?.find((c) => c.name === 'version') ?? spec;
    if (!target.load) {
      if (spec === ROOT && rest.length === 0) {
        io.stderr.write(commandHelp(path, spec));
        return 2;
      }
      throw new UsageError(`missing command: one of ${(spec.subcommands ?? []).map((c) => c.name).join(', ')}`);
    }
    const module = await target.load();
    // parseCommandLine built the values from target's own table, so they have the shape its module expects.
    return await module.run(parsed.flags as FlagValues<Flags>, io, parsed.args);
  } catch (err: unknown) {
    if (err instanceof UsageError) {
      io.stderr.write(`${name}: ${err.message}\nSee '${name} --help' for usage.\n`);
      return 2;
    }
    io.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
