import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';

import { CONVERSION_ANNOTATION, V1ALPHA1, V1BETA1 } from '../../api/conversion/index.js';
import { PERMANENT_ID_LABEL } from '../../api/defaulting/index.js';
import {
  clusterOverridePolicy,
  overridePolicy,
  propagationPolicy,
  selectDeployment,
  type Obj,
} from '../../test/builders.js';
import { WebhookHandler, type HttpResponse } from './handler.js';
import { admissionRequestReview, conversionRequestReview } from './reviews.js';
import type { AdmissionReview, ConversionReview } from './types.js';

const ADMISSION_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const;
const CONVERSION_VERSIONS = ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'] as const;

const handler = (opts: ConstructorParameters<typeof WebhookHandler>[0] = {}) =>
  new WebhookHandler({ newId: () => 'new-id', ...opts });
const post = (h: WebhookHandler, url: string, body: unknown): HttpResponse =>
  h.handle({
    method: 'POST',
    url,
    contentType: 'application/json',
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const admission = (r: HttpResponse): AdmissionReview => {
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as AdmissionReview;
};
const conversion = (r: HttpResponse): ConversionReview => {
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as ConversionReview;
};

const withId = (o: Obj): Obj => ({
  ...o,
  metadata: { ...(o.metadata as Obj), labels: { [PERMANENT_ID_LABEL]: 'id-0' } },
});
const pp = () => withId(propagationPolicy('web', 'shop', [selectDeployment('web')]));
const op = (rules: Obj[]) => overridePolicy('web', 'shop', rules, [selectDeployment('web')]);
const replicas = (n: number): Obj => ({
  overriders: { plaintext: [{ path: '/spec/replicas', operator: 'replace', value: n }] },
});

void describe('/validate', () => {
  for (const apiVersion of ADMISSION_VERSIONS) {
    void it(`allows a valid policy and echoes the ${apiVersion} review's apiVersion and uid`, () => {
      const review = admission(
        post(handler(), '/validate', admissionRequestReview({ apiVersion, uid: 'u-1', object: pp() })),
      );
      assert.equal(review.apiVersion, apiVersion);
      assert.equal(review.kind, 'AdmissionReview');
      assert.deepStrictEqual(review.response, { uid: 'u-1', allowed: true });
    });
  }

  void it('denies a v1beta1 object carrying a field v1beta1 does not have, naming the field', () => {
    const bad = { ...op([]), apiVersion: V1BETA1, spec: { overriders: {} } };
    const review = admission(post(handler(), '/validate', admissionRequestReview({ uid: 'u-2', object: bad })));
    assert.equal(review.response?.allowed, false);
    assert.equal(review.response?.uid, 'u-2');
    assert.equal(review.response?.status?.code, 403);
    assert.match(review.response?.status?.message ?? '', /spec\.overriders/);
  });

  void it('denies an invalid policy with the field path in the message', () => {
    const object = withId(propagationPolicy('web', 'shop', [{ ...selectDeployment('web'), namespace: 'elsewhere' }]));
    const review = admission(post(handler(), '/validate', admissionRequestReview({ uid: 'u-6', object })));
    assert.equal(review.response?.uid, 'u-6');
    assert.equal(review.response?.allowed, false);
    assert.equal(review.response?.status?.code, 403);
    assert.match(
      review.response?.status?.message ?? '',
      /^spec\.resourceSelectors\[0\]\.namespace: Invalid value: "elsewhere"/,
    );
  });

  void it('requires the permanent id the mutating webhook sets', () => {
    const review = admission(
      post(
        handler(),
        '/validate',
        admissionRequestReview({ object: propagationPolicy('web', 'shop', [selectDeployment('web')]) }),
      ),
    );
    assert.equal(review.response?.allowed, false);
    assert.match(
      review.response?.status?.message ?? '',
      new RegExp(`metadata\\.labels.*${PERMANENT_ID_LABEL.replace(/\./g, '\\.')}`),
    );
  });

  void it('warns about two rules writing the same field for the same clusters', () => {
    const review = admission(
      post(handler(), '/validate', admissionRequestReview({ object: op([replicas(2), replicas(3)]) })),
    );
    assert.equal(review.response?.allowed, true);
    assert.equal(review.response?.warnings?.length, 1);
    assert.match(review.response?.warnings?.[0] ?? '', /spec\.overrideRules\[1\].*spec\.overrideRules\[0\]/);
  });

  void it('warns about a rule naming a cluster the hub does not have, when the clusters are known', () => {
    const rules = [{ targetCluster: { clusterNames: ['east', 'wset'] }, ...replicas(1) }];
    const known = admission(
      post(
        handler({ inventory: { clusters: () => [{ metadata: { name: 'east' } }] } }),
        '/validate',
        admissionRequestReview({ object: op(rules) }),
      ),
    );
    assert.equal(known.response?.allowed, true);
    assert.equal(known.response?.warnings?.length, 1);
    assert.match(
      known.response?.warnings?.[0] ?? '',
      /spec\.overrideRules\[0\]\.targetCluster\.clusterNames\[1\].*"wset"/,
    );
    const unknown = admission(post(handler(), '/validate', admissionRequestReview({ object: op(rules) })));
    assert.equal(unknown.response?.warnings, undefined);
  });

  void it('warns about a selector whose kind is not served under its apiVersion', () => {
    const object = overridePolicy('web', 'shop', [replicas(1)], [{ apiVersion: 'v1', kind: 'Deployment' }]);
    const review = admission(post(handler(), '/validate', admissionRequestReview({ object })));
    assert.equal(review.response?.allowed, true);
    assert.match(review.response?.warnings?.join('\n') ?? '', /spec\.resourceSelectors\[0\]/);
  });

  void it('validates a v1beta1 policy as it is stored', () => {
    const beta = { ...op([replicas(2), replicas(2)]), apiVersion: V1BETA1 };
    const review = admission(
      post(handler(), '/validate', admissionRequestReview({ apiVersion: 'admission.k8s.io/v1beta1', object: beta })),
    );
    assert.equal(review.response?.allowed, true);
    assert.match(review.response?.warnings?.[0] ?? '', /spec\.overrideRules\[1\]/);
  });

  void it('allows kinds it does not judge without looking at them', () => {
    const review = admission(
      post(
        handler(),
        '/validate',
        admissionRequestReview({
          uid: 'u-3',
          object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
        }),
      ),
    );
    assert.deepStrictEqual(review.response, { uid: 'u-3', allowed: true });
  });

  void it('tolerates the timeout query the apiserver appends', () => {
    assert.equal(
      admission(post(handler(), '/validate?timeout=5s', admissionRequestReview({ object: pp() }))).response?.allowed,
      true,
    );
  });
});

void describe('/mutate', () => {
  for (const apiVersion of ADMISSION_VERSIONS) {
    void it(`answers a ${apiVersion} review with a JSON patch that applies the defaults`, () => {
      const object = propagationPolicy('web', 'shop', [selectDeployment('web')], { spreadConstraints: [{}] });
      const review = admission(post(handler(), '/mutate', admissionRequestReview({ apiVersion, uid: 'u-4', object })));
      assert.equal(review.apiVersion, apiVersion);
      assert.equal(review.response?.uid, 'u-4');
      assert.equal(review.response?.allowed, true);
      assert.equal(review.response?.patchType, 'JSONPatch');
      const ops = JSON.parse(
        Buffer.from(review.response?.patch ?? '', 'base64').toString('utf8'),
      ) as jsonpatch.Operation[];
      const patched = jsonpatch.applyPatch(structuredClone(object), ops, true, false).newDocument;
      assert.deepStrictEqual(patched, {
        ...object,
        metadata: { name: 'web', namespace: 'shop', labels: { [PERMANENT_ID_LABEL]: 'new-id' } },
        spec: {
          resourceSelectors: [{ ...selectDeployment('web'), namespace: 'shop' }],
          placement: { spreadConstraints: [{ spreadByField: 'cluster', minGroups: 1 }] },
        },
      });
    });
  }

  void it('sends no patch when nothing needs a default', () => {
    const object = clusterOverridePolicy('all', [replicas(1)]);
    assert.deepStrictEqual(
      admission(post(handler(), '/mutate', admissionRequestReview({ uid: 'u-5', object }))).response,
      { uid: 'u-5', allowed: true },
    );
  });

  void it('keeps the stored permanent id on update', () => {
    const stored = withId(propagationPolicy('web', 'shop', [{ ...selectDeployment(), namespace: 'shop' }]));
    const object = propagationPolicy('web', 'shop', [{ ...selectDeployment(), namespace: 'shop' }]);
    const review = admission(
      post(handler(), '/mutate', admissionRequestReview({ operation: 'UPDATE', object, oldObject: stored })),
    );
    const ops = JSON.parse(Buffer.from(review.response?.patch ?? '', 'base64').toString('utf8')) as unknown;
    assert.deepStrictEqual(ops, [{ op: 'add', path: '/metadata/labels', value: { [PERMANENT_ID_LABEL]: 'id-0' } }]);
  });
});

void describe('/convert', () => {
  const alpha = (name: string) => ({
    ...overridePolicy(name, 'shop', []),
    spec: { overriders: replicas(1).overriders },
    metadata: { name, namespace: 'shop', uid: `uid-${name}`, resourceVersion: '7', labels: { a: 'b' } },
  });

  for (const apiVersion of CONVERSION_VERSIONS) {
    void it(`converts every object of a ${apiVersion} review in order`, () => {
      const objects = ['a', 'b', 'c'].map(alpha);
      const review = conversion(
        post(handler(), '/convert', conversionRequestReview(objects, V1BETA1, { apiVersion, uid: 'c-1' })),
      );
      assert.equal(review.apiVersion, apiVersion);
      assert.equal(review.kind, 'ConversionReview');
      assert.equal(review.response?.uid, 'c-1');
      assert.deepStrictEqual(review.response?.result, { status: 'Success' });
      const converted = review.response?.convertedObjects ?? [];
      assert.deepStrictEqual(
        converted.map((o) => (o.metadata as Obj).name),
        ['a', 'b', 'c'],
      );
      for (const [i, o] of converted.entries()) {
        assert.equal(o.apiVersion, V1BETA1);
        assert.deepStrictEqual(o.spec, { overrideRules: [replicas(1)] });
        const { annotations, ...rest } = o.metadata as Obj;
        assert.deepStrictEqual(rest, objects[i]?.metadata, 'metadata other than annotations is untouched');
        assert.ok(CONVERSION_ANNOTATION in (annotations as Obj));
      }
    });
  }

  void it('converts back to what was written', () => {
    const h = handler();
    const objects = ['a', 'b'].map(alpha);
    const there = conversion(post(h, '/convert', conversionRequestReview(objects, V1BETA1))).response?.convertedObjects;
    const back = conversion(post(h, '/convert', conversionRequestReview(there ?? [], V1ALPHA1))).response
      ?.convertedObjects;
    assert.deepStrictEqual(back, objects);
  });

  void it('fails the whole review, with no objects, when one object cannot be converted', () => {
    const objects = [
      alpha('a'),
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'shop' } },
      alpha('c'),
    ];
    const review = conversion(post(handler(), '/convert', conversionRequestReview(objects, V1BETA1, { uid: 'c-2' })));
    assert.equal(review.response?.uid, 'c-2');
    assert.deepStrictEqual(review.response?.convertedObjects, []);
    assert.equal(review.response?.result.status, 'Failure');
    assert.match(
      review.response?.result.message ?? '',
      /^objects\[1\] \(Deployment shop\/d\): apiVersion "apps\/v1" is not convertible/,
    );
  });

  void it('fails a review that asks for a version it does not serve', () => {
    const review = conversion(
      post(handler(), '/convert', conversionRequestReview([alpha('a')], 'policy.flotilla.io/v2')),
    );
    assert.equal(review.response?.result.status, 'Failure');
    assert.match(review.response?.result.message ?? '', /desired apiVersion "policy.flotilla.io\/v2" is not supported/);
  });
});

void describe('bad input', () => {
  const big = 'x'.repeat(3 * 1024 * 1024 + 1);
  const cases: Array<{ name: string; method?: string; url: string; body: string; status: number; message: RegExp }> = [
    { name: 'a body over 3 MiB', url: '/validate', body: big, status: 413, message: /larger than 3145728 bytes/ },
    {
      name: 'a body that is not JSON',
      url: '/validate',
      body: '{"apiVersion": ',
      status: 400,
      message: /request body is not JSON/,
    },
    {
      name: 'a JSON body that is not an object',
      url: '/mutate',
      body: '[1,2]',
      status: 400,
      message: /expected a AdmissionReview object, got an array/,
    },
    {
      name: 'a ConversionReview sent to /validate',
      url: '/validate',
      body: JSON.stringify(conversionRequestReview([], V1BETA1)),
      status: 400,
      message: /expected kind AdmissionReview .* got kind "ConversionReview"/,
    },
    {
      name: 'an AdmissionReview sent to /convert',
      url: '/convert',
      body: JSON.stringify(admissionRequestReview({ object: {} })),
      status: 400,
      message: /expected kind ConversionReview/,
    },
    {
      name: 'an AdmissionReview of an unknown version',
      url: '/validate',
      body: JSON.stringify({ apiVersion: 'admission.k8s.io/v2', kind: 'AdmissionReview', request: {} }),
      status: 400,
      message: /apiVersion "admission.k8s.io\/v2"/,
    },
    {
      name: 'an unknown path',
      url: '/validate-everything',
      body: '{}',
      status: 404,
      message: /no handler for \/validate-everything/,
    },
    {
      name: 'a GET on a review path',
      method: 'GET',
      url: '/convert',
      body: '',
      status: 405,
      message: /GET is not allowed on \/convert; use POST/,
    },
    {
      name: 'a POST on a health path',
      url: '/healthz',
      body: '',
      status: 405,
      message: /POST is not allowed on \/healthz; use GET or HEAD/,
    },
  ];
  for (const c of cases) {
    void it(`answers ${c.name} with ${c.status} and a message`, () => {
      const r = handler().handle({
        method: c.method ?? 'POST',
        url: c.url,
        contentType: 'application/json',
        body: c.body,
      });
      assert.equal(r.status, c.status);
      const status = JSON.parse(r.body) as { kind: string; message: string; code: number };
      assert.equal(status.kind, 'Status');
      assert.equal(status.code, c.status);
      assert.match(status.message, c.message);
    });
  }

  const inReview: Array<{ name: string; url: string; body: Obj; uid: string; message: RegExp }> = [
    {
      name: 'an AdmissionReview without a request',
      url: '/validate',
      body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' },
      uid: '',
      message: /AdmissionReview has no request/,
    },
    {
      name: 'a request without an object on CREATE',
      url: '/mutate',
      body: {
        apiVersion: 'admission.k8s.io/v1beta1',
        kind: 'AdmissionReview',
        request: { uid: 'r-1', operation: 'CREATE' },
      },
      uid: 'r-1',
      message: /request.object must be an object for CREATE/,
    },
    {
      name: 'a request with an unknown operation',
      url: '/validate',
      body: {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: { uid: 'r-2', operation: 'PATCH', object: {} },
      },
      uid: 'r-2',
      message: /request.operation must be one of/,
    },
  ];
  for (const c of inReview) {
    void it(`answers ${c.name} with an error inside the review`, () => {
      const review = admission(post(handler(), c.url, c.body));
      assert.equal(review.apiVersion, c.body.apiVersion);
      assert.equal(review.response?.uid, c.uid);
      assert.equal(review.response?.allowed, false);
      assert.equal(review.response?.status?.code, 400);
      assert.match(review.response?.status?.message ?? '', c.message);
    });
  }

  void it('answers a ConversionReview without a request with a Failure result', () => {
    const review = conversion(
      post(handler(), '/convert', { apiVersion: 'apiextensions.k8s.io/v1beta1', kind: 'ConversionReview' }),
    );
    assert.deepStrictEqual(review.response, {
      uid: '',
      convertedObjects: [],
      result: { status: 'Failure', message: 'ConversionReview has no request' },
    });
  });
});

void describe('Content-Type', () => {
  const body = JSON.stringify(admissionRequestReview({ uid: 'ct', object: pp() }));
  for (const contentType of [
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON;charset="UTF-8"',
    'application/json; foo=bar',
  ]) {
    void it(`accepts ${contentType}`, () => {
      assert.equal(
        admission(handler().handle({ method: 'POST', url: '/validate', contentType, body })).response?.uid,
        'ct',
      );
    });
  }
  for (const contentType of [
    undefined,
    '',
    'text/plain',
    'application/jsonx',
    'application/yaml',
    'application/json; charset=latin1',
    'multipart/form-data; boundary=x',
  ]) {
    void it(`refuses ${contentType === undefined ? 'a request without one' : JSON.stringify(contentType)} with 415 on every review path`, () => {
      for (const url of ['/validate', '/mutate', '/convert']) {
        const r = handler().handle({
          method: 'POST',
          url,
          body,
          ...(contentType === undefined ? {} : { contentType }),
        });
        assert.equal(r.status, 415, url);
        const status = JSON.parse(r.body) as { kind: string; code: number; message: string };
        assert.equal(status.kind, 'Status');
        assert.equal(status.code, 415);
        assert.match(status.message, /^Content-Type must be application\/json, got /);
      }
    });
  }
  void it('counts refusals as unsupported_media_type', () => {
    const h = handler();
    h.handle({ method: 'POST', url: '/validate', contentType: 'text/plain', body });
    assert.match(
      h.registry.render(),
      /^flotilla_webhook_requests_total\{path="\/validate",outcome="unsupported_media_type"\} 1$/m,
    );
  });
});

void describe('objects too big to judge', () => {
  const nested = (depth: number): unknown => {
    let v: unknown = 'leaf';
    for (let i = 0; i < depth; i++) v = { a: v };
    return v;
  };
  const deepPolicy = (depth: number): Obj => ({
    ...op([{ overriders: { plaintext: [{ path: '/a', operator: 'add', value: nested(depth) }] } }]),
  });
  const deepTopLevel = (depth: number): Obj => ({ ...op([]), x: nested(depth) });
  /** The body as JSON text: JSON.stringify itself runs out of stack on the deepest of these. */
  const withDeepValue = (review: Obj, depth: number): string =>
    JSON.stringify(review).replace('"DEEP"', `${'{"a":'.repeat(depth)}"leaf"${'}'.repeat(depth)}`);

  for (const depth of [600, 2_000, 4_000, 10_000, 20_000]) {
    void it(`denies on /validate and /mutate, and fails on /convert, an object nested ${depth} levels, naming the field`, () => {
      const inValue = { ...op([{ overriders: { plaintext: [{ path: '/a', operator: 'add', value: 'DEEP' }] } }]) };
      const topLevel = { ...op([]), x: 'DEEP' };
      for (const [field, object] of [
        ['spec', inValue],
        ['x', topLevel],
      ] as const) {
        for (const url of ['/validate', '/mutate']) {
          const review = admission(
            post(handler(), url, withDeepValue(admissionRequestReview({ uid: 'deep', object }), depth)),
          );
          assert.equal(review.response?.uid, 'deep');
          assert.equal(review.response?.allowed, false, `${url} ${field}`);
          assert.equal(review.response?.status?.code, 403);
          assert.equal(
            review.response?.status?.message,
            `${field}: Forbidden: must not be nested more than 512 levels deep`,
            `${url} ${field}`,
          );
        }
        const converted = conversion(
          post(
            handler(),
            '/convert',
            withDeepValue(conversionRequestReview([object], V1BETA1, { uid: 'deep' }), depth),
          ),
        );
        assert.equal(converted.response?.uid, 'deep');
        assert.equal(converted.response?.result.status, 'Failure');
        assert.equal(
          converted.response?.result.message,
          `objects[0] (OverridePolicy shop/web): ${field}: Forbidden: must not be nested more than 512 levels deep`,
        );
      }
    });
  }

  void it('judges an object nested 500 levels as usual', () => {
    const review = admission(post(handler(), '/validate', admissionRequestReview({ object: deepPolicy(490) })));
    assert.equal(review.response?.allowed, true, review.response?.status?.message);
    assert.equal(
      conversion(post(handler(), '/convert', conversionRequestReview([deepPolicy(490)], V1BETA1))).response?.result
        .status,
      'Success',
    );
  });

  void it('names the stored object when it is oldObject that nests too deep', () => {
    const review = admission(
      post(
        handler(),
        '/validate',
        admissionRequestReview({ operation: 'UPDATE', object: op([]), oldObject: deepTopLevel(600) }),
      ),
    );
    assert.equal(
      review.response?.status?.message,
      'oldObject.x: Forbidden: must not be nested more than 512 levels deep',
    );
  });

  void it('denies an object of more than 100,000 values before validating, defaulting or converting it', () => {
    const object = propagationPolicy(
      'web',
      'shop',
      Array.from({ length: 100_000 }, () => ({})),
    );
    for (const url of ['/validate', '/mutate']) {
      const review = admission(post(handler(), url, admissionRequestReview({ object })));
      assert.equal(review.response?.allowed, false);
      assert.match(review.response?.status?.message ?? '', /^<root>: Too many: must hold at most 100000 values/);
    }
    assert.match(
      conversion(post(handler(), '/convert', conversionRequestReview([object], V1BETA1))).response?.result.message ??
        '',
      /^objects\[0\] \(PropagationPolicy shop\/web\): <root>: Too many/,
    );
  });
});

void describe('answers stay small whatever the request', () => {
  void it('denies a 3 MB value that fails several rules in an answer of kilobytes, not megabytes', () => {
    // Each quote takes two bytes in the body, four once quoted in a message and that message put in JSON.
    const big = '"'.repeat(1_400_000);
    const object = { ...op([]), metadata: { name: 'web', namespace: 'shop', labels: { k: big } } };
    const r = post(handler(), '/validate', admissionRequestReview({ object }));
    const review = admission(r);
    assert.equal(review.response?.allowed, false);
    assert.ok(r.body.length < 64 * 1024, `answer of ${r.body.length} bytes`);
    assert.match(review.response?.status?.message ?? '', /\.\.\. \(truncated\)/);
  });

  void it('lists at most 100 errors, then says how many more there are', () => {
    const rules = Array.from({ length: 150 }, () => ({
      overriders: { plaintext: [{ path: 'no-slash', operator: 'remove' }] },
    }));
    const review = admission(post(handler(), '/validate', admissionRequestReview({ object: op(rules) })));
    const message = review.response?.status?.message ?? '';
    assert.match(message, / and 50 more errors$/);
    assert.ok(message.length <= 16 * 1024 + 20);
  });

  void it('carries at most 50 warnings of at most 1,024 characters, and says how many more there were', () => {
    const spec = { ...(op([]).spec as Obj) };
    for (let i = 0; i < 80; i++) spec[`unknown-${i}-${'k'.repeat(2000)}`] = 1;
    const review = admission(post(handler(), '/validate', admissionRequestReview({ object: { ...op([]), spec } })));
    const warnings = review.response?.warnings ?? [];
    assert.equal(warnings.length, 51);
    assert.ok(warnings.every((w) => w.length <= 1024 + 20));
    assert.equal(warnings[50], '30 more warnings not shown');
  });

  void it('answers a review whose answer would pass the response limit with an error inside it', () => {
    const objects = ['a', 'b', 'c'].map((name) => ({ ...op([replicas(1)]), metadata: { name, namespace: 'shop' } }));
    const h = handler({ maxResponseBytes: 1024 });
    const converted = conversion(post(h, '/convert', conversionRequestReview(objects, V1BETA1, { uid: 'c-big' })));
    assert.equal(converted.response?.uid, 'c-big');
    assert.deepStrictEqual(converted.response?.convertedObjects, []);
    assert.match(
      converted.response?.result.message ?? '',
      /^the answer would be \d+ bytes, more than the 1024 this webhook sends$/,
    );
    const object = propagationPolicy(
      'web',
      'shop',
      Array.from({ length: 40 }, () => selectDeployment('web')),
    );
    const mutated = admission(post(h, '/mutate', admissionRequestReview({ uid: 'm-big', object })));
    assert.equal(mutated.response?.uid, 'm-big');
    assert.equal(mutated.response?.allowed, false);
    assert.equal(mutated.response?.status?.code, 413);
  });
});

void describe('/healthz, /readyz and /metrics', () => {
  void it('answers HEAD like GET', () => {
    const h = handler();
    for (const url of ['/healthz', '/readyz', '/metrics'])
      assert.equal(h.handle({ method: 'HEAD', url, body: '' }).status, 200, url);
  });

  void it('reports health always and readiness only when ready', () => {
    let ready = false;
    const h = handler({ ready: () => ready });
    assert.equal(h.handle({ method: 'GET', url: '/healthz', body: '' }).status, 200);
    assert.equal(h.handle({ method: 'GET', url: '/readyz', body: '' }).status, 503);
    ready = true;
    assert.equal(h.handle({ method: 'GET', url: '/readyz', body: '' }).status, 200);
  });

  void it('counts requests and latency per path and outcome in Prometheus text', () => {
    const h = handler();
    post(h, '/validate', admissionRequestReview({ object: pp() }));
    post(h, '/validate', admissionRequestReview({ object: pp() }));
    post(h, '/convert', 'nope');
    h.handle({ method: 'GET', url: '/nowhere', body: '' });
    const r = h.handle({ method: 'GET', url: '/metrics', body: '' });
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'] ?? '', /^text\/plain; version=0\.0\.4/);
    assert.match(r.body, /^flotilla_webhook_requests_total\{path="\/validate",outcome="allowed"\} 2$/m);
    assert.match(r.body, /^flotilla_webhook_requests_total\{path="\/convert",outcome="bad_request"\} 1$/m);
    assert.match(r.body, /^flotilla_webhook_requests_total\{path="other",outcome="not_found"\} 1$/m);
    assert.match(r.body, /^flotilla_webhook_request_duration_seconds_count\{path="\/validate",outcome="allowed"\} 2$/m);
  });
});
