// The one table of `flotilla` commands; each command's flags and help are beside it, in <name>-command.ts.
// Help, flag parsing and shell completion are generated from them, so they cannot drift apart. Each
// command's module is imported only when that command runs: this file and what it imports must stay light
// (no Kubernetes client, no YAML, no engine), since every invocation, `flotilla --version` included, loads it.

import { ADMIT } from './admit-command.js';
import { AGENT } from './agent-command.js';
import { CERTS } from './certs-command.js';
import { defineCommand, type CommandSpec, type Flags } from './command.js';
import { CONTROLLER } from './controller-command.js';
import { APPLY, DIFF } from './delivery-command.js';
import { RENDER } from './render-command.js';
import { STATUS } from './status-command.js';
import { UI } from './ui-command.js';
import { VALIDATE } from './validate-command.js';
import { WEBHOOK } from './webhook-command.js';

// The flag values each command's module takes, named here beside the table.
export type { AdmitFlags } from './admit-command.js';
export type { AgentFlags } from './agent-command.js';
export type { CertsCreateFlags, CertsPatchFlags } from './certs-command.js';
export type { ControllerFlags } from './controller-command.js';
export type { ApplyFlags, DiffFlags } from './delivery-command.js';
export type { RenderFlags } from './render-command.js';
export type { ValidateFlags } from './validate-command.js';
export type { WebhookFlags } from './webhook-command.js';

const version = defineCommand({
  name: 'version',
  summary: 'Print the version',
  flags: {},
  load: () => import('./version.js'),
});

export const SHELLS = ['bash', 'zsh', 'fish'] as const;

const completion = defineCommand({
  name: 'completion',
  summary: 'Print a shell completion script (bash, zsh or fish)',
  description: `Load it into the current shell:
  bash:  source <(flotilla completion bash)
  zsh:   source <(flotilla completion zsh)
  fish:  flotilla completion fish | source
or install it where the shell finds it:
  bash:  flotilla completion bash > /etc/bash_completion.d/flotilla
  zsh:   flotilla completion zsh > "\${fpath[1]}/_flotilla"
  fish:  flotilla completion fish > ~/.config/fish/completions/flotilla.fish`,
  flags: {},
  positional: { name: 'SHELL', choices: SHELLS },
  load: () => import('./completion.js'),
});

export const ROOT_FLAGS = {
  version: { type: 'boolean', help: "print the version (as 'flotilla version' does)" },
} as const satisfies Flags;

/** `flotilla` itself: a group of every command. */
export const ROOT: CommandSpec = defineCommand({
  name: 'flotilla',
  summary: 'flotilla: propagate Kubernetes resource templates to member clusters, with per-cluster overrides.',
  flags: ROOT_FLAGS,
  subcommands: [
    RENDER,
    VALIDATE,
    ADMIT,
    DIFF,
    APPLY,
    STATUS,
    UI,
    CONTROLLER,
    AGENT,
    WEBHOOK,
    CERTS,
    version,
    completion,
  ],
  footer: `Run 'flotilla help COMMAND' or 'flotilla COMMAND --help' for a command's options.
Exit status: 0 ok; 1 invalid input or failed work; 2 usage.`,
});
