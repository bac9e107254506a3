// A stand-in for kube-controller-manager's namespace controller, which the test apiservers do not run:
// a namespace being deleted is finalized (its `kubernetes` finalizer removed through /finalize) so that it
// goes, as it goes on a real cluster once its contents are deleted. The suite waits for its namespaces to
// disappear from the hub and the members. Its objects stay in etcd, unreachable: the environment is thrown
// away after the run. The same loop stands in for the PVC protection controller (pvc-protection.ts). Polls
// each apiserver every second until `signal` aborts.

import type { KubeClient } from '../../pkg/kube/client.js';
import { releaseClaims } from './pvc-protection.js';

interface NamespaceList {
  items?: Array<{ metadata: { name: string; deletionTimestamp?: string }; spec?: { finalizers?: string[] } }>;
}

export async function finalizeNamespaces(
  clients: KubeClient[],
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<void> {
  while (!signal.aborted) {
    for (const c of clients) {
      try {
        const r = await c.request<NamespaceList>({ method: 'GET', path: '/api/v1/namespaces', signal });
        for (const ns of r.body?.items ?? []) {
          if (!ns.metadata.deletionTimestamp || (ns.spec?.finalizers ?? []).length === 0) continue;
          const name = ns.metadata.name;
          const f = await c.request({
            method: 'PUT',
            path: `/api/v1/namespaces/${encodeURIComponent(name)}/finalize`,
            body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, spec: { finalizers: [] } },
            signal,
          });
          if (f.status >= 300 && f.status !== 404 && f.status !== 409)
            log(`finalizing namespace ${name}: HTTP ${f.status}`);
        }
        for (const line of await releaseClaims(c, signal)) log(line);
      } catch (e: unknown) {
        if (!signal.aborted) log(`namespace finalizer: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    await new Promise((res) => setTimeout(res, 1000));
  }
}
