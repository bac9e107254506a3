// Admission-time overrides: which rules act on which operation, the extension conditions (pathTests,
// globs, onlyIfAbsent), idempotence, and the property that admission as cluster X gives what
// `render --cluster X` gives for the same template.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  at,
  cluster,
  clusterOverridePolicy,
  clusterPropagationPolicy,
  deployment,
  overridePolicy,
  selectDeployment,
  type Obj,
} from '../../test/builders.js';
import { ADDED_ANNOTATION } from './additions.js';
import { OverrideSet } from './admit.js';
import { clusterInfo } from './inputs.js';
import { renderDetailed } from './render.js';

const member = clusterInfo(cluster('eu-1', { labels: { env: 'prod' }, region: 'eu-west-1' }));

function setWith(...objects: Obj[]): OverrideSet {
  const set = new OverrideSet(member);
  for (const o of objects) assert.equal(set.upsert(o), undefined);
  return set;
}

const v1beta1 = (o: Obj): Obj => ({ ...o, apiVersion: 'policy.flotilla.io/v1beta1' });

describe('admission: operations', () => {
  const labelRule = (extra: Obj = {}): Obj => ({
    overriders: { labelsOverrider: [{ operator: 'add', value: { team: 'blue' } }] },
    ...extra,
  });

  it('a rule without targetOperations acts on CREATE only', () => {
    const set = setWith(overridePolicy('op', 'default', [labelRule()]));
    assert.equal(at(set.admit({ object: deployment(), operation: 'CREATE' }).object, 'metadata.labels.team'), 'blue');
    const update = set.admit({ object: deployment(), operation: 'UPDATE' });
    assert.equal(update.changed, false);
    assert.equal(at(update.object, 'metadata.labels'), undefined);
  });

  it('targetOperations: [UPDATE] acts on UPDATE and not on CREATE (nor in render)', () => {
    const policy = v1beta1(overridePolicy('op', 'default', [labelRule({ targetOperations: ['UPDATE'] })]));
    const set = setWith(policy);
    assert.equal(set.admit({ object: deployment(), operation: 'CREATE' }).changed, false);
    assert.equal(at(set.admit({ object: deployment(), operation: 'UPDATE' }).object, 'metadata.labels.team'), 'blue');
    const r = renderDetailed({
      objects: [deployment(), policy, cluster('eu-1'), clusterPropagationPolicy('all', [selectDeployment()])],
    });
    assert.equal(at(r.placements[0]?.object, 'metadata.labels.team'), undefined);
  });

  it('targetCluster and ${cluster.*} variables see the cluster the webhook runs in', () => {
    const set = setWith(
      overridePolicy('op', 'default', [
        {
          targetCluster: { labelSelector: { matchLabels: { env: 'prod' } } },
          overriders: { annotationsOverrider: [{ operator: 'add', value: { region: '${cluster.region}' } }] },
        },
        { targetCluster: { clusterNames: ['us-1'] }, overriders: labelRule().overriders },
      ]),
    );
    const out = set.admit({ object: deployment(), operation: 'CREATE' }).object;
    assert.equal(at(out, 'metadata.annotations.region'), 'eu-west-1');
    assert.equal(at(out, 'metadata.labels.team'), undefined);
  });

  it('the input object is never changed', () => {
    const set = setWith(overridePolicy('op', 'default', [labelRule()]));
    const input = deployment();
    const before = JSON.stringify(input);
    set.admit({ object: input, operation: 'CREATE' });
    assert.equal(JSON.stringify(input), before);
  });

  it('a failing rule is an error naming the policy and rule', () => {
    const set = setWith(
      overridePolicy('broken', 'default', [
        { overriders: { plaintext: [{ operator: 'replace', path: '/spec/nothing/here', value: 1 }] } },
      ]),
    );
    assert.throws(
      () => set.admit({ object: deployment(), operation: 'CREATE' }),
      /OverridePolicy default\/broken: spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]/,
    );
  });

  it('removing or changing a policy changes the next admission of the same object', () => {
    const set = setWith(overridePolicy('op', 'default', [labelRule()]));
    assert.equal(at(set.admit({ object: deployment(), operation: 'CREATE' }).object, 'metadata.labels.team'), 'blue');
    set.upsert(
      overridePolicy('op', 'default', [
        { overriders: { labelsOverrider: [{ operator: 'add', value: { team: 'green' } }] } },
      ]),
    );
    assert.equal(at(set.admit({ object: deployment(), operation: 'CREATE' }).object, 'metadata.labels.team'), 'green');
    set.remove({ apiVersion: 'policy.flotilla.io/v1alpha1', kind: 'OverridePolicy', namespace: 'default', name: 'op' });
    assert.equal(set.admit({ object: deployment(), operation: 'CREATE' }).changed, false);
  });
});

describe('extension conditions', () => {
  const twoContainers = () =>
    deployment('web', 'default', {
      containers: [
        { name: 'web', image: 'nginx', imagePullPolicy: 'IfNotPresent' },
        { name: 'sidecar', image: 'envoy' },
        { image: 'unnamed' },
      ],
    });

  it('[name=*] applies to every list item that has the key, and to none when there are none', () => {
    const set = setWith(
      v1beta1(
        overridePolicy('op', 'default', [
          {
            overriders: {
              plaintext: [
                { operator: 'add', path: '/spec/template/spec/containers/[name=*]/imagePullPolicy', value: 'Always' },
              ],
            },
          },
        ]),
      ),
    );
    const out = set.admit({ object: twoContainers(), operation: 'CREATE' }).object;
    assert.deepEqual(
      (at(out, 'spec.template.spec.containers') as Obj[]).map((c) => c.imagePullPolicy),
      ['Always', 'Always', undefined],
    );
    const none = deployment('web', 'default', { containers: [] });
    assert.equal(set.admit({ object: none, operation: 'CREATE' }).changed, false);
  });

  it('pathTests MustNotExist keeps a value already set; MustExist needs the sub-path', () => {
    const set = setWith(
      v1beta1(
        overridePolicy('op', 'default', [
          {
            overriders: {
              plaintext: [
                {
                  operator: 'add',
                  path: '/spec/template/spec/containers/[name=*]/imagePullPolicy',
                  value: 'Always',
                  pathTests: [
                    { subPath: '/spec/template/spec/containers/[name=*]/imagePullPolicy', condition: 'MustNotExist' },
                  ],
                },
                {
                  operator: 'add',
                  path: '/spec/template/spec/containers/[name=*]/securityContext/runAsNonRoot',
                  value: true,
                  pathTests: [
                    { subPath: '/spec/template/spec/containers/[name=*]/securityContext', condition: 'MustExist' },
                  ],
                },
              ],
            },
          },
        ]),
      ),
    );
    const input = twoContainers();
    ((at(input, 'spec.template.spec.containers') as Obj[])[1] as Obj).securityContext = {};
    const containers = at(
      set.admit({ object: input, operation: 'CREATE' }).object,
      'spec.template.spec.containers',
    ) as Obj[];
    assert.deepEqual(
      containers.map((c) => c.imagePullPolicy),
      ['IfNotPresent', 'Always', undefined],
    );
    assert.deepEqual(
      containers.map((c) => c.securityContext),
      [undefined, { runAsNonRoot: true }, undefined],
    );
  });

  it('onlyIfAbsent keeps labels and annotations already present', () => {
    const set = setWith(
      v1beta1(
        overridePolicy('op', 'default', [
          {
            overriders: {
              labelsOverrider: [{ operator: 'add', value: { team: 'blue', tier: 'web' }, onlyIfAbsent: true }],
            },
          },
        ]),
      ),
    );
    const out = set.admit({
      object: deployment('web', 'default', { labels: { team: 'red' } }),
      operation: 'CREATE',
    }).object;
    assert.deepEqual(at(out, 'metadata.labels'), { team: 'red', tier: 'web' });
  });

  it('globs remove every matching item, last first', () => {
    const set = setWith(
      v1beta1(
        overridePolicy('op', 'default', [
          { overriders: { plaintext: [{ operator: 'remove', path: '/spec/template/spec/containers/[name=*]' }] } },
        ]),
      ),
    );
    const out = set.admit({ object: twoContainers(), operation: 'CREATE' }).object;
    assert.deepEqual(at(out, 'spec.template.spec.containers'), [{ image: 'unnamed' }]);
  });
});

describe('idempotence', () => {
  const argsRule = (operations?: string[]): Obj => ({
    overriders: { argsOverrider: [{ containerName: 'web', operator: 'add', value: ['--verbose'] }] },
    ...(operations ? { targetOperations: operations } : {}),
  });
  const args = (o: Obj): unknown => at(o, 'spec.template.spec.containers[0].args');

  it('an idempotent rule set leaves no record, and its output admits unchanged', () => {
    const set = setWith(
      overridePolicy('op', 'default', [
        { overriders: { imageOverrider: [{ component: 'Registry', operator: 'replace', value: 'mirror.local' }] } },
      ]),
    );
    const first = set.admit({ object: deployment(), operation: 'CREATE' });
    assert.equal(first.changed, true);
    assert.equal(at(first.object, `metadata.annotations`), undefined);
    const second = set.admit({ object: first.object, operation: 'CREATE' });
    assert.equal(second.changed, false);
  });

  it('an appending rule records its addition, so admitting the output again (changed or not) adds nothing', () => {
    const set = setWith(overridePolicy('op', 'default', [argsRule()]));
    const first = set.admit({ object: deployment(), operation: 'CREATE' });
    assert.deepEqual(args(first.object), ['--verbose']);
    assert.match(String(at(first.object, 'metadata.annotations')?.[ADDED_ANNOTATION as never]), /^[0-9a-f]{12}$/);
    const second = set.admit({ object: first.object, operation: 'CREATE' });
    assert.equal(second.changed, false);
    assert.deepEqual(second.object, first.object);
    const edited = structuredClone(first.object);
    (at(edited, 'spec.template.spec.containers[0]') as Obj).image = 'nginx:2';
    const third = set.admit({ object: edited, operation: 'CREATE' });
    assert.equal(third.changed, false);
    assert.deepEqual(args(third.object), ['--verbose']);
  });

  it('reinvoked after another webhook changed the object: nothing appended twice, the rest applied again', () => {
    const set = setWith(
      overridePolicy('op', 'default', [
        {
          overriders: {
            argsOverrider: [{ containerName: 'web', operator: 'add', value: ['--verbose'] }],
            imageOverrider: [{ component: 'Registry', operator: 'replace', value: 'mirror.local' }],
          },
        },
      ]),
    );
    const first = set.admit({ object: deployment(), operation: 'CREATE' });
    // Another mutating webhook adds a label, an argument after ours, and puts the image back.
    const other = structuredClone(first.object);
    (other.metadata as Obj).labels = { ...((other.metadata as Obj).labels as Obj | undefined), injected: 'yes' };
    const web = at(other, 'spec.template.spec.containers[0]') as Obj;
    web.image = 'nginx:1.25';
    (web.args as string[]).push('--injected');
    const again = set.admit({ object: other, operation: 'CREATE' });
    assert.deepEqual(args(again.object), ['--verbose', '--injected']);
    assert.equal(at(again.object, 'spec.template.spec.containers[0].image'), 'mirror.local/nginx:1.25');
    assert.equal(at(again.object, 'metadata.labels.injected'), 'yes');
    assert.equal(set.admit({ object: again.object, operation: 'CREATE' }).changed, false);
  });

  it('UPDATE: a CREATE+UPDATE rule holds once; a CREATE-only rule leaves a later edit alone', () => {
    const set = setWith(
      v1beta1(overridePolicy('op', 'default', [argsRule(['CREATE', 'UPDATE'])])),
      v1beta1(
        overridePolicy('create-only', 'default', [
          { overriders: { commandOverrider: [{ containerName: 'web', operator: 'add', value: ['serve'] }] } },
        ]),
      ),
    );
    const stored = set.admit({ object: deployment(), operation: 'CREATE' }).object;
    assert.deepEqual(args(stored), ['--verbose']);
    assert.deepEqual(at(stored, 'spec.template.spec.containers[0].command'), ['serve']);
    // kubectl patch of an unrelated field: the new object is the stored one with the change.
    const patched = structuredClone(stored);
    (patched.spec as Obj).replicas = 3;
    const u1 = set.admit({ object: patched, operation: 'UPDATE', oldObject: stored });
    assert.deepEqual(args(u1.object), ['--verbose']);
    assert.deepEqual(at(u1.object, 'spec.template.spec.containers[0].command'), ['serve']);
    // Someone removes both: the CREATE+UPDATE rule adds its argument back, the CREATE-only one stays removed.
    const removed = structuredClone(u1.object);
    const web = at(removed, 'spec.template.spec.containers[0]') as Obj;
    web.args = [];
    delete web.command;
    const u2 = set.admit({ object: removed, operation: 'UPDATE', oldObject: u1.object });
    assert.deepEqual(args(u2.object), ['--verbose']);
    assert.equal(at(u2.object, 'spec.template.spec.containers[0].command'), undefined);
  });

  it('UPDATE from a file without the record: the stored object (oldObject) still tells what was added', () => {
    const set = setWith(v1beta1(overridePolicy('op', 'default', [argsRule(['CREATE', 'UPDATE'])])));
    const stored = set.admit({ object: deployment(), operation: 'CREATE' }).object;
    const replaced = deployment('web', 'default', {
      containers: [{ name: 'web', image: 'nginx:2', args: ['--verbose'] }],
    });
    const out = set.admit({ object: replaced, operation: 'UPDATE', oldObject: stored }).object;
    assert.deepEqual(args(out), ['--verbose']);
    // Without the stored object, the same request appends (as Karmada's add does).
    assert.deepEqual(args(set.admit({ object: replaced, operation: 'UPDATE' }).object), ['--verbose', '--verbose']);
  });

  it('an added list item still counts when others default its fields or insert items before it', () => {
    const sidecar = { name: 'proxy', image: 'envoy' };
    const set = setWith(
      v1beta1(
        overridePolicy('op', 'default', [
          {
            targetOperations: ['CREATE', 'UPDATE'],
            overriders: {
              plaintext: [
                { operator: 'add', path: '/spec/template/spec/containers/-', value: sidecar },
                {
                  operator: 'add',
                  path: '/spec/template/spec/containers/[name=web]/env/-',
                  value: { name: 'REGION', value: 'eu' },
                },
              ],
            },
          },
        ]),
      ),
    );
    const web = { name: 'web', image: 'nginx', env: [] };
    const first = set.admit({ object: deployment('web', 'default', { containers: [web] }), operation: 'CREATE' });
    const other = structuredClone(first.object);
    const containers = at(other, 'spec.template.spec.containers') as Obj[];
    for (const c of containers) c.terminationMessagePath = '/dev/termination-log';
    containers.unshift({ name: 'init-proxy', image: 'busybox' });
    const again = set.admit({ object: other, operation: 'UPDATE', oldObject: first.object }).object;
    const names = (at(again, 'spec.template.spec.containers') as Obj[]).map((c) => c.name);
    assert.deepEqual(names, ['init-proxy', 'web', 'proxy']);
    assert.deepEqual(at(again, 'spec.template.spec.containers[1].env'), [{ name: 'REGION', value: 'eu' }]);
  });

  it('a fieldOverrider add at a list position inside a JSON document is made once', () => {
    const set = setWith(
      overridePolicy('op', 'default', [
        {
          overriders: {
            fieldOverrider: [
              { fieldPath: '/data/config.json', json: [{ subPath: '/hosts/-', operator: 'add', value: 'eu.local' }] },
            ],
          },
        },
      ]),
    );
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'web', namespace: 'default' },
      data: { 'config.json': '{"hosts":["a"]}' },
    };
    const first = set.admit({ object: cm, operation: 'CREATE' }).object;
    assert.equal(at(first, 'data')?.['config.json' as never], '{"hosts":["a","eu.local"]}');
    assert.equal(set.admit({ object: first, operation: 'CREATE' }).changed, false);
  });

  it('a malformed record is an error naming the annotation', () => {
    const set = setWith(overridePolicy('op', 'default', [argsRule()]));
    const o = deployment();
    (o.metadata as Obj).annotations = { [ADDED_ANNOTATION]: 'not a digest' };
    assert.throws(() => set.admit({ object: o, operation: 'CREATE' }), /override\.flotilla\.io\/added/);
    (o.metadata as Obj).annotations = { [ADDED_ANNOTATION]: Array(300).fill('0123456789ab').join(',') };
    assert.throws(() => set.admit({ object: o, operation: 'CREATE' }), /at most 256/);
  });

  it('an object marked by an earlier release (admitted-digest) gets nothing added twice, and the new record', () => {
    const set = setWith(overridePolicy('op', 'default', [argsRule()]));
    const o = deployment('web', 'default', { containers: [{ name: 'web', image: 'nginx', args: ['--verbose'] }] });
    (o.metadata as Obj).annotations = { 'override.flotilla.io/admitted-digest': '0'.repeat(32) };
    const out = set.admit({ object: o, operation: 'CREATE' }).object;
    assert.deepEqual(args(out), ['--verbose']);
    assert.deepEqual(Object.keys(at(out, 'metadata.annotations') as Obj), [ADDED_ANNOTATION]);
  });

  it('more additions than a record holds is an error naming the overrider', () => {
    const set = setWith(
      v1beta1(
        overridePolicy('op', 'default', [
          {
            overriders: {
              plaintext: [{ operator: 'add', path: '/spec/template/spec/containers/[name=*]/args/-', value: '-v' }],
            },
          },
        ]),
      ),
    );
    const many = Array.from({ length: 257 }, (_, i) => ({ name: `c${i}`, image: 'nginx', args: [] }));
    assert.throws(
      () => set.admit({ object: deployment('web', 'default', { containers: many }), operation: 'CREATE' }),
      /plaintext\[0\]: more than 256 additions/,
    );
  });
});

// ---- properties --------------------------------------------------------------------------------------

const clusterNames = ['eu-1', 'us-1'] as const;
const clustersArb = fc.constant(
  clusterNames.map((n, i) => cluster(n, { labels: { env: i === 0 ? 'prod' : 'dev' }, region: n })),
);

const overriderArb: fc.Arbitrary<Obj> = fc.oneof(
  fc.record({
    imageOverrider: fc.constant([{ component: 'Registry', operator: 'replace', value: 'mirror.${cluster.name}' }]),
  }),
  fc.record({
    labelsOverrider: fc
      .tuple(fc.constantFrom('add', 'remove', 'replace'), fc.constantFrom('a', 'b'), fc.boolean())
      .map(([operator, key, absent]) => [
        { operator, value: { [key]: 'v' }, ...(absent && operator === 'add' ? { onlyIfAbsent: true } : {}) },
      ]),
  }),
  fc.record({
    argsOverrider: fc
      .constantFrom('add', 'remove')
      .map((operator) => [{ containerName: 'web', operator, value: ['--x'] }]),
  }),
  fc.record({
    plaintext: fc.tuple(fc.constantFrom('add', 'replace'), fc.boolean()).map(([operator, test]) => [
      {
        operator,
        path: '/spec/template/spec/containers/[name=*]/imagePullPolicy',
        value: 'Always',
        ...(test
          ? {
              pathTests: [
                { subPath: '/spec/template/spec/containers/[name=*]/imagePullPolicy', condition: 'MustNotExist' },
              ],
            }
          : {}),
      },
    ]),
  }),
);

const ruleArb = fc.record(
  {
    overriders: overriderArb,
    targetCluster: fc.constantFrom({ clusterNames: ['eu-1'] }, { labelSelector: { matchLabels: { env: 'dev' } } }),
    targetOperations: fc.constantFrom(['CREATE'], ['UPDATE'], ['CREATE', 'UPDATE']),
  },
  { requiredKeys: ['overriders'] },
);

const policiesArb = fc.array(
  fc
    .tuple(fc.constantFrom('p1', 'p2', 'p3'), fc.boolean(), fc.array(ruleArb, { minLength: 1, maxLength: 3 }))
    .map(([name, clusterWide, rules]) =>
      v1beta1(clusterWide ? clusterOverridePolicy(name, rules) : overridePolicy(name, 'default', rules)),
    ),
  { maxLength: 4 },
);

const objectArb = fc
  .tuple(fc.constantFrom<Record<string, string>>({}, { a: 'old' }), fc.boolean(), fc.boolean())
  .map(([labels, pull, args]) =>
    deployment('web', 'default', {
      labels,
      containers: [
        {
          name: 'web',
          image: 'nginx',
          ...(pull ? { imagePullPolicy: 'Never' } : {}),
          ...(args ? { args: ['--x'] } : {}),
        },
      ],
    }),
  );

function unique(policies: Obj[]): Obj[] {
  const seen = new Set<string>();
  return policies.filter((p) => {
    const key = `${String(p.kind)}/${String((p.metadata as Obj).name)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function withoutMark(o: Obj): Obj {
  const copy = structuredClone(o);
  const ann = at(copy, 'metadata.annotations') as Obj | undefined;
  if (ann) {
    delete ann[ADDED_ANNOTATION];
    if (Object.keys(ann).length === 0) delete (copy.metadata as Obj).annotations;
  }
  return copy;
}

describe('properties', () => {
  it('admission as cluster X gives what render --cluster X gives (CREATE), for random policies and objects', () => {
    fc.assert(
      fc.property(
        policiesArb,
        objectArb,
        clustersArb,
        fc.constantFrom(...clusterNames),
        (raw, object, clusters, name) => {
          const policies = unique(raw);
          const r = renderDetailed(
            { objects: [object, ...policies, ...clusters, clusterPropagationPolicy('all', [selectDeployment()])] },
            { clusters: [name] },
          );
          const set = new OverrideSet(clusterInfo(clusters.find((c) => (c.metadata as Obj).name === name) as Obj));
          for (const p of policies) set.upsert(p);
          let admitted: Obj | undefined;
          try {
            admitted = set.admit({ object, operation: 'CREATE' }).object;
          } catch {
            admitted = undefined;
          }
          if (r.placements.length === 1) assert.deepEqual(withoutMark(admitted as Obj), r.placements[0]?.object);
          else {
            assert.equal(r.errors.length > 0, true);
            assert.equal(admitted, undefined);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a second admission of its own output changes nothing', () => {
    fc.assert(
      fc.property(
        policiesArb,
        objectArb,
        fc.constantFrom<'CREATE' | 'UPDATE'>('CREATE', 'UPDATE'),
        (raw, object, operation) => {
          const set = new OverrideSet(member);
          for (const p of unique(raw)) set.upsert(p);
          let first;
          try {
            first = set.admit({ object, operation });
          } catch {
            return;
          }
          const second = set.admit({ object: first.object, operation });
          assert.equal(second.changed, false);
          assert.deepEqual(second.object, first.object);
        },
      ),
      { numRuns: 300 },
    );
  });
});
