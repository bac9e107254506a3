// The base of the errors that carry a code: callers branch on `code` (a string union per class), and
// `name` is the class's name, as a stack trace and a log line show it.

export class CodedError<C extends string> extends Error {
  readonly code: C;
  constructor(name: string, code: C, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = name;
    this.code = code;
  }
}
