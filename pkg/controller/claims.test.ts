// TemplateClaims on an in-memory hub: the claim record and the finalizer go in one patch, and the same
// patch is not sent again while the template seen is still the one it was made from (its event has not
// reached the cache yet).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FakeApiserver } from '../../test/fake-apiserver.js';
import { KubeClient } from '../kube/client.js';
import { Discovery } from '../kube/discovery.js';
import { TemplateClaims } from './claims.js';
import { FINALIZER } from './ownership.js';

test('one patch for the claim and the finalizer; not sent again from the same stale template', async () => {
  const hub = new FakeApiserver();
  const stale = hub.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'default' } });
  const client = new KubeClient(hub, { concurrency: 2 });
  const claims = new TemplateClaims({ hub: client, hubDiscovery: new Discovery(client), policy: () => undefined });
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cfg' };
  const claim = { kind: 'PropagationPolicy' as const, namespace: 'default', name: 'p' };
  assert.equal(await claims.record(ref, stale, claim, true), true);
  assert.equal(await claims.record(ref, stale, claim, true), true, 'still waiting for its event');
  const patches = hub.sent('PATCH', '/configmaps/cfg');
  assert.equal(patches.length, 1, 'one patch');
  assert.deepEqual(Object.keys((patches[0]?.body as { metadata: object }).metadata), [
    'labels',
    'annotations',
    'finalizers',
  ]);
  // The cache now shows the patched template: nothing to change, no request.
  const now = hub.get('v1', 'ConfigMap', 'default', 'cfg') ?? {};
  assert.deepEqual((now.metadata as { finalizers: unknown }).finalizers, [FINALIZER]);
  assert.equal(await claims.record(ref, now, claim, true), false);
  assert.equal(hub.sent('PATCH', '/configmaps/cfg').length, 1);
});
