// Where Flotilla's Gatekeeper mutators used to differ from Gatekeeper v3.23, one test each, through the
// OverrideSet the admission route and `flotilla admit` use. Each names the Gatekeeper source it follows.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cluster } from '../../test/builders.js';
import { OverrideSet } from './admit.js';
import { clusterInfo } from './inputs.js';

type Obj = Record<string, unknown>;
const POD_GVK = { groups: [''], versions: ['v1'], kinds: ['Pod'] };

const mutator = (kind: string, name: string, spec: Obj, version = 'v1'): Obj => ({
  apiVersion: `mutations.gatekeeper.sh/${version}`,
  kind,
  metadata: { name },
  spec,
});
const assign = (name: string, location: string, value: unknown, extra: Obj = {}): Obj =>
  mutator('Assign', name, { applyTo: [POD_GVK], location, parameters: { assign: { value } }, ...extra });
const assignMeta = (name: string, location: string, value: string, extra: Obj = {}): Obj =>
  mutator('AssignMetadata', name, { location, parameters: { assign: { value } }, ...extra });

const pod = (spec: Obj = {}, meta: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-1', namespace: 'apps', ...meta },
  spec: { containers: [{ name: 'app', image: 'app:1' }], ...spec },
});

function setOf(...mutators: Obj[]): { set: OverrideSet; problems: string[] } {
  const set = new OverrideSet(clusterInfo(cluster('m1')));
  const problems = mutators.map((m) => set.upsert(m)).filter((p): p is string => p !== undefined);
  return { set, problems };
}

function admit(mutators: Obj[], object: Obj, operation: 'CREATE' | 'UPDATE' = 'CREATE') {
  const { set, problems } = setOf(...mutators);
  assert.deepEqual(problems, []);
  return set.admit({ object, operation, namespaceLabels: {} });
}

const spec = (r: { object: Obj }): Obj => r.object.spec as Obj;
const containers = (r: { object: Obj }): Obj[] => spec(r).containers as Obj[];

describe('Gatekeeper mutation system (system.go)', () => {
  it('applies every mutator again until a pass changes nothing: a label one adds makes another match', () => {
    const r = admit(
      [
        assign('needs-team', 'spec.priorityClassName', 'team-a', {
          match: { labelSelector: { matchLabels: { team: 'a' } } },
        }),
        assignMeta('team', 'metadata.labels.team', 'a'),
      ],
      pod(),
    );
    assert.equal(spec(r).priorityClassName, 'team-a');
    assert.deepEqual((r.object.metadata as Obj).labels, { team: 'a' });
  });

  it('skips mutators whose schemas conflict (a list for one, an object for the other) and says so', () => {
    const r = admit(
      [
        assign('as-list', 'spec.containers[name: app].x', 1),
        assign('as-object', 'spec.containers.x', 2),
        assign('other', 'spec.y', 3),
      ],
      pod(),
    );
    assert.equal(spec(r).y, 3);
    assert.deepEqual(containers(r), [{ name: 'app', image: 'app:1' }]);
    assert.equal(r.warnings.filter((w) => /conflicts/.test(w)).length, 2, r.warnings.join('\n'));
    assert.match(r.warnings.join('\n'), /Assign\/as-list.*conflicts/);
  });
});

describe('applyTo operations (match/apply_to.go)', () => {
  it('a mutator for CREATE leaves an UPDATE alone', () => {
    const m = assign('create-only', 'spec.dnsPolicy', 'None', {
      applyTo: [{ ...POD_GVK, operations: ['CREATE'] }],
    });
    assert.equal(spec(admit([m], pod(), 'UPDATE')).dnsPolicy, undefined);
    assert.equal(spec(admit([m], pod(), 'CREATE')).dnsPolicy, 'None');
  });
});

describe('location syntax (path/token, path/parser)', () => {
  it('quoted keys and list key values', () => {
    const r = admit([assign('q', `spec."containers"['name': "app"].image`, 'app:2')], pod());
    assert.deepEqual(containers(r), [{ name: 'app', image: 'app:2' }]);
  });

  it('a quoted "*" is the literal name *, not a glob', () => {
    const r = admit(
      [assign('star', 'spec.containers[name: "*"].imagePullPolicy', 'Always')],
      pod({ containers: [{ name: 'app' }, { name: '*' }] }),
    );
    assert.deepEqual(containers(r), [{ name: 'app' }, { name: '*', imagePullPolicy: 'Always' }]);
  });

  it('a quoted "8080" is a string and does not select the integer 8080', () => {
    const r = admit([assign('port', 'spec.ports[port: "8080"].name', 'http')], pod({ ports: [{ port: 8080 }] }));
    assert.deepEqual(spec(r).ports, [{ port: 8080 }, { port: '8080', name: 'http' }]);
    const r2 = admit([assign('port', 'spec.ports[port: 8080].name', 'http')], pod({ ports: [{ port: 8080 }] }));
    assert.deepEqual(spec(r2).ports, [{ port: 8080, name: 'http' }]);
  });

  it('a glob visits every item, also one that lacks the key field', () => {
    const r = admit(
      [assign('pull', 'spec.containers[name: *].imagePullPolicy', 'Always')],
      pod({ containers: [{ name: 'app' }, { image: 'side:1' }] }),
    );
    assert.deepEqual(containers(r), [
      { name: 'app', imagePullPolicy: 'Always' },
      { image: 'side:1', imagePullPolicy: 'Always' },
    ]);
  });
});

describe('match (match/match.go, pkg/wildcard)', () => {
  const label = (match: Obj) => assignMeta('l', 'metadata.labels.hit', 'yes', { match });
  const hit = (r: { object: Obj }) => ((r.object.metadata as Obj).labels as Obj | undefined)?.hit === 'yes';

  it('a star at both ends of a namespace glob means "contains"', () => {
    assert.equal(hit(admit([label({ namespaces: ['*pay*'] })], pod({}, { namespace: 'team-payments' }))), true);
    assert.equal(hit(admit([label({ namespaces: ['*pay*'] })], pod({}, { namespace: 'apps' }))), false);
  });

  it('match.name also matches metadata.generateName', () => {
    const named = pod({}, { name: undefined, generateName: 'web-7d9f-' });
    delete (named.metadata as Obj).name;
    assert.equal(hit(admit([label({ name: 'web-*' })], named)), true);
    assert.equal(hit(admit([label({ name: '*eb-7*' })], named)), true);
    assert.equal(hit(admit([label({ name: 'web-7d9f-' })], named)), false);
  });

  it('an invalid label selector fails the mutation, as LabelSelectorAsSelector errs', () => {
    const { set } = setOf(label({ labelSelector: { matchLabels: { team: 'a b' } } }));
    assert.throws(
      () => set.admit({ object: pod(), operation: 'CREATE', namespaceLabels: {} }),
      /matching for mutator AssignMetadata\/l failed: labelSelector: invalid label value "a b"/,
    );
  });

  it('match.namespaces does not exclude cluster-scoped objects', () => {
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r' } };
    assert.equal(hit(admit([label({ namespaces: ['apps'] })], role)), true);
  });
});

describe("Gatekeeper's refusals, with its reasons (MutatorForX)", () => {
  const refused: Array<[string, Obj, RegExp]> = [
    ['Assign to metadata', assign('m', 'metadata.labels.x', 'y'), /can't change metadata/],
    [
      'a keyed-list entry changing its own key',
      assign('k', 'spec.containers[name: app].name', 'x'),
      /changing the item key is not allowed/,
    ],
    [
      'a keyed value whose key differs',
      assign('d', 'spec.containers[name: app]', { name: 'other' }),
      /adding object to list with different key/,
    ],
    [
      'a glob as the last segment',
      assign('g', 'spec.containers[name: *]', { name: 'x' }),
      /can't append to a globbed list/,
    ],
    [
      'conflicting pathTests',
      mutator('Assign', 'c', {
        applyTo: [POD_GVK],
        location: 'spec.a.b',
        parameters: {
          assign: { value: 1 },
          pathTests: [
            { subPath: 'spec.a', condition: 'MustExist' },
            { subPath: 'spec.a', condition: 'MustNotExist' },
          ],
        },
      }),
      /conflicting path test conditions/,
    ],
    [
      'both value and fromMetadata',
      mutator('Assign', 'b', {
        applyTo: [POD_GVK],
        location: 'spec.a',
        parameters: { assign: { value: 'x', fromMetadata: { field: 'name' } } },
      }),
      /must only set one of/,
    ],
  ];
  for (const [what, m, why] of refused)
    it(what, () => {
      const { problems } = setOf(m);
      assert.equal(problems.length, 1);
      assert.match(problems[0] ?? '', why);
    });

  it('a refused mutator is named in a warning on the objects it selects', () => {
    const { set } = setOf(assign('meta', 'metadata.labels.x', 'y'));
    const r = set.admit({ object: pod(), operation: 'CREATE', namespaceLabels: {} });
    assert.match(r.warnings.join('\n'), /Assign\/meta is not applied: .*can't change metadata/);
  });
});

describe('assignIf (removed in Gatekeeper v3.7; its CRDs prune it)', () => {
  it('is not honoured, and the object it is applied to gets a warning', () => {
    const r = admit(
      [
        assign('dns', 'spec.dnsPolicy', 'Default', {
          parameters: { assign: { value: 'Default' }, assignIf: { in: ['ClusterFirst'] } },
        }),
      ],
      pod({ dnsPolicy: 'None' }),
    );
    assert.equal(spec(r).dnsPolicy, 'Default');
    assert.match(r.warnings.join('\n'), /assignIf is ignored/);
  });
});

describe('ModifySet and AssignImage', () => {
  it('ModifySet merges values into a list as a set, and prunes them', () => {
    const ms = (name: string, operation: string, fromList: unknown[]) =>
      mutator('ModifySet', name, {
        applyTo: [POD_GVK],
        location: 'spec.containers[name: *].args',
        parameters: { operation, values: { fromList } },
      });
    const r = admit(
      [ms('add', 'merge', ['--v=2', '--log'])],
      pod({ containers: [{ name: 'app', args: ['--log'] }, { name: 'b' }] }),
    );
    assert.deepEqual(containers(r), [
      { name: 'app', args: ['--log', '--v=2'] },
      { name: 'b', args: ['--v=2', '--log'] },
    ]);
    const p = admit([ms('rm', 'prune', ['--log'])], pod({ containers: [{ name: 'app', args: ['--log', '-q'] }] }));
    assert.deepEqual(containers(p), [{ name: 'app', args: ['-q'] }]);
  });

  it('AssignImage sets the domain and tag of each image, keeping its path', () => {
    const ai = mutator(
      'AssignImage',
      'mirror',
      {
        applyTo: [POD_GVK],
        location: 'spec.containers[name: *].image',
        parameters: { assignDomain: 'mirror.example.com', assignTag: ':v2' },
      },
      'v1alpha1',
    );
    const r = admit(
      [ai],
      pod({
        containers: [
          { name: 'a', image: 'docker.io/library/nginx:1.25' },
          { name: 'b', image: 'app' },
        ],
      }),
    );
    assert.deepEqual(containers(r), [
      { name: 'a', image: 'mirror.example.com/library/nginx:v2' },
      { name: 'b', image: 'mirror.example.com/app:v2' },
    ]);
  });
});
