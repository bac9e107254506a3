// A stand-in for Karmada's namespace controller, which the suite relies on: every namespace created on
// the hub (except Karmada's and Kubernetes' reserved ones, and those labelled
// namespace.karmada.io/skip-auto-propagation=true) is created on every member; one deleted from the hub
// is deleted from the members it was created on here. Polls the hub every second until `signal` aborts.

import type { KubeClient } from '../../pkg/kube/client.js';

interface NamespaceList {
  items?: Array<{ metadata: { name: string; labels?: Record<string, string> } }>;
}

const RESERVED = /^(kube-|karmada-)|^(default|flotilla-system)$/;
const SKIP = 'namespace.karmada.io/skip-auto-propagation';

export async function mirrorNamespaces(
  hub: KubeClient,
  members: KubeClient[],
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<void> {
  const created = new Set<string>();
  while (!signal.aborted) {
    try {
      const r = await hub.request<NamespaceList>({ method: 'GET', path: '/api/v1/namespaces' });
      const wanted = new Set(
        (r.body?.items ?? [])
          .filter((n) => !RESERVED.test(n.metadata.name) && n.metadata.labels?.[SKIP] !== 'true')
          .map((n) => n.metadata.name),
      );
      for (const name of wanted) {
        if (created.has(name)) continue;
        for (const m of members) {
          const c = await m.request({
            method: 'POST',
            path: '/api/v1/namespaces',
            body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
          });
          if (c.status >= 300 && c.status !== 409) log(`namespace ${name}: member answered ${c.status}`);
        }
        created.add(name);
      }
      for (const name of [...created]) {
        if (wanted.has(name)) continue;
        for (const m of members) await m.request({ method: 'DELETE', path: `/api/v1/namespaces/${name}` });
        created.delete(name);
      }
    } catch (e: unknown) {
      log(`namespace mirror: ${e instanceof Error ? e.message : String(e)}`);
    }
    await new Promise((res) => setTimeout(res, 1000));
  }
}
