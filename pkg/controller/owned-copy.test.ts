// A member's copies kept as digests (owned-copy.ts, owned-watches.ts, Member.apply): what the watch cache
// holds of an applied object, and drift told from the digest of the controller's fields — on an in-memory
// apiserver that keeps field ownership as server-side apply does (test/fake-apiserver.ts).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { CORE_KINDS, FakeApiserver, type Obj } from '../../test/fake-apiserver.js';
import { eventually } from '../../test/eventually.js';
import { memberOn } from '../../test/fake-member.js';
import { KubeClient } from '../kube/client.js';
import { serverSideApply } from '../kube/delivery.js';
import type { JsonObject } from '../kube/objects.js';
import { copyDigest, keptCopy, OWNED_DIGEST } from './owned-copy.js';
import { TEMPLATE_ANNOTATION, TEMPLATE_UID_LABEL, type TemplateIdentity } from './ownership.js';

const T: TemplateIdentity = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  namespace: 'default',
  name: 'web',
  uid: 'uid-web',
};
const PATH = '/apis/apps/v1/namespaces/default/deployments/web';

function desired(replicas = 2): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
    },
  };
}

describe('member copies kept as digests', () => {
  const fake = new FakeApiserver({ server: 'https://m1.test:6443', kinds: CORE_KINDS });
  /** A Member `m1` on the fake apiserver, its owned events pushed to `events`. */
  const member = (events: JsonObject[], concurrency: number) =>
    memberOn(fake, { concurrency, onOwnedEvent: (o) => events.push(o) });
  const events: JsonObject[] = [];
  const m = member(events, 2);
  const other = new KubeClient(fake, { concurrency: 1 });
  const signal = new AbortController().signal;
  const live = () => fake.get('apps/v1', 'Deployment', 'default', 'web') ?? {};
  const rv = (o: Obj | undefined) => (o?.metadata as Obj | undefined)?.resourceVersion;
  const cached = () => m.ownedObjects().objects[0]?.object;
  /** Waits until the watch cache holds what the apiserver holds now. */
  const cacheCaughtUp = async () => {
    const want = rv(live());
    const got = await eventually(
      () => rv(cached()),
      (v) => v === want,
      5_000,
      5,
    );
    assert.equal(got, want, 'the watch cache caught up with the apiserver');
  };
  /** Requests to the Deployment itself (not the watch) from `from` on. */
  const writes = (from: number) =>
    fake.requests.slice(from).filter((r) => r.path.startsWith(PATH) && r.method !== 'GET' && r.method !== 'WATCH');
  const applyAgain = async () => {
    const from = fake.requests.length;
    const out = await m.apply(desired(), T, 'Abort', signal);
    assert.equal(out.state, 'Applied');
    return { changed: out.state === 'Applied' && out.changed, writes: writes(from).map((r) => r.method) };
  };

  before(async () => {
    const out = await m.apply(desired(), T, 'Abort', signal);
    assert.equal(out.state, 'Applied');
    await cacheCaughtUp();
  });
  after(async () => {
    await m.close();
    await other.close();
  });

  it('the watch cache holds identity, marks, spec.replicas, status and the digest; not the spec or field sets', () => {
    const copy = cached() ?? {};
    const meta = live().metadata as Obj;
    assert.deepEqual(copy, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: 'web',
        namespace: 'default',
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
        generation: meta.generation,
        labels: { [TEMPLATE_UID_LABEL]: 'uid-web' },
        annotations: { [TEMPLATE_ANNOTATION]: 'apps/v1/Deployment default/web' },
      },
      spec: { replicas: 2 },
      [OWNED_DIGEST]: copyDigest(copy),
    });
    assert.match(copyDigest(copy) ?? '', /^[A-Za-z0-9_-]{22}$/);
  });

  it('an unchanged apply sends nothing', async () => {
    assert.deepEqual(await applyAgain(), { changed: false, writes: [] });
  });

  it('status written on the member: an event (READY follows it), not drift', async () => {
    const seen = events.length;
    const res = await serverSideApply(
      other,
      `${PATH}/status`,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'default' },
        status: { readyReplicas: 2 },
      },
      { fieldManager: 'kube-controller-manager', force: true },
    );
    assert.equal(res.status, 200);
    await cacheCaughtUp();
    assert.deepEqual(cached()?.status, { readyReplicas: 2 });
    assert.equal(events.length, seen + 1, 'the status change is an event');
    assert.deepEqual(await applyAgain(), { changed: false, writes: [] });
  });

  it("a field the controller does not own changed (another manager's label): no event, not drift", async () => {
    const seen = events.length;
    fake.edit('apps/v1', 'Deployment', 'default', 'web', 'kubectl-label', (o) => {
      ((o.metadata as Obj).labels as Obj).team = 'a';
    });
    await cacheCaughtUp();
    assert.equal(events.length, seen, 'nothing the controller keeps changed');
    assert.deepEqual(await applyAgain(), { changed: false, writes: [] });
  });

  it('only managedFields changed (another manager applies the same value): no event, not drift', async () => {
    const seen = events.length;
    const before = JSON.stringify((live().metadata as Obj).managedFields);
    const res = await serverSideApply(
      other,
      PATH,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'default' },
        spec: { replicas: 2 },
      },
      { fieldManager: 'sharer', force: false },
    );
    assert.equal(res.status, 200);
    assert.notEqual(JSON.stringify((live().metadata as Obj).managedFields), before, 'managedFields changed');
    await cacheCaughtUp();
    assert.equal(events.length, seen, 'nothing the controller keeps changed');
    assert.deepEqual(await applyAgain(), { changed: false, writes: [] });
  });

  it('a field the controller owns changed on the member: an event, and the next apply puts it back', async () => {
    const seen = events.length;
    fake.edit('apps/v1', 'Deployment', 'default', 'web', 'kubectl-edit', (o) => {
      const containers = ((((o.spec as Obj).template as Obj).spec as Obj).containers ?? []) as Obj[];
      if (containers[0]) containers[0].image = 'nginx:drifted';
    });
    await cacheCaughtUp();
    assert.equal(events.length, seen + 1, 'the drift is an event');
    assert.deepEqual(await applyAgain(), { changed: true, writes: ['PATCH'] });
    const containers = ((((live().spec as Obj).template as Obj).spec as Obj).containers ?? []) as Obj[];
    assert.equal(containers[0]?.image, 'nginx:1.27', 'put back');
    await cacheCaughtUp();
    assert.deepEqual(await applyAgain(), { changed: false, writes: [] }, 'and then unchanged again');
  });

  it("a copy first seen by a watch's list with a status: an event (the status may be newer than the apply's answer)", async () => {
    // Another process's watch starts with the copy already there, its status written since the apply.
    const seenBy: JsonObject[] = [];
    const fresh = member(seenBy, 1);
    try {
      assert.equal((await fresh.apply(desired(), T, 'Abort', signal)).state, 'Applied');
      const got = await eventually(
        () => Promise.resolve(seenBy.length),
        (n) => n > 0,
        5_000,
        5,
      );
      assert.equal(got, 1);
      assert.deepEqual(seenBy[0]?.status, { readyReplicas: 2 });
    } finally {
      await fresh.close();
    }
  });

  it('a field the controller owns removed on the member: drift, put back', async () => {
    fake.edit('apps/v1', 'Deployment', 'default', 'web', 'kubectl-edit', (o) => {
      delete ((o.metadata as Obj).labels as Obj).app;
    });
    await cacheCaughtUp();
    assert.deepEqual(await applyAgain(), { changed: true, writes: ['PATCH'] });
    assert.equal(((live().metadata as Obj).labels as Obj).app, 'web');
  });
});

describe('keptCopy: what every member keeps alike is kept once', () => {
  it("two members' copies of a template share their marks (one label map, one annotation map)", () => {
    const copyOn = (uid: string, rv: string): JsonObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cfg',
        namespace: 'default',
        uid,
        resourceVersion: rv,
        labels: { [TEMPLATE_UID_LABEL]: 'template-uid', other: 'x' },
        annotations: { [TEMPLATE_ANNOTATION]: 'v1/ConfigMap default/cfg' },
      },
      data: { k: 'v' },
    });
    const meta = (o: JsonObject) => o.metadata as JsonObject;
    const a = keptCopy(copyOn('uid-a', '1'), 'v1', 'ConfigMap');
    const b = keptCopy(copyOn('uid-b', '7'), 'v1', 'ConfigMap');
    assert.deepEqual(meta(a).labels, { [TEMPLATE_UID_LABEL]: 'template-uid' });
    assert.equal(meta(a).labels, meta(b).labels);
    assert.equal(meta(a).annotations, meta(b).annotations);
    assert.deepEqual([meta(a).uid, meta(b).uid], ['uid-a', 'uid-b']);
  });
});
