// The Karmada e2e harness's stand-in for kube-controller-manager's PVC protection controller
// (hack/karmada-e2e/pvc-protection.ts), on a real apiserver: its admission gives each claim the protection
// finalizer, so a deleted claim stays until the stand-in releases it, and never while a scheduled pod uses it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { PVC_PROTECTION_FINALIZER, releaseClaims } from '../../hack/karmada-e2e/pvc-protection.js';
import { KubeClient } from '../../pkg/kube/client.js';
import { useEnvironment } from '../envtest/suite.js';
import { getObject, type Obj } from './controller-io.js';

const NS = 'claims';
const CLAIM = `/api/v1/namespaces/${NS}/persistentvolumeclaims/data`;
const POD = `/api/v1/namespaces/${NS}/pods/db`;

void describe('karmada e2e harness: the PVC protection stand-in', () => {
  const env = useEnvironment({ members: 0 });

  void it('releases a deleted claim once no scheduled pod uses it, and not before', async () => {
    const c = new KubeClient(env().hub.kubeConfig(), { concurrency: 2 });
    const signal = new AbortController().signal;
    const create = async (path: string, body: Obj) => {
      const r = await c.request({ method: 'POST', path, body, signal });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    };
    await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await create(`/api/v1/namespaces/${NS}/persistentvolumeclaims`, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await create(`/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'db' },
      spec: {
        nodeName: 'node-1',
        containers: [{ name: 'db', image: 'docker.io/library/postgres:16' }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
      },
    });
    const finalizers = (o: Obj | undefined) => (o?.metadata as Obj | undefined)?.finalizers;
    assert.deepEqual(finalizers(await getObject(c, CLAIM)), [PVC_PROTECTION_FINALIZER]);

    assert.ok((await c.request({ method: 'DELETE', path: CLAIM, signal })).status < 300);
    // What the e2e suite met: nothing removes the finalizer, so the claim stays Terminating.
    const terminating = await getObject(c, CLAIM);
    assert.ok((terminating?.metadata as Obj).deletionTimestamp, 'the claim is being deleted');
    assert.deepEqual(await releaseClaims(c, signal), []);
    assert.deepEqual(finalizers(await getObject(c, CLAIM)), [PVC_PROTECTION_FINALIZER], 'the scheduled pod holds it');

    // No kubelet runs: the pod goes at once only with a zero grace period.
    const gone = await c.request({ method: 'DELETE', path: `${POD}?gracePeriodSeconds=0`, signal });
    assert.ok(gone.status < 300, JSON.stringify(gone.body));
    assert.deepEqual(await releaseClaims(c, signal), []);
    assert.equal(await getObject(c, CLAIM), undefined);
  });
});
