// A dependency no policy claims takes its dispatch settings from every workload that requires it, as
// Karmada's dependencies distributor resolves an attached binding: any Overwrite wins, any
// preserveResourcesOnDeletion true wins, and the settings the workloads' policies disagree on are conflicts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { cluster, configMap, deployment, propagationPolicy, selectDeployment, type Obj } from '../../test/builders.js';
import { DEFAULT_DISPATCH } from './dispatch.js';
import { requiredDispatch } from './required-dispatch.js';
import { EngineState, templateKey } from './state.js';

const CFG = templateKey({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cfg' });

/** Workloads `a` and `b` both mount ConfigMap cfg; each is claimed by its own propagateDeps policy. */
function cfgDispatch(a: Obj, b: Obj, more: Obj[] = []) {
  const s = new EngineState();
  const uses = (name: string) =>
    deployment(name, 'default', {
      containers: [{ name, image: 'nginx', envFrom: [{ configMapRef: { name: 'cfg' } }] }],
    });
  for (const o of [
    uses('a'),
    uses('b'),
    configMap('cfg'),
    cluster('m1'),
    propagationPolicy('pa', 'default', [selectDeployment('a')], undefined, { ...a, propagateDeps: true }),
    propagationPolicy('pb', 'default', [selectDeployment('b')], undefined, { ...b, propagateDeps: true }),
    ...more,
  ])
    s.upsert(o);
  const r = s.renderTemplate(CFG);
  assert.equal(r?.requiredBy?.length, 2);
  return r?.dispatch;
}

describe("a dependency's dispatch settings from every workload that requires it", () => {
  it('any Overwrite and any preserveResourcesOnDeletion: true win, whichever workload comes first', () => {
    // a sorts first; the first workload's policy alone would give Abort and false.
    const d = cfgDispatch(
      { conflictResolution: 'Abort', preserveResourcesOnDeletion: false },
      { conflictResolution: 'Overwrite', preserveResourcesOnDeletion: true },
    );
    assert.equal(d?.conflictResolution, 'Overwrite');
    assert.equal(d?.preserveResourcesOnDeletion, true);
    assert.deepEqual(d?.conflicts, ['ConflictResolution', 'PreserveResourcesOnDeletion']);
  });

  it('names only the setting they disagree on', () => {
    const cr = cfgDispatch({ conflictResolution: 'Overwrite' }, { conflictResolution: 'Abort' });
    assert.deepEqual(cr?.conflicts, ['ConflictResolution']);
    assert.equal(cr?.preserveResourcesOnDeletion, false);
    const keep = cfgDispatch(
      { conflictResolution: 'Overwrite', preserveResourcesOnDeletion: true },
      { conflictResolution: 'Overwrite', preserveResourcesOnDeletion: false },
    );
    assert.deepEqual(keep?.conflicts, ['PreserveResourcesOnDeletion']);
    assert.equal(keep?.conflictResolution, 'Overwrite');
  });

  it('no conflict when they agree (an unset conflictResolution is Abort, an unset preserve false)', () => {
    const d = cfgDispatch({ conflictResolution: 'Abort' }, {});
    assert.deepEqual(d, { ...DEFAULT_DISPATCH });
  });

  it("a dependency its own policy claims keeps that policy's settings and no conflict", () => {
    const own = propagationPolicy('cfg', 'default', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg' }], undefined, {
      conflictResolution: 'Abort',
    });
    const d = cfgDispatch({ conflictResolution: 'Overwrite' }, { conflictResolution: 'Abort' }, [own]);
    assert.equal(d?.conflictResolution, 'Abort');
    assert.equal(d?.conflicts, undefined);
  });

  it('suspension and failover are the first workload policy’s', () => {
    const d = requiredDispatch([
      { suspension: { dispatching: true }, failover: { cluster: { purgeMode: 'Directly' } } },
      { conflictResolution: 'Overwrite' },
    ]);
    assert.equal(d.suspended, 'all');
    assert.equal(d.clusterPurgeMode, 'Directly');
    assert.deepEqual(d.conflicts, ['ConflictResolution']);
  });
});
