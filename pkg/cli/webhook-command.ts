// `flotilla webhook`: its flags and help (the command table, commands.ts, lists it). Light, as commands.ts
// must be: the command itself (webhook.ts) is loaded only when it runs.

import { defineCommand, type FlagValues, type Flags } from './command.js';
import { CONTEXT_FLAG, KUBECONFIG_FLAG } from './kubeflags.js';

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

export const WEBHOOK = defineCommand({
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
