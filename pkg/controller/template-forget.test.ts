// The template reconciler forgets a template deleted on the hub: the claim patch it last sent for it
// (claims.ts) goes too, whether or not the finalizer ever reached the template. On an in-memory hub.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';

import { cluster, deployment, propagationPolicy, selectDeployment } from '../../test/builders.js';
import { FakeApiserver } from '../../test/fake-apiserver.js';
import { EngineState, templateKey } from '../engine/state.js';
import { KubeClient } from '../kube/client.js';
import { Discovery } from '../kube/discovery.js';
import type { Watcher } from '../kube/watch.js';
import { createLogger } from '../runtime/log.js';
import type { TemplateClaims } from './claims.js';
import { EventRecorder } from './events.js';
import { MemberRegistry } from './members.js';
import { PolicyStatusReconciler } from './status.js';
import { TemplateReconciler } from './template.js';

test('a template deleted before the finalizer reached it leaves no claim patch remembered', async () => {
  const hub = new FakeApiserver();
  const template = hub.put(deployment('web', 'shop'));
  const policy = propagationPolicy('web', 'shop', [selectDeployment('web')], {
    clusterAffinity: { clusterNames: ['m1'] },
  });
  const client = new KubeClient(hub, { concurrency: 2 });
  const logger = createLogger({ level: 'error', stream: new PassThrough() });
  const state = new EngineState();
  for (const o of [cluster('m1'), policy, template]) state.upsert(o);
  const registry = new MemberRegistry(
    {
      hub: client,
      hubWatcher: {} as Watcher,
      clusterSecrets: false,
      probeIntervalMs: 10_000,
      probeTimeoutMs: 5_000,
      memberConcurrency: 1,
      userAgent: 'test',
      logger,
      cluster: () => undefined,
      onChange: () => undefined,
      onConnect: () => undefined,
      onOwnedEvent: () => undefined,
    },
    [],
  );
  const r = new TemplateReconciler({
    hub: client,
    hubDiscovery: new Discovery(client),
    state,
    registry,
    events: new EventRecorder(client, { component: 'test', instance: 'test', disabled: true }),
    policyStatus: new PolicyStatusReconciler(client, {
      policy: () => policy,
      plural: () => 'propagationpolicies',
      intervalMs: 60_000,
      logger,
    }),
    policy: () => policy,
    namespace: 'flotilla-system',
    concurrency: 1,
    memberConcurrency: 1,
    cleanupTimeoutMs: 60_000,
    evictionPurgeMode: 'Gracefully',
    gracefulEvictionTimeoutMs: 60_000,
    logger,
    agentEntries: () => new Map(),
    work: () => undefined,
  });
  const claims = (r as unknown as { claims: TemplateClaims }).claims;
  const key = templateKey({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' });
  r.templates.set(key, template);
  // Claimed: the claim record and the finalizer go in one patch, remembered until its event comes back.
  await r.reconcile(key, new AbortController().signal);
  assert.equal(hub.sent('PATCH', '/deployments/web').length, 1);
  assert.equal(claims.remembered, 1);
  // Deleted on the hub before that event arrived: no finalizer was released, and nothing is kept of it.
  r.deleted(key);
  assert.equal(claims.remembered, 0);
});
