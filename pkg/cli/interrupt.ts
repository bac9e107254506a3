// SIGINT and SIGTERM while a command reads its input. cmd/flotilla/main.ts aborts the command's signal
// with an Interrupted reason; readers stop and throw it; the command exits with the shell's code for
// death by that signal (130, 143), so `flotilla render -f - | …` behaves like any other filter.

export type StopSignal = 'SIGINT' | 'SIGTERM';

const NUMBER: Record<StopSignal, number> = { SIGINT: 2, SIGTERM: 15 };

export class Interrupted extends Error {
  readonly code = 'INTERRUPTED';
  /** 128 + the signal's number. */
  readonly exitCode: number;
  constructor(readonly signal: StopSignal) {
    super(`interrupted by ${signal}`);
    this.name = 'Interrupted';
    this.exitCode = 128 + NUMBER[signal];
  }
}

/** The Interrupted an aborted signal stands for (SIGINT when it was aborted some other way). */
export function interruption(signal: AbortSignal | undefined): Interrupted {
  const reason: unknown = signal?.reason;
  return reason instanceof Interrupted ? reason : new Interrupted('SIGINT');
}
