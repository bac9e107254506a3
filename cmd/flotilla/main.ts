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
