import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { liveMetaOf } from '../kube/delivery.js';
import { ownedBy as ownedByMeta, stampOwnership, type TemplateIdentity } from './ownership.js';

const ownedBy = (o: Record<string, unknown>, id: TemplateIdentity) => ownedByMeta(liveMetaOf(o), id);

const t = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web', uid: 'uid-1' };

function stamped(identity: typeof t): Record<string, unknown> {
  const o: Record<string, unknown> = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'shop' },
  };
  stampOwnership(o, identity);
  return o;
}

void describe('ownedBy', () => {
  void it("is true for the template's own copy", () => {
    assert.equal(ownedBy(stamped(t), t), true);
  });

  void it('is true for the copy of a template deleted and created again under its name (new uid)', () => {
    assert.equal(ownedBy(stamped({ ...t, uid: 'uid-0' }), t), true);
  });

  void it("is false for an object without the controller's labels, or another template's", () => {
    assert.equal(ownedBy({ metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } } }, t), false);
    assert.equal(ownedBy(stamped({ ...t, name: 'api', uid: 'uid-9' }), t), false);
    assert.equal(ownedBy(stamped({ ...t, namespace: 'other', uid: 'uid-9' }), t), false);
    assert.equal(ownedBy(stamped({ ...t, kind: 'StatefulSet', uid: 'uid-9' }), t), false);
  });

  void it('reads labels as own properties only', () => {
    const labels = Object.create({ 'flotilla.io/template-uid': 'uid-1' }) as Record<string, unknown>;
    assert.equal(ownedBy({ metadata: { name: 'web', labels } }, t), false);
  });
});
