// Binding and Work writes, on the controller run against in-memory apiservers: what the controller
// writes to the hub and to each member for one template, and how many writes — the first propagation,
// a change, a re-reconcile with nothing changed (no write anywhere) — and, for a cluster in Pull mode,
// the Work it writes in that cluster's namespace on the hub instead of writing to the cluster.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  bindingEntries,
  bindingOf,
  bindingTargets,
  cluster,
  configMap,
  holders,
  policy,
  until,
  withFleet,
  type Fleet,
  type Obj,
} from './fleet.js';

const MEMBERS = ['m1', 'm2'];

/** Writes (not reads, watches, Events, Cluster status or policy status) sent to `a` from request `from` on. */
function writes(a: Fleet['hub'], from = 0): string[] {
  return a.requests
    .slice(from)
    .filter((r) => r.method !== 'GET' && r.method !== 'WATCH')
    .filter(
      (r) => !r.path.includes('/events') && !r.path.includes('/clusters/') && !r.path.includes('propagationpolicies'),
    )
    .map((r) => `${r.method} ${r.path.replace(/^.*\/(namespaces\/?|configmaps\/|resourcebindings\/|works\/)/, '$1')}`);
}

describe('binding and Work writes', () => {
  test('first propagation, a change, and a re-reconcile with nothing changed', async () => {
    await withFleet(
      {
        members: MEMBERS,
        hub: [...MEMBERS.map((m) => cluster(m)), policy('p', { names: ['cfg'], clusters: MEMBERS }), configMap('cfg')],
      },
      async (f) => {
        await until(
          'binding with both entries',
          () => bindingEntries(bindingOf(f, 'cfg')).size,
          (n) => n === 2,
        );
        await f.quiet();
        const b = bindingOf(f, 'cfg');
        assert.deepEqual(bindingTargets(b), MEMBERS);
        assert.deepEqual(
          [...bindingEntries(b).values()].map((e) => `${String(e.name)} ${String(e.state)}`),
          ['m1 Applied', 'm2 Applied'],
        );
        assert.deepEqual(((b?.spec ?? {}) as Obj).policy, {
          kind: 'PropagationPolicy',
          namespace: 'default',
          name: 'p',
        });
        // The hub: the claim record with the finalizer, the binding and its status; each member: the
        // namespace and the copy (how many times each: the next test).
        const distinct = (xs: string[]) => [...new Set(xs)].sort();
        assert.deepEqual(distinct(writes(f.hub)), [
          'PATCH configmaps/cfg',
          'PATCH resourcebindings/cfg-configmap',
          'PATCH resourcebindings/cfg-configmap/status',
        ]);
        const patches = f.hub.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/configmaps/cfg'));
        assert.deepEqual(
          distinct(patches.map((r) => Object.keys(((r.body as Obj).metadata ?? {}) as Obj).join())),
          ['labels,annotations,finalizers'],
          'the template is patched for its claim record and its finalizer only, in one patch',
        );
        for (const m of MEMBERS)
          assert.deepEqual(distinct(writes(f.member(m))), ['PATCH configmaps/cfg', 'POST namespaces'], m);

        // A change: applies of the copy on each member (how many: the next test); the binding is what it was.
        const at = {
          hub: f.hub.requests.length,
          m1: f.member('m1').requests.length,
          m2: f.member('m2').requests.length,
        };
        f.hub.edit('v1', 'ConfigMap', 'default', 'cfg', 'kubectl', (o) => (o.data = { k: 'v2' }));
        await until(
          'the change on both',
          () => MEMBERS.map((m) => (f.member(m).get('v1', 'ConfigMap', 'default', 'cfg')?.data as Obj).k).join(),
          (d) => d === 'v2,v2',
        );
        await f.quiet();
        for (const m of MEMBERS)
          assert.deepEqual(
            distinct(writes(f.member(m), at[m as 'm1' | 'm2'])),
            ['PATCH configmaps/cfg'],
            `${m}: the copy only`,
          );
        assert.deepEqual(distinct(writes(f.hub, at.hub)), [], 'the binding is what it was: no hub write');

        // Nothing changed for the template (a Cluster's unrelated label): reconciled again, nothing written.
        const again = {
          hub: f.hub.requests.length,
          m1: f.member('m1').requests.length,
          m2: f.member('m2').requests.length,
        };
        f.hub.edit(
          'cluster.flotilla.io/v1alpha1',
          'Cluster',
          undefined,
          'm1',
          'kubectl',
          (o) => ((o.metadata as Obj).labels = { team: 'a' }),
        );
        await f.quiet();
        assert.deepEqual(writes(f.hub, again.hub), [], 'no hub write');
        assert.deepEqual(
          [...writes(f.member('m1'), again.m1), ...writes(f.member('m2'), again.m2)],
          [],
          'no member write',
        );
        assert.deepEqual(holders(f, 'cfg'), MEMBERS);
      },
    );
  });

  test('first propagation: one patch for the claim and the finalizer, one apply per member (README: Requests per template)', async () => {
    await withFleet(
      {
        members: MEMBERS,
        hub: [...MEMBERS.map((m) => cluster(m)), policy('p', { names: ['cfg'], clusters: MEMBERS }), configMap('cfg')],
      },
      async (f) => {
        await until(
          'binding with both entries',
          () => bindingEntries(bindingOf(f, 'cfg')).size,
          (n) => n === 2,
        );
        await f.quiet();
        assert.deepEqual(
          {
            hub: writes(f.hub).sort(),
            m1: writes(f.member('m1')),
            m2: writes(f.member('m2')),
          },
          {
            hub: [
              'PATCH configmaps/cfg',
              'PATCH resourcebindings/cfg-configmap',
              'PATCH resourcebindings/cfg-configmap/status',
            ],
            m1: ['POST namespaces', 'PATCH configmaps/cfg'],
            m2: ['POST namespaces', 'PATCH configmaps/cfg'],
          },
        );
        const at = [f.member('m1').requests.length, f.member('m2').requests.length];
        f.hub.edit('v1', 'ConfigMap', 'default', 'cfg', 'kubectl', (o) => (o.data = { k: 'v2' }));
        await until(
          'the change on m1',
          () => (f.member('m1').get('v1', 'ConfigMap', 'default', 'cfg')?.data as Obj).k,
          (k) => k === 'v2',
        );
        await f.quiet();
        assert.deepEqual(
          [writes(f.member('m1'), at[0]), writes(f.member('m2'), at[1])],
          [['PATCH configmaps/cfg'], ['PATCH configmaps/cfg']],
        );
      },
    );
  });

  test("a Deployment's aggregated status: written once every member has reported, not from a part of them", async () => {
    const web: Obj = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default' },
      spec: { replicas: 1, template: { spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
      // What the hub says before the controller's first write: the members' copies say otherwise (nothing).
      status: { replicas: 5, readyReplicas: 5 },
    };
    const deployments = policy('p', { clusters: MEMBERS });
    (deployments.spec as Obj).resourceSelectors = [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }];
    await withFleet({ members: MEMBERS, hub: [...MEMBERS.map((m) => cluster(m)), deployments, web] }, async (f) => {
      const held = f.member('m2').hold((r) => r.method === 'PATCH' && r.path.endsWith('/deployments/web'));
      try {
        const statusWrites = () => f.hub.sent('PATCH', '/deployments/web/status');
        await held.reached;
        // m2 has not answered: the binding is written without it after a while, the template's status is not.
        await until(
          'the binding with m1 Applied and m2 Pending',
          () =>
            [...bindingEntries(f.hub.objects('work.flotilla.io/v1alpha1', 'ResourceBinding')[0]).values()].map(
              (e) => `${String(e.name)} ${String(e.state)}`,
            ),
          (es) => es.join() === 'm1 Applied,m2 Pending',
        );
        assert.equal(statusWrites().length, 0, 'no status from m1 alone');
        held.release();
        await until(
          'the binding with both Applied',
          () =>
            [...bindingEntries(f.hub.objects('work.flotilla.io/v1alpha1', 'ResourceBinding')[0]).values()].map((e) =>
              String(e.state),
            ),
          (es) => es.join() === 'Applied,Applied',
        );
        await f.quiet();
        assert.deepEqual(
          statusWrites().map((r) => (r.body as Obj).status),
          [{ replicas: 0, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0, unavailableReplicas: 0 }],
          'one status write, from both members',
        );
      } finally {
        // Never left held: the controller's stop waits for what it has in flight.
        held.release();
      }
    });
  });

  test('members slow alike (answering later than the wait for a partial binding): the binding status is written once, when both have reported', async () => {
    await withFleet(
      {
        members: MEMBERS,
        hub: [...MEMBERS.map((m) => cluster(m)), policy('p', { names: ['cfg'], clusters: MEMBERS }), configMap('cfg')],
      },
      async (f) => {
        const held = MEMBERS.map((m) =>
          f.member(m).hold((r) => r.method === 'PATCH' && r.path.endsWith('/configmaps/cfg')),
        );
        try {
          await Promise.all(held.map((h) => h.reached));
          // Longer than the wait for the members that have not reported, counted from the plan.
          await new Promise((r) => setTimeout(r, 1_500));
          for (const h of held) h.release();
          await until(
            'the binding with both Applied',
            () => [...bindingEntries(bindingOf(f, 'cfg')).values()].map((e) => String(e.state)).join(),
            (s) => s === 'Applied,Applied',
          );
          await f.quiet();
          assert.equal(f.hub.sent('PATCH', '/resourcebindings/cfg-configmap/status').length, 1);
        } finally {
          for (const h of held) h.release();
        }
      },
    );
  });

  test('a Pull cluster gets a Work in its namespace on the hub, and no request', async () => {
    await withFleet(
      {
        members: ['m1'],
        hub: [
          cluster('m1'),
          cluster('p1', { syncMode: 'Pull' }),
          policy('p', { names: ['cfg'], clusters: ['m1', 'p1'] }),
          configMap('cfg'),
        ],
      },
      async (f) => {
        const work = await until(
          'the Work',
          () => f.hub.objects('work.flotilla.io/v1alpha1', 'Work'),
          (ws) => ws.length === 1,
        );
        const w = work[0] ?? {};
        assert.equal((w.metadata as Obj).namespace, 'flotilla-es-p1');
        assert.ok(f.hub.get('v1', 'Namespace', undefined, 'flotilla-es-p1'), 'its namespace was created');
        const manifests = JSON.stringify(w.spec);
        assert.match(manifests, /"kind":"ConfigMap"/);
        assert.match(manifests, /"name":"cfg"/);
        assert.deepEqual(holders(f, 'cfg'), ['m1'], 'the push member got its copy');
        assert.deepEqual(bindingTargets(bindingOf(f, 'cfg')), ['m1', 'p1']);
      },
    );
  });
});
