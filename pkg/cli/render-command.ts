// `flotilla render`: its flags and help (the command table, commands.ts, lists it). Light, as commands.ts
// must be: the command itself (render.ts) is loaded only when it runs.

import { defineCommand, type FlagValues, type Flags } from './command.js';
import { FILENAME_FLAG, RECURSIVE_FLAG } from './file-flags.js';

export const RENDER_FLAGS = {
  filename: FILENAME_FLAG,
  recursive: RECURSIVE_FLAG,
  output: {
    type: 'string',
    short: 'o',
    default: 'yaml',
    choices: ['yaml', 'json', 'name'],
    help: 'yaml: the objects, for kubectl; json: a report, not for kubectl; name: one line per object',
  },
  cluster: { type: 'string', multiple: true, value: 'NAME', help: 'only the objects for this cluster' },
  explain: {
    type: 'boolean',
    help: 'say which policy and rule set each changed field (YAML comments; "explain" in JSON)',
  },
} as const satisfies Flags;
export type RenderFlags = FlagValues<typeof RENDER_FLAGS>;

export const RENDER = defineCommand({
  name: 'render',
  summary: 'Render the per-cluster objects from templates, policies and Clusters (offline)',
  description: `Reads resource templates, PropagationPolicies, ClusterPropagationPolicies, OverridePolicies,
ClusterOverridePolicies and Clusters (policy.flotilla.io or policy.karmada.io, cluster.flotilla.io or
cluster.karmada.io) and prints the final object each member cluster gets, without any cluster: one YAML
document per (template, cluster), after comments naming the cluster, template, policy and overrides.
Policies and Clusters the admission webhook would deny are reported and left out.

To deploy one cluster's objects with kubectl, render that cluster only and pipe the YAML:
  flotilla render -f PATH --cluster NAME | kubectl --context NAME apply -f -

-o json is a report for people and scripts (placements with their provenance, unmatched templates,
errors), not a list of objects: kubectl cannot apply it ("Object 'Kind' is missing").
-o name prints CLUSTER/KIND/NAMESPACE/NAME per object, and CLUSTER/KIND/NAME for objects that have no
namespace (cluster-scoped kinds, and templates that leave the namespace to kubectl's context).`,
  flags: RENDER_FLAGS,
  footer: 'Exit status: 0 rendered; 1 invalid input or a failed render (every problem is printed); 2 usage.',
  load: () => import('./render.js'),
});
