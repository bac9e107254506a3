import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApiError, TransportError } from './errors.js';
import { Informer, type ListWatchSource } from './informer.js';
import type { JsonObject } from './objects.js';
import type { WatchEvent, WatchRequest } from './watch.js';

const cm = (name: string, rv: string, data = 'x'): JsonObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', resourceVersion: rv },
  data: { v: data },
});

type Step = { events?: WatchEvent[]; error?: Error };

/** A source that serves `lists` in turn and plays one step per watch call; records what was asked. */
function scripted(lists: Array<{ items: JsonObject[]; rv: string } | Error>, steps: Step[]) {
  const calls: Array<{ kind: 'list' } | { kind: 'watch'; rv: string | undefined }> = [];
  let done: () => void = () => undefined;
  const finished = new Promise<void>((r) => (done = r));
  const source: ListWatchSource = {
    list(_path, _query, _signal) {
      calls.push({ kind: 'list' });
      const next = lists.shift();
      if (!next) throw new Error('no more lists');
      if (next instanceof Error) return Promise.reject(next);
      // listed items come without apiVersion and kind
      return Promise.resolve({
        items: next.items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest),
        resourceVersion: next.rv,
      });
    },
    async watch(req: WatchRequest, onEvent) {
      calls.push({ kind: 'watch', rv: req.query.resourceVersion });
      const step = steps.shift();
      if (!step) {
        done();
        await new Promise<void>((r) => req.signal.addEventListener('abort', () => r(), { once: true }));
        return;
      }
      for (const e of step.events ?? []) onEvent(e);
      if (step.error) throw step.error;
    },
  };
  return { source, calls, finished };
}

function run(source: ListWatchSource) {
  const seen: string[] = [];
  const errors: unknown[] = [];
  const informer = new Informer({
    name: 'test',
    source,
    path: '/api/v1/configmaps',
    apiVersion: 'v1',
    kind: 'ConfigMap',
    backoff: { baseMs: 1, maxMs: 2 },
    handlers: {
      onAdd: (o) => seen.push(`add ${String((o.metadata as JsonObject).name)}`),
      onUpdate: (o, old) =>
        seen.push(
          `update ${String((o.metadata as JsonObject).name)} ${String((old.metadata as JsonObject).resourceVersion)}->${String((o.metadata as JsonObject).resourceVersion)}`,
        ),
      onDelete: (o) => seen.push(`delete ${String((o.metadata as JsonObject).name)}`),
    },
    onError: (e) => errors.push(e),
  });
  return { informer, seen, errors };
}

void describe('Informer', () => {
  void it('lists, then keeps the cache current from watch events, resuming from the last resourceVersion', async () => {
    const s = scripted(
      [{ items: [cm('a', '1')], rv: '10' }],
      [
        {
          events: [
            { type: 'ADDED', object: cm('b', '11') },
            { type: 'MODIFIED', object: cm('a', '12', 'y') },
            { type: 'BOOKMARK', object: { metadata: { resourceVersion: '13' } } },
          ],
        },
        { events: [{ type: 'DELETED', object: cm('b', '14') }] },
      ],
    );
    const { informer, seen } = run(s.source);
    const ac = new AbortController();
    const running = informer.start(ac.signal);
    await s.finished;
    ac.abort();
    await running;
    assert.equal(informer.synced, true);
    assert.deepEqual(seen, ['add a', 'add b', 'update a 1->12', 'delete b']);
    assert.deepEqual(s.calls, [
      { kind: 'list' },
      { kind: 'watch', rv: '10' },
      { kind: 'watch', rv: '13' },
      { kind: 'watch', rv: '14' },
    ]);
    assert.deepEqual(informer.get('ns/a')?.data, { v: 'y' });
    assert.equal(informer.get('ns/a')?.kind, 'ConfigMap', 'listed items get their kind');
  });

  void it('transforms listed and watched objects before caching them and handing them on', async () => {
    const s = scripted(
      [{ items: [cm('a', '1')], rv: '10' }],
      [
        {
          events: [
            { type: 'ADDED', object: cm('b', '11') },
            { type: 'MODIFIED', object: cm('a', '12', 'y') },
          ],
        },
      ],
    );
    const handed: unknown[] = [];
    const informer = new Informer({
      name: 'test',
      source: s.source,
      path: '/api/v1/configmaps',
      apiVersion: 'v1',
      kind: 'ConfigMap',
      transform: ({ data: _d, ...rest }) => ({ ...rest, slim: true }),
      handlers: { onAdd: (o) => handed.push(o.data ?? o.slim), onUpdate: (o) => handed.push(o.data ?? o.slim) },
    });
    const ac = new AbortController();
    const running = informer.start(ac.signal);
    await s.finished;
    ac.abort();
    await running;
    assert.deepEqual(handed, [true, true, true]);
    for (const k of ['ns/a', 'ns/b']) {
      assert.equal(informer.get(k)?.data, undefined, k);
      assert.equal(informer.get(k)?.slim, true, k);
    }
    assert.equal(informer.get('ns/a')?.kind, 'ConfigMap');
  });

  void it('caches each new object under the key cacheKey gives for its namespace/name', async () => {
    const s = scripted(
      [{ items: [cm('a', '1')], rv: '10' }],
      [
        {
          events: [
            { type: 'ADDED', object: cm('b', '11') },
            { type: 'MODIFIED', object: cm('a', '12', 'y') },
          ],
        },
      ],
    );
    const asked: string[] = [];
    const informer = new Informer({
      name: 'test',
      source: s.source,
      path: '/api/v1/configmaps',
      apiVersion: 'v1',
      kind: 'ConfigMap',
      cacheKey: (k) => {
        asked.push(k);
        return k;
      },
    });
    const ac = new AbortController();
    const running = informer.start(ac.signal);
    await s.finished;
    ac.abort();
    await running;
    // Listed a, watched b; a's change keeps the key it was cached under.
    assert.deepEqual(asked, ['ns/a', 'ns/b']);
    assert.deepEqual(informer.get('ns/a')?.data, { v: 'y' });
    assert.ok(informer.get('ns/b'));
  });

  void it('relists on 410 Gone and tells handlers what changed meanwhile', async () => {
    const s = scripted(
      [
        { items: [cm('a', '1'), cm('b', '2')], rv: '10' },
        { items: [cm('a', '1'), cm('c', '30')], rv: '31' },
        { items: [cm('a', '1'), cm('c', '30')], rv: '40' },
      ],
      [
        {
          events: [
            {
              type: 'ERROR',
              object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' },
            },
          ],
        },
        { error: new ApiError(410, 'Gone', 'gone') },
      ],
    );
    const { informer, seen, errors } = run(s.source);
    const ac = new AbortController();
    const running = informer.start(ac.signal);
    await s.finished;
    ac.abort();
    await running;
    // First 410 (an ERROR event) relists: b is gone, c is new; the second (an HTTP answer) relists again.
    assert.deepEqual(seen, ['add a', 'add b', 'add c', 'delete b']);
    assert.deepEqual(
      s.calls.map((c) => c.kind),
      ['list', 'watch', 'list', 'watch', 'list', 'watch'],
    );
    assert.equal(errors.length, 0, '410 is not a failure');
  });

  void it('retries any other failure with backoff, resuming the watch without a relist', async () => {
    const s = scripted(
      [new TransportError('connection refused', 'ECONNREFUSED'), { items: [cm('a', '1')], rv: '10' }],
      [
        { events: [{ type: 'MODIFIED', object: cm('a', '11') }], error: new TransportError('reset', 'ECONNRESET') },
        { error: new ApiError(403, 'Forbidden', 'forbidden') },
      ],
    );
    const { informer, seen, errors } = run(s.source);
    const ac = new AbortController();
    const running = informer.start(ac.signal);
    await s.finished;
    ac.abort();
    await running;
    assert.deepEqual(seen, ['add a', 'update a 1->11']);
    assert.deepEqual(s.calls, [
      { kind: 'list' },
      { kind: 'list' },
      { kind: 'watch', rv: '10' },
      { kind: 'watch', rv: '11' },
      { kind: 'watch', rv: '11' },
    ]);
    assert.equal(errors.length, 3);
  });

  void it('reports a throwing handler and carries on', async () => {
    const s = scripted([{ items: [cm('a', '1')], rv: '10' }], [{ events: [{ type: 'ADDED', object: cm('b', '11') }] }]);
    const errors: unknown[] = [];
    const informer = new Informer({
      name: 'test',
      source: s.source,
      path: '/x',
      apiVersion: 'v1',
      kind: 'ConfigMap',
      handlers: {
        onAdd: () => {
          throw new Error('boom');
        },
      },
      onError: (e) => errors.push(e),
    });
    const ac = new AbortController();
    const running = informer.start(ac.signal);
    await s.finished;
    ac.abort();
    await running;
    assert.equal(informer.size, 2);
    assert.equal(errors.length, 2);
  });
});
