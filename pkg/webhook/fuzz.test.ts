// Generated requests against the in-process handler: whatever the method, path and body, the handler
// returns (never throws) a well-formed answer, and every review it answers echoes the review's apiVersion
// and the request's uid.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';

import { CONVERSION_ANNOTATION } from '../../api/conversion/index.js';
import { WebhookHandler, type HttpRequest, type HttpResponse } from './handler.js';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const RUNS = 12_000;

const junk = fc.jsonValue({ maxDepth: 3 });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof(arb, arb, junk, fc.constant(undefined));
/** Usually right, sometimes junk or missing: most inputs get past decoding, some do not. */
const mostly = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 18, arbitrary: arb }, { weight: 1, arbitrary: junk }, { weight: 1, arbitrary: fc.constant(undefined) });
const rec = (model: Record<string, fc.Arbitrary<unknown>>) => fc.record(model, { requiredKeys: [], noNullPrototype: true });

const policyAPIVersion = fc.constantFrom('policy.flotilla.io/v1alpha1', 'policy.flotilla.io/v1beta1', 'policy.karmada.io/v1alpha1', 'cluster.flotilla.io/v1alpha1', 'apps/v1', 'v1');
const policyKind = fc.constantFrom('PropagationPolicy', 'ClusterPropagationPolicy', 'OverridePolicy', 'ClusterOverridePolicy', 'Cluster', 'Deployment');
const selector = rec({ apiVersion: maybe(fc.constantFrom('apps/v1', 'v1')), kind: maybe(fc.constantFrom('Deployment', 'ServiceImport')), namespace: maybe(fc.string({ maxLength: 5 })), name: maybe(fc.string({ maxLength: 5 })) });
const overriders = rec({
  plaintext: maybe(fc.array(rec({ path: maybe(fc.constantFrom('/spec/replicas', 'x', '', '/a[name=b]/c')), operator: maybe(fc.constantFrom('add', 'remove', 'replace', 'bogus')), value: junk }), { maxLength: 3 })),
  labelsOverrider: maybe(fc.array(rec({ operator: maybe(fc.constantFrom('add', 'remove')), value: maybe(fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }))) }), { maxLength: 2 })),
  fieldOverrider: maybe(fc.array(rec({ fieldPath: maybe(fc.string({ maxLength: 6 })), json: junk, yaml: junk }), { maxLength: 2 })),
});
const spec = rec({
  resourceSelectors: maybe(fc.array(maybe(selector), { maxLength: 3 })),
  overrideRules: maybe(fc.array(maybe(rec({ targetCluster: maybe(rec({ clusterNames: maybe(fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 })) })), overriders: maybe(overriders) })), { maxLength: 3 })),
  targetCluster: junk,
  overriders: maybe(overriders),
  association: maybe(fc.boolean()),
  placement: maybe(rec({ spreadConstraints: maybe(fc.array(junk, { maxLength: 2 })), replicaScheduling: maybe(rec({ replicaSchedulingType: maybe(fc.constantFrom('Divided', 'Duplicated')) })) })),
  failover: maybe(rec({ application: maybe(rec({ purgeMode: maybe(fc.constant('Gracefully')), gracePeriodSeconds: junk })) })),
});
const metadata = rec({
  name: maybe(fc.string({ maxLength: 8 })),
  namespace: maybe(fc.string({ maxLength: 8 })),
  labels: maybe(fc.dictionary(fc.string({ maxLength: 8 }), junk)),
  annotations: maybe(fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), fc.string()), fc.string().map((v) => ({ [CONVERSION_ANNOTATION]: v })), fc.constant({ [CONVERSION_ANNOTATION]: '{"folded":{},"ignored":{"overriders":1}}' }))),
});
const object = mostly(
  fc.record(
    { apiVersion: mostly(policyAPIVersion), kind: mostly(policyKind), metadata: mostly(metadata), spec: mostly(spec) },
    { requiredKeys: ['apiVersion', 'kind'], noNullPrototype: true },
  ),
);

const uid = fc.oneof({ weight: 18, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.constant('') }, { weight: 1, arbitrary: junk });
const admissionRequest = fc.record(
  {
    uid,
    operation: mostly(fc.constantFrom('CREATE', 'CREATE', 'UPDATE', 'DELETE', 'CONNECT', 'PATCH')),
    namespace: maybe(fc.string({ maxLength: 6 })),
    kind: junk,
    object,
    oldObject: object,
    dryRun: junk,
  },
  { requiredKeys: ['uid', 'operation', 'object'], noNullPrototype: true },
);
const conversionRequest = fc.record(
  { uid, desiredAPIVersion: mostly(policyAPIVersion), objects: mostly(fc.array(object, { maxLength: 4 })) },
  { requiredKeys: ['uid', 'desiredAPIVersion', 'objects'], noNullPrototype: true },
);

const reviewOf = (apiVersions: string[], kind: string, request: fc.Arbitrary<unknown>) =>
  fc.record({ apiVersion: mostly(fc.constantFrom(...apiVersions)), kind: mostly(fc.constant(kind)), request: mostly(request) }, { noNullPrototype: true });
const admissionReview = reviewOf(['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'], 'AdmissionReview', admissionRequest);
const conversionReview = reviewOf(['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'], 'ConversionReview', conversionRequest);
const review = fc.oneof(admissionReview, conversionReview);

/** A body as sent, or damaged: other JSON, bytes that are not JSON, or a review cut short. */
const bodyFrom = (r: fc.Arbitrary<unknown>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 12, arbitrary: r.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: junk.map((v) => JSON.stringify(v) ?? '') },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 64 }) },
    { weight: 1, arbitrary: fc.tuple(r, fc.nat()).map(([v, n]) => { const s = JSON.stringify(v); return s.slice(0, n % (s.length + 1)); }) },
  );

const path = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('/validate', '/mutate', '/convert') },
  { weight: 1, arbitrary: fc.constantFrom('/healthz', '/readyz', '/metrics', '/validate?timeout=10s', '/', '//validate', '/convert/', '/%2e%2e') },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map((s) => `/${s}`) },
);
const method = fc.oneof({ weight: 9, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH') });
const request: fc.Arbitrary<HttpRequest> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ method, url: fc.constantFrom('/validate', '/mutate', '/validate?timeout=10s'), body: bodyFrom(admissionReview) }) },
  { weight: 2, arbitrary: fc.record({ method, url: fc.constantFrom('/convert', '/convert?timeout=30s'), body: bodyFrom(conversionReview) }) },
  { weight: 1, arbitrary: fc.record({ method, url: path, body: bodyFrom(review) }) },
);

const ALLOWED_STATUS = new Set([200, 400, 404, 405, 413, 503]);

/** Asserts the response is one a client can read, and that a review answer belongs to its request. */
function assertWellFormed(req: HttpRequest, res: HttpResponse): void {
  assert.ok(ALLOWED_STATUS.has(res.status), `status ${res.status}`);
  assert.equal(typeof res.body, 'string');
  const route = req.url.split('?')[0];
  const isReviewRoute = route === '/validate' || route === '/mutate' || route === '/convert';
  if (res.status !== 200) {
    const status = JSON.parse(res.body) as Obj;
    assert.equal(status.kind, 'Status');
    assert.equal(status.code, res.status);
    assert.ok(typeof status.message === 'string' && status.message.length > 0);
    return;
  }
  if (!isReviewRoute) return;
  const sent = JSON.parse(typeof req.body === 'string' ? req.body : req.body.toString()) as Obj;
  const answer = JSON.parse(res.body) as Obj;
  assert.equal(answer.apiVersion, sent.apiVersion);
  assert.equal(answer.kind, sent.kind);
  assert.ok(isObject(answer.response));
  const r = answer.response;
  const sentUID = isObject(sent.request) && typeof sent.request.uid === 'string' ? sent.request.uid : '';
  assert.equal(r.uid, sentUID);
  if (route === '/convert') {
    assert.ok(Array.isArray(r.convertedObjects));
    assert.ok(isObject(r.result));
    if (r.result.status === 'Success') {
      assert.equal(r.convertedObjects.length, (sent.request as { objects: unknown[] }).objects.length);
    } else {
      assert.equal(r.result.status, 'Failure');
      assert.equal(r.convertedObjects.length, 0);
      assert.ok(typeof r.result.message === 'string' && r.result.message.length > 0);
    }
  } else {
    assert.equal(typeof r.allowed, 'boolean');
    if (!r.allowed) assert.ok(isObject(r.status) && typeof r.status.message === 'string' && typeof r.status.code === 'number');
    if (r.patch !== undefined) {
      assert.equal(r.patchType, 'JSONPatch');
      assert.equal(typeof r.patch, 'string');
      assert.ok(Array.isArray(JSON.parse(Buffer.from(r.patch as string, 'base64').toString('utf8'))));
    }
  }
}

void describe('webhook handler under generated input', () => {
  void it(`answers ${RUNS} generated requests with well-formed responses and never throws`, () => {
    const h = new WebhookHandler();
    let reviews = 0;
    fc.assert(
      fc.property(request, (req) => {
        const res = h.handle(req);
        assertWellFormed(req, res);
        if (res.status === 200 && req.url.startsWith('/') && /^\/(validate|mutate|convert)/.test(req.url)) reviews++;
      }),
      { numRuns: RUNS },
    );
    // The generators are aimed at reviews: most requests must get past decoding, and every kind of
    // answer must occur, or the run proves little.
    assert.ok(reviews > RUNS / 2, `only ${reviews} requests were answered with a review`);
    const metrics = h.registry.render();
    for (const outcome of ['allowed', 'patched', 'denied', 'error', 'success', 'failure', 'bad_request', 'not_found', 'method_not_allowed']) {
      assert.match(metrics, new RegExp(`^flotilla_webhook_requests_total\\{path="[^"]+",outcome="${outcome}"\\} [1-9]`, 'm'), outcome);
    }
  });

  void it('answers pathologically nested input without throwing', () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const deepObject = `{"apiVersion":"policy.flotilla.io/v1alpha1","kind":"OverridePolicy","metadata":{"name":"x"},"spec":{"overriders":{"plaintext":[{"path":"/a","operator":"add","value":${deep}}]}}}`;
    const h = new WebhookHandler();
    for (const url of ['/validate', '/mutate']) {
      const body = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"d","operation":"CREATE","object":${deepObject}}}`;
      assertWellFormed({ method: 'POST', url, body }, h.handle({ method: 'POST', url, body }));
    }
    const body = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"d","desiredAPIVersion":"policy.flotilla.io/v1beta1","objects":[${deepObject}]}}`;
    assertWellFormed({ method: 'POST', url: '/convert', body }, h.handle({ method: 'POST', url: '/convert', body }));
  });
});
