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
import { MAX_DEPTH } from '../../api/internal/objects.js';
import { render, renderDetailed } from './render.js';
import { explainPlacement } from './explain.js';

const members = [
  cluster('m1', { labels: { env: 'prod' }, provider: 'aws', region: 'eu-west-1', zones: ['eu-west-1a'] }),
  cluster('m2', { labels: { env: 'dev' }, region: 'us-east-1' }),
];
const ppAll = propagationPolicy('pp', 'default', [selectDeployment()]);

/** Renders one Deployment (or the given template) through the given override rules; returns the object per cluster. */
function renderWith(rules: Obj[], template: Obj = deployment('web', 'default', { replicas: 2 }), extra: Obj[] = []) {
  const r = render({
    objects: [
      template,
      ppAll,
      propagationPolicy('cm', 'default', [{ apiVersion: 'v1', kind: 'ConfigMap' }]),
      overridePolicy('op', 'default', rules),
      ...members,
      ...extra,
    ],
  });
  const by = Object.fromEntries(r.placements.map((p) => [p.cluster, p.object]));
  return { result: r, m1: by.m1, m2: by.m2 };
}

describe('render: matching', () => {
  it('lists templates no policy claims as unmatched', () => {
    const r = render({ objects: [configMap('lonely'), ...members] });
    assert.deepEqual(r.unmatched, [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'lonely' }]);
    assert.equal(r.placements.length, 0);
  });

  it('prefers any matching PropagationPolicy over a higher-priority ClusterPropagationPolicy', () => {
    const cpp = clusterPropagationPolicy('cpp', [selectDeployment('web')], undefined, { priority: 100 });
    const r = render({ objects: [deployment(), cpp, ppAll, ...members] });
    assert.ok(r.placements.every((p) => p.policy.kind === 'PropagationPolicy'));
  });

  it('chooses by explicit priority, then implicit priority, then the smaller name', () => {
    const byName = propagationPolicy('b-name', 'default', [selectDeployment('web')]);
    const byAll = propagationPolicy('a-all', 'default', [selectDeployment()]);
    const byAllHigh = propagationPolicy('z-all', 'default', [selectDeployment()], undefined, { priority: 5 });
    const claim = (objs: Obj[]) => render({ objects: [deployment(), ...objs, ...members] }).placements[0]?.policy.name;
    assert.equal(claim([byName, byAll]), 'b-name');
    assert.equal(claim([byName, byAll, byAllHigh]), 'z-all');
    assert.equal(
      claim([
        propagationPolicy('b', 'default', [selectDeployment()]),
        propagationPolicy('a', 'default', [selectDeployment()]),
      ]),
      'a',
    );
  });

  it('does not let a PropagationPolicy claim templates of another namespace', () => {
    const r = render({ objects: [deployment('web', 'other'), ppAll, ...members] });
    assert.equal(r.unmatched.length, 1);
  });

  it('lets a ClusterPropagationPolicy claim cluster-scoped templates', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } };
    const r = render({
      objects: [ns, clusterPropagationPolicy('cpp', [{ apiVersion: 'v1', kind: 'Namespace' }]), ...members],
    });
    assert.deepEqual(
      r.placements.map((p) => p.cluster),
      ['m1', 'm2'],
    );
    assert.equal(at(r.placements[0]?.object, 'metadata.namespace'), undefined);
  });

  it('reads Karmada documents unchanged', () => {
    const pp = { ...ppAll, apiVersion: 'policy.karmada.io/v1alpha1' };
    const m = { ...cluster('k1'), apiVersion: 'cluster.karmada.io/v1alpha1' };
    const r = render({ objects: [deployment(), pp, m] });
    assert.deepEqual(
      r.placements.map((p) => p.cluster),
      ['k1'],
    );
  });

  it('names a policy.karmada.io claim on each copy as Karmada does; a policy.flotilla.io claim adds nothing', () => {
    const karmada = (p: Obj, id: string): Obj => ({
      ...p,
      apiVersion: 'policy.karmada.io/v1alpha1',
      metadata: { ...(p.metadata as Obj), labels: { [`${String(p.kind).toLowerCase()}.karmada.io/permanent-id`]: id } },
    });
    const meta = (objects: Obj[]) =>
      render({ objects: [deployment(), ...objects, ...members] }).placements.map((p) => ({
        cluster: p.cluster,
        labels: (p.object.metadata as Obj).labels,
        annotations: (p.object.metadata as Obj).annotations,
      }));
    const pp = meta([karmada(ppAll, 'id-pp')]);
    assert.ok(pp.length > 0);
    for (const p of pp) {
      assert.equal((p.labels as Obj)['propagationpolicy.karmada.io/permanent-id'], 'id-pp', p.cluster);
      assert.deepEqual(p.annotations, {
        'propagationpolicy.karmada.io/namespace': 'default',
        'propagationpolicy.karmada.io/name': 'pp',
      });
    }
    const cpp = meta([karmada(clusterPropagationPolicy('cpp', [selectDeployment()]), 'id-cpp')]);
    assert.ok(cpp.length > 0);
    for (const p of cpp) {
      assert.equal((p.labels as Obj)['clusterpropagationpolicy.karmada.io/permanent-id'], 'id-cpp', p.cluster);
      assert.deepEqual(p.annotations, { 'clusterpropagationpolicy.karmada.io/name': 'cpp' });
    }
    for (const p of meta([ppAll])) {
      const keys = [
        ...Object.keys((p.labels as Obj | undefined) ?? {}),
        ...Object.keys((p.annotations as Obj | undefined) ?? {}),
      ];
      assert.deepEqual(
        keys.filter((k) => k.includes('propagationpolicy.karmada.io/')),
        [],
        p.cluster,
      );
    }
  });

  it('reports a claimed template that no cluster can take', () => {
    const pp = propagationPolicy('pp', 'default', [selectDeployment()], {
      clusterAffinity: { clusterNames: ['nowhere'] },
    });
    const r = render({ objects: [deployment(), pp, ...members] });
    assert.match(r.errors[0]?.message ?? '', /no cluster matches its placement/);
  });
});

describe('render: replicas', () => {
  it('gives each cluster its share under static weights, and drops clusters that get none', () => {
    const pp = propagationPolicy('pp', 'default', [selectDeployment()], {
      replicaScheduling: {
        replicaSchedulingType: 'Divided',
        replicaDivisionPreference: 'Weighted',
        weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ['m1'] }, weight: 1 }] },
      },
    });
    const r = render({ objects: [deployment('web', 'default', { replicas: 3 }), pp, ...members] });
    assert.deepEqual(
      r.placements.map((p) => [p.cluster, at(p.object, 'spec.replicas')]),
      [['m1', 3]],
    );
  });

  it('applies overrides after division, so a replicas override wins', () => {
    const pp = propagationPolicy('pp', 'default', [selectDeployment()], {
      replicaScheduling: { replicaSchedulingType: 'Divided' },
    });
    const op = overridePolicy('op', 'default', [
      {
        targetCluster: { clusterNames: ['m2'] },
        overriders: { plaintext: [{ path: '/spec/replicas', operator: 'replace', value: 7 }] },
      },
    ]);
    const r = render({ objects: [deployment('web', 'default', { replicas: 4 }), pp, op, ...members] });
    assert.deepEqual(
      r.placements.map((p) => at(p.object, 'spec.replicas')),
      [2, 7],
    );
  });

  it('keeps the template count on every cluster when Duplicated', () => {
    const { m1, m2 } = renderWith([]);
    assert.equal(at(m1, 'spec.replicas'), 2);
    assert.equal(at(m2, 'spec.replicas'), 2);
  });
});

describe('render: image overrider', () => {
  const img = (component: string, operator: string, value?: string) => [
    { overriders: { imageOverrider: [{ component, operator, ...(value === undefined ? {} : { value }) }] } },
  ];
  const template = (image: string) => deployment('web', 'default', { containers: [{ name: 'web', image }] });
  const cases: Array<[string, string, string, string, string | undefined, string]> = [
    [
      'registry add prefixes an empty registry without a slash',
      'nginx:1.25',
      'Registry',
      'add',
      'registry.k8s.io',
      'registry.k8s.io/nginx:1.25',
    ],
    ['registry add concatenates strings', 'a.io/nginx:1', 'Registry', 'add', '.cn', 'a.io.cn/nginx:1'],
    [
      'registry replace swaps the host',
      'a.io/team/nginx:1',
      'Registry',
      'replace',
      'b.io:5000',
      'b.io:5000/team/nginx:1',
    ],
    ['registry remove drops the host', 'a.io/team/nginx:1', 'Registry', 'remove', undefined, 'team/nginx:1'],
    ['repository add appends', 'a.io/nginx:1', 'Repository', 'add', '-slim', 'a.io/nginx-slim:1'],
    ['repository replace swaps the path', 'a.io/nginx:1', 'Repository', 'replace', 'team/httpd', 'a.io/team/httpd:1'],
    ['tag replace sets the tag', 'nginx:1.25', 'Tag', 'replace', '1.26', 'nginx:1.26'],
    ['tag add appends to the tag', 'nginx:1.25', 'Tag', 'add', '-alpine', 'nginx:1.25-alpine'],
    ['tag remove drops the tag', 'nginx:1.25', 'Tag', 'remove', undefined, 'nginx'],
    [
      'tag replace with a digest sets the digest',
      'nginx:1.25',
      'Tag',
      'replace',
      `sha256:${'a'.repeat(64)}`,
      `nginx@sha256:${'a'.repeat(64)}`,
    ],
    ['a tag and digest keep only the tag', `nginx:1.25@sha256:${'b'.repeat(64)}`, 'Tag', 'replace', '2', 'nginx:2'],
  ];
  for (const [name, image, component, operator, value, want] of cases) {
    it(name, () => {
      const out = renderWith(img(component, operator, value), template(image));
      assert.equal(at(out.m1, 'spec.template.spec.containers[0].image'), want);
    });
  }

  it('reports an unparseable image for that cluster and still renders the others', () => {
    const rules = [
      {
        targetCluster: { clusterNames: ['m1'] },
        overriders: { imageOverrider: [{ component: 'Tag', operator: 'replace', value: 'v2' }] },
      },
    ];
    const out = renderWith(rules, template('Nginx:1'));
    assert.equal(out.m1, undefined);
    assert.ok(out.m2);
    assert.equal(out.result.errors[0]?.cluster, 'm1');
    assert.match(
      out.result.errors[0]?.message ?? '',
      /OverridePolicy default\/op: spec\.overrideRules\[0\]\.overriders\.imageOverrider\[0\]: .*lowercase/,
    );
  });

  it('leaves initContainers alone unless includeInitContainers is set', () => {
    const t = deployment('web', 'default', { initContainers: [{ name: 'init', image: 'busybox:1' }] });
    const off = renderWith(img('Registry', 'replace', 'my.io'), t);
    assert.equal(at(off.m1, 'spec.template.spec.initContainers[0].image'), 'busybox:1');
    const on = renderWith(
      [
        {
          overriders: {
            imageOverrider: [
              { component: 'Registry', operator: 'replace', value: 'my.io', includeInitContainers: true },
            ],
          },
        },
      ],
      t,
    );
    assert.equal(at(on.m1, 'spec.template.spec.initContainers[0].image'), 'my.io/busybox:1');
  });

  it('does nothing for kinds it does not know without a predicate, and follows a predicate path', () => {
    const cron = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'cj', namespace: 'default' },
      spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:1' }] } } } } },
    };
    const cpp = clusterPropagationPolicy('cj', [{ apiVersion: 'batch/v1', kind: 'CronJob' }]);
    const path = '/spec/jobTemplate/spec/template/spec/containers[name=c]/image';
    const plain = render({
      objects: [cron, cpp, overridePolicy('op', 'default', img('Registry', 'replace', 'my.io')), ...members],
    });
    assert.equal(
      at(plain.placements[0]?.object, 'spec.jobTemplate.spec.template.spec.containers[0].image'),
      'busybox:1',
    );
    const withPredicate = render({
      objects: [
        cron,
        cpp,
        overridePolicy('op', 'default', [
          {
            overriders: {
              imageOverrider: [{ predicate: { path }, component: 'Registry', operator: 'replace', value: 'my.io' }],
            },
          },
        ]),
        ...members,
      ],
    });
    assert.equal(
      at(withPredicate.placements[0]?.object, 'spec.jobTemplate.spec.template.spec.containers[0].image'),
      'my.io/busybox:1',
    );
  });
});

describe('render: command and args overriders', () => {
  const t = deployment('web', 'default', {
    containers: [
      { name: 'web', image: 'x', command: ['/web', '-v'] },
      { name: 'side', image: 'y' },
    ],
  });
  it('appends to an existing command and keeps duplicates', () => {
    const { m1 } = renderWith(
      [{ overriders: { commandOverrider: [{ containerName: 'web', operator: 'add', value: ['-v'] }] } }],
      t,
    );
    assert.deepEqual(at(m1, 'spec.template.spec.containers[0].command'), ['/web', '-v', '-v']);
  });
  it('removes every element equal to a value', () => {
    const { m1 } = renderWith(
      [{ overriders: { commandOverrider: [{ containerName: 'web', operator: 'remove', value: ['-v'] }] } }],
      t,
    );
    assert.deepEqual(at(m1, 'spec.template.spec.containers[0].command'), ['/web']);
  });
  it('writes an empty list when removing from an absent field', () => {
    const { m1 } = renderWith(
      [{ overriders: { argsOverrider: [{ containerName: 'side', operator: 'remove', value: ['x'] }] } }],
      t,
    );
    assert.deepEqual(at(m1, 'spec.template.spec.containers[1].args'), []);
  });
  it('does nothing for a container name that is not there', () => {
    const { m1 } = renderWith(
      [{ overriders: { argsOverrider: [{ containerName: 'nope', operator: 'add', value: ['x'] }] } }],
      t,
    );
    assert.deepEqual(at(m1, 'spec.template.spec.containers'), at(t, 'spec.template.spec.containers'));
  });
});

describe('render: labels and annotations overriders', () => {
  const t = deployment('web', 'default', { labels: { keep: '1', app: 'web' } });
  it('add creates and overwrites keys', () => {
    const { m1 } = renderWith(
      [{ overriders: { labelsOverrider: [{ operator: 'add', value: { app: 'shop', 'example.com/team': 'a' } }] } }],
      t,
    );
    assert.deepEqual(at(m1, 'metadata.labels'), { keep: '1', app: 'shop', 'example.com/team': 'a' });
  });
  it('replace only touches keys that exist', () => {
    const { m1 } = renderWith(
      [{ overriders: { labelsOverrider: [{ operator: 'replace', value: { app: 'x', missing: 'y' } }] } }],
      t,
    );
    assert.deepEqual(at(m1, 'metadata.labels'), { keep: '1', app: 'x' });
  });
  it('remove deletes keys whatever the value, leaving an empty map', () => {
    const { m1 } = renderWith(
      [{ overriders: { labelsOverrider: [{ operator: 'remove', value: { keep: 'other', app: '' } }] } }],
      t,
    );
    assert.deepEqual(at(m1, 'metadata.labels'), {});
  });
  it('add creates the annotations map when there is none', () => {
    const { m1 } = renderWith(
      [{ overriders: { annotationsOverrider: [{ operator: 'add', value: { note: 'hi' } }] } }],
      t,
    );
    assert.deepEqual(at(m1, 'metadata.annotations'), { note: 'hi' });
  });
});

describe('render: field overrider', () => {
  const cm = configMap('cfg', 'default', {
    'app.yaml': 'b: 1\na:\n  host: old\n  list:\n    - x\n',
    'app.json': '{"z":1,"a":{"host":"old"}}',
  });
  it('edits YAML inside a string and writes it back with sorted keys', () => {
    const { m1 } = renderWith(
      [
        {
          overriders: {
            fieldOverrider: [
              { fieldPath: '/data/app.yaml', yaml: [{ subPath: '/a/host', operator: 'replace', value: 'new' }] },
            ],
          },
        },
      ],
      cm,
    );
    assert.equal(at(m1, 'data')?.constructor, Object);
    assert.equal((at(m1, 'data') as Record<string, string>)['app.yaml'], 'a:\n  host: new\n  list:\n  - x\nb: 1\n');
  });
  it('reads and writes the YAML as Karmada does (sigs.k8s.io/yaml, YAML 1.1): yes is true, 0644 is 420, "on" stays a string', () => {
    const cm11 = configMap('cfg', 'default', { 'app.yaml': 'mode: 0644\nenabled: yes\nsize: 1_000\n' });
    const { m1 } = renderWith(
      [
        {
          overriders: {
            fieldOverrider: [
              { fieldPath: '/data/app.yaml', yaml: [{ subPath: '/flag', operator: 'add', value: 'on' }] },
            ],
          },
        },
      ],
      cm11,
    );
    assert.equal(
      (at(m1, 'data') as Record<string, string>)['app.yaml'],
      'enabled: true\nflag: "on"\nmode: 420\nsize: 1000\n',
    );
  });
  it('fails, naming line and column, for YAML with a duplicate key', () => {
    const dup = configMap('cfg', 'default', { 'app.yaml': 'a: 1\na: 2\n' });
    const { result } = renderWith(
      [
        {
          overriders: {
            fieldOverrider: [{ fieldPath: '/data/app.yaml', yaml: [{ subPath: '/b', operator: 'add', value: 1 }] }],
          },
        },
      ],
      dup,
    );
    assert.match(result.errors[0]?.message ?? '', /\/data\/app\.yaml does not hold valid YAML: 2:1: duplicate key "a"/);
  });
  it('edits JSON inside a string and keeps it compact and in order', () => {
    const { m1 } = renderWith(
      [
        {
          overriders: {
            fieldOverrider: [
              { fieldPath: '/data/app.json', json: [{ subPath: '/a/port', operator: 'add', value: 5432 }] },
            ],
          },
        },
      ],
      cm,
    );
    assert.equal((at(m1, 'data') as Record<string, string>)['app.json'], '{"z":1,"a":{"host":"old","port":5432}}');
  });
  it('fails for a field that is not a string', () => {
    const { result } = renderWith(
      [
        {
          overriders: {
            fieldOverrider: [{ fieldPath: '/metadata', json: [{ subPath: '/x', operator: 'add', value: 1 }] }],
          },
        },
      ],
      cm,
    );
    assert.match(result.errors[0]?.message ?? '', /is not string/);
  });
  it('fails with the sub-operation named when the inner path is missing', () => {
    const { result } = renderWith(
      [
        {
          overriders: {
            fieldOverrider: [
              { fieldPath: '/data/app.json', json: [{ subPath: '/nope/x', operator: 'replace', value: 1 }] },
            ],
          },
        },
      ],
      cm,
    );
    assert.match(result.errors[0]?.message ?? '', /fieldOverrider\[0\]\.json\[0\]: replace operation does not apply/);
  });
});

describe('render: plaintext overrider, keyed paths and variables', () => {
  it('addresses list items by key', () => {
    const t = deployment('web', 'default', {
      containers: [
        { name: 'side', image: 'y' },
        { name: 'web', image: 'x' },
      ],
    });
    const { m1 } = renderWith(
      [
        {
          overriders: {
            plaintext: [{ path: '/spec/template/spec/containers[name=web]/image', operator: 'replace', value: 'z' }],
          },
        },
      ],
      t,
    );
    assert.equal(at(m1, 'spec.template.spec.containers[1].image'), 'z');
  });

  it('expands per-cluster variables in values', () => {
    const rules = [
      {
        overriders: {
          labelsOverrider: [{ operator: 'add', value: { where: "${cluster.name}-${cluster.labels['env']}" } }],
          plaintext: [
            {
              path: '/metadata/annotations',
              operator: 'add',
              value: { region: '${cluster.region}', literal: '$${cluster.name}' },
            },
          ],
        },
      },
    ];
    const { m1, m2 } = renderWith(rules);
    assert.equal(at(m1, 'metadata.labels.where'), 'm1-prod');
    assert.equal(at(m2, 'metadata.labels.where'), 'm2-dev');
    assert.deepEqual(at(m1, 'metadata.annotations'), { region: 'eu-west-1', literal: '${cluster.name}' });
  });

  it('fails only the cluster that lacks what a variable needs', () => {
    const { result, m1, m2 } = renderWith([
      { overriders: { labelsOverrider: [{ operator: 'add', value: { p: '${cluster.provider}' } }] } },
    ]);
    assert.equal(at(m1, 'metadata.labels.p'), 'aws');
    assert.equal(m2, undefined);
    assert.match(result.errors[0]?.message ?? '', /cluster m2 has no provider/);
  });

  it('fails a path that does not exist on one cluster and renders the other', () => {
    const rules = [
      {
        targetCluster: { clusterNames: ['m2'] },
        overriders: { plaintext: [{ path: '/spec/paused', operator: 'replace', value: true }] },
      },
    ];
    const { result, m1, m2 } = renderWith(rules);
    assert.ok(m1);
    assert.equal(m2, undefined);
    assert.deepEqual(
      result.errors.map((e) => e.cluster),
      ['m2'],
    );
  });
});

describe('render: override order and provenance', () => {
  const label = (v: string) => ({ overriders: { labelsOverrider: [{ operator: 'add', value: { who: v } }] } });
  it('applies ClusterOverridePolicies first, then OverridePolicies, least specific first', () => {
    const objects = [
      deployment('web', 'default', { labels: { app: 'web' } }),
      ppAll,
      ...members,
      overridePolicy('a-byname', 'default', [label('byname')], [selectDeployment('web')]),
      overridePolicy('z-all', 'default', [label('all')]),
      overridePolicy(
        'm-bylabel',
        'default',
        [label('bylabel')],
        [{ apiVersion: 'apps/v1', kind: 'Deployment', labelSelector: { matchLabels: { app: 'web' } } }],
      ),
      clusterOverridePolicy('zzz-cop', [label('cop')]),
    ];
    const p = render({ objects }).placements[0];
    assert.deepEqual(
      p?.overrides.map((o) => o.name),
      ['zzz-cop', 'z-all', 'm-bylabel', 'a-byname'],
    );
    assert.equal(at(p?.object, 'metadata.labels.who'), 'byname');
  });

  it('skips rules whose targetCluster does not match, and applies the deprecated top-level form', () => {
    const deprecated = {
      apiVersion: 'policy.flotilla.io/v1alpha1',
      kind: 'OverridePolicy',
      metadata: { name: 'old', namespace: 'default' },
      spec: {
        targetCluster: { clusterNames: ['m2'] },
        overriders: { labelsOverrider: [{ operator: 'add', value: { old: 'yes' } }] },
      },
    };
    const { m1, m2 } = renderWith([], deployment(), [deprecated]);
    assert.equal(at(m1, 'metadata.labels.old'), undefined);
    assert.equal(at(m2, 'metadata.labels.old'), 'yes');
  });

  it('says which policy and rule set each changed path', () => {
    const objects = [
      deployment('web', 'default', { replicas: 2 }),
      propagationPolicy('pp', 'default', [selectDeployment()], { replicaScheduling: {} }),
      cluster('m1'),
      overridePolicy('op', 'default', [
        label('x'),
        { overriders: { plaintext: [{ path: '/spec/replicas', operator: 'replace', value: 5 }] } },
      ]),
    ];
    const [p] = renderDetailed({ objects }, { explain: true }).placements;
    assert.ok(p);
    const rows = explainPlacement(p);
    assert.deepEqual(
      rows.map((r) => [r.path, r.setBy]),
      [
        ['/spec/replicas', 'OverridePolicy default/op spec.overrideRules[1].overriders.plaintext[0]'],
        ['/metadata/labels/who', 'OverridePolicy default/op spec.overrideRules[0].overriders.labelsOverrider[0]'],
      ],
    );
    assert.deepEqual(rows[0]?.overwritten, ['PropagationPolicy default/pp placement.replicaScheduling']);
  });
});

describe('render: output hygiene and bad input', () => {
  it('removes server-populated fields and never changes its input', () => {
    const t = deployment();
    (t.metadata as Obj).uid = 'u';
    (t.metadata as Obj).resourceVersion = '9';
    t.status = { readyReplicas: 1 };
    const before = JSON.stringify(t);
    const { m1 } = renderWith([{ overriders: { labelsOverrider: [{ operator: 'add', value: { a: 'b' } }] } }], t);
    assert.equal(at(m1, 'metadata.uid'), undefined);
    assert.equal(at(m1, 'status'), undefined);
    assert.equal(JSON.stringify(t), before);
  });

  it('reports unusable documents and keeps rendering the rest', () => {
    const r = render({
      objects: [
        42,
        { kind: 'Deployment' },
        { apiVersion: 'policy.flotilla.io/v1alpha1', kind: 'Mystery', metadata: { name: 'm' } },
        deployment(),
        ppAll,
        ...members,
      ],
    });
    assert.equal(r.placements.length, 2);
    assert.deepEqual(
      r.errors.map((e) => e.message),
      [
        'document 1 is not an object',
        'apiVersion: Required value',
        'kind: Unsupported value: "Mystery": supported values: "PropagationPolicy", "ClusterPropagationPolicy", "OverridePolicy", "ClusterOverridePolicy"',
      ],
    );
  });

  it('reports a document nested deeper than MAX_DEPTH and renders the rest', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const r = render({
      objects: [
        { ...configMap('deep'), data: deep },
        configMap('flat'),
        propagationPolicy('cm', 'default', [{ apiVersion: 'v1', kind: 'ConfigMap' }]),
        ...members,
      ],
    });
    assert.deepEqual(r.errors, [
      {
        object: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'deep' },
        message: `data: Forbidden: must not be nested more than ${MAX_DEPTH} levels deep`,
      },
    ]);
    assert.deepEqual(
      r.placements.map((p) => `${String(at(p.object, 'metadata.name'))}@${p.cluster}`),
      ['flat@m1', 'flat@m2'],
    );
  });

  it("reports a field document too deep to write back as that overrider's error", () => {
    const json = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    const { result } = renderWith(
      [
        {
          overriders: {
            fieldOverrider: [{ fieldPath: '/data/j', json: [{ subPath: '/b', operator: 'add', value: 1 }] }],
          },
        },
      ],
      configMap('cfg', 'default', { j: json }),
    );
    assert.deepEqual(
      result.errors.map((e) => e.message),
      ['m1', 'm2'].map(
        () =>
          'OverridePolicy default/op: spec.overrideRules[0].overriders.fieldOverrider[0]: cannot write /data/j back as JSON: Maximum call stack size exceeded',
      ),
    );
  });

  it('does not throw for input that is not even a list', () => {
    assert.deepEqual(render({ objects: undefined as unknown as unknown[] }), {
      placements: [],
      unmatched: [],
      errors: [],
    });
  });
});

describe('render: keys that name Object.prototype members', () => {
  const cm = (data: string) =>
    JSON.parse(
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"},"data":${data}}`,
    ) as Obj;
  const renderCm = (template: Obj, rules: Obj[] = [], clusters: Obj[] = members) => {
    const r = render({
      objects: [
        template,
        propagationPolicy('cm', 'default', [{ apiVersion: 'v1', kind: 'ConfigMap' }]),
        overridePolicy('op', 'default', rules),
        ...clusters,
      ],
    });
    return { r, by: Object.fromEntries(r.placements.map((p) => [p.cluster, p.object])) };
  };
  const assertPlain = (o: unknown): void => {
    assert.equal(Object.getPrototypeOf(o), Object.prototype);
    assert.equal(({} as Obj).polluted, undefined);
  };

  it('keeps a ConfigMap data key named __proto__', () => {
    const { by } = renderCm(cm('{"__proto__":"x","a":"b"}'));
    const data = at(by.m1, 'data') as Obj;
    assertPlain(data);
    assert.deepEqual(Object.keys(data), ['__proto__', 'a']);
    assert.equal(JSON.stringify(data), '{"__proto__":"x","a":"b"}');
  });

  it('keeps __proto__ keys inside a plaintext value, without inheriting from them', () => {
    const value = JSON.parse('{"__proto__":{"polluted":"yes"},"region":"${cluster.region}"}') as Obj;
    const { by } = renderCm(cm('{"a":"b"}'), [
      { overriders: { plaintext: [{ path: '/data/nested', operator: 'add', value }] } },
    ]);
    const nested = at(by.m1, 'data.nested') as Obj;
    assertPlain(nested);
    assert.equal(JSON.stringify(nested), '{"__proto__":{"polluted":"yes"},"region":"eu-west-1"}');
    assert.equal(nested.polluted, undefined);
  });

  it('keeps __proto__ keys in documents a field overrider edits', () => {
    const value = JSON.parse('{"__proto__":"${cluster.name}"}') as Obj;
    const template = cm(
      JSON.stringify({ 'a.yaml': '__proto__:\n  x: 1\nb: 2\n', 'a.json': '{"__proto__":{"x":1},"b":2}' }),
    );
    const { by } = renderCm(template, [
      {
        overriders: {
          fieldOverrider: [
            { fieldPath: '/data/a.yaml', yaml: [{ subPath: '/b', operator: 'replace', value }] },
            { fieldPath: '/data/a.json', json: [{ subPath: '/b', operator: 'replace', value }] },
          ],
        },
      },
    ]);
    assert.equal((at(by.m1, 'data') as Obj)['a.yaml'], '__proto__:\n  x: 1\nb:\n  __proto__: m1\n');
    assert.equal((at(by.m1, 'data') as Obj)['a.json'], '{"__proto__":{"x":1},"b":{"__proto__":"m1"}}');
  });

  it('writes a label key named __proto__ as a label', () => {
    const value = JSON.parse('{"__proto__":"${cluster.name}"}') as Obj;
    const { by } = renderCm(cm('{}'), [{ overriders: { labelsOverrider: [{ operator: 'add', value }] } }]);
    const labels = at(by.m1, 'metadata.labels') as Obj;
    assertPlain(labels);
    assert.equal(JSON.stringify(labels), '{"__proto__":"m1"}');
  });

  for (const key of ['constructor', '__proto__', 'toString']) {
    it(`fails \${cluster.labels['${key}']} on a cluster without that label`, () => {
      const { r } = renderCm(cm('{}'), [
        { overriders: { labelsOverrider: [{ operator: 'add', value: { a: `\${cluster.labels['${key}']}` } }] } },
      ]);
      assert.equal(r.placements.length, 0);
      assert.deepEqual(
        r.errors.map((e) => e.message),
        ['m1', 'm2'].map(
          (c) =>
            `OverridePolicy default/op: spec.overrideRules[0].overriders.labelsOverrider[0]: cluster ${c} has no label ${JSON.stringify(key)}`,
        ),
      );
    });
  }

  it('spreads by a label named constructor only over clusters that have it', () => {
    const placement = { spreadConstraints: [{ spreadByLabel: 'constructor', maxGroups: 1 }] };
    const r = render({
      objects: [
        configMap('cfg'),
        propagationPolicy('cm', 'default', [{ apiVersion: 'v1', kind: 'ConfigMap' }], placement),
        cluster('a'),
        cluster('b', { labels: { constructor: 'x' } }),
      ],
    });
    assert.deepEqual(
      r.placements.map((p) => p.cluster),
      ['b'],
    );
  });

  it('matches a selector on a label named constructor only where the label is set', () => {
    const rules = [
      {
        targetCluster: { labelSelector: { matchExpressions: [{ key: 'constructor', operator: 'Exists' }] } },
        overriders: { labelsOverrider: [{ operator: 'add', value: { hit: 'yes' } }] },
      },
    ];
    const { by } = renderCm(cm('{}'), rules, [cluster('a'), cluster('b', { labels: { constructor: 'x' } })]);
    assert.equal(at(by.a, 'metadata.labels'), undefined);
    assert.deepEqual(at(by.b, 'metadata.labels'), { hit: 'yes' });
  });
});
