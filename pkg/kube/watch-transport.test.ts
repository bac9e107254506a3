// A Watcher handed a Transport streams through it (the seam unit tests use to run informers, and the
// controller, on test/fake-apiserver.ts): an informer over a KubeClient and a Watcher of one
// FakeApiserver lists, then sees each change, including a deletion held by a finalizer.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { eventually } from '../../test/eventually.js';
import { FakeApiserver } from '../../test/fake-apiserver.js';
import { KubeClient } from './client.js';
import { Informer, listWatchSource } from './informer.js';
import type { JsonObject } from './objects.js';
import { Watcher } from './watch.js';

const cm = (name: string, data: Record<string, string>, extra: JsonObject = {}): JsonObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', ...extra },
  data,
});

describe('a Watcher over a Transport', () => {
  test('an informer lists, then sees adds, updates and deletes in order', async () => {
    const fake = new FakeApiserver();
    fake.put(cm('a', { v: '1' }));
    const seen: string[] = [];
    const stop = new AbortController();
    const informer = new Informer({
      name: 'test',
      source: listWatchSource(new KubeClient(fake, { concurrency: 1 }), new Watcher(fake)),
      path: '/api/v1/configmaps',
      apiVersion: 'v1',
      kind: 'ConfigMap',
      labelSelector: 'mine',
      handlers: {
        onAdd: (o) => seen.push(`add ${String((o.metadata as JsonObject).name)}`),
        onUpdate: (o) => seen.push(`update ${String((o.metadata as JsonObject).name)}`),
        onDelete: (o) => seen.push(`delete ${String((o.metadata as JsonObject).name)}`),
      },
    });
    const running = informer.start(stop.signal);
    try {
      await informer.waitForSync(stop.signal);
      assert.deepEqual(seen, [], 'a is not labelled: not listed');
      fake.put(cm('b', { v: '1' }, { labels: { mine: 'yes' } }));
      fake.put(cm('c', { v: '1' }, { labels: { mine: 'yes' }, finalizers: ['x/hold'] }));
      fake.edit('v1', 'ConfigMap', 'default', 'b', 'kubectl', (o) => ((o.data as JsonObject).v = '2'));
      assert.equal(fake.delete('v1', 'ConfigMap', 'default', 'b'), true);
      assert.equal(fake.delete('v1', 'ConfigMap', 'default', 'c'), true, 'accepted, held by its finalizer');
      const held = fake.get('v1', 'ConfigMap', 'default', 'c');
      assert.equal(typeof (held?.metadata as JsonObject).deletionTimestamp, 'string');
      fake.edit('v1', 'ConfigMap', 'default', 'c', 'kubectl', (o) => ((o.metadata as JsonObject).finalizers = []));
      assert.equal(fake.get('v1', 'ConfigMap', 'default', 'c'), undefined, 'gone once its finalizers are');
      const want = ['add b', 'add c', 'update b', 'delete b', 'update c', 'delete c'];
      await eventually(
        () => seen,
        (s) => s.length >= want.length,
        5_000,
        5,
      );
      assert.deepEqual(seen, want);
    } finally {
      stop.abort();
      await running;
    }
    assert.equal(fake.watches, 0, 'the watch ended with the signal');
  });

  test('a watch from a resourceVersion older than the kept changes is 410 Gone', async () => {
    const fake = new FakeApiserver();
    fake.put(cm('a', { v: '1' }));
    fake.compact();
    const watcher = new Watcher(fake);
    await assert.rejects(
      watcher.watch(
        {
          path: '/api/v1/configmaps',
          query: { resourceVersion: '1' },
          idleTimeoutMs: 1000,
          signal: AbortSignal.timeout(1000),
        },
        () => undefined,
      ),
      (e: unknown) => (e as { status?: number }).status === 410,
    );
  });
});
