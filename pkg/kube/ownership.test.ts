import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  APPLIED_HASH_ANNOTATION,
  appliedHash,
  covers,
  overlaps,
  stampAppliedHash,
  unchangedSinceApply,
  type ManagedFieldsEntry,
} from './ownership.js';

type Obj = Record<string, unknown>;

/** A Deployment as the applier sends it (label and hash annotation included). */
function desired(): Obj {
  const body: Obj = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'shop',
      labels: { app: 'web', 'applyset.kubernetes.io/part-of': 'applyset-x-v1' },
      annotations: { 'example.com/region': 'eu-west-1' },
    },
    spec: {
      replicas: 5,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'mirror/web:1',
              args: ['--port=8080'],
              env: [{ name: 'CLUSTER_NAME', value: 'eu-west' }],
              ports: [{ containerPort: 8080 }],
            },
            { name: 'log-shipper', image: 'mirror/log:1' },
          ],
        },
      },
    },
  };
  stampAppliedHash(body);
  return body;
}

/** managedFields as kube-apiserver 1.33 records them for that apply (shape copied from a live object). */
function ourEntry(): ManagedFieldsEntry {
  return {
    manager: 'flotilla',
    operation: 'Apply',
    fieldsType: 'FieldsV1',
    fieldsV1: {
      'f:metadata': {
        'f:annotations': { 'f:example.com/region': {}, [`f:${APPLIED_HASH_ANNOTATION}`]: {} },
        'f:labels': { 'f:app': {}, 'f:applyset.kubernetes.io/part-of': {} },
      },
      'f:spec': {
        'f:replicas': {},
        'f:selector': {},
        'f:template': {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:containers': {
              'k:{"name":"log-shipper"}': { '.': {}, 'f:image': {}, 'f:name': {} },
              'k:{"name":"web"}': {
                '.': {},
                'f:args': {},
                'f:env': { 'k:{"name":"CLUSTER_NAME"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
                'f:image': {},
                'f:name': {},
                'f:ports': { 'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
              },
            },
          },
        },
      },
    },
  };
}

function live(body: Obj, managedFields: ManagedFieldsEntry[]) {
  const annotations = ((body.metadata as Obj).annotations ?? {}) as Record<string, unknown>;
  return { annotations, managedFields };
}

void describe('appliedHash', () => {
  it('ignores key order and its own annotation', () => {
    const a = { b: 1, a: { d: [1, { y: 2, x: 1 }], c: 'x' } };
    const b = { a: { c: 'x', d: [1, { x: 1, y: 2 }] }, b: 1 };
    assert.equal(appliedHash(a), appliedHash(b));
    const stamped = { ...a, metadata: { annotations: { [APPLIED_HASH_ANNOTATION]: 'sha256:old' } } };
    assert.equal(appliedHash(stamped), appliedHash({ ...a, metadata: { annotations: {} } }));
  });

  it('changes with any value, list order included', () => {
    assert.notEqual(appliedHash({ a: [1, 2] }), appliedHash({ a: [2, 1] }));
    assert.notEqual(appliedHash({ a: '1' }), appliedHash({ a: 1 }));
  });
});

void describe('unchangedSinceApply', () => {
  it('holds right after an apply that only this manager made', () => {
    const body = desired();
    assert.equal(unchangedSinceApply(live(body, [ourEntry()]), body, 'flotilla'), true);
  });

  it('holds with status writers and managers of unrelated fields around', () => {
    const body = desired();
    const status: ManagedFieldsEntry = {
      manager: 'kube-controller-manager',
      operation: 'Update',
      subresource: 'status',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:status': { 'f:replicas': {} } },
    };
    const labeller: ManagedFieldsEntry = {
      manager: 'kubectl-label',
      operation: 'Update',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:metadata': { 'f:labels': { 'f:extra': {} } } },
    };
    assert.equal(unchangedSinceApply(live(body, [ourEntry(), status, labeller]), body, 'flotilla'), true);
  });

  const cases: Array<[string, (body: Obj, entries: ManagedFieldsEntry[]) => void]> = [
    ['the desired object changed since (hash differs)', (body) => ((body.spec as Obj).replicas = 6)],
    ['the live object carries no hash', (_body, _entries) => undefined],
    [
      'someone else took a field (kubectl edit of replicas)',
      (_b, entries) => {
        const ours = entries[0]?.fieldsV1 as Obj;
        delete (ours['f:spec'] as Obj)['f:replicas'];
        entries.push({
          manager: 'kubectl-edit',
          operation: 'Update',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:replicas': {} } },
        });
      },
    ],
    [
      'a field was removed by someone else (ours no longer covers the env var)',
      (_b, entries) => {
        const web = ((((entries[0]?.fieldsV1 as Obj)['f:spec'] as Obj)['f:template'] as Obj)['f:spec'] as Obj)[
          'f:containers'
        ] as Obj;
        delete (web['k:{"name":"web"}'] as Obj)['f:env'];
      },
    ],
    [
      'another applier shares a field',
      (_b, entries) =>
        entries.push({
          manager: 'helm',
          operation: 'Apply',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { 'f:image': {} } } } } },
          },
        }),
    ],
    [
      'an HPA writes replicas through the scale subresource',
      (_b, entries) =>
        entries.push({
          manager: 'hpa',
          operation: 'Update',
          subresource: 'scale',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:replicas': {} } },
        }),
    ],
    ['this manager has no Apply entry', (_b, entries) => entries.splice(0, 1)],
    [
      'the fields are in an unknown format',
      (_b, entries) => entries.push({ manager: 'x', operation: 'Update', fieldsType: 'FieldsV2', fieldsV1: {} }),
    ],
  ];
  for (const [name, change] of cases) {
    it(`says apply when ${name}`, () => {
      const body = desired();
      const entries = [ourEntry()];
      const l = live(body, entries);
      const annotations = name.includes('no hash') ? {} : { ...l.annotations };
      change(body, entries);
      stampAppliedHash(body);
      assert.equal(unchangedSinceApply({ annotations, managedFields: entries }, body, 'flotilla'), false);
    });
  }
});

void describe('covers and overlaps', () => {
  it('treats a leaf as owning an atomic map or list whole', () => {
    assert.equal(covers({}, { matchLabels: { a: 'b' } }), true);
    assert.equal(covers({ 'f:x': {} }, { x: [1, 2, 3] }), true);
  });

  it('needs every map key and every list element', () => {
    assert.equal(covers({ 'f:a': {} }, { a: 1, b: 2 }), false);
    assert.equal(covers({ 'k:{"name":"a"}': { '.': {}, 'f:name': {} } }, [{ name: 'a' }, { name: 'b' }]), false);
    assert.equal(covers({ 'v:"x"': {}, 'v:"y"': {} }, ['x', 'y']), true);
  });

  it('matches a list key with a defaulted field only when one element fits', () => {
    const fs = {
      'k:{"containerPort":80,"protocol":"TCP"}': { 'f:containerPort': {} },
      'k:{"containerPort":80,"protocol":"UDP"}': { 'f:containerPort': {} },
    };
    assert.equal(covers(fs, [{ containerPort: 80 }]), false);
    assert.equal(
      covers({ 'k:{"containerPort":80,"protocol":"TCP"}': { 'f:containerPort': {} } }, [{ containerPort: 80 }]),
      true,
    );
  });

  it('finds another owner of a nested field, and ignores fields outside the object', () => {
    const value = { spec: { template: { spec: { containers: [{ name: 'web', image: 'x' }] } } } };
    assert.equal(
      overlaps(
        { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { 'f:image': {} } } } } } },
        value,
      ),
      true,
    );
    assert.equal(
      overlaps(
        { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"other"}': { 'f:image': {} } } } } } },
        value,
      ),
      false,
    );
    assert.equal(
      overlaps({ 'f:metadata': { 'f:labels': { 'f:extra': {} } } }, { metadata: { labels: { app: 'x' } } }),
      false,
    );
    assert.equal(overlaps({ 'i:0': {} }, [1]), true);
  });
});
