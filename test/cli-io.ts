// An in-memory CommandIO for running `flotilla` subcommands in tests: streams that collect what is written.

import { PassThrough, Readable } from 'node:stream';
import type { CommandIO } from '../pkg/cli/command.js';

export interface CapturedIO extends CommandIO {
  out(): string;
  err(): string;
}

export function captureIO(options: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): CapturedIO {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return {
    stdout,
    stderr,
    stdin: Readable.from([options.stdin ?? '']),
    env: options.env ?? {},
    signal: new AbortController().signal,
    out: () => out,
    err: () => err,
  };
}
