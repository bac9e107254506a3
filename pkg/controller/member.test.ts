import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FakeApiserver } from '../../test/fake-apiserver.js';
import { memberOn } from '../../test/fake-member.js';
import { APPLIED_HASH_ANNOTATION, appliedHash } from '../kube/ownership.js';
import type { JsonObject } from '../kube/objects.js';
import { stampOwnership } from './ownership.js';

const T = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cfg', uid: 'uid-1' };

/** The template's copy as a plan holds it: stamped with the template's marks. */
function planned(namespace?: string): JsonObject {
  const o: JsonObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cfg', ...(namespace ? { namespace } : {}) },
    data: { k: 'v' },
  };
  stampOwnership(o, T);
  return o;
}

const hashOn = (api: FakeApiserver) =>
  ((api.get('v1', 'ConfigMap', 'default', 'cfg')?.metadata as JsonObject).annotations as JsonObject)[
    APPLIED_HASH_ANNOTATION
  ];

describe('Member.apply and the applied hash its plan computed', () => {
  it('stamps the planned hash on a copy it sends as planned, without hashing it again', async () => {
    const api = new FakeApiserver();
    const m = memberOn(api);
    try {
      const object = planned('default');
      // Not the object's own hash: only a hash taken as given ends up on the member.
      const out = await m.apply(object, T, 'Abort', new AbortController().signal, 'sha256:as-planned');
      assert.equal(out.state, 'Applied');
      assert.equal(hashOn(api), 'sha256:as-planned');
    } finally {
      await m.close();
    }
  });

  it('hashes the copy again when it sends something else (the namespace filled in)', async () => {
    const api = new FakeApiserver();
    const m = memberOn(api);
    try {
      const object = planned();
      const out = await m.apply(object, T, 'Abort', new AbortController().signal, appliedHash(object));
      assert.equal(out.state, 'Applied');
      assert.equal(
        hashOn(api),
        appliedHash({ ...object, metadata: { ...(object.metadata as JsonObject), namespace: 'default' } }),
      );
      assert.notEqual(hashOn(api), appliedHash(object));
    } finally {
      await m.close();
    }
  });
});
