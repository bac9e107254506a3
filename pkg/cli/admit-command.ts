// `flotilla admit`: its flags and help (the command table, commands.ts, lists it). Light, as commands.ts
// must be: the command itself (admit.ts) is loaded only when it runs.

import { defineCommand, type FlagValues, type Flags } from './command.js';
import { FILENAME_FLAG, RECURSIVE_FLAG } from './file-flags.js';

export const ADMIT_FLAGS = {
  filename: FILENAME_FLAG,
  recursive: RECURSIVE_FLAG,
  cluster: {
    type: 'string',
    required: true,
    value: 'NAME',
    help: 'the cluster admitting the objects: its Cluster object in the input gives its labels, provider, region and zones',
  },
  operation: {
    type: 'string',
    default: 'CREATE',
    choices: ['CREATE', 'UPDATE'],
    value: 'OP',
    help: 'the admission operation (rules act on CREATE unless their targetOperations say otherwise)',
  },
  output: { type: 'string', short: 'o', default: 'yaml', choices: ['yaml', 'json'], help: 'yaml or json' },
} as const satisfies Flags;
export type AdmitFlags = FlagValues<typeof ADMIT_FLAGS>;

export const ADMIT = defineCommand({
  name: 'admit',
  summary: 'Print objects as the admission override route admits them in one cluster (offline)',
  description: `Reads objects, OverridePolicies and ClusterOverridePolicies (policy.flotilla.io or policy.karmada.io),
Gatekeeper mutators (mutations.gatekeeper.sh Assign, AssignMetadata, ModifySet, AssignImage), Clusters and
Namespaces, and prints every object that is not a policy, mutator or Cluster exactly as
'flotilla webhook --override' running in cluster NAME would admit it: the override rules that select it and
target NAME (and act on --operation), then the mutators that match it (Gatekeeper's mutation system: all of them, again
until nothing changes). An object may have only metadata.generateName, as Pods of ReplicaSets and Jobs do. Namespaces in the input give the labels a namespaceSelector reads.
For a CREATE the result is what 'flotilla render --cluster NAME' gives for the same template.
The offline check to run in CI before a policy reaches a cluster.`,
  flags: ADMIT_FLAGS,
  footer: 'Exit status: 0 admitted; 1 invalid input or a failing rule (every problem is printed); 2 usage.',
  load: () => import('./admit.js'),
});
