// retainReplicas(): when the member's spec.replicas is kept instead of the rendered one.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RETAIN_REPLICAS_LABEL, retainReplicas } from './retain.js';

type Obj = Record<string, unknown>;
const desired = (replicas: number, labels: Obj = {}): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', labels },
  spec: { replicas },
});
const live = (replicas: number, managedFields: Obj[] = []): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', managedFields },
  spec: { replicas },
});
const scaleEntry = (fields: Obj): Obj => ({
  manager: 'kube-controller-manager',
  operation: 'Update',
  subresource: 'scale',
  fieldsType: 'FieldsV1',
  fieldsV1: fields,
});

describe('retainReplicas', () => {
  it('keeps the member value when a scale-subresource writer owns spec.replicas', () => {
    const body = desired(2);
    const kept = retainReplicas(body, live(7, [scaleEntry({ 'f:spec': { 'f:replicas': {} } })]));
    assert.equal(kept?.replicas, 7);
    assert.match(kept?.why ?? '', /scale subresource/);
    assert.equal((body.spec as Obj).replicas, 7);
  });

  it("keeps the member value when the template carries Karmada's retain-replicas label", () => {
    const body = desired(2, { [RETAIN_REPLICAS_LABEL]: 'true' });
    assert.equal(retainReplicas(body, live(4))?.replicas, 4);
    assert.equal((body.spec as Obj).replicas, 4);
  });

  it('applies the rendered value otherwise: plain updates, other subresources, other fields, no replicas', () => {
    const cases: Array<[Obj, Obj]> = [
      [
        desired(2),
        live(7, [{ manager: 'kubectl-edit', operation: 'Update', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }]),
      ],
      [desired(2), live(7, [scaleEntry({ 'f:status': { 'f:replicas': {} } })])],
      [desired(2), live(7, [{ ...scaleEntry({ 'f:spec': { 'f:replicas': {} } }), subresource: 'status' }])],
      [desired(2, { [RETAIN_REPLICAS_LABEL]: 'false' }), live(7)],
      [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: {} },
        live(7, [scaleEntry({ 'f:spec': { 'f:replicas': {} } })]),
      ],
    ];
    for (const [body, member] of cases) {
      const before = JSON.stringify(body);
      assert.equal(retainReplicas(body, member), undefined, before);
      assert.equal(JSON.stringify(body), before);
    }
  });
});
