// Agent decisions (pull mode), on in-memory apiservers: the controller writes a Pull cluster's share of a
// template as a Work in that cluster's namespace on the hub; the agent of that cluster (the same
// Controller, run with `agent`) applies what its Work says to its own cluster, reports in the Work's
// status (which the binding shows) and follows a change. An agent applies nothing another cluster's Work says.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { bindingEntries, bindingOf, cluster, configMap, holders, policy, until, withFleet, type Obj } from './fleet.js';

describe('agent decisions (pull mode)', () => {
  test('the agent applies its Work to its own cluster, reports it, follows a change, and touches no other cluster', async () => {
    await withFleet(
      {
        members: ['p1', 'p2'],
        pushMembers: [],
        hub: [
          cluster('p1', { syncMode: 'Pull' }),
          cluster('p2', { syncMode: 'Pull' }),
          policy('p', { names: ['cfg'], clusters: ['p1', 'p2'] }),
          configMap('cfg'),
        ],
      },
      async (f) => {
        f.start({ agent: { cluster: 'p1' } }, ['p1']);
        await until(
          'the Works',
          () => f.hub.objects('work.flotilla.io/v1alpha1', 'Work').length,
          (n) => n === 2,
        );
        await until(
          'p1 holds its copy',
          () => holders(f, 'cfg'),
          (h) => h.join() === 'p1',
        );
        assert.deepEqual((f.member('p1').get('v1', 'ConfigMap', 'default', 'cfg')?.data as Obj).k, 'v');
        await until(
          'the binding shows the agent report',
          () => bindingEntries(bindingOf(f, 'cfg')).get('p1')?.state,
          (s) => s === 'Applied',
        );
        await f.quiet();
        assert.deepEqual(holders(f, 'cfg'), ['p1'], 'p2 has no agent here: nothing reaches it');
        assert.equal(
          f.member('p2').requests.filter((r) => r.path !== '/readyz').length,
          0,
          'the p1 agent sends nothing to p2',
        );
        f.hub.edit('v1', 'ConfigMap', 'default', 'cfg', 'kubectl', (o) => (o.data = { k: 'v2' }));
        await until(
          'the change reaches p1',
          () => (f.member('p1').get('v1', 'ConfigMap', 'default', 'cfg')?.data as Obj).k,
          (k) => k === 'v2',
        );
      },
    );
  });
});
