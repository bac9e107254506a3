// The shape of `flotilla`'s commands. Each command is a CommandSpec: its name, its help text and its flag
// table, plus `load`, which imports the module that runs it only when that command runs (so `--version`
// and `render` never load the Kubernetes client). pkg/cli/commands.ts holds the one table of specs; help
// (help.ts), flag parsing (here) and shell completion (completion.ts) are all generated from it.

import { parseArgs } from 'node:util';
import { parseDuration } from './duration.js';
import { closest } from './suggest.js';

export interface CommandIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Read for `-f -`. */
  stdin: NodeJS.ReadableStream;
  /** Environment, read only here in the command layer and passed down as typed options. */
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM; long-running commands stop when it fires. */
  signal: AbortSignal;
}

/** A usage error: the command prints its message and where to find its help, and exits 2. */
export class UsageError extends Error {
  readonly code = 'USAGE';
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface FlagSpec {
  /**
   * `string`: takes a value; `boolean`: a switch; `duration`: a value in Go's syntax (`90s`, `1m30s`),
   * handed to the command in milliseconds. Durations must be positive and fit a Node.js timer.
   */
  readonly type: 'string' | 'boolean' | 'duration';
  readonly short?: string;
  /** Repeatable; the command gets every value, in order. */
  readonly multiple?: boolean;
  /** Used when the flag is absent, and shown in help. Booleans are false when absent. */
  readonly default?: string;
  /** Absent is a usage error (for `multiple`: at least one). */
  readonly required?: boolean;
  /** The only values accepted; help and completion offer them. */
  readonly choices?: readonly string[];
  /** The value's name in help (`PATH`, `NAME`); default: the choices, or VALUE. */
  readonly value?: string;
  /** What shell completion offers for the value. */
  readonly complete?: 'file' | 'directory';
  readonly help: string;
}

export type Flags = Readonly<Record<string, FlagSpec>>;

type Choice<F extends FlagSpec> = F extends { choices: readonly (infer C extends string)[] } ? C : string;
type Present<F extends FlagSpec> = F extends { default: string } | { required: true } ? true : false;
type FlagValue<F extends FlagSpec> = F['type'] extends 'boolean'
  ? boolean
  : F['type'] extends 'duration'
    ? Present<F> extends true
      ? number
      : number | undefined
    : F extends { multiple: true }
      ? Array<Choice<F>>
      : Present<F> extends true
        ? Choice<F>
        : Choice<F> | undefined;

/** What a command's run function gets for its flag table: one property per flag, typed by the table. */
export type FlagValues<F extends Flags> = { -readonly [K in keyof F]: FlagValue<F[K]> };

/** A command's one positional argument (`flotilla completion SHELL`, `flotilla status template NAME`). */
export interface PositionalSpec {
  readonly name: string;
  /** The only values accepted; absent: any non-empty value. */
  readonly choices?: readonly string[];
  /** What the value is, for help (used when there are no choices). */
  readonly help?: string;
}

/** The module a command's `load` imports. */
export interface CommandModule<F extends Flags> {
  // A property, not a method, so the compiler checks the parameter strictly against the flag table.
  readonly run: (flags: FlagValues<F>, io: CommandIO, args: string[]) => Promise<number>;
}

export interface CommandSpec<F extends Flags = Flags> {
  readonly name: string;
  /** One line: the parent's command list, and the first line of this command's help. */
  readonly summary: string;
  /** Paragraphs between the synopsis and the options. */
  readonly description?: string;
  readonly flags: F;
  readonly positional?: PositionalSpec;
  /** Closing lines of the help, e.g. the exit status. */
  readonly footer?: string;
  /** A command group (`certs`) has subcommands and no `load`; a runnable command has `load`. */
  readonly subcommands?: readonly CommandSpec[];
  readonly load?: () => Promise<CommandModule<F>>;
}

/**
 * Checks a spec against its module's run function (the flag values it expects are the table's), and
 * forgets the flag types so specs with different tables fit in one list.
 */
export function defineCommand<const F extends Flags>(spec: CommandSpec<F>): CommandSpec {
  return spec as unknown as CommandSpec;
}

export const HELP_FLAG: FlagSpec = { type: 'boolean', short: 'h', help: 'show this help' };

/** Longest duration a Node.js timer takes (2^31-1 ms); a longer interval would fire after 1 ms instead. */
const MAX_TIMER_MS = 2 ** 31 - 1;

type FlagValueAny = string | string[] | number | boolean | undefined;

export interface ParsedCommandLine {
  help: boolean;
  /** One value per flag of the spec's table, as FlagValues<typeof table> describes. */
  flags: Record<string, FlagValueAny>;
  args: string[];
}

function parseError(err: unknown, flags: Flags): UsageError {
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /^Unknown option '([^']+)'/.exec(message)?.[1] ?? '';
    const names = Object.keys(flags).map((n) => `--${n}`);
    const guess = option.startsWith('--') ? closest(option.split('=')[0] ?? option, names) : undefined;
    return new UsageError(`unknown flag ${option}${guess ? `; did you mean ${guess}?` : ''}`);
  }
  if (e.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const arg = /^Unexpected argument '([^']*)'/.exec(message)?.[1];
    return new UsageError(arg === undefined ? message : `unexpected argument ${JSON.stringify(arg)}`);
  }
  const missing = /^Option '(.+) <value>' argument missing/.exec(message)?.[1];
  if (missing) return new UsageError(`${missing.replace(', ', '/')} needs a value`);
  const switchOnly = /^Option '(.+)' does not take an argument/.exec(message)?.[1];
  if (switchOnly) return new UsageError(`${switchOnly.replace(', ', '/')} takes no value`);
  return new UsageError(message.split('. ')[0] ?? message);
}

/**
 * Parses `args` against a spec's flag table (strict: unknown flags and stray arguments are usage errors),
 * applies defaults, and checks required flags, choices and durations, naming the flag in every error.
 * With `-h/--help` the rest is not checked.
 */
export function parseCommandLine(spec: CommandSpec, args: string[]): ParsedCommandLine {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const [name, f] of Object.entries({ ...spec.flags, help: HELP_FLAG })) {
    options[name] = {
      type: f.type === 'boolean' ? 'boolean' : 'string',
      ...(f.short ? { short: f.short } : {}),
      ...(f.multiple ? { multiple: true } : {}),
    };
  }
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: spec.positional !== undefined });
  } catch (err: unknown) {
    throw parseError(err, spec.flags);
  }
  const help = parsed.values.help === true;
  const flags: Record<string, FlagValueAny> = {};
  if (help) return { help, flags, args: parsed.positionals };

  for (const [name, f] of Object.entries(spec.flags)) {
    const raw = parsed.values[name] as string | boolean | string[] | undefined;
    if (f.type === 'boolean') {
      flags[name] = raw === true;
      continue;
    }
    const values =
      raw === undefined ? (f.default === undefined ? [] : [f.default]) : Array.isArray(raw) ? raw : [String(raw)];
    if (f.required && values.length === 0)
      throw new UsageError(`${f.short ? `-${f.short}/` : ''}--${name} is required`);
    for (const v of values) {
      if (f.choices && !f.choices.includes(v))
        throw new UsageError(`--${name} must be one of ${f.choices.join(', ')}; got ${JSON.stringify(v)}`);
    }
    if (f.type === 'duration') {
      flags[name] = values.length === 0 ? undefined : durationValue(name, values[values.length - 1] ?? '');
      continue;
    }
    flags[name] = f.multiple ? values : values[values.length - 1];
  }

  const positional = spec.positional;
  if (positional) {
    const [first, ...extra] = parsed.positionals;
    const choices = positional.choices;
    if (first === undefined || (!choices && first === ''))
      throw new UsageError(
        `${positional.name} is required${choices ? `: one of ${choices.join(', ')}` : positional.help ? `: ${positional.help}` : ''}`,
      );
    if (choices && !choices.includes(first)) {
      const guess = closest(first, choices);
      throw new UsageError(
        `${positional.name} must be one of ${choices.join(', ')}; got ${JSON.stringify(first)}${guess ? ` (did you mean ${guess}?)` : ''}`,
      );
    }
    if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  }
  return { help, flags, args: parsed.positionals };
}

function durationValue(name: string, text: string): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err: unknown) {
    throw new UsageError(`--${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (ms <= 0) throw new UsageError(`--${name} must be positive, got ${JSON.stringify(text)}`);
  if (ms > MAX_TIMER_MS)
    throw new UsageError(
      `--${name} must be at most 596h31m23.647s (the longest Node.js timer), got ${JSON.stringify(text)}`,
    );
  return ms;
}
