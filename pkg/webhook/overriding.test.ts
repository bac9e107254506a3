// /override through the handler: the answer is a JSON patch that turns the admitted object into what the
// engine admits; operations, dry runs, Flotilla's own objects, and every way it admits unmodified (with a
// warning naming Flotilla and the metric counting it).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import jsonpatch from 'fast-json-patch';
import { cluster, clusterOverridePolicy, deployment, type Obj } from '../../test/builders.js';
import { clusterInfo, OverrideSet } from '../engine/index.js';
import { WebhookHandler } from './handler.js';
import type { OverrideSource } from './overriding.js';

function source(policies: Obj[], opts: { ready?: boolean; namespaces?: Record<string, Record<string, string>> } = {}) {
  const set = new OverrideSet(clusterInfo(cluster('eu-1', { labels: { env: 'prod' }, region: 'eu-west-1' })));
  for (const p of policies) assert.equal(set.upsert(p), undefined);
  const s: OverrideSource = {
    set,
    ready: () => opts.ready ?? true,
    namespaceLabels: (ns) => opts.namespaces?.[ns],
  };
  return s;
}

const mirror = clusterOverridePolicy('mirror', [
  {
    targetCluster: { clusterNames: ['eu-1'] },
    overriders: { imageOverrider: [{ component: 'Registry', operator: 'replace', value: 'mirror.${cluster.region}' }] },
  },
]);

function review(object: unknown, extra: Obj = {}): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u1', operation: 'CREATE', namespace: 'default', object, ...extra },
  });
}

function post(h: WebhookHandler, body: string) {
  const res = h.handle({ method: 'POST', url: '/override?timeout=10s', contentType: 'application/json', body });
  assert.equal(res.status, 200, res.body);
  const r = (JSON.parse(res.body) as { response: Obj }).response;
  const patch = typeof r.patch === 'string' ? (JSON.parse(Buffer.from(r.patch, 'base64').toString()) as unknown[]) : [];
  return { r, patch };
}

const apply = (o: unknown, patch: unknown[]) =>
  jsonpatch.applyPatch(structuredClone(o), patch as jsonpatch.Operation[]).newDocument as Obj;

describe('/override', () => {
  it('is absent unless the handler is given policies', () => {
    const res = new WebhookHandler().handle({
      method: 'POST',
      url: '/override',
      contentType: 'application/json',
      body: review({}),
    });
    assert.equal(res.status, 404);
  });

  it('answers a JSON patch that gives the object as the engine admits it', () => {
    const s = source([mirror]);
    const h = new WebhookHandler({ overrides: s });
    const object = deployment();
    const { r, patch } = post(h, review(object));
    assert.equal(r.allowed, true);
    assert.equal(r.patchType, 'JSONPatch');
    const out = apply(object, patch);
    assert.deepEqual(out, s.set.admit({ object, operation: 'CREATE' }).object);
    assert.equal(
      ((out.spec as Obj).template as { spec: { containers: Obj[] } }).spec.containers[0]?.image,
      'mirror.eu-west-1/nginx:1.25',
    );
  });

  it('a dry run gets the same patch (the route has no side effects)', () => {
    const h = new WebhookHandler({ overrides: source([mirror]) });
    assert.deepEqual(post(h, review(deployment(), { dryRun: true })).patch, post(h, review(deployment())).patch);
  });

  it('UPDATE and DELETE: nothing unless a rule names the operation', () => {
    const h = new WebhookHandler({ overrides: source([mirror]) });
    assert.deepEqual(post(h, review(deployment(), { operation: 'UPDATE', oldObject: deployment() })).patch, []);
    assert.deepEqual(post(h, review(null, { operation: 'DELETE', oldObject: deployment() })).patch, []);
  });

  it('fills the namespace from the request only to match, and does not add it to the object', () => {
    const s = source([
      {
        apiVersion: 'policy.flotilla.io/v1beta1',
        kind: 'OverridePolicy',
        metadata: { name: 'op', namespace: 'shop' },
        spec: { overrideRules: [{ overriders: { labelsOverrider: [{ operator: 'add', value: { a: 'b' } }] } }] },
      },
    ]);
    const h = new WebhookHandler({ overrides: s });
    const object = deployment();
    delete (object.metadata as Obj).namespace;
    const { patch } = post(h, review(object, { namespace: 'shop' }));
    assert.deepEqual(apply(object, patch).metadata, { name: 'web', labels: { a: 'b' } });
  });

  it("leaves Flotilla's and Gatekeeper's own objects alone", () => {
    const h = new WebhookHandler({
      overrides: source([
        clusterOverridePolicy('all', [{ overriders: { labelsOverrider: [{ operator: 'add', value: { a: 'b' } }] } }]),
      ]),
    });
    assert.deepEqual(post(h, review(mirror)).patch, []);
    assert.deepEqual(
      post(h, review({ apiVersion: 'mutations.gatekeeper.sh/v1', kind: 'Assign', metadata: { name: 'x' }, spec: {} }))
        .patch,
      [],
    );
    assert.notDeepEqual(post(h, review(deployment())).patch, []);
  });

  it('admits unmodified, with a warning naming Flotilla, counted by reason: not loaded, too big, failing rule', () => {
    const failing = clusterOverridePolicy('broken', [
      { overriders: { plaintext: [{ operator: 'replace', path: '/spec/missing', value: 1 }] } },
    ]);
    const notReady = new WebhookHandler({ overrides: source([mirror], { ready: false }) });
    const broken = new WebhookHandler({ overrides: source([failing]) });
    const cases: Array<[WebhookHandler, unknown, RegExp, string]> = [
      [notReady, deployment(), /has not loaded the override policies yet/, 'not_ready'],
      [
        broken,
        deployment(),
        /ClusterOverridePolicy broken: spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]/,
        'rule_failed',
      ],
      [broken, { ...deployment(), data: Array.from({ length: 100_001 }, () => 0) }, /values/, 'too_big'],
    ];
    for (const [h, object, warning, reason] of cases) {
      const { r, patch } = post(h, review(object));
      assert.equal(r.allowed, true);
      assert.deepEqual(patch, []);
      assert.match((r.warnings as string[])[0] ?? '', /^Flotilla admission override not applied: /);
      assert.match((r.warnings as string[])[0] ?? '', warning);
      assert.match(
        h.registry.render(),
        new RegExp(`flotilla_webhook_override_unmodified_total\\{reason="${reason}"\\} 1`),
      );
    }
  });

  it('admits unmodified, with a warning and counted, when its answer would pass the response limit', () => {
    // The override adds a 4,000-character label: the patch alone passes a 2,000-byte answer limit.
    const long = clusterOverridePolicy('long', [
      { overriders: { labelsOverrider: [{ operator: 'add', value: { note: 'n'.repeat(4000) } }] } },
    ]);
    const h = new WebhookHandler({ overrides: source([long]), maxResponseBytes: 2000 });
    const { r, patch } = post(h, review(deployment()));
    assert.equal(r.allowed, true, JSON.stringify(r));
    assert.equal(r.uid, 'u1');
    assert.deepEqual(patch, []);
    assert.match(
      (r.warnings as string[])[0] ?? '',
      /^Flotilla admission override not applied: the answer would be \d+ bytes/,
    );
    assert.match(h.registry.render(), /flotilla_webhook_override_unmodified_total\{reason="too_large"\} 1/);
    // The same object under a larger limit gets its patch: the limit, not the policy, made the difference.
    const roomy = new WebhookHandler({ overrides: source([long]) });
    assert.notDeepEqual(post(roomy, review(deployment())).patch, []);
  });

  it('Gatekeeper mutators read the namespace labels the source knows', () => {
    const assignMeta = {
      apiVersion: 'mutations.gatekeeper.sh/v1',
      kind: 'AssignMetadata',
      metadata: { name: 'm' },
      spec: {
        match: { namespaceSelector: { matchLabels: { env: 'prod' } } },
        location: 'metadata.labels.audited',
        parameters: { assign: { value: 'yes' } },
      },
    };
    const h = new WebhookHandler({ overrides: source([assignMeta], { namespaces: { default: { env: 'prod' } } }) });
    assert.deepEqual(post(h, review(deployment())).patch, [
      { op: 'add', path: '/metadata/labels', value: { audited: 'yes' } },
    ]);
    const other = new WebhookHandler({ overrides: source([assignMeta], { namespaces: { default: { env: 'dev' } } }) });
    assert.deepEqual(post(other, review(deployment())).patch, []);
  });
  it('a Gatekeeper mutator that selects the object but is not applied is a warning in the answer and a log line', () => {
    const applyTo = [{ groups: ['apps'], versions: ['v1'], kinds: ['Deployment'] }];
    const refused = {
      apiVersion: 'mutations.gatekeeper.sh/v1',
      kind: 'Assign',
      metadata: { name: 'label-via-assign' },
      spec: { applyTo, location: 'metadata.labels.team', parameters: { assign: { value: 'a' } } },
    };
    const good = {
      apiVersion: 'mutations.gatekeeper.sh/v1',
      kind: 'AssignMetadata',
      metadata: { name: 'audited' },
      spec: { location: 'metadata.labels.audited', parameters: { assign: { value: 'yes' } } },
    };
    const s = source([good]);
    assert.match(s.set.upsert(refused) ?? '', /can't change metadata/);
    const logged: Array<{ msg: string; fields: Obj }> = [];
    const logger = {
      error: () => undefined,
      warn: (msg: string, fields?: Obj) => void logged.push({ msg, fields: fields ?? {} }),
    };
    const h = new WebhookHandler({ overrides: s, logger });
    const { r, patch } = post(h, review(deployment()));
    assert.deepEqual(patch, [{ op: 'add', path: '/metadata/labels', value: { audited: 'yes' } }]);
    assert.match(
      String((r.warnings as string[])[0]),
      /^Flotilla: Gatekeeper Assign\/label-via-assign is not applied: .*can't change metadata/,
    );
    assert.equal(logged.length, 1);
    assert.match(String(logged[0]?.fields.message), /Assign\/label-via-assign/);
    // An object it does not select gets no warning.
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } };
    assert.equal(post(h, review(cm)).r.warnings, undefined);
  });
});
