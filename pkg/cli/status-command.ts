// `flotilla status`: its subcommands and their flags (the command table, commands.ts, lists the group).
// Light, as commands.ts must be: the command itself (status.ts) loads the Kubernetes client and the engine.

import { defineCommand, type FlagValues, type Flags } from './command.js';
import { HUB_READ_FLAGS } from './kubeflags.js';
import { STATE_FILTERS } from '../fleet/types.js';

/** -n NS, with what the namespace means to the subcommand. */
const namespaceFlag = (help: string) => ({ type: 'string', short: 'n', value: 'NS', help }) as const;

const COMMON_FLAGS = {
  output: {
    type: 'string',
    short: 'o',
    default: 'table',
    choices: ['table', 'wide', 'json', 'yaml'],
    help: 'table (kubectl-style), wide (more columns), json or yaml (every fact, for scripts)',
  },
  watch: {
    type: 'boolean',
    short: 'w',
    help: 'keep watching the hub and print again when what is shown changes (at most once a second)',
  },
  ...HUB_READ_FLAGS,
} as const satisfies Flags;

export const STATUS_CLUSTERS_FLAGS = COMMON_FLAGS;
export type StatusClustersFlags = FlagValues<typeof STATUS_CLUSTERS_FLAGS>;

export const STATUS_TEMPLATES_FLAGS = {
  namespace: namespaceFlag('only templates in this namespace (default: every namespace)'),
  kind: { type: 'string', value: 'KIND', help: 'only templates of this kind (Deployment, configmap)' },
  policy: {
    type: 'string',
    value: 'NAME',
    help: 'only templates claimed by this policy: NAME, NAMESPACE/NAME or KIND/NAME',
  },
  cluster: { type: 'string', value: 'NAME', help: 'only templates that name this cluster, and only its column' },
  state: {
    type: 'string',
    choices: STATE_FILTERS,
    value: 'STATE',
    help: `only templates with a cluster in this state (with --cluster: on that cluster); RequiredBy: there because workloads need it (propagateDeps). One of ${STATE_FILTERS.join(', ')}`,
  },
  ...COMMON_FLAGS,
} as const satisfies Flags;
export type StatusTemplatesFlags = FlagValues<typeof STATUS_TEMPLATES_FLAGS>;

export const STATUS_TEMPLATE_FLAGS = {
  namespace: namespaceFlag("the template's namespace (default: any namespace, when the name is found in one only)"),
  ...COMMON_FLAGS,
} as const satisfies Flags;
export type StatusTemplateFlags = FlagValues<typeof STATUS_TEMPLATE_FLAGS>;

export const STATUS_POLICIES_FLAGS = {
  namespace: namespaceFlag('only policies in this namespace (and cluster-scoped ones)'),
  ...COMMON_FLAGS,
} as const satisfies Flags;
export type StatusPoliciesFlags = FlagValues<typeof STATUS_POLICIES_FLAGS>;

const HUB = `The hub is read with your own kubeconfig, as kubectl reads it (--kubeconfig, else $KUBECONFIG,
else ~/.kube/config, else the pod's service account): what you may read is what is shown; nothing is written.`;
const FOOTER =
  'Exit status: 0 shown; 1 the hub cannot be reached, or something could not be read (said on stderr); 2 usage.';

export const STATUS = defineCommand({
  name: 'status',
  summary: 'Show the fleet from the hub: clusters, where each template is and why, policies',
  description: `What the controller and the agents recorded on the hub (Clusters, ResourceBindings, Works,
policies, Leases, Events), as tables, read with your own kubeconfig: what you may read is what is
shown; nothing is written.`,
  flags: {},
  subcommands: [
    defineCommand({
      name: 'clusters',
      summary: 'Clusters: Ready, agent Lease, sync mode, taints, capacity, version, API groups',
      description: `One row per Cluster (cluster.flotilla.io and cluster.karmada.io). READY is the Ready condition;
LEASE is how long ago a pull cluster's agent renewed its Lease; TAINTS lists key:effect with its age;
CPU, MEMORY and PODS are allocated/allocatable from the Cluster's resource summary; APIS counts the API
groups the member serves.
${HUB}`,
      flags: STATUS_CLUSTERS_FLAGS,
      footer: FOOTER,
      load: async () => ({ run: (await import('./status.js')).clusters }),
    }),
    defineCommand({
      name: 'templates',
      summary: 'The placement matrix: each template on each cluster (Applied, Pending, Conflict, Evicting…)',
      description: `One row per template with a ResourceBinding, one column per cluster. A cell is the template's
state there (Applied, Pending, Failed, Conflict, Unreachable, Removing, Suspended, Evicting, or RequiredBy
for a dependency a workload took there), with the replicas the cluster got (Applied:2). NOTES says who
else wrote a conflicting object, when an evicted copy goes, and what failed.
${HUB}`,
      flags: STATUS_TEMPLATES_FLAGS,
      footer: FOOTER,
      load: async () => ({ run: (await import('./status.js')).templates }),
    }),
    defineCommand({
      name: 'template',
      summary: 'One template: its policy, why each cluster was chosen or not, each copy as a diff, Events',
      description: `The claiming policy; per cluster whether it was chosen and why not (the engine's words, as
'flotilla render --explain' prints them), its state, and the copy the engine renders from the hub's
template, policies and Clusters as a diff against the template, each changed field with the override
policy and rule that set it; then the template's recent Events on the hub.
${HUB}`,
      flags: STATUS_TEMPLATE_FLAGS,
      positional: { name: 'NAME', help: "the template's name, or KIND/NAME (deployment/web)" },
      footer: 'Exit status: 0 shown; 1 not found, ambiguous, or the hub cannot be read; 2 usage.',
      load: async () => ({ run: (await import('./status.js')).template }),
    }),
    defineCommand({
      name: 'policies',
      summary: 'Policies of both groups: what each claims, how many templates, READY, fields not acted upon',
      description: `One row per PropagationPolicy, ClusterPropagationPolicy, OverridePolicy and
ClusterOverridePolicy (policy.flotilla.io and policy.karmada.io). TEMPLATES is the controller's count,
READY its Ready condition; NOT-ACTED-UPON names the Karmada fields the policy sets that Flotilla accepts
but does not act upon.
${HUB}`,
      flags: STATUS_POLICIES_FLAGS,
      footer: FOOTER,
      load: async () => ({ run: (await import('./status.js')).policies }),
    }),
  ],
});
