import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FakeApiserver, type Obj } from '../../test/fake-apiserver.js';
import { deployment } from '../../test/builders.js';
import { KubeClient } from './client.js';
import {
  CREATED_BY_LABEL,
  DeliveryCore,
  describeOwner,
  liveMetaOf,
  serverSideApply,
  type OwnerMark,
} from './delivery.js';
import type { ResourceInfo } from './discovery.js';

const DEPLOYMENTS: ResourceInfo = {
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  resource: 'deployments',
  namespaced: true,
};
const OWNER = 'test.flotilla.io/owner';

/** Marks objects with OWNER=<who>; owns those carrying it. */
function labelMark(who: string): OwnerMark {
  return {
    namespaceMark: who,
    ours: 'ours',
    mark(o) {
      const meta = o.metadata as Obj;
      meta.labels = { ...((meta.labels ?? {}) as Obj), [OWNER]: who };
    },
    owns: (live) => live.labels[OWNER] === who,
  };
}

function setup(o: { fieldManager?: string; previousManagers?: string[] } = {}) {
  const server = new FakeApiserver();
  const client = new KubeClient(server, { concurrency: 4 });
  const core = new DeliveryCore(client, {
    fieldManager: o.fieldManager ?? 'flotilla',
    ...(o.previousManagers ? { previousManagers: o.previousManagers } : {}),
  });
  return { server, client, core };
}

function image(o: Obj | undefined): unknown {
  const containers = (((o?.spec as Obj).template as Obj).spec as Obj).containers as Obj[];
  return containers[0]?.image;
}

describe('the delivery core', () => {
  it('creates an absent object with a non-forced apply, marked as ours and hashed', async () => {
    const { server, core } = setup();
    const out = await core.apply({
      info: DEPLOYMENTS,
      object: deployment(),
      mark: labelMark('me'),
      conflictResolution: 'Abort',
    });
    assert.equal(out.action, 'created');
    const patch = server.sent('PATCH')[0];
    assert.equal(patch?.query.get('force'), 'false');
    assert.equal(patch?.query.get('fieldManager'), 'flotilla');
    const live = server.get('apps/v1', 'Deployment', 'default', 'web');
    assert.equal(((live?.metadata as Obj).labels as Obj)[OWNER], 'me');
    assert.match(String(((live?.metadata as Obj).annotations as Obj)['flotilla.io/applied-hash']), /^sha256:/);
  });

  it('sends nothing for an object of ours that is unchanged since it was applied', async () => {
    const { server, core } = setup();
    await core.apply({ info: DEPLOYMENTS, object: deployment(), mark: labelMark('me'), conflictResolution: 'Abort' });
    const before = server.requests.length;
    const out = await core.apply({
      info: DEPLOYMENTS,
      object: deployment(),
      mark: labelMark('me'),
      conflictResolution: 'Abort',
    });
    assert.equal(out.action, 'unchanged');
    // One metadata read to learn what is there, no write.
    assert.deepEqual(
      server.requests.slice(before).map((r) => r.method),
      ['GET'],
    );
  });

  it('puts back a field of our object that another writer changed (drift), with force', async () => {
    const { server, core } = setup();
    await core.apply({ info: DEPLOYMENTS, object: deployment(), mark: labelMark('me'), conflictResolution: 'Abort' });
    server.edit('apps/v1', 'Deployment', 'default', 'web', 'kubectl-set', (o) => {
      ((((o.spec as Obj).template as Obj).spec as Obj).containers as Obj[])[0] = { name: 'web', image: 'drifted:1' };
    });
    const out = await core.apply({
      info: DEPLOYMENTS,
      object: deployment(),
      mark: labelMark('me'),
      conflictResolution: 'Abort',
    });
    assert.equal(out.action, 'configured');
    assert.equal(server.sent('PATCH').at(-1)?.query.get('force'), 'true');
    assert.equal(image(server.get('apps/v1', 'Deployment', 'default', 'web')), 'nginx:1.25');
  });

  it('leaves an object that is not ours alone under Abort and says whose it is', async () => {
    const { server, core } = setup();
    server.put(deployment(), 'kubectl-client-side-apply');
    const out = await core.apply({
      info: DEPLOYMENTS,
      object: deployment('web', 'default', { replicas: 5 }),
      mark: labelMark('me'),
      conflictResolution: 'Abort',
    });
    assert.equal(out.action, 'conflict');
    assert.match(out.message ?? '', /not ours \(it was written by kubectl-client-side-apply\)/);
    assert.match(out.message ?? '', /conflictResolution: Overwrite/);
    assert.equal(server.sent('PATCH').length, 0);
  });

  it('takes an object that is not ours with force under Overwrite', async () => {
    const { server, core } = setup();
    server.put(deployment('web', 'default', { containers: [{ name: 'web', image: 'theirs:1' }] }), 'someone');
    const out = await core.apply({
      info: DEPLOYMENTS,
      object: deployment(),
      mark: labelMark('me'),
      conflictResolution: 'Overwrite',
    });
    assert.equal(out.action, 'configured');
    assert.equal(server.sent('PATCH').at(-1)?.query.get('force'), 'true');
    assert.equal(image(server.get('apps/v1', 'Deployment', 'default', 'web')), 'nginx:1.25');
  });

  it('names the other Flotilla writer in a conflict: an apply set, or the controller', () => {
    assert.match(
      describeOwner(liveMetaOf({ metadata: { labels: { 'applyset.kubernetes.io/part-of': 'applyset-x-v1' } } })),
      /apply set applyset-x-v1 \(flotilla apply\)/,
    );
    assert.match(
      describeOwner(
        liveMetaOf({ metadata: { annotations: { 'flotilla.io/template': 'apps/v1/Deployment default/web' } } }),
      ),
      /controller's copy of apps\/v1\/Deployment default\/web/,
    );
  });

  it('reports a conflict when the object appeared between the look and the apply', async () => {
    const { server, core } = setup();
    server.put(deployment('web', 'default', { replicas: 9 }), 'fast-hands');
    const out = await core.apply({
      info: DEPLOYMENTS,
      object: deployment('web', 'default', { replicas: 2 }),
      mark: labelMark('me'),
      conflictResolution: 'Abort',
      live: null,
    });
    assert.equal(out.action, 'conflict');
    assert.match(
      out.message ?? '',
      /created on the member by someone else meanwhile: Apply failed with 1 conflict: conflict with "fast-hands"/,
    );
  });

  it('does not apply over an object that is being deleted', async () => {
    const { server, core } = setup();
    const live = liveMetaOf({
      metadata: { name: 'web', labels: { [OWNER]: 'me' }, deletionTimestamp: '2026-01-01T00:00:00Z' },
    });
    const out = await core.apply({
      info: DEPLOYMENTS,
      object: deployment(),
      mark: labelMark('me'),
      conflictResolution: 'Abort',
      live,
    });
    assert.equal(out.action, 'failed');
    assert.match(out.message ?? '', /being deleted/);
    assert.equal(server.sent('PATCH').length, 0);
  });

  it('says the member is unreachable when it does not answer', async () => {
    const { server, core } = setup();
    server.hook = () => 'unreachable';
    const out = await core.apply({
      info: DEPLOYMENTS,
      object: deployment(),
      mark: labelMark('me'),
      conflictResolution: 'Abort',
    });
    assert.equal(out.action, 'failed');
    assert.equal(out.unreachable, true);
  });

  it('passes the apiserver message of a rejected apply on', async () => {
    const { server, core } = setup();
    server.hook = (r) =>
      r.method === 'PATCH'
        ? { status: 422, body: { kind: 'Status', reason: 'Invalid', message: 'spec.replicas: Invalid value: -1' } }
        : undefined;
    const out = await core.apply({
      info: DEPLOYMENTS,
      object: deployment(),
      mark: labelMark('me'),
      conflictResolution: 'Abort',
    });
    assert.deepEqual(
      [out.action, out.message, out.unreachable],
      ['failed', 'spec.replicas: Invalid value: -1', undefined],
    );
  });

  it('creates a missing namespace labelled with its writer, once', async () => {
    const { server, core } = setup();
    assert.equal(await core.ensureNamespace('shop', labelMark('me'), { create: false }), 'missing');
    assert.equal(await core.ensureNamespace('shop', labelMark('me'), { create: true }), 'created');
    assert.equal(
      ((server.get('v1', 'Namespace', undefined, 'shop')?.metadata as Obj).labels as Obj)[CREATED_BY_LABEL],
      'me',
    );
    const before = server.requests.length;
    assert.equal(await core.ensureNamespace('shop', labelMark('me'), { create: true }), 'exists');
    assert.equal(server.requests.length, before);
  });

  it('deletes only the object it was told of: a uid precondition, 409 meaning replaced meanwhile', async () => {
    const { server, core } = setup();
    const live = server.put(deployment(), 'me');
    const uid = String((live.metadata as Obj).uid);
    assert.deepEqual(await core.remove(DEPLOYMENTS, 'default', 'web', 'another-uid'), { result: 'replaced' });
    assert.ok(server.get('apps/v1', 'Deployment', 'default', 'web'));
    assert.deepEqual(await core.remove(DEPLOYMENTS, 'default', 'web', uid), { result: 'deleted' });
    assert.deepEqual(await core.remove(DEPLOYMENTS, 'default', 'web', uid), { result: 'absent' });
    assert.deepEqual((server.sent('DELETE')[0]?.body as Obj).preconditions, { uid: 'another-uid' });
  });

  it('takes over an object of ours applied under a previous field manager, so dropped fields go', async () => {
    const { server, core: old } = setup();
    const withLabel = deployment('web', 'default', { labels: { team: 'a' } });
    await old.apply({ info: DEPLOYMENTS, object: withLabel, mark: labelMark('me'), conflictResolution: 'Abort' });
    const client = new KubeClient(server, { concurrency: 1 });
    const core = new DeliveryCore(client, { fieldManager: 'flotilla-controller', previousManagers: ['flotilla'] });
    const first = await core.apply({
      info: DEPLOYMENTS,
      object: deployment('web', 'default', { labels: { team: 'a' } }),
      mark: labelMark('me'),
      conflictResolution: 'Abort',
    });
    assert.equal(first.action, 'configured');
    const managers = (
      (server.get('apps/v1', 'Deployment', 'default', 'web')?.metadata as Obj).managedFields as Obj[]
    ).map((e) => e.manager);
    assert.deepEqual(managers, ['flotilla-controller']);
    // The label is dropped from the desired object: the new manager owned it alone, so it goes.
    await core.apply({ info: DEPLOYMENTS, object: deployment(), mark: labelMark('me'), conflictResolution: 'Abort' });
    const labels = (server.get('apps/v1', 'Deployment', 'default', 'web')?.metadata as Obj).labels as Obj;
    assert.equal(labels.team, undefined);
    assert.equal(labels[OWNER], 'me');
  });

  it('leaves the previous manager of an object that is also in an apply set', async () => {
    const { server, core: cli } = setup();
    const inSet = deployment('web', 'default', { labels: { 'applyset.kubernetes.io/part-of': 'applyset-x-v1' } });
    await cli.apply({ info: DEPLOYMENTS, object: inSet, mark: labelMark('me'), conflictResolution: 'Abort' });
    const core = new DeliveryCore(new KubeClient(server, { concurrency: 1 }), {
      fieldManager: 'flotilla-controller',
      previousManagers: ['flotilla'],
    });
    await core.apply({
      info: DEPLOYMENTS,
      object: deployment('web', 'default', { replicas: 3 }),
      mark: labelMark('me'),
      conflictResolution: 'Abort',
    });
    const managers = (
      (server.get('apps/v1', 'Deployment', 'default', 'web')?.metadata as Obj).managedFields as Obj[]
    ).map((e) => e.manager);
    assert.deepEqual(managers.sort(), ['flotilla', 'flotilla-controller']);
    assert.equal(server.sent('PATCH').filter((r) => r.contentType === 'application/json-patch+json').length, 0);
  });

  it('builds every server-side apply the same way: manager, force, strict validation, metadata answer', async () => {
    const { server, client } = setup();
    await serverSideApply(client, '/apis/apps/v1/namespaces/default/deployments/web', deployment(), {
      fieldManager: 'flotilla-controller',
      force: true,
    });
    const r = server.sent('PATCH')[0];
    assert.equal(r?.contentType, 'application/apply-patch+yaml');
    assert.deepEqual(Object.fromEntries(r?.query ?? []), {
      fieldManager: 'flotilla-controller',
      force: 'true',
      fieldValidation: 'Strict',
    });
  });
});
