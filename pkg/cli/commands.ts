// The one table of `flotilla` commands and their flags. Help, flag parsing and shell completion are
// generated from it, so they cannot drift apart. Each command's module is imported only when that command
// runs: this file and what it imports must stay light (no Kubernetes client, no YAML, no engine), since
// every invocation, `flotilla --version` included, loads it.

import { defineCommand, type CommandSpec, type FlagValues, type Flags } from './command.js';
import { CONTEXT_FLAG, KUBE_FLAGS, KUBECONFIG_FLAG } from './kubeflags.js';
import { STATUS } from './status-command.js';
import { UI } from './ui-command.js';

const FILENAME_FLAG = {
  type: 'string',
  short: 'f',
  multiple: true,
  required: true,
  value: 'PATH',
  complete: 'file',
  help: "file, directory (its *.yaml, *.yml and *.json files) or '-' for stdin",
} as const;

const RECURSIVE_FLAG = {
  type: 'boolean',
  short: 'R',
  help: 'also read the subdirectories of directories given with -f',
} as const;

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

const render = defineCommand({
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

const admit = defineCommand({
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

export const VALIDATE_FLAGS = { filename: FILENAME_FLAG, recursive: RECURSIVE_FLAG } as const satisfies Flags;
export type ValidateFlags = FlagValues<typeof VALIDATE_FLAGS>;

const validate = defineCommand({
  name: 'validate',
  summary: "Check policies and Clusters against the webhook's admission rules (offline)",
  description: `Prints one line per problem: FILE: KIND/NAMESPACE/NAME: field.path: Type: value: detail
(warnings start with "warning:"). Resource templates are read but not checked.`,
  flags: VALIDATE_FLAGS,
  footer: 'Exit status: 0 every object is allowed; 1 a denial or unreadable input; 2 usage.',
  load: () => import('./validate.js'),
});

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

const apply = defineCommand({
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

const diff = defineCommand({
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

export const WEBHOOK_FLAGS = {
  'tls-cert-file': {
    type: 'string',
    required: true,
    value: 'FILE',
    complete: 'file',
    help: 'serving certificate (PEM), re-read every --cert-reload-interval',
  },
  'tls-private-key-file': {
    type: 'string',
    required: true,
    value: 'FILE',
    complete: 'file',
    help: 'its private key (PEM)',
  },
  port: { type: 'string', default: '8443', value: 'PORT', help: 'HTTPS port; 0 picks a free one' },
  'health-port': {
    type: 'string',
    default: '8081',
    value: 'PORT',
    help: 'plain-HTTP port of /healthz and /readyz for probes (never queued behind reviews); 0 picks a free one',
  },
  'bind-address': { type: 'string', default: '0.0.0.0', value: 'ADDRESS', help: 'address to listen on' },
  'cert-reload-interval': {
    type: 'duration',
    default: '10s',
    value: 'DURATION',
    help: 'how often the certificate files are re-read',
  },
  kubeconfig: {
    ...KUBECONFIG_FLAG,
    help: "the kubeconfig for listing Clusters; without it every file in $KUBECONFIG (merged), else the pod's service account; with none, no Cluster list",
  },
  context: CONTEXT_FLAG,
  'cluster-list-interval': {
    type: 'duration',
    default: '30s',
    value: 'DURATION',
    help: 'how often Cluster objects are listed',
  },
  override: {
    type: 'boolean',
    help: 'also serve POST /override: admission-time overrides for the objects of the cluster the webhook runs in (needs a kubeconfig and --cluster-name)',
  },
  'cluster-name': {
    type: 'string',
    value: 'NAME',
    help: "with --override: the cluster's name, for targetCluster and ${cluster.name}; a Cluster object of this name, if any, gives the rest",
  },
  'cluster-labels': {
    type: 'string',
    value: 'K=V,...',
    help: "with --override, when no Cluster object exists: the cluster's labels",
  },
  'cluster-provider': {
    type: 'string',
    value: 'NAME',
    help: 'with --override: the cluster provider (${cluster.provider})',
  },
  'cluster-region': { type: 'string', value: 'NAME', help: 'with --override: the cluster region (${cluster.region})' },
  'cluster-zones': {
    type: 'string',
    value: 'Z1,...',
    help: 'with --override: the cluster zones (${cluster.zone} is the first)',
  },
} as const satisfies Flags;
export type WebhookFlags = FlagValues<typeof WEBHOOK_FLAGS>;

const webhook = defineCommand({
  name: 'webhook',
  summary: 'Serve the admission (validate, mutate) and conversion webhooks over HTTPS',
  description: `Serves TLS 1.2 or later. Endpoints: POST /validate, /mutate (AdmissionReview admission.k8s.io/v1
and v1beta1), POST /convert (ConversionReview apiextensions.k8s.io/v1 and v1beta1), GET /healthz,
/readyz, /metrics (Prometheus). /healthz and /readyz are also served over plain HTTP on --health-port,
for kubelet's probes: answered as they arrive, without a TLS handshake or a wait behind reviews.

With --override, also POST /override: every object admitted in this cluster gets the OverridePolicies and
ClusterOverridePolicies (both API groups) that select it and target this cluster, then the matching
Gatekeeper Assign/AssignMetadata/ModifySet/AssignImage mutators, as a JSON patch ('flotilla admit' shows the same offline).
The policies are watched in the cluster of the kubeconfig; /readyz waits until they are loaded.

A renewed certificate is used for new connections without a restart. With a kubeconfig, the webhook
lists Cluster objects (cluster.flotilla.io, and cluster.karmada.io where the hub serves it) to warn
about rules naming clusters that do not exist (~/.kube/config is not read
unless given with --kubeconfig). Durations take Go's syntax: 500ms, 90s, 1m30s, 1h.
Logs are JSON lines on stderr. Runs until SIGINT or SIGTERM.`,
  flags: WEBHOOK_FLAGS,
  footer: 'Exit status: 0 stopped by a signal; 1 could not start; 2 usage.',
  load: () => import('./webhook.js'),
});

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
  'probe-timeout': {
    type: 'duration',
    default: '5s',
    value: 'DURATION',
    help: 'a member whose /readyz takes longer is not ready',
  },
} as const satisfies Flags;
export type ControllerFlags = FlagValues<typeof CONTROLLER_FLAGS>;

const controller = defineCommand({
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

const agent = defineCommand({
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

export const CERTS_CREATE_FLAGS = {
  service: { type: 'string', required: true, value: 'NAME', help: "the webhook's Service" },
  namespace: { type: 'string', required: true, value: 'NAMESPACE', help: "the Service's (and the Secret's) namespace" },
  secret: {
    type: 'string',
    value: 'NAME',
    help: 'store ca.crt, tls.crt and tls.key in this Secret (kept if it exists)',
  },
  'cert-dir': { type: 'string', value: 'DIR', complete: 'directory', help: 'write ca.crt, tls.crt and tls.key here' },
  hosts: { type: 'string', value: 'HOST,...', help: 'extra DNS names or IP addresses for the certificate' },
  'valid-days': {
    type: 'string',
    default: '3650',
    value: 'DAYS',
    help: 'validity of the CA and the certificate (1-36500)',
  },
  ...KUBE_FLAGS,
} as const satisfies Flags;
export type CertsCreateFlags = FlagValues<typeof CERTS_CREATE_FLAGS>;

export const CERTS_PATCH_FLAGS = {
  secret: { type: 'string', required: true, value: 'NAME', help: 'the Secret holding ca.crt' },
  namespace: { type: 'string', required: true, value: 'NAMESPACE', help: "the Secret's namespace" },
  validating: {
    type: 'string',
    value: 'NAME',
    help: 'ValidatingWebhookConfiguration whose webhooks get the CA bundle',
  },
  mutating: { type: 'string', value: 'NAME', help: 'MutatingWebhookConfiguration whose webhooks get the CA bundle' },
  crds: {
    type: 'string',
    value: 'NAME,...',
    help: "CRDs whose conversion webhook gets the CA bundle (default: the four policy.flotilla.io CRDs; '' for none)",
  },
  ...KUBE_FLAGS,
} as const satisfies Flags;
export type CertsPatchFlags = FlagValues<typeof CERTS_PATCH_FLAGS>;

const certs = defineCommand({
  name: 'certs',
  summary: "Create the webhook's serving certificate, or patch its CA into webhook configurations and CRDs",
  description: 'The kube-webhook-certgen flow, so install Jobs can run the flotilla image.',
  flags: {},
  subcommands: [
    defineCommand({
      name: 'create',
      summary: "Create a CA and the webhook's serving certificate, into a Secret and/or files",
      description: `The certificate is for NAME, NAME.NS, NAME.NS.svc and NAME.NS.svc.cluster.local, plus --hosts
(DNS names, a wildcard only as the whole first label, or IPv4/IPv6 addresses), valid for --valid-days
(at most 36500). With --secret it is stored in that Secret (type kubernetes.io/tls). An existing Secret
is kept when its certificate still serves, so re-running an install does not rotate the CA under
running webhooks: it parses, its key matches, it is signed by its ca.crt, covers every name above and
expires neither within 30 days nor within a third of --valid-days. Otherwise create says why and
replaces it with a new CA and certificate. With --cert-dir the same three files are written there (the
key 0600, certificates 0644, a directory it creates 0700, whatever the umask). At least one of --secret
and --cert-dir.
The cluster (for --secret) is reached as kubectl reaches it: --kubeconfig, else $KUBECONFIG (every file,
merged), else ~/.kube/config, else the pod's service account.`,
      flags: CERTS_CREATE_FLAGS,
      footer: 'Exit status: 0 ok; 1 failure; 2 usage.',
      load: async () => ({ run: (await import('./certs.js')).create }),
    }),
    defineCommand({
      name: 'patch',
      summary: "Set the Secret's CA as caBundle on webhook configurations and CRD conversion webhooks",
      description: `Reads ca.crt from the Secret and sets it as caBundle on every webhook of the named
ValidatingWebhookConfiguration and MutatingWebhookConfiguration, and on the conversion webhook of each
CRD. A ca.crt that is not PEM CA certificates, at least one of them valid now, is refused. The cluster is reached as kubectl reaches it: --kubeconfig, else $KUBECONFIG (every file, merged),
else ~/.kube/config, else the pod's service account.`,
      flags: CERTS_PATCH_FLAGS,
      footer: 'Exit status: 0 ok; 1 a failure (the others are still patched); 2 usage.',
      load: async () => ({ run: (await import('./certs.js')).patch }),
    }),
  ],
});

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
    render,
    validate,
    admit,
    diff,
    apply,
    STATUS,
    UI,
    controller,
    agent,
    webhook,
    certs,
    version,
    completion,
  ],
  footer: `Run 'flotilla help COMMAND' or 'flotilla COMMAND --help' for a command's options.
Exit status: 0 ok; 1 invalid input or failed work; 2 usage.`,
});
