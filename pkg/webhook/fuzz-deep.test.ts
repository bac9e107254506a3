// Values nested thousands deep in every field of every review, on every review route: the handler answers
// 200 or 400 (never 500, never a throw), quickly, with a small answer, and logs no internal error. Deep
// values parse (V8's JSON.parse is iterative) but anything that walks them recursively — JSON.stringify
// of a value quoted in a message, structuredClone, a recursive validator — overflows the stack.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';

import { clusterInfo, OverrideSet } from '../engine/index.js';
import { WebhookHandler } from './handler.js';
import type { OverrideSource } from './overriding.js';
import { MAX_MESSAGE_CHARS } from './limits.js';

type Obj = Record<string, unknown>;
/** A string no review holds, replaced in the JSON text by the deep value. */
const PLACEHOLDER = 'deep-value-goes-here-7f3a';

const policy = (): Obj => ({
  apiVersion: 'policy.flotilla.io/v1alpha1',
  kind: 'PropagationPolicy',
  metadata: { name: 'p', namespace: 'shop', labels: { a: 'b' } },
  spec: {
    resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment' }],
    placement: { clusterAffinity: { clusterNames: ['m1'] } },
  },
});
const admission = (): Obj => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'u-1',
    operation: 'UPDATE',
    kind: { group: 'policy.flotilla.io', version: 'v1alpha1', kind: 'PropagationPolicy' },
    name: 'p',
    namespace: 'shop',
    dryRun: false,
    object: policy(),
    oldObject: policy(),
  },
});
const conversion = (): Obj => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request: { uid: 'u-1', desiredAPIVersion: 'policy.flotilla.io/v1beta1', objects: [policy()] },
});

/** Every path to a field of `o` (objects walked, arrays by index), `o` itself excluded. */
function paths(o: unknown, prefix: string[] = []): string[][] {
  if (o === null || typeof o !== 'object') return [];
  const out: string[][] = [];
  for (const [k, v] of Object.entries(o as Obj)) {
    out.push([...prefix, k]);
    out.push(...paths(v, [...prefix, k]));
  }
  return out;
}

/** The review as JSON text with the value at `path` replaced by `deep` (text, spliced in: it cannot be stringified). */
function withDeep(review: Obj, path: string[], deep: string): string {
  const copy = structuredClone(review);
  let cur: Obj = copy;
  for (const k of path.slice(0, -1)) cur = cur[k] as Obj;
  cur[path[path.length - 1] ?? ''] = PLACEHOLDER;
  return JSON.stringify(copy).replace(`"${PLACEHOLDER}"`, deep);
}

const deepArray = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
const workload = (): Obj => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'u-1',
    operation: 'CREATE',
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    name: 'web',
    namespace: 'shop',
    object: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop', labels: { a: 'b' } },
      spec: { template: { spec: { containers: [{ name: 'web', image: 'nginx', args: ['x'] }] } } },
    },
  },
});
const ROUTES: Array<[string, () => Obj]> = [
  ['/validate', admission],
  ['/mutate', admission],
  ['/convert', conversion],
  ['/override', workload],
];

/** Policies for /override that touch every part of the workload above. */
function overrideSource(): OverrideSource {
  const set = new OverrideSet(clusterInfo({ metadata: { name: 'm1' } }));
  set.upsert({
    apiVersion: 'policy.flotilla.io/v1beta1',
    kind: 'ClusterOverridePolicy',
    metadata: { name: 'all' },
    spec: {
      overrideRules: [
        {
          targetOperations: ['CREATE', 'UPDATE'],
          overriders: {
            imageOverrider: [{ component: 'Registry', operator: 'replace', value: 'r' }],
            argsOverrider: [{ containerName: 'web', operator: 'add', value: ['--y'] }],
            labelsOverrider: [{ operator: 'add', value: { c: 'd' } }],
            plaintext: [{ operator: 'add', path: '/spec/template/spec/containers/[name=*]/x', value: 1 }],
          },
        },
      ],
    },
  });
  set.upsert({
    apiVersion: 'mutations.gatekeeper.sh/v1',
    kind: 'Assign',
    metadata: { name: 'a' },
    spec: {
      applyTo: [{ groups: ['apps'], versions: ['v1'], kinds: ['Deployment'] }],
      location: 'spec.template.spec.containers[name:*].imagePullPolicy',
      parameters: { assign: { value: 'Always' } },
    },
  });
  return { set, ready: () => true, namespaceLabels: () => ({}) };
}

describe('deep values in every field of every review', () => {
  const errors: string[] = [];
  const handler = new WebhookHandler({ logger: { error: (m) => void errors.push(m) }, overrides: overrideSource() });

  for (const [route, make] of ROUTES) {
    for (const path of paths(make())) {
      it(`${route}: ${path.join('.')} nested 5,000 deep (array and object) is answered 200 or 400`, () => {
        for (const deep of [deepArray(5_000), deepObject(5_000)]) {
          const res = handler.handle({
            method: 'POST',
            url: route,
            contentType: 'application/json',
            body: withDeep(make(), path, deep),
          });
          assert.ok(res.status === 200 || res.status === 400, `status ${res.status}: ${res.body.slice(0, 300)}`);
          assert.ok(res.body.length < 64 * 1024, `answer of ${res.body.length} bytes`);
          const parsed = JSON.parse(res.body) as Obj;
          const message =
            res.status === 400
              ? parsed.message
              : (((parsed.response as Obj).status ?? (parsed.response as Obj).result) as Obj | undefined)?.message;
          if (typeof message === 'string')
            assert.ok(message.length <= MAX_MESSAGE_CHARS, `message of ${message.length} characters`);
          if (route === '/override' && res.status === 200)
            assert.notEqual(((parsed.response as Obj).status as Obj | undefined)?.code, 500, res.body.slice(0, 300));
        }
        assert.deepEqual(errors, [], 'no internal error logged');
      });
    }
  }

  it('says "is missing" for a review without kind or apiVersion, and quotes a deep one in a few characters', () => {
    const missing = handler.handle({
      method: 'POST',
      url: '/convert',
      contentType: 'application/json',
      body: '{"request":{}}',
    });
    assert.equal(missing.status, 400);
    assert.match((JSON.parse(missing.body) as Obj).message as string, /got kind is missing, apiVersion is missing/);
    const deep = handler.handle({
      method: 'POST',
      url: '/validate',
      contentType: 'application/json',
      body: `{"kind":${deepArray(4_400)},"apiVersion":"v1"}`,
    });
    assert.equal(deep.status, 400);
    assert.match((JSON.parse(deep.body) as Obj).message as string, /got kind \[\[\[\[…\]\]\]\], apiVersion "v1"$/);
  });

  it('converts no object whose apiVersion is missing, and says so', () => {
    const review = conversion();
    delete ((review.request as Obj).objects as Obj[])[0]?.apiVersion;
    const res = handler.handle({
      method: 'POST',
      url: '/convert',
      contentType: 'application/json',
      body: JSON.stringify(review),
    });
    const result = ((JSON.parse(res.body) as Obj).response as Obj).result as Obj;
    assert.equal(result.status, 'Failure');
    assert.match(result.message as string, /apiVersion is missing; supported: /);
  });

  it('stays within bounds for random depths and shapes in random fields', () => {
    const all = ROUTES.flatMap(([route, make]) => paths(make()).map((p) => ({ route, make, path: p })));
    fc.assert(
      fc.property(
        fc.constantFrom(...all),
        fc.integer({ min: 100, max: 20_000 }),
        fc.boolean(),
        (target, depth, asArray) => {
          const body = withDeep(target.make(), target.path, asArray ? deepArray(depth) : deepObject(depth));
          const res = handler.handle({ method: 'POST', url: target.route, contentType: 'application/json', body });
          return (res.status === 200 || res.status === 400) && res.body.length < 64 * 1024;
        },
      ),
      { numRuns: 300, seed: 24 },
    );
    assert.deepEqual(errors, []);
  });
});
