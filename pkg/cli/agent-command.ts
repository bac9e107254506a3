// `flotilla agent`: its flags and help (the command table, commands.ts, lists it). Light, as commands.ts
// must be: the command itself (agent.ts) is loaded only when it runs.

import { defineCommand, type FlagValues, type Flags } from './command.js';
import { CONTROLLER_FLAGS } from './controller-command.js';
import { CONTEXT_FLAG, KUBECONFIG_FLAG } from './kubeflags.js';

export const AGENT_FLAGS = {
  'cluster-name': {
    type: 'string',
    required: true,
    value: 'NAME',
    help: 'the Cluster on the hub this agent delivers to (its spec.syncMode must be Pull)',
  },
  'hub-kubeconfig': {
    type: 'string',
    required: true,
    value: 'FILE',
    complete: 'file',
    help: "the hub's kubeconfig (its current-context): read templates, policies, this cluster's Works and Cluster; write the Works' status, the Cluster's status and the Lease",
  },
  kubeconfig: {
    ...KUBECONFIG_FLAG,
    help: "this cluster's kubeconfig, where the copies are applied; without it every file in $KUBECONFIG, else ~/.kube/config, else the pod's service account",
  },
  context: CONTEXT_FLAG,
  namespace: {
    type: 'string',
    value: 'NS',
    help: "the hub controller's namespace, which names the Works of cluster-scoped templates (default $POD_NAMESPACE, else flotilla-system)",
  },
  'lease-namespace': {
    type: 'string',
    default: 'flotilla-cluster-lease',
    value: 'NS',
    help: "the hub namespace of the agents' Leases; this agent's is named after its cluster",
  },
  'lease-duration': {
    type: 'duration',
    default: '40s',
    value: 'DURATION',
    help: 'the Lease says the agent is alive this long after each renewal; the hub marks the Cluster not ready after it',
  },
  'renew-interval': { type: 'duration', default: '10s', value: 'DURATION', help: 'renew the Lease this often' },
  concurrency: { type: 'string', default: '8', value: 'N', help: 'templates reconciled at once (1-1000)' },
  'log-level': CONTROLLER_FLAGS['log-level'],
  'metrics-port': CONTROLLER_FLAGS['metrics-port'],
  resync: CONTROLLER_FLAGS.resync,
  'cluster-status-interval': {
    type: 'duration',
    default: '30s',
    value: 'DURATION',
    help: "read this cluster's Nodes, Pods, version and APIs into its Cluster's status on the hub this often",
  },
} as const satisfies Flags;
export type AgentFlags = FlagValues<typeof AGENT_FLAGS>;

export const AGENT = defineCommand({
  name: 'agent',
  summary: 'Deliver to the cluster it runs in from a hub, for a Cluster in Pull mode',
  description: `Runs inside a member cluster whose Cluster on the hub says spec.syncMode: Pull, so the hub needs no
credential of it and need not reach it. Reads templates, policies and its own Cluster from the hub; the
hub's controller places every template and writes this cluster's share of each decision in a Work in the
cluster's namespace on the hub (flotilla-es-<cluster-name>), which the agent reads; the agent renders this
cluster's copy (overrides included) and server-side applies it here, as the controller does for Push
members: drift is put back, conflicts are reported, copies no longer placed here are removed. It reports
in each Work's status, writes its Cluster's status (version, resource summary, APIs) and renews the Lease --lease-namespace/<cluster-name> on the hub, from which the controller
sets the Cluster's Ready condition. One agent per cluster: a second one waits for the Lease.
Logs are JSON lines on stderr. Runs until SIGINT or SIGTERM.`,
  flags: AGENT_FLAGS,
  footer: 'Exit status: 0 stopped by a signal; 1 could not start, or lost the Lease; 2 usage.',
  load: () => import('./agent.js'),
});
