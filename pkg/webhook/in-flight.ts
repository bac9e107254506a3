// The bytes the webhook holds for requests in flight (bodies being read, answers not yet taken by their
// clients), under one ceiling: server.ts takes them as they arrive or are due and gives them back when
// the exchange ends, however it ends.

export class InFlightBytes {
  private held = 0;
  constructor(readonly limit: number) {}

  /** Takes `bytes` if they fit under the ceiling. */
  take(bytes: number): boolean {
    if (this.held + bytes > this.limit) return false;
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.held -= bytes;
  }

  get used(): number {
    return this.held;
  }
}
