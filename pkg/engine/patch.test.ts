import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyOperation, getValue, PatchError } from './patch.js';

const doc = () => ({
  spec: {
    containers: [
      { name: 'web', image: 'nginx', ports: [{ containerPort: 80 }] },
      { name: 'sidecar', image: 'envoy' },
    ],
  },
  metadata: { labels: { 'a/b': '1' } },
});

describe('applyOperation', () => {
  const cases: Array<{
    name: string;
    op: { op: string; path: string; value?: unknown };
    check: (d: ReturnType<typeof doc>) => void;
    pointer: string;
  }> = [
    {
      name: 'add sets a new member',
      op: { op: 'add', path: '/spec/paused', value: true },
      pointer: '/spec/paused',
      check: (d) => assert.equal((d.spec as Record<string, unknown>).paused, true),
    },
    {
      name: 'add overwrites an existing member',
      op: { op: 'add', path: '/spec/containers/0/image', value: 'x' },
      pointer: '/spec/containers/0/image',
      check: (d) => assert.equal(d.spec.containers[0]?.image, 'x'),
    },
    {
      name: 'add with - appends to a list',
      op: { op: 'add', path: '/spec/containers/-', value: { name: 'c' } },
      pointer: '/spec/containers/2',
      check: (d) => assert.equal(d.spec.containers.length, 3),
    },
    {
      name: 'add at an index inserts',
      op: { op: 'add', path: '/spec/containers/0', value: { name: 'first' } },
      pointer: '/spec/containers/0',
      check: (d) =>
        assert.deepEqual(
          d.spec.containers.map((c) => c.name),
          ['first', 'web', 'sidecar'],
        ),
    },
    {
      name: 'a negative index counts from the end',
      op: { op: 'replace', path: '/spec/containers/-1/image', value: 'y' },
      pointer: '/spec/containers/1/image',
      check: (d) => assert.equal(d.spec.containers[1]?.image, 'y'),
    },
    {
      name: 'remove deletes a member',
      op: { op: 'remove', path: '/spec/containers/0/ports' },
      pointer: '/spec/containers/0/ports',
      check: (d) => assert.equal('ports' in (d.spec.containers[0] ?? {}), false),
    },
    {
      name: 'escaped keys are unescaped',
      op: { op: 'replace', path: '/metadata/labels/a~1b', value: '2' },
      pointer: '/metadata/labels/a~1b',
      check: (d) => assert.equal(d.metadata.labels['a/b'], '2'),
    },
    {
      name: 'a keyed segment selects the item by field',
      op: { op: 'replace', path: '/spec/containers[name=sidecar]/image', value: 'envoy:2' },
      pointer: '/spec/containers/1/image',
      check: (d) => assert.equal(d.spec.containers[1]?.image, 'envoy:2'),
    },
    {
      name: 'a keyed segment compares numbers as strings',
      op: { op: 'replace', path: '/spec/containers[name=web]/ports[containerPort=80]/containerPort', value: 8080 },
      pointer: '/spec/containers/0/ports/0/containerPort',
      check: (d) => assert.equal(d.spec.containers[0]?.ports?.[0]?.containerPort, 8080),
    },
    {
      name: 'add with an unmatched final selector appends',
      op: { op: 'add', path: '/spec/containers[name=new]', value: { name: 'new', image: 'busybox' } },
      pointer: '/spec/containers/2',
      check: (d) => assert.equal(d.spec.containers[2]?.name, 'new'),
    },
    {
      name: 'add with a matched final selector replaces the item',
      op: { op: 'add', path: '/spec/containers[name=web]', value: { name: 'web', image: 'httpd' } },
      pointer: '/spec/containers/0',
      check: (d) => assert.deepEqual(d.spec.containers[0], { name: 'web', image: 'httpd' }),
    },
    {
      name: 'remove with a final selector removes the item',
      op: { op: 'remove', path: '/spec/containers[name=web]' },
      pointer: '/spec/containers/0',
      check: (d) =>
        assert.deepEqual(
          d.spec.containers.map((c) => c.name),
          ['sidecar'],
        ),
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = doc();
      const res = applyOperation(d, c.op);
      assert.equal(res.pointer, c.pointer);
      c.check(res.doc as ReturnType<typeof doc>);
    });
  }

  const failures: Array<{ name: string; op: { op: string; path: string; value?: unknown }; message: RegExp }> = [
    {
      name: 'replace of a missing member fails',
      op: { op: 'replace', path: '/spec/paused', value: true },
      message: /replace operation does not apply: doc is missing key: \/spec\/paused/,
    },
    {
      name: 'remove of a missing member fails',
      op: { op: 'remove', path: '/spec/paused' },
      message: /remove operation does not apply/,
    },
    {
      name: 'add under a missing parent fails',
      op: { op: 'add', path: '/metadata/annotations/x', value: 'y' },
      message: /add operation does not apply: doc is missing path: "\/metadata\/annotations\/x"/,
    },
    {
      name: 'an index past the end fails',
      op: { op: 'replace', path: '/spec/containers/5/image', value: 'x' },
      message: /out of range/,
    },
    {
      name: 'a selector that matches nothing fails for replace',
      op: { op: 'replace', path: '/spec/containers[name=db]/image', value: 'x' },
      message: /no item of \/spec\/containers has name=db/,
    },
    { name: 'an unknown operation fails', op: { op: 'move', path: '/spec' }, message: /Unexpected kind: move/ },
    {
      name: 'a prototype segment is refused',
      op: { op: 'add', path: '/__proto__/polluted', value: 1 },
      message: /not allowed/,
    },
  ];
  for (const c of failures) {
    it(c.name, () => {
      assert.throws(
        () => applyOperation(doc(), c.op),
        (err: unknown) => (err instanceof PatchError || err instanceof Error) && c.message.test(err.message),
      );
    });
  }

  it('never lets the written value share structure with the operation', () => {
    const value = { nested: { x: 1 } };
    const res = applyOperation(doc(), { op: 'add', path: '/spec/extra', value });
    value.nested.x = 2;
    assert.deepEqual((res.doc as { spec: { extra: unknown } }).spec.extra, { nested: { x: 1 } });
  });

  it('replaces the whole document for the empty path', () => {
    assert.deepEqual(applyOperation(doc(), { op: 'replace', path: '', value: { a: 1 } }).doc, { a: 1 });
  });
});

describe('getValue', () => {
  it('resolves keyed segments to a concrete pointer', () => {
    assert.deepEqual(getValue(doc(), '/spec/containers[name=sidecar]/image'), {
      found: true,
      value: 'envoy',
      pointer: '/spec/containers/1/image',
    });
  });
  it('reports a missing path without throwing', () => {
    assert.equal(getValue(doc(), '/spec/containers[name=db]/image').found, false);
    assert.equal(getValue(doc(), '/nope/deeper').found, false);
  });
});
