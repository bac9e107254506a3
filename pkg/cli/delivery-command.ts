// `flotilla apply` and `flotilla diff`: their flags, which they share, and help (the command table,
// commands.ts, lists them). Light, as commands.ts must be: the commands themselves (apply.ts, diff.ts)
// are loaded only when they run.

import { defineCommand, type FlagValues, type Flags } from './command.js';
import { FILENAME_FLAG, RECURSIVE_FLAG } from './file-flags.js';
import { KUBECONFIG_FLAG } from './kubeflags.js';

const DELIVERY_FLAGS = {
  filename: FILENAME_FLAG,
  recursive: RECURSIVE_FLAG,
  kubeconfig: {
    ...KUBECONFIG_FLAG,
    help: 'the kubeconfig whose contexts are the member clusters; without it every file in $KUBECONFIG is merged, as kubectl does, else ~/.kube/config',
  },
  context: {
    type: 'string',
    multiple: true,
    value: 'NAME',
    help: 'deliver to this member only (placement still sees every context)',
  },
  applyset: {
    type: 'string',
    value: 'NAME',
    help: "the apply set's name (default: flotilla-<base names of the -f paths>)",
  },
  'applyset-namespace': {
    type: 'string',
    default: 'flotilla-system',
    value: 'NS',
    help: "namespace of the apply set's Secret on each member",
  },
  concurrency: {
    type: 'string',
    default: '16',
    value: 'N',
    help: 'requests in flight per member (1-1000); members run in parallel',
  },
} as const satisfies Flags;

export const APPLY_FLAGS = {
  ...DELIVERY_FLAGS,
  prune: { type: 'boolean', help: 'delete objects this apply set holds on a member that no longer render for it' },
  'dry-run': {
    type: 'string',
    choices: ['none', 'server'],
    value: 'MODE',
    help: 'server: the apiservers check every change, nothing is written',
  },
  output: {
    type: 'string',
    short: 'o',
    default: 'text',
    choices: ['text', 'json'],
    help: 'text: a line per object and a table per member; json: the same as data',
  },
} as const satisfies Flags;
export type ApplyFlags = FlagValues<typeof APPLY_FLAGS>;

export const APPLY = defineCommand({
  name: 'apply',
  summary: 'Apply the rendered objects to every member cluster of a kubeconfig (server-side apply, ApplySet prune)',
  description: `Every context of the kubeconfig is a member cluster named after the context (--context picks some). A
Cluster object in the input with a context's name gives that member its labels, provider, region, zones
and taints; a Cluster object with no context of its name is an error.

Objects are applied with field manager "flotilla" and labelled applyset.kubernetes.io/part-of=<id>; a
Secret NS/NAME on each member records the set (the ApplySet convention kubectl uses). An object that
already exists and is not in the set is left alone and reported as a conflict, unless the claiming
policy says conflictResolution: Overwrite. CRDs and Namespaces go first; missing namespaces are created.

Give --applyset when two inputs have paths with the same base names: they would share one set, and
--prune of one would delete the other's objects.`,
  flags: APPLY_FLAGS,
  footer: `Exit status: 0 everything applied; 1 invalid input, a conflict, a failed object or an unreachable member
(every problem is printed); 2 usage; 130/143 interrupted while reading input.`,
  load: () => import('./apply.js'),
});

export const DIFF_FLAGS = DELIVERY_FLAGS;
export type DiffFlags = FlagValues<typeof DIFF_FLAGS>;

export const DIFF = defineCommand({
  name: 'diff',
  summary: "Show what 'apply --prune' would change on each member cluster (exit 1 when something would)",
  description: `Renders as apply does, asks each member's apiserver for a server-side dry run of every apply, and prints
a unified diff per changed object against the live one (managedFields, status, resourceVersion,
generation, uid and creationTimestamp left out), plus the objects of the apply set that
'flotilla apply --prune' would delete. Conflicts (objects that exist and are not in the set) are listed
on stderr and count as changes.`,
  flags: DIFF_FLAGS,
  footer: 'Exit status: 0 nothing would change; 1 something would; 2 invalid input, a failure or usage.',
  load: () => import('./diff.js'),
});
