import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { JsonObject } from '../kube/objects.js';
import { boundKinds, HeldKinds } from './held-kinds.js';
import { FINALIZER } from './ownership.js';

const role = (name: string, finalizers?: string[]): JsonObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name, namespace: 'a', ...(finalizers ? { finalizers } : {}) },
});
const informer = (synced: boolean, objects: JsonObject[]) => ({ synced, values: () => objects.values() });
const ROLE = 'rbac.authorization.k8s.io/v1/Role';

describe('HeldKinds', () => {
  it('keeps a kind no policy selects while an object of it carries the finalizer, then lets it go', () => {
    const held = new HeldKinds();
    assert.equal(held.keep(ROLE, false, informer(true, [role('x'), role('y', ['other', FINALIZER])])), true);
    assert.equal(held.releasing(role('y')), true, 'a deletion of that kind asks again');
    assert.equal(held.keep(ROLE, false, informer(true, [role('x', ['other'])])), false);
    assert.equal(held.releasing(role('y')), false);
  });

  it('keeps a kind whose informer has not listed yet', () => {
    assert.equal(new HeldKinds().keep(ROLE, false, informer(false, [])), true);
  });

  it('a selected kind is always kept and is not held', () => {
    const held = new HeldKinds();
    assert.equal(held.keep(ROLE, true, informer(true, [])), true);
    assert.equal(held.releasing(role('x')), false);
  });

  it('adds the kinds bindings named to those wanted, until their informer listed and holds none', () => {
    const held = new HeldKinds();
    held.seed(
      boundKinds([
        { spec: { resource: { apiVersion: 'v1', kind: 'ConfigMap', name: 'c' } } },
        { spec: { resource: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', name: 'r' } } },
        { spec: { resource: { kind: 'NoVersion' } } },
        { spec: 'malformed' },
        null,
      ]),
    );
    const wanted = held.add(new Map([['v1/ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap' }]]));
    assert.deepEqual([...wanted.keys()], ['v1/ConfigMap', ROLE]);
    assert.equal(held.keep(ROLE, false, informer(true, [])), false);
    assert.deepEqual([...held.add(new Map()).keys()], ['v1/ConfigMap'], 'a released kind is not added again');
  });
});
