// Finalizers and deletion, on the controller run against in-memory apiservers: the controller puts its
// finalizer on a claimed template before anything reaches a member; a deleted template's copies go from
// every member (preserveResourcesOnDeletion: false) or stay there released of Flotilla's ownership marks
// (true); then its binding goes and the finalizer is released, so the hub deletes it. A member that cannot
// be reached holds the finalizer until cleanupTimeoutMs, after which it is released all the same.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  FINALIZER,
  UID_LABEL,
  bindingEntries,
  bindingOf,
  cluster,
  configMap,
  copyOn,
  events,
  finalizersOf,
  holders,
  meta,
  policy,
  templateOnHub,
  until,
  withFleet,
} from './fleet.js';

const MEMBERS = ['m1', 'm2'];
const hubWith = (spec: Record<string, unknown> = {}) => [
  ...MEMBERS.map((m) => cluster(m)),
  policy('p', { names: ['cfg'], clusters: MEMBERS, spec }),
  configMap('cfg'),
];
const deleteTemplate = (f: Parameters<typeof holders>[0]) => f.hub.delete('v1', 'ConfigMap', 'default', 'cfg');
/** Deletes the template, and waits until the hub has let it go and the controller is quiet. */
async function deleteAndWait(f: Parameters<typeof holders>[0]): Promise<void> {
  deleteTemplate(f);
  await until(
    'the template gone from the hub',
    () => templateOnHub(f, 'cfg'),
    (t) => t === undefined,
  );
  await f.quiet();
}
/** The requests member `m` has been sent from request `from` on (watches and probes aside), as `METHOD name`. */
const sentTo = (f: Parameters<typeof holders>[0], m: string, from = 0) =>
  f
    .member(m)
    .requests.slice(from)
    .filter((r) => r.method !== 'WATCH' && r.path !== '/readyz')
    .map((r) => `${r.method} ${r.path.replace(/^.*\//, '')}`);

describe('finalizers and deletion', () => {
  test('a claimed template carries the finalizer; its copies carry its uid', async () => {
    await withFleet({ members: MEMBERS, hub: hubWith() }, async (f) => {
      await until(
        'copies',
        () => holders(f, 'cfg'),
        (h) => h.length === 2,
      );
      const t = templateOnHub(f, 'cfg');
      assert.deepEqual(finalizersOf(t), [FINALIZER]);
      for (const m of MEMBERS)
        assert.equal((meta(copyOn(f, m, 'cfg')).labels as Record<string, string>)[UID_LABEL], meta(t).uid);
      // The finalizer was on the hub before the first write to a member.
      const finalizerAt = f.hub.requests.findIndex(
        (r) => r.method === 'PATCH' && r.path.endsWith('/configmaps/cfg') && JSON.stringify(r.body).includes(FINALIZER),
      );
      assert.ok(finalizerAt >= 0, 'the finalizer was patched onto the template');
    });
  });

  const MODES = [
    {
      preserve: false,
      on: [] as string[],
      event: 'Pruned',
    },
    {
      preserve: true,
      on: MEMBERS,
      event: 'Preserved',
    },
  ];
  for (const mode of MODES)
    test(`deleted with preserveResourcesOnDeletion ${String(mode.preserve)}: copies ${mode.preserve ? 'stay, released' : 'go'}; binding and finalizer go`, async () => {
      await withFleet({ members: MEMBERS, hub: hubWith({ preserveResourcesOnDeletion: mode.preserve }) }, async (f) => {
        await until(
          'copies',
          () => holders(f, 'cfg'),
          (h) => h.length === 2,
        );
        await until(
          'binding',
          () => bindingOf(f, 'cfg'),
          (b) => b !== undefined,
        );
        await f.quiet();
        deleteTemplate(f);
        await until(
          'the template gone from the hub',
          () => templateOnHub(f, 'cfg'),
          (t) => t === undefined,
        );
        assert.deepEqual(holders(f, 'cfg'), mode.on, 'copies left on the members');
        assert.equal(bindingOf(f, 'cfg'), undefined, 'the binding is deleted');
        for (const m of mode.on) {
          const labels = (meta(copyOn(f, m, 'cfg')).labels ?? {}) as Record<string, string>;
          assert.deepEqual(
            Object.keys(labels).filter((l) => l.startsWith('flotilla.io/')),
            [],
            `${m}: released of Flotilla's labels`,
          );
          assert.deepEqual(copyOn(f, m, 'cfg')?.data, { k: 'v' }, `${m}: content kept`);
        }
        await until(
          'the Event',
          () => events(f, mode.event).length,
          (n) => n === 1,
        );
      });
    });

  for (const preserve of [false, true])
    test(`deleted (preserveResourcesOnDeletion ${String(preserve)}): each member gets one request, the ${preserve ? 'release' : 'delete'}, decided from its watch (no GET)`, async () => {
      await withFleet({ members: MEMBERS, hub: hubWith({ preserveResourcesOnDeletion: preserve }) }, async (f) => {
        await until(
          'the binding with both entries',
          () => bindingEntries(bindingOf(f, 'cfg')).size,
          (n) => n === 2,
        );
        await f.quiet();
        const at = MEMBERS.map((m) => f.member(m).requests.length);
        await deleteAndWait(f);
        const sent = MEMBERS.map((m, i) => sentTo(f, m, at[i]));
        const one = preserve ? 'PATCH cfg' : 'DELETE cfg';
        assert.deepEqual(sent, [[one], [one]]);
        assert.deepEqual(holders(f, 'cfg'), preserve ? MEMBERS : []);
      });
    });

  test('a copy changed on a member after its watch last showed it is decided again from the member: taken over by someone else, it stays', async () => {
    await withFleet({ members: MEMBERS, hub: hubWith() }, async (f) => {
      await until(
        'the binding with both entries',
        () => bindingEntries(bindingOf(f, 'cfg')).size,
        (n) => n === 2,
      );
      await f.quiet();
      const at = f.member('m1').requests.length;
      // As m1 receives the delete, the copy has just been taken over there: the delete was decided on an
      // older resourceVersion.
      let taken = false;
      f.member('m1').hook = (r) => {
        if (taken || r.method !== 'DELETE' || !r.path.endsWith('/configmaps/cfg')) return undefined;
        taken = true;
        f.member('m1').edit('v1', 'ConfigMap', 'default', 'cfg', 'someone', (o) => {
          (o.metadata as Record<string, unknown>).labels = { team: 'a' };
          (o.metadata as Record<string, unknown>).annotations = {};
        });
        return undefined;
      };
      await deleteAndWait(f);
      assert.deepEqual(holders(f, 'cfg'), ['m1'], "m1's copy is someone else's now: it stays");
      assert.deepEqual(
        sentTo(f, 'm1', at),
        ['DELETE cfg', 'GET cfg'],
        'the delete refused (another resourceVersion), the member asked',
      );
    });
  });

  test('an unreachable member holds the finalizer; reachable again, its copy goes and the finalizer is released', async () => {
    await withFleet({ members: MEMBERS, hub: hubWith(), options: { probeIntervalMs: 50 } }, async (f) => {
      await until(
        'copies',
        () => holders(f, 'cfg'),
        (h) => h.length === 2,
      );
      f.member('m2').hook = () => 'unreachable';
      await f.quiet();
      deleteTemplate(f);
      await until(
        'm1 cleaned',
        () => holders(f, 'cfg'),
        (h) => h.join() === 'm2',
      );
      await until(
        'the wait is logged',
        () => f.logged('members not cleaned yet').length,
        (n) => n > 0,
      );
      const held = templateOnHub(f, 'cfg');
      assert.ok(held, 'the template is still on the hub');
      assert.deepEqual(finalizersOf(held), [FINALIZER], 'held by the finalizer');
      assert.equal(typeof meta(held).deletionTimestamp, 'string');
      f.member('m2').hook = undefined;
      await until(
        'the template gone',
        () => templateOnHub(f, 'cfg'),
        (t) => t === undefined,
      );
      assert.deepEqual(holders(f, 'cfg'), [], 'm2 cleaned once reachable');
    });
  });

  test('past cleanupTimeoutMs the finalizer is released although a member could not be cleaned', async () => {
    await withFleet({ members: MEMBERS, hub: hubWith(), options: { cleanupTimeoutMs: 0 } }, async (f) => {
      await until(
        'copies',
        () => holders(f, 'cfg'),
        (h) => h.length === 2,
      );
      f.member('m2').hook = () => 'unreachable';
      await f.quiet();
      deleteTemplate(f);
      await until(
        'the template gone',
        () => templateOnHub(f, 'cfg'),
        (t) => t === undefined,
      );
      assert.deepEqual(holders(f, 'cfg'), ['m2'], 'the unreachable member keeps its copy');
      await f.quiet();
      const released = f.logged('releasing the finalizer although some members could not be cleaned', 'error');
      assert.equal(released.length, 1, 'the release is logged as an error, once');
      assert.match(JSON.stringify(released[0]?.fields.members), /m2: /, 'the log names the member not cleaned');
    });
  });

  test("deleted while a member's apply of its first plan is in flight: the cleanup waits for it, and the copy goes", async () => {
    await withFleet({ members: MEMBERS, hub: hubWith() }, async (f) => {
      // m2 has received the apply of the first plan and not carried it out yet.
      const held = f.member('m2').hold((r) => r.method === 'PATCH' && r.path.endsWith('/configmaps/cfg'));
      try {
        await held.reached;
        await until(
          'the copy on m1',
          () => holders(f, 'cfg'),
          (h) => h.join() === 'm1',
        );
        deleteTemplate(f);
        await until(
          'm1 cleaned',
          () => holders(f, 'cfg'),
          (h) => h.length === 0,
        );
        await f.quiet();
        assert.deepEqual(finalizersOf(templateOnHub(f, 'cfg')), [FINALIZER], 'the finalizer waits for m2');
        held.release();
        await until(
          'the template gone',
          () => templateOnHub(f, 'cfg'),
          (t) => t === undefined,
        );
        await f.quiet();
        assert.deepEqual(holders(f, 'cfg'), [], 'no copy left on m2');
        // The copy m2's watch had not shown yet when the cleanup came: its event waited for, not a read.
        assert.deepEqual(
          f
            .member('m2')
            .requests.filter((r) => r.path.endsWith('/configmaps/cfg') && r.method !== 'WATCH')
            .map((r) => `${r.method}${r.query.get('resourceVersion') === '0' ? ' (before the create)' : ''}`),
          ['GET (before the create)', 'PATCH', 'DELETE'],
        );
      } finally {
        // Never left held: the controller's stop waits for what it has in flight.
        held.release();
      }
    });
  });

  test('a template no policy claims gets no finalizer and no binding', async () => {
    await withFleet({ members: MEMBERS, hub: [...hubWith(), configMap('other')] }, async (f) => {
      await until(
        'cfg propagated',
        () => holders(f, 'cfg'),
        (h) => h.length === 2,
      );
      assert.deepEqual(finalizersOf(templateOnHub(f, 'other')), []);
      assert.equal(bindingOf(f, 'other'), undefined);
      assert.deepEqual(holders(f, 'other'), []);
    });
  });
});
