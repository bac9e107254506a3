// The in-memory apiserver over HTTPS, driven by the project's own clients through a kubeconfig: KubeClient
// (requests), Discovery, server-side apply with field ownership, metadata lists, Watcher and Informer.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { KubeConfig } from '@kubernetes/client-node';

import { KubeClient, METADATA_ACCEPT } from '../pkg/kube/client.js';
import { serverSideApply } from '../pkg/kube/delivery.js';
import { Discovery } from '../pkg/kube/discovery.js';
import { Informer, listWatchSource } from '../pkg/kube/informer.js';
import type { JsonObject } from '../pkg/kube/objects.js';
import { Watcher, type WatchEvent } from '../pkg/kube/watch.js';
import { eventually } from './eventually.js';
import { CORE_KINDS, FakeApiserver } from './fake-apiserver.js';
import { serveFake, type FakeServer } from './fake-apiserver-server.js';

const LEASE = { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', resource: 'leases', namespaced: true };
const CM_PATH = '/api/v1/namespaces/demo/configmaps';

const configMap = (name: string, data: Record<string, string>): JsonObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'demo' },
  data,
});

describe('the in-memory apiserver over HTTPS', () => {
  let fake: FakeApiserver;
  let server: FakeServer;
  let client: KubeClient;
  let kc: KubeConfig;
  const told: string[] = [];

  before(async () => {
    fake = new FakeApiserver({ kinds: [...CORE_KINDS, LEASE], record: false });
    server = await serveFake(fake, { onUnserved: (line) => told.push(line) });
    kc = new KubeConfig();
    kc.loadFromString(server.kubeconfig('light1'));
    client = new KubeClient(kc, { concurrency: 4 });
  });

  after(async () => {
    await client.close();
    await server.close();
  });

  it('is reached through a kubeconfig that trusts its certificate, and answers readyz, version and discovery', async () => {
    assert.equal(kc.getCurrentContext(), 'light1');
    assert.equal((await client.request({ method: 'GET', path: '/readyz' })).status, 200);
    const version = await client.requestOk<{ gitVersion: string }>({ method: 'GET', path: '/version' });
    assert.match(version.body?.gitVersion ?? '', /^v1\./);
    const core = await client.requestOk<{ versions: string[] }>({ method: 'GET', path: '/api' });
    assert.deepEqual(core.body?.versions, ['v1']);
    const discovery = new Discovery(client);
    assert.equal((await discovery.resolve('v1', 'ConfigMap')).resource, 'configmaps');
    const lease = await discovery.resolveGroupKind('coordination.k8s.io', 'Lease');
    assert.deepEqual([lease.version, lease.resource, lease.namespaced], ['v1', 'leases', true]);
  });

  it('applies server-side with field ownership: managedFields named, a conflict refused, force takes the field', async () => {
    const first = await serverSideApply(client, `${CM_PATH}/owned`, configMap('owned', { a: '1' }), {
      fieldManager: 'flotilla-controller',
      force: false,
      answer: 'object',
    });
    assert.equal(first.status, 201);
    const managed = ((first.body?.metadata as JsonObject).managedFields ?? []) as JsonObject[];
    assert.deepEqual(
      managed.map((m) => [m.manager, m.operation, Object.keys((m.fieldsV1 as JsonObject)['f:data'] as JsonObject)]),
      [['flotilla-controller', 'Apply', ['f:a']]],
    );
    const other = { fieldManager: 'someone', force: false };
    const refused = await serverSideApply(client, `${CM_PATH}/owned`, configMap('owned', { a: '2' }), other);
    assert.equal(refused.status, 409);
    assert.match(JSON.stringify(refused.body), /conflict with \\"flotilla-controller\\": \.data\.a/);
    const forced = await serverSideApply(client, `${CM_PATH}/owned`, configMap('owned', { a: '2' }), {
      ...other,
      force: true,
    });
    assert.equal(forced.status, 200);
    assert.equal((forced.body as { kind?: string }).kind, 'PartialObjectMetadata');
    assert.deepEqual(fake.get('v1', 'ConfigMap', 'demo', 'owned')?.data, { a: '2' });
  });

  it('lists metadata only when asked, with the store resourceVersion', async () => {
    fake.put(configMap('listed', { b: '1' }));
    const list = await client.requestOk<{ kind: string; metadata: { resourceVersion: string }; items: JsonObject[] }>({
      method: 'GET',
      path: CM_PATH,
      accept: METADATA_ACCEPT,
    });
    assert.equal(list.body?.kind, 'PartialObjectMetadataList');
    assert.ok(Number(list.body?.metadata.resourceVersion) > 0);
    const listed = list.body?.items.find((i) => (i.metadata as JsonObject).name === 'listed');
    assert.deepEqual(Object.keys(listed ?? {}).sort(), ['apiVersion', 'kind', 'metadata']);
    assert.equal(fake.count('v1', 'ConfigMap', 'demo'), list.body?.items.length);
  });

  it('streams a watch from a resourceVersion, ends it at timeoutSeconds, and feeds an Informer', async () => {
    const start = fake.put(configMap('watched', { c: '0' }));
    const rv = String((start.metadata as JsonObject).resourceVersion);
    const watcher = new Watcher(kc);
    const stop = new AbortController();
    const seen: WatchEvent[] = [];
    const ended = watcher.watch(
      {
        path: CM_PATH,
        query: { resourceVersion: rv, timeoutSeconds: '1' },
        idleTimeoutMs: 30_000,
        signal: stop.signal,
      },
      (e) => seen.push(e),
    );
    fake.put(configMap('watched', { c: '1' }));
    await ended; // the server ends it after a second; a watch that never ends fails the test by its timeout
    assert.deepEqual(
      seen.map((e) => [e.type, (e.object.metadata as JsonObject).name, (e.object.data as JsonObject).c]),
      [['MODIFIED', 'watched', '1']],
    );
    assert.equal(server.openWatches, 0);

    const informer = new Informer({
      name: 'light1 configmaps',
      source: listWatchSource(client, watcher),
      path: CM_PATH,
      apiVersion: 'v1',
      kind: 'ConfigMap',
    });
    const running = informer.start(stop.signal);
    try {
      await eventually(
        () => informer.synced,
        (s) => s,
        10_000,
        10,
      );
      fake.put(configMap('informed', { d: '1' }));
      const got = await eventually(
        () => informer.get('demo/informed'),
        (o) => o !== undefined,
        10_000,
        10,
      );
      assert.deepEqual(got?.data, { d: '1' });
    } finally {
      stop.abort();
      await running;
      watcher.close();
    }
  });

  it('answers a watch from a compacted resourceVersion with an ERROR event carrying 410, as kube-apiserver does', async () => {
    const old = String((fake.put(configMap('compacted', { e: '0' })).metadata as JsonObject).resourceVersion);
    fake.put(configMap('compacted', { e: '1' }));
    fake.compact();
    const watcher = new Watcher(kc);
    const seen: WatchEvent[] = [];
    await watcher.watch(
      { path: CM_PATH, query: { resourceVersion: old }, idleTimeoutMs: 30_000, signal: new AbortController().signal },
      (e) => seen.push(e),
    );
    watcher.close();
    assert.deepEqual(
      seen.map((e) => [e.type, e.object.code, e.object.reason]),
      [['ERROR', 410, 'Expired']],
    );
  });

  it('keeps and tells each request it cannot serve, where a missing object is an ordinary 404', async () => {
    const missing = await client.request({ method: 'GET', path: `${CM_PATH}/nothing-here` });
    assert.equal(missing.status, 404);
    assert.deepEqual(told, []);
    const unknown = await client.request({ method: 'GET', path: '/apis/apps/v1/namespaces/demo/deployments/x/scale' });
    assert.equal(unknown.status, 404);
    const badWatch = new Watcher(kc);
    await assert.rejects(
      badWatch.watch(
        { path: '/apis/example.io/v1/widgets', query: {}, idleTimeoutMs: 30_000, signal: new AbortController().signal },
        () => undefined,
      ),
      /could not find the requested resource/,
    );
    badWatch.close();
    assert.deepEqual(told, [
      'GET /apis/apps/v1/namespaces/demo/deployments/x/scale: the server could not find the requested resource (/apis/apps/v1/namespaces/demo/deployments/x/scale)',
      'WATCH /apis/example.io/v1/widgets: no such collection',
    ]);
    assert.deepEqual(fake.unserved, told);
    assert.deepEqual(fake.requests, []);
    assert.ok(server.served.requests >= 10 && server.served.watches >= 3, JSON.stringify(server.served));
  });
});
