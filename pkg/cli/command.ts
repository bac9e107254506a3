import { parseArgs, type ParseArgsConfig } from 'node:util';

type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig['options']>;
type HelpFlag = { help: { type: 'boolean'; short: 'h'; default: false } };
type FlagValues<O extends ParseArgsOptionsConfig> = ReturnType<typeof parseArgs<{ args: string[]; options: O & HelpFlag; strict: true; allowPositionals: false }>>['values'];

// The shape every `flotilla` subcommand has. cmd/flotilla/main.ts parses nothing itself: it hands argv to
// pkg/cli/index.ts, which picks the command from this table and runs it with injected streams, so commands
// are testable without spawning a process.

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

export interface Command {
  name: string;
  /** One line for `flotilla --help`. */
  summary: string;
  /** Full `flotilla <name> --help` text. */
  usage: string;
  /** Returns the exit code: 0 ok, 1 invalid input or failed work, 2 usage. */
  run(args: string[], io: CommandIO): Promise<number>;
}

/** A usage error: the command prints its message and usage, and exits 2. */
export class UsageError extends Error {
  readonly code = 'USAGE';
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * Parses flags strictly (no positionals) with `-h/--help` added; a parse failure is a UsageError, so every
 * command reports bad flags the same way and exits 2.
 */
export function parseFlags<O extends ParseArgsOptionsConfig>(args: string[], options: O): FlagValues<O> {
  try {
    const help: HelpFlag = { help: { type: 'boolean', short: 'h', default: false } };
    return parseArgs({ args, options: { ...options, ...help }, strict: true as const, allowPositionals: false as const }).values;
  } catch (err: unknown) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}
