// propagateDeps: which objects a workload names (discovery), and where they go when its policy says
// propagateDeps — offline (renderDetailed) and in the incremental state, which must agree.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cluster,
  clusterOverridePolicy,
  configMap,
  deployment,
  propagationPolicy,
  selectDeployment,
  type Obj,
} from '../../test/builders.js';
import { dependenciesOf } from './dependencies.js';
import { renderDetailed, type DetailedPlacement } from './render.js';
import { EngineState } from './state.js';

const names = (o: Obj) =>
  dependenciesOf({ apiVersion: String(o.apiVersion), kind: String(o.kind), namespace: 'shop', name: 'x' }, o).map(
    (d) => `${d.ref.kind}/${d.ref.name}`,
  );

const podSpec: Obj = {
  serviceAccountName: 'runner',
  imagePullSecrets: [{ name: 'pull' }],
  containers: [
    {
      name: 'app',
      env: [
        { name: 'A', valueFrom: { configMapKeyRef: { name: 'env-cm', key: 'a' } } },
        { name: 'B', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'b' } } },
        { name: 'C', value: 'plain' },
      ],
      envFrom: [{ configMapRef: { name: 'from-cm' } }, { secretRef: { name: 'from-secret' } }],
    },
  ],
  initContainers: [{ name: 'init', envFrom: [{ configMapRef: { name: 'init-cm' } }] }],
  ephemeralContainers: [{ name: 'debug', env: [{ name: 'D', valueFrom: { secretKeyRef: { name: 'debug-secret' } } }] }],
  volumes: [
    { name: 'v1', configMap: { name: 'vol-cm' } },
    { name: 'v2', secret: { secretName: 'vol-secret' } },
    { name: 'v3', persistentVolumeClaim: { claimName: 'data' } },
    {
      name: 'v4',
      projected: {
        sources: [{ configMap: { name: 'proj-cm' } }, { secret: { name: 'proj-secret' } }, { serviceAccountToken: {} }],
      },
    },
    { name: 'v5', csi: { driver: 'x', nodePublishSecretRef: { name: 'csi-secret' } } },
    { name: 'v6', azureFile: { secretName: 'azure-secret', shareName: 's' } },
    { name: 'v7', emptyDir: {} },
  ],
};

describe('dependenciesOf', () => {
  it('reads every reference of a pod template: env, envFrom, volumes, projected, CSI, pull secrets, service account', () => {
    const d = { apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: { spec: podSpec } } };
    assert.deepEqual(names(d), [
      'ConfigMap/env-cm',
      'ConfigMap/from-cm',
      'ConfigMap/init-cm',
      'ConfigMap/proj-cm',
      'ConfigMap/vol-cm',
      'Secret/azure-secret',
      'Secret/csi-secret',
      'Secret/debug-secret',
      'Secret/env-secret',
      'Secret/from-secret',
      'Secret/proj-secret',
      'Secret/pull',
      'Secret/vol-secret',
      'ServiceAccount/runner',
      'PersistentVolumeClaim/data',
    ]);
  });

  it('finds the pod template of each workload kind, and names the field of the first reference', () => {
    const spec = { volumes: [{ name: 'v', configMap: { name: 'c' } }] };
    const kinds: Array<[string, string, Obj]> = [
      ['apps/v1', 'StatefulSet', { template: { spec } }],
      ['apps/v1', 'DaemonSet', { template: { spec } }],
      ['apps/v1', 'ReplicaSet', { template: { spec } }],
      ['batch/v1', 'Job', { template: { spec } }],
      ['batch/v1', 'CronJob', { jobTemplate: { spec: { template: { spec } } } }],
    ];
    for (const [apiVersion, kind, s] of kinds)
      assert.deepEqual(names({ apiVersion, kind, spec: s }), ['ConfigMap/c'], kind);
    const pod = dependenciesOf({ apiVersion: 'v1', kind: 'Pod', name: 'p' }, { spec });
    assert.deepEqual(pod, [
      {
        ref: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'c' },
        path: 'spec.volumes[0].configMap',
      },
    ]);
  });

  it("reads an Ingress's TLS secrets", () => {
    const ing = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', spec: { tls: [{ secretName: 'cert' }, {}] } };
    assert.deepEqual(names(ing), ['Secret/cert']);
  });

  it("leaves out the default service account, each cluster's own root CA, empty names, other kinds and API versions", () => {
    const spec = {
      serviceAccountName: 'default',
      volumes: [
        { configMap: { name: '' } },
        { configMap: {} },
        { projected: { sources: [{ configMap: { name: 'kube-root-ca.crt' } }] } },
      ],
    };
    assert.deepEqual(names({ apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: { spec } } }), []);
    const used = { template: { spec: { volumes: [{ configMap: { name: 'c' } }] } } };
    assert.deepEqual(names({ apiVersion: 'apps/v1beta1', kind: 'Deployment', spec: used }), []);
    assert.deepEqual(names({ apiVersion: 'example.com/v1', kind: 'Deployment', spec: used }), []);
    assert.deepEqual(names({ apiVersion: 'v1', kind: 'ConfigMap', data: { volumes: 'x' } }), []);
  });

  it('reads own properties only and survives junk where lists and objects belong', () => {
    const inherited = Object.create({ template: { spec: { volumes: [{ configMap: { name: 'proto' } }] } } }) as Obj;
    assert.deepEqual(names({ apiVersion: 'apps/v1', kind: 'Deployment', spec: inherited }), []);
    const junk = {
      containers: 'x',
      volumes: [null, 3, { configMap: 'y' }, { projected: { sources: 'z' } }],
      imagePullSecrets: {},
    };
    assert.deepEqual(names({ apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: { spec: junk } } }), []);
    const keyed = JSON.parse('{"volumes":[{"__proto__":{"name":"p"},"configMap":{"name":"ok"}}]}') as Obj;
    assert.deepEqual(names({ apiVersion: 'v1', kind: 'Pod', spec: keyed }), ['ConfigMap/ok']);
  });
});

/** A Deployment `web` in `default` that mounts the named ConfigMaps. */
function workload(uses: string[], extra: { replicas?: number } = {}): Obj {
  const d = deployment('web', 'default', extra);
  const spec = ((d.spec as Obj).template as Obj).spec as Obj;
  spec.volumes = uses.map((u) => ({ name: u, configMap: { name: u } }));
  return d;
}

const clusters = [cluster('m1'), cluster('m2'), cluster('m3')];
const onClusters = (...clusterNames: string[]) => ({ clusterAffinity: { clusterNames } });
const deps = { propagateDeps: true };

const where = (placements: DetailedPlacement[], kind: string, name: string) =>
  placements.filter((p) => p.template.kind === kind && p.template.name === name).map((p) => p.cluster);

describe('propagateDeps in render', () => {
  it('takes an unclaimed ConfigMap to every cluster of the workload, with its overrides, and lists the workload', () => {
    const r = renderDetailed({
      objects: [
        configMap('cfg', 'default', { level: 'info' }),
        workload(['cfg']),
        propagationPolicy('web', 'default', [selectDeployment('web')], onClusters('m1', 'm3'), deps),
        clusterOverridePolicy(
          'tag',
          [
            {
              targetCluster: { clusterNames: ['m3'] },
              overriders: { labelsOverrider: [{ operator: 'add', value: { env: 'dev' } }] },
            },
          ],
          [{ apiVersion: 'v1', kind: 'ConfigMap' }],
        ),
        ...clusters,
      ],
    });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.unmatched, []);
    assert.deepEqual(where(r.placements, 'ConfigMap', 'cfg'), ['m1', 'm3']);
    const m3 = r.placements.find((p) => p.template.kind === 'ConfigMap' && p.cluster === 'm3');
    assert.deepEqual((m3?.object.metadata as Obj).labels, { env: 'dev' });
    assert.deepEqual(m3?.overrides, [{ kind: 'ClusterOverridePolicy', name: 'tag' }]);
    assert.deepEqual(m3?.policy, { kind: 'PropagationPolicy', namespace: 'default', name: 'web' });
    assert.deepEqual(m3?.requiredBy, [
      { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' },
    ]);
  });

  it('without propagateDeps the ConfigMap stays unmatched and nothing warns', () => {
    const r = renderDetailed({
      objects: [
        configMap('cfg'),
        workload(['cfg', 'gone']),
        propagationPolicy('web', 'default', [selectDeployment('web')]),
        ...clusters,
      ],
    });
    assert.deepEqual(where(r.placements, 'ConfigMap', 'cfg'), []);
    assert.deepEqual(r.unmatched, [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cfg' }]);
    assert.deepEqual(r.warnings, []);
  });

  it('warns about a named dependency that is not in the input, with the field that names it', () => {
    const r = renderDetailed({
      objects: [
        workload(['gone']),
        propagationPolicy('web', 'default', [selectDeployment('web')], undefined, deps),
        ...clusters,
      ],
    });
    assert.equal(r.warnings.length, 1);
    assert.deepEqual(r.warnings[0]?.object, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: 'default',
      name: 'web',
    });
    assert.match(
      r.warnings[0]?.message ?? '',
      /^spec\.template\.spec\.volumes\[0\]\.configMap names ConfigMap default\/gone, which is not found: .*PropagationPolicy default\/web/,
    );
    assert.equal(r.placements.length, 3, 'the workload itself still renders');
  });

  it('a dependency its own policy places goes there as claimed, and to the workload-only clusters as required', () => {
    const r = renderDetailed({
      objects: [
        configMap('cfg'),
        workload(['cfg']),
        propagationPolicy('web', 'default', [selectDeployment('web')], onClusters('m1', 'm2'), deps),
        propagationPolicy(
          'cfg',
          'default',
          [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg' }],
          onClusters('m2', 'm3'),
        ),
        ...clusters,
      ],
    });
    const cm = r.placements.filter((p) => p.template.kind === 'ConfigMap');
    assert.deepEqual(
      cm.map((p) => [p.cluster, p.policy.name, p.requiredBy?.length ?? 0]),
      [
        ['m2', 'cfg', 0],
        ['m3', 'cfg', 0],
        ['m1', 'web', 1],
      ],
    );
  });

  it('two workloads sharing a ConfigMap: one copy per cluster, both workloads listed where both go', () => {
    const other = workload(['cfg']);
    (other.metadata as Obj).name = 'api';
    const r = renderDetailed({
      objects: [
        configMap('cfg'),
        workload(['cfg']),
        other,
        propagationPolicy('web', 'default', [selectDeployment('web')], onClusters('m1', 'm2'), deps),
        propagationPolicy('api', 'default', [selectDeployment('api')], onClusters('m2', 'm3'), deps),
        ...clusters,
      ],
    });
    const cm = r.placements.filter((p) => p.template.kind === 'ConfigMap');
    assert.deepEqual(
      cm.map((p) => [p.cluster, p.policy.name, (p.requiredBy ?? []).map((w) => w.name)]),
      [
        ['m1', 'web', ['web']],
        ['m2', 'api', ['api', 'web']],
        ['m3', 'api', ['api']],
      ],
    );
  });

  it('follows the clusters a divided workload actually gets replicas on, and honours --cluster', () => {
    const placement = {
      clusterAffinity: { clusterNames: ['m1', 'm2', 'm3'] },
      replicaScheduling: {
        replicaSchedulingType: 'Divided',
        replicaDivisionPreference: 'Weighted',
        weightPreference: { staticWeightList: [{ targetCluster: { clusterNames: ['m1', 'm2'] }, weight: 1 }] },
      },
    };
    const objects = [
      configMap('cfg'),
      workload(['cfg'], { replicas: 2 }),
      propagationPolicy('web', 'default', [selectDeployment('web')], placement, deps),
      ...clusters,
    ];
    assert.deepEqual(where(renderDetailed({ objects }).placements, 'ConfigMap', 'cfg'), ['m1', 'm2']);
    assert.deepEqual(where(renderDetailed({ objects }, { clusters: ['m2'] }).placements, 'ConfigMap', 'cfg'), ['m2']);
  });

  it('a workload whose placement fails takes nothing with it', () => {
    const r = renderDetailed({
      objects: [
        configMap('cfg'),
        workload(['cfg']),
        propagationPolicy('web', 'default', [selectDeployment('web')], onClusters('nowhere'), deps),
        ...clusters,
      ],
    });
    assert.equal(r.errors.length, 1);
    assert.deepEqual(r.unmatched, [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cfg' }]);
  });
});

describe('propagateDeps in the incremental state', () => {
  it('adds and removes the dependency with the workload, reporting it affected, and says which workloads need it', () => {
    const s = new EngineState();
    for (const o of [
      ...clusters,
      configMap('cfg'),
      propagationPolicy('web', 'default', [selectDeployment('web')], onClusters('m1'), deps),
    ])
      s.upsert(o);
    const cfg = s.keyOf({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cfg' }) ?? '';
    assert.deepEqual(s.renderTemplate(cfg)?.unmatched.length, 1);

    const added = s.upsert(workload(['cfg']));
    assert.ok(added.affected.has(cfg), 'the ConfigMap is affected by the workload that names it');
    const r = s.renderTemplate(cfg);
    assert.deepEqual(
      r?.placements.map((p) => p.cluster),
      ['m1'],
    );
    assert.deepEqual(r?.requiredBy, [
      {
        workload: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' },
        policy: { kind: 'PropagationPolicy', namespace: 'default', name: 'web' },
        clusters: ['m1'],
      },
    ]);

    const moved = s.upsert(
      propagationPolicy('web', 'default', [selectDeployment('web')], onClusters('m2', 'm3'), deps),
    );
    assert.ok(moved.affected.has(cfg));
    assert.deepEqual(
      s.renderTemplate(cfg)?.placements.map((p) => p.cluster),
      ['m2', 'm3'],
    );

    const unused = s.upsert(workload([]));
    assert.ok(unused.affected.has(cfg), 'the ConfigMap the workload stopped naming is affected');
    assert.deepEqual(s.renderTemplate(cfg)?.unmatched.length, 1);
    assert.equal(s.renderTemplate(cfg)?.requiredBy, undefined);
  });

  it("a dependency appearing or going changes the workload's warnings, and says so in affected", () => {
    const s = new EngineState();
    for (const o of [
      ...clusters,
      workload(['cfg']),
      propagationPolicy('web', 'default', [selectDeployment('web')], undefined, deps),
    ])
      s.upsert(o);
    const web = s.keyOf({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' }) ?? '';
    assert.equal(s.renderTemplate(web)?.warnings.length, 1);
    assert.ok(s.upsert(configMap('cfg')).affected.has(web));
    assert.equal(s.renderTemplate(web)?.warnings.length, 0);
    assert.ok(s.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cfg' }).affected.has(web));
    assert.equal(s.renderTemplate(web)?.warnings.length, 1);
  });
});
