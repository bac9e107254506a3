import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  at,
  cluster,
  clusterOverridePolicy,
  clusterPropagationPolicy,
  configMap,
  deployment,
  overridePolicy,
  propagationPolicy,
  selectDeployment,
  type Obj,
} from '../../test/builders.js';
import { renderDetailed } from './render.js';
import { EngineState, templateKey } from './state.js';

const key = (name: string, namespace = 'default', kind = 'Deployment', apiVersion = 'apps/v1') =>
  templateKey({ apiVersion, kind, namespace, name });

function stateWith(...objects: Obj[]): EngineState {
  const s = new EngineState();
  for (const o of objects) {
    const m = s.upsert(o);
    assert.deepEqual(m.rejected, [], JSON.stringify(o));
  }
  return s;
}

const sorted = (keys: Iterable<string>) => [...keys].sort();
const label = (v: string) => ({ overriders: { labelsOverrider: [{ operator: 'add', value: { who: v } }] } });

describe('EngineState: rendering a placement decided elsewhere (renderPlaced)', () => {
  it('renders only the named clusters it holds, with their override rules and the given replicas', () => {
    // An agent holds its own Cluster only; the hub's binding named three clusters with divided replicas.
    const s = stateWith(
      deployment('web', 'default', { replicas: 6 }),
      propagationPolicy('pp', 'default', [selectDeployment()]),
      overridePolicy('op', 'default', [label('${cluster.name}')]),
      cluster('m2'),
    );
    const placed = new Map([
      ['m1', 1],
      ['m2', 2],
      ['m3', 3],
    ]);
    const got = s.renderPlaced(key('web'), { clusters: placed });
    assert.deepEqual(
      got?.placements.map((p) => [p.cluster, (p.object.spec as { replicas: number }).replicas, p.object.metadata]),
      [['m2', 2, { name: 'web', namespace: 'default', labels: { who: 'm2' } }]],
    );
    assert.deepEqual(got?.policy, { kind: 'PropagationPolicy', namespace: 'default', name: 'pp' });
    assert.deepEqual(got?.errors, []);
  });

  it("keeps the template's replicas when none are given, and renders nothing for a cluster not named", () => {
    const s = stateWith(deployment('web', 'default', { replicas: 4 }), cluster('m2'));
    const got = s.renderPlaced(key('web'), {
      clusters: new Map([['m2', undefined]]),
      policy: { kind: 'PropagationPolicy', namespace: 'default', name: 'gone' },
    });
    assert.equal((got?.placements[0]?.object.spec as { replicas: number }).replicas, 4);
    assert.deepEqual(got?.policy, { kind: 'PropagationPolicy', namespace: 'default', name: 'gone' });
    assert.deepEqual(s.renderPlaced(key('web'), { clusters: new Map([['m9', 1]]) })?.placements, []);
    assert.equal(s.renderPlaced(key('nope'), { clusters: new Map([['m2', 1]]) }), undefined);
  });

  it('reports an override that fails on the cluster as an error of that cluster', () => {
    const bad = { overriders: { plaintext: [{ path: '/spec/nope/deeper', operator: 'replace', value: 1 }] } };
    const s = stateWith(deployment('web'), overridePolicy('op', 'default', [bad]), cluster('m2'));
    const got = s.renderPlaced(key('web'), { clusters: new Map([['m2', undefined]]) });
    assert.deepEqual(got?.placements, []);
    assert.equal(got?.errors[0]?.cluster, 'm2');
  });
});

describe('EngineState: rendering one template', () => {
  it('gives what render() gives for that template, with the claiming policy', () => {
    const objects = [
      deployment('web', 'default', { replicas: 3 }),
      propagationPolicy('pp', 'default', [selectDeployment()]),
      overridePolicy('op', 'default', [label('${cluster.name}')]),
      cluster('m1'),
      cluster('m2'),
    ];
    const s = stateWith(...objects);
    const got = s.renderTemplate(key('web'));
    const want = renderDetailed({ objects });
    assert.deepEqual(got?.placements, want.placements);
    assert.deepEqual(got?.policy, { kind: 'PropagationPolicy', namespace: 'default', name: 'pp' });
    assert.deepEqual(
      got?.placements.map((p) => p.object.metadata),
      [
        { name: 'web', namespace: 'default', labels: { who: 'm1' } },
        { name: 'web', namespace: 'default', labels: { who: 'm2' } },
      ],
    );
  });

  it('says unmatched when no policy claims the template, and undefined for a template it does not hold', () => {
    const s = stateWith(configMap('cfg'), propagationPolicy('pp', 'default', [selectDeployment()]), cluster('m1'));
    assert.deepEqual(s.renderTemplate(key('cfg', 'default', 'ConfigMap', 'v1'))?.unmatched, [
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cfg' },
    ]);
    assert.equal(s.renderTemplate(key('nope')), undefined);
  });

  it('finds a template by reference, reading a missing namespace as "default" as render() does', () => {
    const t = deployment('web');
    delete (t.metadata as Obj).namespace;
    const s = stateWith(t, propagationPolicy('pp', 'default', [selectDeployment()]), cluster('m1'));
    assert.equal(s.keyOf({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }), key('web'));
    assert.equal(s.renderTemplate({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' })?.placements.length, 1);
  });

  it('reports errors per template and per cluster, as render() does', () => {
    const op = overridePolicy('op', 'default', [
      {
        targetCluster: { clusterNames: ['m2'] },
        overriders: { plaintext: [{ path: '/spec/paused', operator: 'replace', value: true }] },
      },
    ]);
    const s = stateWith(
      deployment(),
      propagationPolicy('pp', 'default', [selectDeployment()]),
      op,
      cluster('m1'),
      cluster('m2'),
    );
    const r = s.renderTemplate(key('web'));
    assert.deepEqual(
      r?.placements.map((p) => p.cluster),
      ['m1'],
    );
    assert.deepEqual(
      r?.errors.map((e) => e.cluster),
      ['m2'],
    );
  });

  it('names the evicted clusters, and why each cluster is left out, when a NoExecute taint leaves it nowhere', () => {
    const s = stateWith(
      deployment(),
      propagationPolicy('pp', 'default', [selectDeployment()], { clusterAffinity: { clusterNames: ['m1'] } }),
      cluster('m1', { taints: [{ key: 'maintenance', effect: 'NoExecute' }] }),
      cluster('m2'),
    );
    const r = s.renderTemplate(key('web'));
    assert.deepEqual(r?.placements, []);
    assert.match(r?.errors[0]?.message ?? '', /no cluster matches its placement/);
    assert.deepEqual(r?.evicted, ['m1']);
    assert.deepEqual(r?.notChosen, [
      { cluster: 'm1', reason: 'evicted: untolerated taint maintenance:NoExecute' },
      { cluster: 'm2', reason: 'not selected by spec.placement.clusterAffinity' },
    ]);
  });
});

describe('EngineState: what a propagation policy change affects', () => {
  const base = () =>
    stateWith(
      deployment('a'),
      deployment('b'),
      deployment('c', 'other'),
      propagationPolicy('low', 'default', [selectDeployment()]),
      propagationPolicy('high', 'default', [selectDeployment('b')], undefined, { priority: 10 }),
      cluster('m1'),
    );

  it('includes templates now claimed away from a lower-priority policy, not those a higher-priority one keeps', () => {
    const s = base();
    const m = s.upsert(propagationPolicy('mid', 'default', [selectDeployment()], undefined, { priority: 5 }));
    assert.deepEqual(sorted(m.affected), [key('a')]);
    assert.equal(s.renderTemplate(key('a'))?.policy?.name, 'mid');
    assert.equal(s.renderTemplate(key('b'))?.policy?.name, 'high');
  });

  it('includes the templates a policy claimed before and no longer matches', () => {
    const s = base();
    const m = s.upsert(
      propagationPolicy('high', 'default', [selectDeployment('nothing')], undefined, { priority: 10 }),
    );
    assert.deepEqual(sorted(m.affected), [key('b')]);
    assert.equal(s.renderTemplate(key('b'))?.policy?.name, 'low');
  });

  it('includes what a removed policy claimed', () => {
    const s = base();
    const m = s.remove({
      apiVersion: 'policy.flotilla.io/v1alpha1',
      kind: 'PropagationPolicy',
      namespace: 'default',
      name: 'low',
    });
    assert.deepEqual(sorted(m.affected), [key('a')]);
    assert.deepEqual(s.renderTemplate(key('a'))?.unmatched.length, 1);
  });

  it('leaves out templates of a ClusterPropagationPolicy that a PropagationPolicy shadows', () => {
    const s = base();
    const m = s.upsert(clusterPropagationPolicy('cpp', [selectDeployment()], undefined, { priority: 100 }));
    assert.deepEqual(sorted(m.affected), [key('c', 'other')]);
  });

  it('affects nothing when only metadata changes', () => {
    const s = base();
    const pp = propagationPolicy('low', 'default', [selectDeployment()]);
    (pp.metadata as Obj).labels = { team: 'x' };
    assert.deepEqual(sorted(s.upsert(pp).affected), []);
  });

  it("includes what it claims when only the policy's group or Karmada permanent id changes: the copies' claim metadata does", () => {
    const karmada = (id?: string) => {
      const p: Obj = {
        ...clusterPropagationPolicy('p', [selectDeployment()]),
        apiVersion: 'policy.karmada.io/v1alpha1',
      };
      if (id) p.metadata = { name: 'p', labels: { 'clusterpropagationpolicy.karmada.io/permanent-id': id } };
      return p;
    };
    const flotilla = clusterPropagationPolicy('p', [selectDeployment()]);
    const s = stateWith(deployment('a'), cluster('m1'), karmada());
    const annotations = () => s.renderTemplate(key('a'))?.placements[0]?.object.metadata;
    assert.deepEqual((annotations() as Obj).annotations, { 'clusterpropagationpolicy.karmada.io/name': 'p' });

    assert.deepEqual(sorted(s.upsert(flotilla).affected), [key('a')]);
    const now = renderDetailed({ objects: [deployment('a'), cluster('m1'), flotilla] }).placements[0];
    assert.deepEqual(annotations(), now?.object.metadata);
    assert.equal((annotations() as Obj).annotations, undefined);

    assert.deepEqual(sorted(s.upsert(karmada()).affected), [key('a')]);
    assert.deepEqual(sorted(s.upsert(karmada('id-1')).affected), [key('a')]);
    assert.deepEqual((annotations() as Obj).labels, { 'clusterpropagationpolicy.karmada.io/permanent-id': 'id-1' });
    assert.deepEqual(sorted(s.upsert(karmada('id-1')).affected), []);
  });

  it('includes a claimed template when the placement changes', () => {
    const s = base();
    const m = s.upsert(
      propagationPolicy('low', 'default', [selectDeployment()], { clusterAffinity: { clusterNames: ['m1'] } }),
    );
    assert.deepEqual(sorted(m.affected), [key('a')]);
  });
});

describe('EngineState: what an override policy change affects', () => {
  it('includes the claimed templates its old or new selectors match, and no unmatched one', () => {
    const s = stateWith(
      deployment('a'),
      deployment('b'),
      configMap('cfg'),
      propagationPolicy('pp', 'default', [selectDeployment()]),
      overridePolicy('op', 'default', [label('x')], [selectDeployment('a')]),
      cluster('m1'),
    );
    const m = s.upsert(
      overridePolicy('op', 'default', [label('y')], [selectDeployment('b'), { apiVersion: 'v1', kind: 'ConfigMap' }]),
    );
    assert.deepEqual(sorted(m.affected), sorted([key('a'), key('b')]));
    assert.equal(at(s.renderTemplate(key('b'))?.placements[0]?.object, 'metadata.labels.who'), 'y');
  });

  it('a ClusterOverridePolicy without selectors affects every claimed template', () => {
    const s = stateWith(
      deployment('a'),
      deployment('b', 'other'),
      deployment('c', 'third'),
      propagationPolicy('pp', 'default', [selectDeployment()]),
      propagationPolicy('pp', 'other', [selectDeployment()]),
      cluster('m1'),
    );
    assert.deepEqual(
      sorted(s.upsert(clusterOverridePolicy('cop', [label('x')])).affected),
      sorted([key('a'), key('b', 'other')]),
    );
  });
});

describe('EngineState: what a Cluster change affects', () => {
  const base = () =>
    stateWith(
      deployment('eu'),
      deployment('us'),
      deployment('none'),
      propagationPolicy('eu', 'default', [selectDeployment('eu')], {
        clusterAffinity: { labelSelector: { matchLabels: { region: 'eu' } } },
      }),
      propagationPolicy('us', 'default', [selectDeployment('us')], {
        clusterAffinity: { labelSelector: { matchLabels: { region: 'us' } } },
      }),
      propagationPolicy('none', 'default', [selectDeployment('none')], {
        clusterAffinity: { clusterNames: ['nowhere'] },
      }),
      cluster('m1', { labels: { region: 'eu' } }),
      cluster('m2', { labels: { region: 'us' } }),
    );

  it('includes templates whose policy could place them on the cluster before or after, and nothing else', () => {
    const s = base();
    const m = s.upsert(cluster('m1', { labels: { region: 'us' } }));
    assert.deepEqual(sorted(m.affected), sorted([key('eu'), key('us')]));
    assert.equal(s.renderTemplate(key('eu'))?.placements.length, 0);
  });

  it('affects nothing when nothing placement or overrides read has changed', () => {
    const s = base();
    const m1 = cluster('m1', { labels: { region: 'eu' } });
    (m1.metadata as Obj).annotations = { note: 'x' };
    m1.status = { conditions: [{ type: 'Ready', status: 'True' }] };
    assert.deepEqual(sorted(s.upsert(m1).affected), []);
  });

  it('includes templates whose policy selects no cluster when a cluster comes or goes (their error names every cluster)', () => {
    const s = base();
    const m = s.upsert(cluster('m3', { labels: { region: 'ap' } }));
    assert.deepEqual(sorted(m.affected), [key('none')]);
    assert.match(s.renderTemplate(key('none'))?.errors[0]?.message ?? '', /3 clusters known: m1, m2, m3/);
  });
});

describe('EngineState: templates, admission and bad input', () => {
  it('a template upsert or remove affects that template only', () => {
    const s = stateWith(
      deployment('a'),
      deployment('b'),
      propagationPolicy('pp', 'default', [selectDeployment()]),
      cluster('m1'),
    );
    assert.deepEqual(sorted(s.upsert(deployment('a', 'default', { replicas: 5 })).affected), [key('a')]);
    assert.deepEqual(
      sorted(s.remove({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'b' }).affected),
      [key('b')],
    );
    assert.equal(s.has(key('b')), false);
    assert.deepEqual(
      sorted(s.remove({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'b' }).affected),
      [],
    );
  });

  it('leaves out a policy the webhook denies, and drops the version it held before', () => {
    const s = stateWith(deployment('a'), propagationPolicy('pp', 'default', [selectDeployment()]), cluster('m1'));
    const denied = propagationPolicy('pp', 'default', [{ apiVersion: 'apps/v1' }]);
    const m = s.upsert(denied);
    assert.equal(m.rejected[0]?.reason, 'Denied');
    assert.match(m.rejected[0]?.message ?? '', /^spec\.resourceSelectors\[0\]\.kind: Required value/);
    assert.deepEqual(sorted(m.affected), [key('a')]);
    assert.equal(s.renderTemplate(key('a'))?.unmatched.length, 1);
    assert.equal(s.counts().propagationPolicies, 0);
  });

  it('holds what the webhook would deny when admission is off, as render() reads it', () => {
    const s = new EngineState({ admission: false });
    assert.deepEqual(s.upsert(propagationPolicy('pp', 'default', [{ apiVersion: 'apps/v1' }])).rejected, []);
    assert.equal(s.counts().propagationPolicies, 1);
  });

  it('rejects Lists and documents it cannot read, dropping what it held under the same name', () => {
    const s = stateWith(deployment('a'), propagationPolicy('pp', 'default', [selectDeployment()]), cluster('m1'));
    const list = s.upsert({ apiVersion: 'v1', kind: 'List', items: [deployment('b')] });
    assert.equal(list.rejected[0]?.reason, 'Unusable');
    assert.equal(s.has(key('b')), false);
    const noSpec = {
      apiVersion: 'policy.flotilla.io/v1alpha1',
      kind: 'PropagationPolicy',
      metadata: { name: 'pp', namespace: 'default' },
    };
    const lax = new EngineState({ admission: false });
    lax.upsert(deployment('a'));
    lax.upsert(propagationPolicy('pp', 'default', [selectDeployment()]));
    const r = lax.upsert(noSpec);
    assert.deepEqual(
      r.rejected.map((x) => [x.reason, x.message]),
      [['Unusable', 'spec: Required value']],
    );
    assert.deepEqual(sorted(r.affected), [key('a')]);
    assert.deepEqual(
      s.upsert(42).rejected.map((x) => x.reason),
      ['Unusable'],
    );
  });

  it('holds policies by kind, namespace and name whatever their group or version', () => {
    const s = stateWith(deployment('a'), propagationPolicy('pp', 'default', [selectDeployment()]), cluster('m1'));
    const karmada = {
      ...propagationPolicy('pp', 'default', [selectDeployment('b')]),
      apiVersion: 'policy.karmada.io/v1alpha1',
    };
    s.upsert(karmada);
    assert.equal(s.counts().propagationPolicies, 1);
    assert.equal(s.renderTemplate(key('a'))?.unmatched.length, 1);
  });
});
