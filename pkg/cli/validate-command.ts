// `flotilla validate`: its flags and help (the command table, commands.ts, lists it). Light, as commands.ts
// must be: the command itself (validate.ts) is loaded only when it runs.

import { defineCommand, type FlagValues, type Flags } from './command.js';
import { FILENAME_FLAG, RECURSIVE_FLAG } from './file-flags.js';

export const VALIDATE_FLAGS = { filename: FILENAME_FLAG, recursive: RECURSIVE_FLAG } as const satisfies Flags;
export type ValidateFlags = FlagValues<typeof VALIDATE_FLAGS>;

export const VALIDATE = defineCommand({
  name: 'validate',
  summary: "Check policies and Clusters against the webhook's admission rules (offline)",
  description: `Prints one line per problem: FILE: KIND/NAMESPACE/NAME: field.path: Type: value: detail
(warnings start with "warning:"). Resource templates are read but not checked.`,
  flags: VALIDATE_FLAGS,
  footer: 'Exit status: 0 every object is allowed; 1 a denial or unreadable input; 2 usage.',
  load: () => import('./validate.js'),
});
