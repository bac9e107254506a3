#!/usr/bin/env node
// Entry point only: hand argv and the process's streams to the command table.
import { run } from '../../pkg/cli/index.js';
import { Interrupted } from '../../pkg/cli/interrupt.js';

// The first SIGINT/SIGTERM aborts the command's signal (it stops and says so); a second one finds no
// handler and ends the process the default way.
const controller = new AbortController();
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => controller.abort(new Interrupted(sig)));
}

// A reader that goes away (`flotilla render … | head`) is not an error: stop quietly, as a program killed by
// SIGPIPE does (exit 141, what a shell reports for it). Any other write error is reported in one line.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(141);
    process.exitCode = 1;
    if (stream !== process.stderr) process.stderr.write(`flotilla: writing output: ${err.message}\n`);
  });
}

const code = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  signal: controller.signal,
});
process.exitCode = code;
// After a signal, a read the command gave up on (a pipe whose writer is still there) must not keep the
// process alive.
if (controller.signal.aborted) process.exit(code);
