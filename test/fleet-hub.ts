// A small hub for the read model's unit tests (pkg/fleet): the kinds it reads on the fake apiserver, and
// a Fleet over it whose watches wait until stopped (the fake apiserver has no watch).

import { Fleet } from '../pkg/fleet/fleet.js';
import { KubeClient } from '../pkg/kube/client.js';
import { listWatchSource } from '../pkg/kube/informer.js';
import type { Watcher } from '../pkg/kube/watch.js';
import { CORE_KINDS, type FakeApiserver, type FakeKind } from './fake-apiserver.js';

export const FLEET_KINDS: FakeKind[] = [
  ...CORE_KINDS,
  { group: 'work.flotilla.io', version: 'v1alpha1', kind: 'Work', resource: 'works', namespaced: true },
  { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', resource: 'leases', namespaced: true },
  { group: 'cluster.karmada.io', version: 'v1alpha1', kind: 'Cluster', resource: 'clusters', namespaced: false },
  {
    group: 'policy.karmada.io',
    version: 'v1alpha1',
    kind: 'PropagationPolicy',
    resource: 'propagationpolicies',
    namespaced: true,
  },
  {
    group: 'policy.flotilla.io',
    version: 'v1beta1',
    kind: 'ClusterPropagationPolicy',
    resource: 'clusterpropagationpolicies',
    namespaced: false,
  },
  {
    group: 'policy.flotilla.io',
    version: 'v1beta1',
    kind: 'ClusterOverridePolicy',
    resource: 'clusteroverridepolicies',
    namespaced: false,
  },
];

/** A Fleet over `api`, its clock at `now`. */
export function fakeFleet(api: FakeApiserver, now: number): Fleet {
  const client = new KubeClient(api, { concurrency: 4 });
  const watcher = {
    watch: (req: { signal: AbortSignal }) =>
      new Promise<void>((resolve) => req.signal.addEventListener('abort', () => resolve(), { once: true })),
  } as unknown as Watcher;
  return new Fleet({ client, source: listWatchSource(client, watcher), now: () => now });
}
