// Gatekeeper's mutation semantics, case by case (test/conformance/gatekeeper-cases.ts), through the same
// OverrideSet the admission route uses, plus the location parser on its own.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GATEKEEPER_CASES } from '../../test/conformance/gatekeeper-cases.js';
import { cluster } from '../../test/builders.js';
import { OverrideSet } from './admit.js';
import { parseLocation } from './gatekeeper.js';
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
    assert.match(r.errors[0]?.message ?? '', /AssignMetadata can only set/);
  });
});

describe('parseLocation', () => {
  it('reads keys, quoted keys and list segments', () => {
    assert.deepEqual(parseLocation('spec.containers[name: "a b"].env[name:*].value'), [
      { key: 'spec' },
      { key: 'containers' },
      { match: { field: 'name', value: 'a b' } },
      { key: 'env' },
      { match: { field: 'name', value: '*' } },
      { key: 'value' },
    ]);
    assert.deepEqual(parseLocation('metadata.annotations."x.io/y"'), [
      { key: 'metadata' },
      { key: 'annotations' },
      { key: 'x.io/y' },
    ]);
  });

  for (const bad of ['', 'spec.', 'spec..a', 'spec[name]', 'spec["x', 'a.__proto__.b', 'spec.c[name:x']) {
    it(`refuses ${JSON.stringify(bad)}`, () => assert.throws(() => parseLocation(bad), /location/));
  }
});
