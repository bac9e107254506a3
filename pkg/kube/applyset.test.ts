import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  ParentError,
  applySetId,
  groupKindString,
  parentObject,
  parseGroupKind,
  readParent,
  toolingBaseName,
} from './applyset.js';

const ref = { name: 'flotilla-quickstart', namespace: 'flotilla-system' };

void describe('applySetId', () => {
  it('is the id kubectl computes for a Secret parent', () => {
    // `KUBECTL_APPLYSET=true kubectl apply --server-side --prune --applyset=probe-set -n default` (kubectl
    // 1.33) labelled its parent Secret with exactly this id.
    assert.equal(
      applySetId({ name: 'probe-set', namespace: 'default' }),
      'applyset-w8gQXtzDB0CxxZrL-rg-wBobVw7cBYOXNDA8S0fnKbM-v1',
    );
  });

  it('is a valid label value and differs per name and namespace', () => {
    const id = applySetId(ref);
    assert.match(id, /^applyset-[A-Za-z0-9_-]{43}-v1$/);
    assert.ok(id.length <= 63);
    assert.notEqual(id, applySetId({ ...ref, namespace: 'other' }));
    assert.notEqual(id, applySetId({ ...ref, name: 'other' }));
  });
});

void describe('group-kind strings', () => {
  it('round-trip as kubectl writes them', () => {
    for (const [group, kind, s] of [
      ['', 'ConfigMap', 'ConfigMap'],
      ['apps', 'Deployment', 'Deployment.apps'],
      ['example.com', 'Widget', 'Widget.example.com'],
    ] as const) {
      assert.equal(groupKindString(group, kind), s);
      assert.deepEqual(parseGroupKind(s), { group, kind });
    }
  });
});

function liveParent(
  annotations: Record<string, string>,
  labels: Record<string, string> = { 'applyset.kubernetes.io/id': applySetId(ref) },
) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: ref.name, namespace: ref.namespace, labels, annotations },
  };
}

void describe('readParent', () => {
  const id = applySetId(ref);

  it('reads no parent as an empty set in the parent namespace', () => {
    const s = readParent(undefined, ref, id);
    assert.equal(s.exists, false);
    assert.deepEqual([...s.groupKinds], []);
    assert.deepEqual([...s.namespaces], ['flotilla-system']);
  });

  it('reads kinds and namespaces, the parent namespace included', () => {
    const s = readParent(
      liveParent({
        'applyset.kubernetes.io/tooling': 'flotilla/v0.1.0',
        'applyset.kubernetes.io/contains-group-kinds': 'ConfigMap,Deployment.apps',
        'applyset.kubernetes.io/additional-namespaces': 'shop,web',
      }),
      ref,
      id,
    );
    assert.deepEqual([...s.groupKinds].sort(), ['ConfigMap', 'Deployment.apps']);
    assert.deepEqual([...s.namespaces].sort(), ['flotilla-system', 'shop', 'web']);
    assert.equal(s.tooling, 'flotilla/v0.1.0');
  });

  it("refuses another tool's parent, as kubectl refuses ours", () => {
    assert.throws(
      () =>
        readParent(
          liveParent({
            'applyset.kubernetes.io/tooling': 'kubectl/v1.33.1',
            'applyset.kubernetes.io/contains-group-kinds': '',
          }),
          ref,
          id,
        ),
      (e: unknown) => e instanceof ParentError && /managed by "kubectl", not flotilla/.test(e.message),
    );
  });

  it('refuses a Secret that is not an ApplySet parent, or has the wrong id', () => {
    assert.throws(() => readParent(liveParent({}), ref, id), /has no applyset.kubernetes.io\/tooling annotation/);
    assert.throws(
      () =>
        readParent(
          liveParent(
            { 'applyset.kubernetes.io/tooling': 'flotilla/v0', 'applyset.kubernetes.io/contains-group-kinds': '' },
            { 'applyset.kubernetes.io/id': 'applyset-other-v1' },
          ),
          ref,
          id,
        ),
      /expected applyset-/,
    );
    assert.throws(
      () => readParent(liveParent({ 'applyset.kubernetes.io/tooling': 'flotilla/v0' }), ref, id),
      /no applyset.kubernetes.io\/contains-group-kinds annotation/,
    );
  });

  it('reads the deprecated group-resources annotation through the given mapping', () => {
    const s = readParent(
      liveParent({
        'applyset.kubernetes.io/tooling': 'flotilla/v0',
        'applyset.kubernetes.io/contains-group-resources': 'deployments.apps,configmaps',
      }),
      ref,
      id,
      (gr) => ({ 'deployments.apps': 'Deployment.apps', configmaps: 'ConfigMap' })[gr],
    );
    assert.deepEqual([...s.groupKinds].sort(), ['ConfigMap', 'Deployment.apps']);
  });

  it("uses kubectl's base-name rule for the tooling value", () => {
    assert.equal(toolingBaseName('flotilla/v0.1.0'), 'flotilla');
    assert.equal(toolingBaseName('a/b/v1'), 'a/b');
    assert.equal(toolingBaseName('flotilla'), 'flotilla');
  });
});

void describe('parentObject', () => {
  it('writes sorted kinds and the namespaces other than its own', () => {
    const p = parentObject(
      ref,
      'applyset-x-v1',
      'flotilla/v0.1.0',
      ['Deployment.apps', 'ConfigMap', 'ConfigMap'],
      ['web', 'flotilla-system', 'shop'],
    );
    assert.deepEqual(p, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: ref.name,
        namespace: ref.namespace,
        labels: { 'applyset.kubernetes.io/id': 'applyset-x-v1' },
        annotations: {
          'applyset.kubernetes.io/tooling': 'flotilla/v0.1.0',
          'applyset.kubernetes.io/contains-group-kinds': 'ConfigMap,Deployment.apps',
          'applyset.kubernetes.io/additional-namespaces': 'shop,web',
        },
      },
    });
  });
});
