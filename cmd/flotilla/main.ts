#!/usr/bin/env node
// Entry point only: hand argv and the process's streams to the command table.
import { run } from '../../pkg/cli/index.js';

const controller = new AbortController();
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => controller.abort(new Error(`received ${sig}`)));
}

const code = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  signal: controller.signal,
});
process.exitCode = code;
