// `flotilla controller`: its flags and help (the command table, commands.ts, lists it). Light, as commands.ts
// must be: the command itself (controller.ts) is loaded only when it runs.

import { defineCommand, type FlagValues, type Flags } from './command.js';
import { CONTEXT_FLAG, KUBECONFIG_FLAG } from './kubeflags.js';

export const CONTROLLER_FLAGS = {
  kubeconfig: {
    ...KUBECONFIG_FLAG,
    help: "the hub's kubeconfig; without it every file in $KUBECONFIG (merged), else ~/.kube/config, else the pod's service account",
  },
  context: CONTEXT_FLAG,
  'members-kubeconfig': {
    type: 'string',
    value: 'FILE',
    complete: 'file',
    help: "a kubeconfig whose contexts are member clusters, named after the contexts (as flotilla apply takes them); other members come from Clusters on the hub whose spec.secretRef names a Secret with a kubeconfig (or Karmada's token and caBundle)",
  },
  namespace: {
    type: 'string',
    value: 'NS',
    help: "the controller's namespace: bindings of cluster-scoped templates and the Lease (default $POD_NAMESPACE, else flotilla-system)",
  },
  concurrency: { type: 'string', default: '8', value: 'N', help: 'templates reconciled at once (1-1000)' },
  'member-concurrency': {
    type: 'string',
    default: '4',
    value: 'N',
    help: 'requests in flight to each member cluster, and templates applied to it at once (1-1000); each is a connection the controller holds open',
  },
  'leader-elect': {
    type: 'string',
    default: 'false',
    choices: ['true', 'false'],
    value: 'BOOL',
    help: 'hold a Lease so that only one replica works; the others wait as standbys',
  },
  'lease-name': { type: 'string', default: 'flotilla-controller', value: 'NAME', help: 'the Lease, in --namespace' },
  sharding: {
    type: 'string',
    default: 'false',
    choices: ['true', 'false'],
    value: 'BOOL',
    help: "replicas divide the members among themselves (each holds a Lease <lease-name>-<replica> in --namespace; a dead replica's members move to the others when its Lease expires); not with --leader-elect",
  },
  'lease-namespace': {
    type: 'string',
    default: 'flotilla-cluster-lease',
    value: 'NS',
    help: "where pull agents renew their Leases (one per Cluster in Pull mode, named after it): a pull cluster's Ready condition",
  },
  'log-level': {
    type: 'string',
    default: 'info',
    choices: ['error', 'warn', 'info', 'debug'],
    value: 'LEVEL',
    help: 'JSON log lines on stderr at this level and above',
  },
  'metrics-port': {
    type: 'string',
    default: '8080',
    value: 'PORT',
    help: 'plain-HTTP port of /healthz, /readyz and /metrics; 0 picks a free one',
  },
  resync: {
    type: 'duration',
    default: '10m',
    value: 'DURATION',
    help: 'every template is reconciled again this often',
  },
  'probe-interval': {
    type: 'duration',
    default: '10s',
    value: 'DURATION',
    help: "GET /readyz on each member this often (sooner, with backoff, while it fails); the result is its Cluster's Ready condition",
  },
  'cluster-status-interval': {
    type: 'duration',
    default: '30s',
    value: 'DURATION',
    help: "read each ready member's Nodes, Pods, version and APIs into its Cluster's status this often (placement reads it)",
  },
  'not-ready-taint-after': {
    type: 'duration',
    default: '30s',
    value: 'DURATION',
    help: 'a member not ready this long gets the NoSchedule taint cluster.karmada.io/not-ready (or /unreachable)',
  },
  failover: {
    type: 'string',
    default: 'false',
    choices: ['true', 'false'],
    value: 'BOOL',
    help: 'also taint a member not ready for --failover-eviction-timeout NoExecute: its workloads move elsewhere',
  },
  'failover-eviction-timeout': {
    type: 'duration',
    default: '5m',
    value: 'DURATION',
    help: 'with --failover, how long a member is not ready before its workloads are evicted',
  },
  'unhealthy-cluster-threshold': {
    type: 'string',
    default: '0.55',
    value: 'FRACTION',
    help: 'with --failover, nothing is evicted while more than two clusters are not ready and they are at least this fraction of them (or none is ready, or no push member answers)',
  },
  'eviction-purge-mode': {
    type: 'string',
    default: 'Gracefully',
    choices: ['Directly', 'Gracefully', 'Never'],
    value: 'MODE',
    help: "what happens to an evicted copy when the policy's failover.cluster.purgeMode does not say",
  },
  'graceful-eviction-timeout': {
    type: 'duration',
    default: '10m',
    value: 'DURATION',
    help: 'a Gracefully evicted copy is removed once the new placement is healthy, or after this long',
  },
  'karmada-groups': {
    type: 'string',
    default: 'auto',
    choices: ['auto', 'off'],
    value: 'MODE',
    help: "auto: also act on policy.karmada.io policies and cluster.karmada.io Clusters when the hub serves them (one pool with Flotilla's; same name: Flotilla's is used); off: a hub where Karmada acts on them",
  },
  'propagate-namespaces': {
    type: 'string',
    default: 'auto',
    choices: ['auto', 'true', 'false'],
    value: 'MODE',
    help: "create every hub namespace on every member, with the ClusterOverridePolicies that select it, as Karmada's namespace controller (auto: when the hub serves policy.karmada.io)",
  },
  'skipped-propagating-namespaces': {
    type: 'string',
    default: 'kube-.*',
    value: 'REGEX,...',
    help: 'namespaces not propagated: regular expressions, each matched against the whole name',
  },
  'probe-timeout': {
    type: 'duration',
    default: '5s',
    value: 'DURATION',
    help: 'a member whose /readyz takes longer is not ready',
  },
} as const satisfies Flags;
export type ControllerFlags = FlagValues<typeof CONTROLLER_FLAGS>;

export const CONTROLLER = defineCommand({
  name: 'controller',
  summary: 'Propagate templates from a hub apiserver to member clusters and keep them in sync',
  description: `Watches PropagationPolicies, OverridePolicies, Clusters and every template kind the policies select on
the hub, and server-side applies each member's rendered object under field manager "flotilla-controller"
(flotilla apply writes the same objects as "flotilla"). An edit on the hub, or on a member (drift), is
put back; a member no longer targeted loses the object; a deleted template is removed from every member
before its finalizer is released. Each template's state is in a ResourceBinding
(kubectl get resourcebindings -A).
Logs are JSON lines on stderr. Runs until SIGINT or SIGTERM, finishing the work in flight.`,
  flags: CONTROLLER_FLAGS,
  footer: 'Exit status: 0 stopped by a signal; 1 could not start, or lost leadership; 2 usage.',
  load: () => import('./controller.js'),
});
