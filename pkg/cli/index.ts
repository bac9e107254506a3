// The `flotilla` command table and dispatcher. cmd/flotilla/main.ts calls `run` with the process's streams.

import { UsageError, type Command, type CommandIO } from './command.js';
import { command as render } from './render.js';
import { command as validate } from './validate.js';
import { command as webhook } from './webhook.js';
import { command as certs } from './certs.js';
import { command as apply } from './apply.js';
import { command as diff } from './diff.js';
import { VERSION } from './version.js';

export const commands: readonly Command[] = [render, validate, diff, apply, webhook, certs];

export { VERSION };

function mainUsage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return `flotilla: propagate Kubernetes resource templates to member clusters, with per-cluster overrides.

Usage:
  flotilla COMMAND [options]

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Run 'flotilla COMMAND --help' for a command's options. 'flotilla --version' prints the version.
Exit status: 0 ok; 1 invalid input or failed work; 2 usage.`;
}

/** Runs one invocation; returns the exit code. Never throws. */
export async function run(argv: readonly string[], io: CommandIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    const target = name === 'help' ? commands.find((c) => c.name === rest[0]) : undefined;
    io.stdout.write(`${target ? target.usage : mainUsage()}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === 'version') {
    io.stdout.write(`flotilla ${VERSION}\n`);
    return 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.stderr.write(`flotilla: unknown command ${JSON.stringify(name)}\n\n${mainUsage()}\n`);
    return 2;
  }
  try {
    return await command.run(rest, io);
  } catch (err: unknown) {
    if (err instanceof UsageError) {
      io.stderr.write(`flotilla ${command.name}: ${err.message}\n\n${command.usage}\n`);
      return 2;
    }
    io.stderr.write(`flotilla ${command.name}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
