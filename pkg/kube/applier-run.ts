// One member's run of the command line's applier: its results and errors as they come, and whether the
// member stopped answering (then the rest of its work fails at once, said once).

import type { Action, ObjectResult } from './applier-types.js';
import { TransportError } from './errors.js';
import type { ObjectId } from './objects.js';

/** What happened to one object: the action, a message, more fields of its result, the apiserver's warnings. */
export type Outcome = [action: Action, message?: string, extra?: Partial<ObjectResult>, warnings?: string[]];

/** Thrown to stop a member's remaining work once it is unreachable. */
export class Unreachable extends Error {}

export class RunLog {
  readonly results: ObjectResult[] = [];
  readonly errors: string[] = [];
  unreachable: TransportError | undefined;

  constructor(
    private readonly member: string,
    private readonly signal: AbortSignal | undefined,
    private readonly onResult: ((member: string, result: ObjectResult) => void) | undefined,
  ) {}

  /** Throws when the member is unreachable or the run is interrupted. */
  checkGoing(): void {
    if (this.unreachable) throw new Unreachable();
    if (this.signal?.aborted) throw new Error('interrupted');
  }

  /** A transport failure means the member is gone, unless it is this run being cancelled. */
  markUnreachable(err: TransportError): void {
    if (this.signal?.aborted) return;
    this.unreachable ??= err;
  }

  failure(err: unknown): { message: string; unreachable?: boolean } {
    if (this.signal?.aborted) return { message: 'interrupted' };
    if (err instanceof Unreachable || err instanceof TransportError)
      return { message: 'not done: the member is unreachable', unreachable: true };
    return { message: err instanceof Error ? err.message : String(err) };
  }

  /** Records and reports the outcome of one object. */
  result(id: ObjectId, ...[action, message, extra = {}, warnings = []]: Outcome): ObjectResult {
    const r: ObjectResult = {
      ...id,
      action,
      ...(message !== undefined ? { message } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
      ...extra,
    };
    this.emit(r);
    return r;
  }

  emit(r: ObjectResult): void {
    this.results.push(r);
    this.onResult?.(this.member, r);
  }
}
