// propagateDeps on a hub, as a platform team uses it with kubectl: two Deployments share a ConfigMap and
// each names its own Secret and ServiceAccount; their policies say propagateDeps and nothing selects the
// dependencies. The dependencies follow the workloads (with their overrides), the ConfigMap's binding lists
// who requires it, and each dependency leaves exactly the clusters no workload needs it on any more.
// Real apiservers: a hub and two members; the controller runs in this process through the CLI entry.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { capturingIO, getObject, prepareHub, type Obj, startController } from './controller-io.js';

const WAIT_MS = 30_000;
const NS = 'shop';
const CONFIG = `/api/v1/namespaces/${NS}/configmaps/shared-config`;
const CONFIG_BINDING = `/apis/work.flotilla.io/v1alpha1/namespaces/${NS}/resourcebindings/shared-config-configmap`;

/** A Deployment that mounts shared-config, reads `<name>-secret` and runs as `<name>-sa`. */
const deployment = (name: string, useConfig = true): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: NS },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        serviceAccountName: `${name}-sa`,
        containers: [{ name, image: 'nginx:1.25', envFrom: [{ secretRef: { name: `${name}-secret` } }] }],
        ...(useConfig ? { volumes: [{ name: 'config', configMap: { name: 'shared-config' } }] } : {}),
      },
    },
  },
});
const policy = (name: string, clusterNames: string[]): Obj => ({
  apiVersion: 'policy.flotilla.io/v1beta1',
  kind: 'PropagationPolicy',
  metadata: { name, namespace: NS },
  spec: {
    propagateDeps: true,
    resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name }],
    placement: { clusterAffinity: { clusterNames } },
  },
});
const dependencies: Obj[] = [
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared-config', namespace: NS }, data: { level: 'info' } },
  ...['web', 'api'].flatMap((n): Obj[] => [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${n}-secret`, namespace: NS }, stringData: { token: n } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: `${n}-sa`, namespace: NS } },
  ]),
];
const labelMember2: Obj = {
  apiVersion: 'policy.flotilla.io/v1beta1',
  kind: 'OverridePolicy',
  metadata: { name: 'config-on-member2', namespace: NS },
  spec: {
    resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'shared-config' }],
    overrideRules: [
      {
        targetCluster: { clusterNames: ['member2'] },
        overriders: { labelsOverrider: [{ operator: 'add', value: { site: 'member2' } }] },
      },
    ],
  },
};

void describe('flotilla controller: propagateDeps', () => {
  const env = useEnvironment({ members: 2 });
  let hub: KubeClient;
  let members: KubeClient[];
  const stop = new AbortController();
  let controller: Promise<number>;
  let out: ReturnType<typeof capturingIO>;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);
  const apply = async (...items: Obj[]) => {
    const r = await k(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items });
    assert.equal(r.status, 0, r.stderr);
  };
  /** Which members hold each object: `kind/name` → member names. */
  const where = async (): Promise<Record<string, string[]>> => {
    const paths: Record<string, string> = {
      'ConfigMap/shared-config': CONFIG,
      'Secret/web-secret': `/api/v1/namespaces/${NS}/secrets/web-secret`,
      'Secret/api-secret': `/api/v1/namespaces/${NS}/secrets/api-secret`,
      'ServiceAccount/web-sa': `/api/v1/namespaces/${NS}/serviceaccounts/web-sa`,
      'ServiceAccount/api-sa': `/api/v1/namespaces/${NS}/serviceaccounts/api-sa`,
    };
    const out: Record<string, string[]> = {};
    for (const [id, path] of Object.entries(paths)) {
      out[id] = [];
      for (const [i, m] of members.entries()) if (await getObject(m, path)) out[id].push(`member${i + 1}`);
    }
    return out;
  };
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean) => eventually(probe, done, WAIT_MS, 100);
  const same = (want: Record<string, string[]>) => (got: Record<string, string[]>) =>
    JSON.stringify(got) === JSON.stringify(want);

  before(async () => {
    const e = env();
    ({ hub, members } = await prepareHub(e, NS));
    out = capturingIO(stop.signal);
    controller = startController(e.hub, e.membersKubeconfigPath, out);
  });

  after(async () => {
    stop.abort();
    assert.equal(await controller, 0, out.err());
  });

  void it("takes each workload's ConfigMap, Secret and ServiceAccount to its clusters, with overrides, and the binding lists who requires it", async () => {
    await apply(
      ...dependencies,
      labelMember2,
      deployment('web'),
      deployment('api'),
      policy('web', ['member1', 'member2']),
      policy('api', ['member2']),
    );
    const want = {
      'ConfigMap/shared-config': ['member1', 'member2'],
      'Secret/web-secret': ['member1', 'member2'],
      'Secret/api-secret': ['member2'],
      'ServiceAccount/web-sa': ['member1', 'member2'],
      'ServiceAccount/api-sa': ['member2'],
    };
    assert.deepEqual(await until(where, same(want)), want, out.err());
    const onMember2 = await getObject(members[1] as KubeClient, CONFIG);
    assert.equal(
      ((onMember2?.metadata as Obj).labels as Obj).site,
      'member2',
      'the override applies to the dependency',
    );
    const onMember1 = await getObject(members[0] as KubeClient, CONFIG);
    assert.equal(((onMember1?.metadata as Obj).labels as Obj | undefined)?.site, undefined);
    assert.deepEqual(onMember1?.data, { level: 'info' });

    const binding = await until(
      () => getObject(hub, CONFIG_BINDING),
      (b) =>
        Array.isArray((b?.spec as Obj | undefined)?.requiredBy) && ((b?.spec as Obj).requiredBy as Obj[]).length === 2,
    );
    assert.deepEqual((binding?.spec as Obj).requiredBy, [
      { apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name: 'api', clusters: [{ name: 'member2' }] },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        namespace: NS,
        name: 'web',
        clusters: [{ name: 'member1' }, { name: 'member2' }],
      },
    ]);
    const claimed = ((binding?.status as Obj).conditions as Obj[]).find((c) => c.type === 'Claimed');
    assert.equal(claimed?.reason, 'RequiredBy');
    const described = await k(['get', 'resourcebinding', 'shared-config-configmap', '-n', NS, '-o', 'json']);
    assert.equal(described.status, 0, described.stderr);
  });

  void it('a workload moving off a cluster takes with it only what no other workload needs there', async () => {
    await apply(policy('web', ['member1']));
    const want = {
      'ConfigMap/shared-config': ['member1', 'member2'], // api still needs it on member2
      'Secret/web-secret': ['member1'],
      'Secret/api-secret': ['member2'],
      'ServiceAccount/web-sa': ['member1'],
      'ServiceAccount/api-sa': ['member2'],
    };
    assert.deepEqual(await until(where, same(want)), want, out.err());
  });

  void it('a deleted workload, and one that stops naming the ConfigMap, leave nothing behind; the hub keeps its objects', async () => {
    const deleted = await k(['delete', 'deployment', 'api', '-n', NS, '--wait=true']);
    assert.equal(deleted.status, 0, deleted.stderr);
    const afterDelete = {
      'ConfigMap/shared-config': ['member1'],
      'Secret/web-secret': ['member1'],
      'Secret/api-secret': [],
      'ServiceAccount/web-sa': ['member1'],
      'ServiceAccount/api-sa': [],
    };
    assert.deepEqual(await until(where, same(afterDelete)), afterDelete, out.err());

    await apply(deployment('web', false));
    const afterEdit = { ...afterDelete, 'ConfigMap/shared-config': [] };
    assert.deepEqual(await until(where, same(afterEdit)), afterEdit, out.err());
    // The binding and the finalizer go; the hub's ConfigMap stays as the team wrote it.
    assert.equal(
      await until(
        () => getObject(hub, CONFIG_BINDING),
        (b) => b === undefined,
      ),
      undefined,
    );
    const template = await until(
      () => getObject(hub, CONFIG),
      (o) => ((o?.metadata as Obj | undefined)?.finalizers as unknown[] | undefined)?.length === undefined,
    );
    assert.deepEqual(template?.data, { level: 'info' });
  });
});
