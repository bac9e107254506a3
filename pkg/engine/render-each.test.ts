// renderEach: renderDetailed's placements, each handed on as it is made and none kept by the engine.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  cluster,
  configMap,
  deployment,
  overridePolicy,
  propagationPolicy,
  selectDeployment,
  type Obj,
} from '../../test/builders.js';
import { renderDetailed, renderEach, type DetailedPlacement } from './render.js';

const objects: Obj[] = [
  configMap('cfg', 'shop', { level: 'info' }),
  ...['web', 'api', 'batch'].map((name) =>
    deployment(name, 'shop', {
      replicas: 4,
      containers: [{ name: 'app', image: `example.com/${name}:1`, envFrom: [{ configMapRef: { name: 'cfg' } }] }],
    }),
  ),
  propagationPolicy('all', 'shop', [selectDeployment()], undefined, { propagateDeps: true }),
  overridePolicy('labels', 'shop', [
    { overriders: { labelsOverrider: [{ operator: 'add', value: { cluster: '${cluster.name}' } }] } },
  ]),
  cluster('m1'),
  cluster('m2'),
  cluster('m3'),
];

describe('renderEach', () => {
  it("hands on renderDetailed's placements in its order, requiredBy already set, and returns the rest", () => {
    const seen: DetailedPlacement[] = [];
    const requiredBySeen: unknown[] = [];
    const summary = renderEach({ objects }, {}, (p) => {
      seen.push(p);
      requiredBySeen.push(p.requiredBy); // as it is when handed on, before rendering goes on
    });
    const all = renderDetailed({ objects });
    assert.equal(seen.length, 12);
    assert.deepEqual(seen, all.placements);
    assert.deepEqual(
      requiredBySeen.filter((r) => r !== undefined),
      all.placements.filter((p) => p.template.kind === 'ConfigMap').map((p) => p.requiredBy),
    );
    assert.equal(requiredBySeen.filter((r) => r !== undefined).length, 3);
    assert.deepEqual(summary, { unmatched: all.unmatched, errors: all.errors, warnings: all.warnings });
  });

  it('keeps none of the placements it hands on', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const handed: Array<WeakRef<object>> = [];
    const summary = renderEach({ objects }, {}, (p) => handed.push(new WeakRef(p), new WeakRef(p.object)));
    assert.equal(handed.length, 24);
    await tick(); // a WeakRef holds its target until the end of the job that made it
    gc();
    assert.deepEqual(
      handed.filter((r) => r.deref() !== undefined),
      [],
      'a placement handed on is still reachable after a full collection',
    );
    assert.equal(Object.hasOwn(summary, 'placements'), false);
  });
});
