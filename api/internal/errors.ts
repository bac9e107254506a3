// The errors that carry a code: callers branch on `code` (a string, or a union of them per class), and
// `name` is the class's name, as a stack trace and a log line show it. A class with one code is a line
// (`errorClass`); one with several codes extends CodedError and takes the code as its first argument.

export class CodedError<C extends string> extends Error {
  readonly code: C;
  constructor(name: string, code: C, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = name;
    this.code = code;
  }
}

/** A class of errors with one code: `export class PatchError extends errorClass('PatchError', 'PATCH') {}`. */
export function errorClass<const C extends string>(name: string, code: C) {
  return class extends CodedError<C> {
    constructor(message: string, options?: { cause?: unknown }) {
      super(name, code, message, options);
    }
  };
}
