import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { appliedDigest, ownedDigest, projectFields } from './field-digest.js';
import type { JsonObject } from './objects.js';

const M = 'flotilla-controller';

/** What was applied: a port without its protocol (the apiserver defaults it, and it is part of the list key). */
const body: JsonObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
  spec: {
    replicas: 2,
    template: { spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } },
  },
};

/** The object as a real apiserver holds it: defaults, another manager's label, status, the field sets. */
function live(change: (o: JsonObject) => void = () => undefined): JsonObject {
  const o: JsonObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'shop',
      uid: 'u1',
      resourceVersion: '7',
      labels: { app: 'web', team: 'a' },
      managedFields: [
        {
          manager: M,
          operation: 'Apply',
          apiVersion: 'apps/v1',
          time: '2026-01-01T00:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { 'f:app': {} } },
            'f:spec': {
              'f:replicas': {},
              'f:template': {
                'f:spec': {
                  'f:containers': {
                    'k:{"name":"web"}': {
                      '.': {},
                      'f:name': {},
                      'f:image': {},
                      'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
                    },
                  },
                },
              },
            },
          },
        },
        {
          manager: 'kubectl-label',
          operation: 'Update',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { 'f:team': {} } } },
        },
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          subresource: 'status',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': { 'f:replicas': {} } },
        },
      ],
    },
    spec: {
      replicas: 2,
      strategy: { type: 'RollingUpdate' },
      template: {
        spec: {
          containers: [
            {
              name: 'web',
              image: 'nginx:1.27',
              imagePullPolicy: 'IfNotPresent',
              ports: [{ containerPort: 80, protocol: 'TCP' }],
            },
          ],
        },
      },
    },
    status: { replicas: 2 },
  };
  change(o);
  return o;
}

const meta = (o: JsonObject) => o.metadata as JsonObject;
const container = (o: JsonObject) =>
  ((((o.spec as JsonObject).template as JsonObject).spec as JsonObject).containers as JsonObject[])[0] ?? {};

describe('ownedDigest: the fields one manager owns, hashed in the shape of an applied body', () => {
  it('is the digest of the body applied: defaults, other managers and status left out, list elements by their keys', () => {
    const fields = (meta(live()).managedFields as JsonObject[])[0]?.fieldsV1;
    const l = live();
    assert.deepEqual(projectFields(fields, { metadata: { labels: meta(l).labels }, spec: l.spec, status: l.status }), {
      metadata: { labels: { app: 'web' } },
      spec: body.spec,
    });
    assert.equal(ownedDigest(live(), M), appliedDigest(body));
  });

  it('moves when a field it owns has another value', () => {
    assert.notEqual(
      ownedDigest(
        live((o) => (container(o).image = 'nginx:drifted')),
        M,
      ),
      appliedDigest(body),
    );
  });

  it('moves when a field it owns left its set (changed or removed by someone else)', () => {
    const o = live((x) => {
      const ours = (meta(x).managedFields as JsonObject[])[0] as JsonObject;
      delete ((ours.fieldsV1 as JsonObject)['f:spec'] as JsonObject)['f:replicas'];
    });
    assert.notEqual(ownedDigest(o, M), appliedDigest(body));
  });

  it('stays for status, fields it does not own and managedFields times', () => {
    const o = live((x) => {
      x.status = { replicas: 2, readyReplicas: 2 };
      (meta(x).labels as JsonObject).team = 'b';
      container(x).imagePullPolicy = 'Always';
      meta(x).resourceVersion = '9';
      ((meta(x).managedFields as JsonObject[])[0] as JsonObject).time = '2026-02-02T00:00:00Z';
    });
    assert.equal(ownedDigest(o, M), appliedDigest(body));
  });

  it('is undefined without exactly one Apply entry of the manager', () => {
    assert.equal(ownedDigest(live(), 'someone'), undefined);
    const twice = live((x) => {
      const entries = meta(x).managedFields as JsonObject[];
      entries.push({ ...(entries[0] as JsonObject) });
    });
    assert.equal(ownedDigest(twice, M), undefined);
  });
});
