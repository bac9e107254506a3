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
