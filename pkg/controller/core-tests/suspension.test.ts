// Suspension, on the controller run against in-memory apiservers: a policy's `suspension.dispatching`
// holds every cluster, `suspension.dispatchingOnClusters.clusterNames` the clusters named; nothing is
// written there (a first copy, a change) while the binding says Suspended; lifting it delivers what changed
// meanwhile.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  bindingEntries,
  bindingOf,
  cluster,
  configMap,
  events,
  policy,
  until,
  withFleet,
  type Fleet,
  type Obj,
} from './fleet.js';

const MEMBERS = ['m1', 'm2'];

const dataOn = (f: Fleet, m: string): string => {
  const k = (f.member(m).get('v1', 'ConfigMap', 'default', 'cfg')?.data as Obj | undefined)?.k;
  return typeof k === 'string' ? k : '-';
};
const dataEverywhere = (f: Fleet) => MEMBERS.map((m) => dataOn(f, m)).join();

function suspend(f: Fleet, suspension: Obj | undefined): void {
  f.hub.edit('policy.flotilla.io/v1beta1', 'PropagationPolicy', 'default', 'p', 'kubectl', (o) => {
    const spec = o.spec as Obj;
    if (suspension) spec.suspension = suspension;
    else delete spec.suspension;
  });
}

function suspendedCondition(b: Obj | undefined): Obj | undefined {
  const conditions = ((b?.status ?? {}) as Obj).conditions;
  return (Array.isArray(conditions) ? (conditions as Obj[]) : []).find((c) => c.type === 'Suspended');
}

interface Case {
  name: string;
  suspension: Obj;
  /** Each member's data once the template changed to v2 while suspended ('-': no copy). */
  whileSuspended: string;
  /** Members whose binding entry says Suspended. */
  held: string[];
}

const CASES: Case[] = [
  {
    name: 'dispatching: true holds every cluster',
    suspension: { dispatching: true },
    whileSuspended: 'v1,v1',
    held: MEMBERS,
  },
  {
    name: 'dispatchingOnClusters holds the clusters it names',
    suspension: { dispatchingOnClusters: { clusterNames: ['m2'] } },
    whileSuspended: 'v2,v1',
    held: ['m2'],
  },
];

describe('suspension', () => {
  for (const c of CASES)
    test(`${c.name}: a change is not written there until it is lifted`, async () => {
      await withFleet(
        {
          members: MEMBERS,
          hub: [
            ...MEMBERS.map((m) => cluster(m)),
            policy('p', { names: ['cfg'], clusters: MEMBERS }),
            configMap('cfg', { k: 'v1' }),
          ],
        },
        async (f) => {
          await until(
            'first copies',
            () => dataEverywhere(f),
            (d) => d === 'v1,v1',
          );
          await f.quiet();
          suspend(f, c.suspension);
          await until(
            'the binding says Suspended',
            () => suspendedCondition(bindingOf(f, 'cfg'))?.status,
            (s) => s === 'True',
          );
          const entries = bindingEntries(bindingOf(f, 'cfg'));
          assert.deepEqual(
            MEMBERS.filter((m) => entries.get(m)?.state === 'Suspended'),
            c.held,
            'the entries that say Suspended',
          );
          f.hub.edit('v1', 'ConfigMap', 'default', 'cfg', 'kubectl', (o) => (o.data = { k: 'v2' }));
          await until(
            'the change where not held',
            () => dataEverywhere(f),
            (d) => d === c.whileSuspended,
          );
          await f.quiet();
          assert.equal(dataEverywhere(f), c.whileSuspended, 'nothing written where held');
          assert.ok(events(f, 'Suspended').length >= 1, 'an Event says Suspended');
          suspend(f, undefined);
          await until(
            'lifted: the change everywhere',
            () => dataEverywhere(f),
            (d) => d === 'v2,v2',
          );
          await until(
            'no Suspended condition',
            () => suspendedCondition(bindingOf(f, 'cfg'))?.status,
            (s) => s !== 'True',
          );
        },
      );
    });

  test('suspended from the start: no member gets a copy, the binding exists and says Suspended', async () => {
    await withFleet(
      {
        members: MEMBERS,
        hub: [
          ...MEMBERS.map((m) => cluster(m)),
          policy('p', { names: ['cfg'], clusters: MEMBERS, spec: { suspension: { dispatching: true } } }),
          configMap('cfg', { k: 'v1' }),
        ],
      },
      async (f) => {
        await until(
          'the binding says Suspended',
          () => suspendedCondition(bindingOf(f, 'cfg'))?.status,
          (s) => s === 'True',
        );
        await f.quiet();
        assert.equal(dataEverywhere(f), '-,-');
        assert.deepEqual(
          MEMBERS.flatMap((m) =>
            f
              .member(m)
              .requests.filter((r) => r.method !== 'GET' && r.method !== 'WATCH')
              .map((r) => `${m} ${r.method} ${r.path}`),
          ),
          [],
          'no write to any member',
        );
        suspend(f, undefined);
        await until(
          'lifted: copies',
          () => dataEverywhere(f),
          (d) => d === 'v1,v1',
        );
      },
    );
  });
});
