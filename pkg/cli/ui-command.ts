// `flotilla ui`: its flags and help (the command table, commands.ts, lists it). Light, as commands.ts
// must be: the command itself (ui.ts) loads the Kubernetes client, the read model and the server.

import { defineCommand, type FlagValues, type Flags } from './command.js';
import { HUB_READ_FLAGS } from './kubeflags.js';

export const UI_FLAGS = {
  address: {
    type: 'string',
    default: '127.0.0.1:8080',
    value: 'HOST:PORT',
    help: 'where to serve the page; a loopback address (the default) answers only requests whose Host is loopback too. Port 0: any free port',
  },
  ...HUB_READ_FLAGS,
} as const satisfies Flags;
export type UiFlags = FlagValues<typeof UI_FLAGS>;

export const UI = defineCommand({
  name: 'ui',
  summary: 'Serve a read-only web page of the fleet, live: placement matrix, clusters, policies, diffs',
  description: `Reads the hub with your own kubeconfig (the page shows what you may read; it holds no
credentials) and serves, on --address: the placement matrix (templates × clusters, each cell the
binding's state: Applied, Pending, Conflict with the other writer, Suspended, Evicting with its purge
mode and deadline, replicas of divided workloads; filters by namespace, kind, policy, cluster and state),
the clusters (Ready, Lease age, sync mode, taints, capacity, version, API groups), the policies (what
each claims, READY, Karmada fields accepted but not acted upon) and one template (why each cluster was
chosen or not, each cluster's copy as a diff against the template with the override rule behind each
field, recent Events). The hub's watches are pushed to the page (server-sent events): it follows the hub
without a reload. Nothing is written to the hub.

In a cluster (the chart's ui.enabled), reach it with:
  kubectl -n flotilla-system port-forward deploy/flotilla-ui 8080
and open http://localhost:8080/. Runs until SIGINT or SIGTERM.`,
  flags: UI_FLAGS,
  footer: 'Exit status: 0 stopped by a signal; 1 could not read the hub or listen; 2 usage.',
  load: () => import('./ui.js'),
});
