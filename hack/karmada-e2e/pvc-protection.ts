// A stand-in for kube-controller-manager's PVC protection controller, which the test apiservers do not run.
// Their StorageObjectInUseProtection admission plugin (on by default) gives every PersistentVolumeClaim the
// finalizer `kubernetes.io/pvc-protection`, and only that controller removes it, once no pod that is
// scheduled and has not finished uses the claim. Without it a deleted claim stays Terminating for ever;
// the suite waits for a claim that a Deployment stops naming (propagateDeps) to disappear from the members.
// No kubelet or scheduler runs here either, so in practice no pod ever holds a claim.

import type { KubeClient } from '../../pkg/kube/client.js';

export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';

interface Claim {
  metadata: {
    name: string;
    namespace: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
  };
}

interface Pod {
  spec?: { nodeName?: string; volumes?: Array<{ persistentVolumeClaim?: { claimName?: string } }> };
  status?: { phase?: string };
}

/** Whether a pod holds the claim, as the PVC protection controller decides it: scheduled, not finished, naming it. */
export function podUsesClaim(pod: Pod, claim: string): boolean {
  if (!pod.spec?.nodeName) return false;
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return false;
  return (pod.spec.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === claim);
}

/**
 * One pass over an apiserver: each claim being deleted that still has the protection finalizer and that no
 * pod holds loses the finalizer (a merge patch carrying the resourceVersion it was read at: a claim
 * changed meanwhile is left for the next pass). Returns what failed, for the log.
 */
export async function releaseClaims(c: KubeClient, signal: AbortSignal): Promise<string[]> {
  const failed: string[] = [];
  const r = await c.request<{ items?: Claim[] }>({ method: 'GET', path: '/api/v1/persistentvolumeclaims', signal });
  const pods = new Map<string, Pod[]>();
  for (const claim of r.body?.items ?? []) {
    const { name, namespace, resourceVersion, deletionTimestamp, finalizers = [] } = claim.metadata;
    if (!deletionTimestamp || !finalizers.includes(PVC_PROTECTION_FINALIZER)) continue;
    let inNamespace = pods.get(namespace);
    if (!inNamespace) {
      const p = await c.request<{ items?: Pod[] }>({
        method: 'GET',
        path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
        signal,
      });
      pods.set(namespace, (inNamespace = p.body?.items ?? []));
    }
    if (inNamespace.some((p) => podUsesClaim(p, name))) continue;
    const patch = await c.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/persistentvolumeclaims/${encodeURIComponent(name)}`,
      contentType: 'application/merge-patch+json',
      body: { metadata: { resourceVersion, finalizers: finalizers.filter((f) => f !== PVC_PROTECTION_FINALIZER) } },
      signal,
    });
    if (patch.status >= 300 && patch.status !== 404 && patch.status !== 409)
      failed.push(`releasing PersistentVolumeClaim ${namespace}/${name}: HTTP ${patch.status}`);
  }
  return failed;
}
