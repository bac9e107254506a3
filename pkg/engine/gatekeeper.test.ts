// Gatekeeper's mutation semantics, case by case (test/conformance/gatekeeper-cases.ts), through the same
// OverrideSet the admission route uses, plus the location parser on its own.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GATEKEEPER_CASES } from '../../test/conformance/gatekeeper-cases.js';
import { cluster } from '../../test/builders.js';
import { OverrideSet } from './admit.js';
import { parsePath, PathError } from './gatekeeper.js';
import { clusterInfo } from './inputs.js';
import { renderDetailed } from './render.js';

describe('Gatekeeper conformance', () => {
  for (const c of GATEKEEPER_CASES) {
    it(`${c.name} (${c.source})`, () => {
      const set = new OverrideSet(clusterInfo(cluster('m1')));
      const problems = c.mutators.map((m) => set.upsert(m)).filter((e) => e !== undefined);
      if (c.error !== undefined) {
        assert.equal(problems.length, 1, 'the mutator is refused');
        assert.match(problems[0] ?? '', new RegExp(c.error.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
        return;
      }
      assert.deepEqual(problems, []);
      const out = set.admit({ object: c.object, operation: 'CREATE', namespaceLabels: c.namespaceLabels });
      if (c.expect === 'unchanged') {
        assert.equal(out.changed, false);
        assert.deepEqual(out.object, c.object);
      } else {
        assert.deepEqual(out.object, c.expect);
        assert.equal(out.changed, true);
      }
    });
  }
});

describe('Gatekeeper mutators in render', () => {
  it('apply to each placement after the overrides, and an unusable one is reported', () => {
    const r = renderDetailed({
      objects: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'apps' }, data: {} },
        {
          apiVersion: 'mutations.gatekeeper.sh/v1',
          kind: 'AssignMetadata',
          metadata: { name: 'owner' },
          spec: { location: 'metadata.labels.owner', parameters: { assign: { value: 'platform' } } },
        },
        {
          apiVersion: 'mutations.gatekeeper.sh/v1',
          kind: 'AssignMetadata',
          metadata: { name: 'broken' },
          spec: { location: 'spec.x', parameters: { assign: { value: 'x' } } },
        },
        cluster('m1'),
        {
          apiVersion: 'policy.flotilla.io/v1alpha1',
          kind: 'ClusterPropagationPolicy',
          metadata: { name: 'all' },
          spec: { resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }] },
        },
      ],
    });
    assert.deepEqual(r.placements[0]?.object.metadata, { name: 'c', namespace: 'apps', labels: { owner: 'platform' } });
    assert.equal(r.errors.length, 1);
    assert.match(r.errors[0]?.message ?? '', /invalid location for assignmetadata/);
  });
});

describe('parsePath', () => {
  it('reads keys, quoted keys and list segments', () => {
    assert.deepEqual(parsePath(`spec.containers[name: "a b"].env['name':*].value`), [
      { type: 'Object', ref: 'spec' },
      { type: 'Object', ref: 'containers' },
      { type: 'List', keyField: 'name', keyValue: 'a b', glob: false },
      { type: 'Object', ref: 'env' },
      { type: 'List', keyField: 'name', keyValue: undefined, glob: true },
      { type: 'Object', ref: 'value' },
    ]);
    assert.deepEqual(parsePath('metadata.annotations."x.io/y"'), [
      { type: 'Object', ref: 'metadata' },
      { type: 'Object', ref: 'annotations' },
      { type: 'Object', ref: 'x.io/y' },
    ]);
  });

  it('a quoted "*" is a literal, a quoted number a string, digits an integer', () => {
    assert.deepEqual(parsePath('a[k: "*"]')[1], { type: 'List', keyField: 'k', keyValue: '*', glob: false });
    assert.deepEqual(parsePath('a[k: "8080"]')[1], { type: 'List', keyField: 'k', keyValue: '8080', glob: false });
    assert.deepEqual(parsePath('a[k: 8080]')[1], { type: 'List', keyField: 'k', keyValue: 8080, glob: false });
  });

  for (const bad of ['spec.', 'spec..a', 'spec[name]', 'spec["x', 'spec.c[name:x', '0a', 'a[k:1][j:2]', 'a[1:x]']) {
    it(`refuses ${JSON.stringify(bad)}`, () => assert.throws(() => parsePath(bad), PathError));
  }
});
