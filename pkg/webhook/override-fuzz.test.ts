// /override under generated input: random objects (workload-shaped with junk grafted in, prototype keys
// as own properties, odd types where lists and maps belong) and random operations against policies and
// mutators that touch every overrider. Every answer is a 200 with the request's uid, never an internal
// error; a patch, applied to the object sent, gives exactly what the engine admits; Object.prototype is
// untouched.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { clusterInfo, OverrideSet } from '../engine/index.js';
import { WebhookHandler } from './handler.js';

type Obj = Record<string, unknown>;

const set = new OverrideSet(clusterInfo({ metadata: { name: 'm1', labels: { env: 'prod' } } }));
for (const o of [
  {
    apiVersion: 'policy.flotilla.io/v1beta1',
    kind: 'ClusterOverridePolicy',
    metadata: { name: 'everything' },
    spec: {
      overrideRules: [
        {
          targetOperations: ['CREATE', 'UPDATE'],
          overriders: {
            imageOverrider: [{ component: 'Tag', operator: 'replace', value: 'v2' }],
            commandOverrider: [{ containerName: 'web', operator: 'add', value: ['--z'] }],
            labelsOverrider: [{ operator: 'add', value: { team: 'a' }, onlyIfAbsent: true }],
            annotationsOverrider: [{ operator: 'remove', value: { gone: '' } }],
            plaintext: [
              {
                operator: 'add',
                path: '/spec/template/spec/containers/[name=*]/imagePullPolicy',
                value: 'IfNotPresent',
                pathTests: [
                  { subPath: '/spec/template/spec/containers/[name=*]/imagePullPolicy', condition: 'MustNotExist' },
                ],
              },
            ],
          },
        },
      ],
    },
  },
  {
    apiVersion: 'mutations.gatekeeper.sh/v1',
    kind: 'Assign',
    metadata: { name: 'sc' },
    spec: {
      applyTo: [{ groups: ['apps'], versions: ['v1'], kinds: ['Deployment'] }],
      location: 'spec.template.spec.containers[name:*].securityContext.privileged',
      parameters: { assign: { value: false } },
    },
  },
  {
    apiVersion: 'mutations.gatekeeper.sh/v1',
    kind: 'AssignMetadata',
    metadata: { name: 'owner' },
    spec: { location: 'metadata.labels.owner', parameters: { assign: { fromMetadata: { field: 'name' } } } },
  },
])
  assert.equal(set.upsert(o), undefined);

const defineOwn = (o: Obj, key: string, value: unknown): Obj => {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  return o;
};

const junk = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.string({ maxLength: 8 }),
  fc.array(fc.oneof(fc.constant(null), fc.string({ maxLength: 4 })), { maxLength: 3 }),
  fc.constantFrom('__proto__', 'constructor').map((k) => defineOwn({}, k, { polluted: true })),
);

const container = fc.record(
  {
    name: fc.oneof(fc.constantFrom('web', 'side'), junk),
    image: fc.oneof(fc.constantFrom('nginx:1', 'r.io/a/b@sha256:' + 'a'.repeat(64), 'x'), junk),
    imagePullPolicy: fc.constantFrom('Always', 'Never'),
    command: fc.oneof(fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }), junk),
    securityContext: fc.oneof(fc.constant({}), junk),
  },
  { requiredKeys: [] },
);

const object = fc
  .record({
    name: fc.oneof(fc.constantFrom('web', 'db'), junk),
    labels: fc.oneof(fc.dictionary(fc.constantFrom('team', 'owner', '__proto__'), fc.string({ maxLength: 3 })), junk),
    annotations: fc.oneof(fc.constant({ gone: 'x', kept: 'y' }), junk),
    containers: fc.oneof(fc.array(fc.oneof(container, junk), { maxLength: 3 }), junk),
    kind: fc.constantFrom('Deployment', 'Deployment', 'ConfigMap'),
  })
  .map(({ name, labels, annotations, containers, kind }) => ({
    apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1',
    kind,
    metadata: { name, namespace: 'shop', labels, annotations },
    spec: { template: { spec: { containers } } },
  }));

describe('/override under generated input', () => {
  it('answers every request with a patch that gives what the engine admits, or unmodified with a warning', () => {
    const handler = new WebhookHandler({ overrides: { set, ready: () => true, namespaceLabels: () => ({}) } });
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    let patchedCount = 0;
    let warned = 0;
    fc.assert(
      fc.property(object, fc.constantFrom('CREATE', 'UPDATE', 'DELETE'), fc.boolean(), (o, operation, dryRun) => {
        const body = JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          request: { uid: 'f', operation, namespace: 'shop', object: o, oldObject: o, dryRun },
        });
        const res = handler.handle({ method: 'POST', url: '/override', contentType: 'application/json', body });
        assert.equal(res.status, 200, res.body.slice(0, 300));
        const r = (JSON.parse(res.body) as { response: Obj }).response;
        assert.equal(r.uid, 'f');
        assert.equal(r.allowed, true, res.body.slice(0, 300));
        if (Array.isArray(r.warnings)) warned++;
        if (typeof r.patch !== 'string') return;
        patchedCount++;
        const sent = JSON.parse(JSON.stringify(o)) as Obj;
        const patch = JSON.parse(Buffer.from(r.patch, 'base64').toString()) as jsonpatch.Operation[];
        const out = jsonpatch.applyPatch(structuredClone(sent), patch, true).newDocument;
        assert.deepEqual(out, set.admit({ object: sent, operation: operation as 'CREATE', oldObject: sent }).object);
      }),
      { numRuns: 600 },
    );
    assert.ok(patchedCount > 100, `only ${patchedCount} answers carried a patch`);
    assert.ok(warned > 5, `only ${warned} answers admitted unmodified with a warning`);
    assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), before);
  });
});
