// Generated requests against the in-process handler: whatever the method, path and body, the handler
// returns (never throws) a well-formed answer, and every review it answers echoes the review's apiVersion
// and the request's uid. A second property aims hostile shapes at it (multi-megabyte templated strings,
// nesting far past the limit, prototype keys at every level) and checks the answers stay small and no
// prototype changes; fuzz-wire.test.ts does the same over the network with clients that never read.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';

import { CONVERSION_ANNOTATION } from '../../api/conversion/index.js';
import { WebhookHandler, type HttpRequest, type HttpResponse } from './handler.js';
import { MAX_MESSAGE_CHARS, MAX_RESPONSE_BYTES, MAX_WARNING_CHARS, MAX_WARNINGS } from './limits.js';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const RUNS = 12_000;

const junk = fc.jsonValue({ maxDepth: 3 });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof(arb, arb, junk, fc.constant(undefined));
/** Usually right, sometimes junk or missing: most inputs get past decoding, some do not. */
const mostly = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 18, arbitrary: arb },
    { weight: 1, arbitrary: junk },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
const rec = (model: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record(model, { requiredKeys: [], noNullPrototype: true });

const policyAPIVersion = fc.constantFrom(
  'policy.flotilla.io/v1alpha1',
  'policy.flotilla.io/v1beta1',
  'policy.karmada.io/v1alpha1',
  'cluster.flotilla.io/v1alpha1',
  'apps/v1',
  'v1',
);
const policyKind = fc.constantFrom(
  'PropagationPolicy',
  'ClusterPropagationPolicy',
  'OverridePolicy',
  'ClusterOverridePolicy',
  'Cluster',
  'Deployment',
);
const selector = rec({
  apiVersion: maybe(fc.constantFrom('apps/v1', 'v1')),
  kind: maybe(fc.constantFrom('Deployment', 'ServiceImport')),
  namespace: maybe(fc.string({ maxLength: 5 })),
  name: maybe(fc.string({ maxLength: 5 })),
});
const overriders = rec({
  plaintext: maybe(
    fc.array(
      rec({
        path: maybe(fc.constantFrom('/spec/replicas', 'x', '', '/a[name=b]/c')),
        operator: maybe(fc.constantFrom('add', 'remove', 'replace', 'bogus')),
        value: junk,
      }),
      { maxLength: 3 },
    ),
  ),
  labelsOverrider: maybe(
    fc.array(
      rec({
        operator: maybe(fc.constantFrom('add', 'remove')),
        value: maybe(fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }))),
      }),
      { maxLength: 2 },
    ),
  ),
  fieldOverrider: maybe(
    fc.array(rec({ fieldPath: maybe(fc.string({ maxLength: 6 })), json: junk, yaml: junk }), { maxLength: 2 }),
  ),
});
const spec = rec({
  resourceSelectors: maybe(fc.array(maybe(selector), { maxLength: 3 })),
  overrideRules: maybe(
    fc.array(
      maybe(
        rec({
          targetCluster: maybe(rec({ clusterNames: maybe(fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 })) })),
          overriders: maybe(overriders),
        }),
      ),
      { maxLength: 3 },
    ),
  ),
  targetCluster: junk,
  overriders: maybe(overriders),
  association: maybe(fc.boolean()),
  placement: maybe(
    rec({
      spreadConstraints: maybe(fc.array(junk, { maxLength: 2 })),
      replicaScheduling: maybe(rec({ replicaSchedulingType: maybe(fc.constantFrom('Divided', 'Duplicated')) })),
    }),
  ),
  failover: maybe(
    rec({ application: maybe(rec({ purgeMode: maybe(fc.constant('Gracefully')), gracePeriodSeconds: junk })) }),
  ),
});
const metadata = rec({
  name: maybe(fc.string({ maxLength: 8 })),
  namespace: maybe(fc.string({ maxLength: 8 })),
  labels: maybe(fc.dictionary(fc.string({ maxLength: 8 }), junk)),
  annotations: maybe(
    fc.oneof(
      fc.dictionary(fc.string({ maxLength: 8 }), fc.string()),
      fc.string().map((v) => ({ [CONVERSION_ANNOTATION]: v })),
      fc.constant({ [CONVERSION_ANNOTATION]: '{"folded":{},"ignored":{"overriders":1}}' }),
    ),
  ),
});
const object = mostly(
  fc.record(
    { apiVersion: mostly(policyAPIVersion), kind: mostly(policyKind), metadata: mostly(metadata), spec: mostly(spec) },
    { requiredKeys: ['apiVersion', 'kind'], noNullPrototype: true },
  ),
);

const uid = fc.oneof(
  { weight: 18, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: junk },
);
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
  fc.record(
    { apiVersion: mostly(fc.constantFrom(...apiVersions)), kind: mostly(fc.constant(kind)), request: mostly(request) },
    { noNullPrototype: true },
  );
const admissionReview = reviewOf(
  ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'],
  'AdmissionReview',
  admissionRequest,
);
const conversionReview = reviewOf(
  ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'],
  'ConversionReview',
  conversionRequest,
);
const review = fc.oneof(admissionReview, conversionReview);

/** A body as sent, or damaged: other JSON, bytes that are not JSON, or a review cut short. */
const bodyFrom = (r: fc.Arbitrary<unknown>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 12, arbitrary: r.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: junk.map((v) => JSON.stringify(v) ?? '') },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 64 }) },
    {
      weight: 1,
      arbitrary: fc.tuple(r, fc.nat()).map(([v, n]) => {
        const s = JSON.stringify(v);
        return s.slice(0, n % (s.length + 1));
      }),
    },
  );

const path = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('/validate', '/mutate', '/convert') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '/healthz',
      '/readyz',
      '/metrics',
      '/validate?timeout=10s',
      '/',
      '//validate',
      '/convert/',
      '/%2e%2e',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map((s) => `/${s}`) },
);
const method = fc.oneof(
  { weight: 9, arbitrary: fc.constant('POST') },
  { weight: 1, arbitrary: fc.constantFrom('GET', 'HEAD', 'PUT', 'DELETE', 'PATCH') },
);
/** The header as the apiserver sends it, mostly; sometimes another type, a foreign charset, or none. */
const contentType = fc.oneof(
  { weight: 38, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8') },
  { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/yaml', 'application/json; charset=latin1', '') },
  { weight: 1, arbitrary: fc.constant(undefined) },
);
const withContentType = (r: fc.Arbitrary<Omit<HttpRequest, 'contentType'>>): fc.Arbitrary<HttpRequest> =>
  fc.tuple(r, contentType).map(([req, type]) => (type === undefined ? req : { ...req, contentType: type }));
const request: fc.Arbitrary<HttpRequest> = fc.oneof(
  {
    weight: 4,
    arbitrary: withContentType(
      fc.record({
        method,
        url: fc.constantFrom('/validate', '/mutate', '/validate?timeout=10s'),
        body: bodyFrom(admissionReview),
      }),
    ),
  },
  {
    weight: 2,
    arbitrary: withContentType(
      fc.record({ method, url: fc.constantFrom('/convert', '/convert?timeout=30s'), body: bodyFrom(conversionReview) }),
    ),
  },
  { weight: 1, arbitrary: withContentType(fc.record({ method, url: path, body: bodyFrom(review) })) },
);

const ALLOWED_STATUS = new Set([200, 400, 404, 405, 413, 415, 503]);

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
    if (!r.allowed)
      assert.ok(isObject(r.status) && typeof r.status.message === 'string' && typeof r.status.code === 'number');
    // A 500 inside the review means judging the request failed (a stack overflow, a throw): never expected.
    if (!r.allowed) assert.notEqual((r.status as Obj).code, 500, (r.status as Obj).message as string);
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
    // The generators are aimed at reviews: a large share (about half) must get past decoding, and every kind of
    // answer must occur, or the run proves little.
    assert.ok(reviews > RUNS * 0.4, `only ${reviews} requests were answered with a review`);
    const metrics = h.registry.render();
    for (const outcome of [
      'allowed',
      'patched',
      'denied',
      'error',
      'success',
      'failure',
      'bad_request',
      'not_found',
      'method_not_allowed',
      'unsupported_media_type',
    ]) {
      assert.match(
        metrics,
        new RegExp(`^flotilla_webhook_requests_total\\{path="[^"]+",outcome="${outcome}"\\} [1-9]`, 'm'),
        outcome,
      );
    }
  });

  void it('answers pathologically nested input without throwing', () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const deepObject = `{"apiVersion":"policy.flotilla.io/v1alpha1","kind":"OverridePolicy","metadata":{"name":"x"},"spec":{"overriders":{"plaintext":[{"path":"/a","operator":"add","value":${deep}}]}}}`;
    const h = new WebhookHandler();
    for (const url of ['/validate', '/mutate']) {
      const body = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"d","operation":"CREATE","object":${deepObject}}}`;
      const req = { method: 'POST', url, contentType: 'application/json', body };
      assertWellFormed(req, h.handle(req));
    }
    const body = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"d","desiredAPIVersion":"policy.flotilla.io/v1beta1","objects":[${deepObject}]}}`;
    const req = { method: 'POST', url: '/convert', contentType: 'application/json', body };
    assertWellFormed(req, h.handle(req));
  });
});

// ---- hostile shapes ----------------------------------------------------------------------------------

const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'] as const;

/** Sets an own data property whatever the key (`o.__proto__ = v` would change o's prototype instead). */
const defineOwn = (o: Obj, key: string, value: unknown): void => {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
};

/**
 * `value` with prototype-named keys added to its objects, at every level: to each object whose turn
 * `salt` says (cycling through it), a key from PROTOTYPE_KEYS holding a junk value taken from `junk`.
 */
function salted(value: unknown, salt: readonly number[], junkValues: readonly unknown[], turn = { n: 0 }): unknown {
  if (Array.isArray(value)) return value.map((v) => salted(v, salt, junkValues, turn));
  if (!isObject(value)) return value;
  const out: Obj = {};
  const pick = salt[turn.n++ % salt.length] ?? 0;
  if (pick % 3 !== 0)
    defineOwn(out, PROTOTYPE_KEYS[pick % PROTOTYPE_KEYS.length] ?? '__proto__', junkValues[pick % junkValues.length]);
  for (const k of Object.keys(value)) defineOwn(out, k, salted(value[k], salt, junkValues, turn));
  return out;
}

/** Strings the expansion and path parsers see: multi-megabyte, fresh each time, with a variable in them. */
const variable = fc.constantFrom(
  '${cluster.name}',
  "${cluster.labels['__proto__']}",
  "${cluster.labels['constructor']}",
  '${cluster.nope}',
  '${',
  '$${cluster.name}',
  '',
);
const hugeString = fc
  .tuple(fc.integer({ min: 1, max: 1_400_000 }), variable, fc.string({ maxLength: 8 }))
  .map(([n, v, tail]) => `/${'a'.repeat(n)}${v}${tail}`);

/** Where a hostile value goes in an OverridePolicy: the slots paths and templated values are read from. */
const SLOTS = [
  'path',
  'value',
  'image',
  'label',
  'annotation',
  'field',
  'args',
  'selectorName',
  'clusterName',
  'labelKey',
] as const;
type Slot = (typeof SLOTS)[number];
function hostilePolicy(slot: Slot, v: unknown, kind: string): Obj {
  const plaintext = [
    { path: slot === 'path' ? v : '/spec/replicas', operator: 'replace', value: slot === 'value' ? v : 1 },
  ];
  return {
    apiVersion: 'policy.flotilla.io/v1alpha1',
    kind,
    metadata: {
      name: 'web',
      namespace: 'shop',
      labels: slot === 'labelKey' ? { [String(v)]: 'x' } : { 'policy.flotilla.io/permanent-id': 'id' },
    },
    spec: {
      resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: slot === 'selectorName' ? v : 'web' }],
      overrideRules: [
        {
          targetCluster: { clusterNames: [slot === 'clusterName' ? v : 'east'] },
          overriders: {
            plaintext,
            imageOverrider: [
              { component: 'Registry', operator: 'replace', value: slot === 'image' ? v : 'mirror.${cluster.region}' },
            ],
            labelsOverrider: [{ operator: 'add', value: { app: slot === 'label' ? v : 'web' } }],
            annotationsOverrider: [{ operator: 'add', value: { note: slot === 'annotation' ? v : '${cluster.name}' } }],
            argsOverrider: [{ containerName: 'web', operator: 'add', value: [slot === 'args' ? v : '--x'] }],
            fieldOverrider: [
              {
                fieldPath: '/data/app.yaml',
                yaml: [{ subPath: '/a', operator: 'replace', value: slot === 'field' ? v : 'b' }],
              },
            ],
          },
        },
      ],
    },
  };
}

/** JSON text nested `depth` levels, of objects, lists, or both, keyed by prototype names. */
const deepText = fc
  .tuple(
    fc.integer({ min: 400, max: 30_000 }),
    fc.constantFrom('objects', 'lists', 'both'),
    fc.constantFrom(...PROTOTYPE_KEYS),
  )
  .map(([depth, shape, key]) => {
    const open = shape === 'objects' ? `{"${key}":` : shape === 'lists' ? '[' : `{"${key}":[`;
    const close = shape === 'objects' ? '}' : shape === 'lists' ? ']' : ']}';
    const levels = shape === 'both' ? Math.ceil(depth / 2) : depth;
    return `${open.repeat(levels)}"\${cluster.name}"${close.repeat(levels)}`;
  });

const hostileKind = fc.constantFrom('OverridePolicy', 'ClusterOverridePolicy', 'PropagationPolicy');
const routeAndReview = (object: Obj, route: string): { url: string; review: Obj } =>
  route === '/convert'
    ? {
        url: route,
        review: {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          request: { uid: 'hostile', desiredAPIVersion: 'policy.flotilla.io/v1beta1', objects: [object] },
        },
      }
    : {
        url: route,
        review: {
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          request: { uid: 'hostile', operation: 'CREATE', object, oldObject: object },
        },
      };

const hostileRequest: fc.Arbitrary<HttpRequest> = fc
  .record({
    route: fc.constantFrom('/validate', '/mutate', '/convert'),
    kind: hostileKind,
    slot: fc.constantFrom(...SLOTS),
    payload: fc.oneof(
      { weight: 2, arbitrary: hugeString.map((v) => ({ text: false as const, v })) },
      { weight: 2, arbitrary: deepText.map((v) => ({ text: true as const, v })) },
      { weight: 1, arbitrary: junk.map((v) => ({ text: false as const, v })) },
    ),
    salt: fc.array(fc.nat({ max: 30 }), { minLength: 1, maxLength: 8 }),
  })
  .map(({ route, kind, slot, payload, salt }) => {
    // Deep text is spliced in after serializing: JSON.stringify itself runs out of stack on it.
    const object = salted(hostilePolicy(slot, payload.text ? 'DEEP' : payload.v, kind), salt, [
      'x',
      1,
      null,
      { a: 'b' },
      ['${cluster.name}'],
    ]) as Obj;
    const { url, review } = routeAndReview(object, route);
    const json = JSON.stringify(review);
    const body = payload.text ? json.replaceAll('"DEEP"', payload.v) : json;
    return { method: 'POST', url, contentType: 'application/json', body };
  });

/** The most a denial, a failed conversion or an HTTP error can take: a message, warnings and the envelope. */
const SMALL_ANSWER_BYTES = 6 * (MAX_MESSAGE_CHARS + MAX_WARNINGS * (MAX_WARNING_CHARS + 4)) + 1024;

void describe('webhook handler under hostile shapes', () => {
  void it('answers multi-megabyte templated strings, deep nesting and prototype keys everywhere with small, well-formed answers', () => {
    const h = new WebhookHandler();
    const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
    let tooBig = 0;
    fc.assert(
      fc.property(hostileRequest, (req) => {
        const res = h.handle(req);
        assertWellFormed(req, res);
        assert.doesNotMatch(res.body, /call stack/i);
        const answer = JSON.parse(res.body) as Obj;
        const r = isObject(answer.response) ? answer.response : {};
        const succeeded = r.allowed === true || (isObject(r.result) && r.result.status === 'Success');
        assert.ok(
          Buffer.byteLength(res.body) <= (succeeded ? MAX_RESPONSE_BYTES : SMALL_ANSWER_BYTES),
          `${req.url}: answer of ${res.body.length} bytes`,
        );
        if (/nested more than|Too many/.test(res.body)) tooBig++;
      }),
      { numRuns: 150 },
    );
    assert.ok(tooBig > 10, `only ${tooBig} requests were refused as too deep`);
    assert.deepStrictEqual(
      Object.getOwnPropertyNames(Object.prototype).sort(),
      prototypeKeys,
      'Object.prototype gained or lost members',
    );
  });
});
