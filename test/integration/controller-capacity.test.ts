// Scheduling that knows the clusters, on a hub with three members (member3 has no Node): the controller reads each member's Nodes
// and Pods into its Cluster's status (Karmada's resourceSummary, apiEnablements, kubernetesVersion), and
// a Deployment divided by `dynamicWeight: AvailableReplicas` follows the capacity, including a change of
// it. No kubelet runs here: Nodes (with their allocatable) and Pods are created through the API.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { capturingIO, getObject, prepareHub, type Obj, startController } from './controller-io.js';

const WAIT_MS = 30_000;
const NS = 'shop';
const WEB = `/apis/apps/v1/namespaces/${NS}/deployments/web`;

const deployment = (name: string, replicas: number): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: NS },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name, image: 'nginx:1.25', resources: { requests: { cpu: '1', memory: '128Mi' } } }] },
    },
  },
});
const policy: Obj = {
  apiVersion: 'policy.flotilla.io/v1beta1',
  kind: 'PropagationPolicy',
  metadata: { name: 'by-capacity', namespace: NS },
  spec: {
    resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment' }],
    placement: {
      clusterAffinity: { clusterNames: ['member1', 'member2', 'member3'] },
      replicaScheduling: {
        replicaSchedulingType: 'Divided',
        replicaDivisionPreference: 'Weighted',
        weightPreference: { dynamicWeight: 'AvailableReplicas' },
      },
    },
  },
};

/** A Node as a kubelet would register it, with what it can give pods. */
async function addNode(c: KubeClient, name: string, cpu: string): Promise<void> {
  const body = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    status: {
      capacity: { cpu, memory: '16Gi', pods: '110' },
      allocatable: { cpu, memory: '16Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready' }],
    },
  };
  const created = await c.request({ method: 'POST', path: '/api/v1/nodes', body });
  assert.ok(created.status < 300, JSON.stringify(created.body));
  // The status is the kubelet's to write: through the status subresource, whatever create kept.
  const status = await c.request({
    method: 'PATCH',
    path: `/api/v1/nodes/${name}/status`,
    contentType: 'application/merge-patch+json',
    body: { status: body.status },
  });
  assert.ok(status.status < 300, JSON.stringify(status.body));
}

void describe('flotilla controller: capacity from the members', () => {
  const env = useEnvironment({ members: 3 });
  let hub: KubeClient;
  let members: KubeClient[];
  const stop = new AbortController();
  let controller: Promise<number>;
  let out: ReturnType<typeof capturingIO>;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);
  const replicas = async () =>
    Promise.all(members.map(async (m) => ((await getObject(m, WEB))?.spec as Obj | undefined)?.replicas));
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean) => eventually(probe, done, WAIT_MS, 100);

  before(async () => {
    const e = env();
    ({ hub, members } = await prepareHub(e, NS));
    const clusters = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: ['member1', 'member2', 'member3'].map((name) => ({
        apiVersion: 'cluster.flotilla.io/v1alpha1',
        kind: 'Cluster',
        metadata: { name },
      })),
    });
    assert.equal(clusters.status, 0, clusters.stderr);
    await addNode(members[0] as KubeClient, 'node-a', '4');
    await addNode(members[1] as KubeClient, 'node-b', '2');
    out = capturingIO(stop.signal);
    controller = startController(e.hub, e.membersKubeconfigPath, out, ['--cluster-status-interval', '1s']);
  });

  after(async () => {
    stop.abort();
    assert.equal(await controller, 0, out.err());
  });

  void it("writes each Cluster's status from its member: resource summary, API enablements, version", async () => {
    const cluster = await until(
      () => getObject(hub, '/apis/cluster.flotilla.io/v1alpha1/clusters/member1'),
      (c) => isSummary(c, '4'),
    );
    const status = cluster?.status as Obj;
    assert.deepEqual((status.resourceSummary as Obj).allocatable, {
      cpu: '4',
      memory: '16Gi',
      pods: '110',
    });
    assert.deepEqual((status.resourceSummary as Obj).allocated, { pods: '0' });
    assert.match(String(status.kubernetesVersion), /^v1\.\d+/);
    const apps = (status.apiEnablements as Obj[]).find((e) => e.groupVersion === 'apps/v1');
    assert.ok((apps?.resources as Obj[]).some((r) => r.kind === 'Deployment'));
    const shown = await k([
      'get',
      'clusters.cluster.flotilla.io',
      'member2',
      '-o',
      'jsonpath={.status.resourceSummary.allocatable.cpu} {.status.resourceSummary.allocatable.memory}',
    ]);
    assert.equal(shown.stdout, '2 16Gi', shown.stderr);
  });

  void it('divides replicas by what fits on each member (dynamicWeight AvailableReplicas), and follows a capacity change', async () => {
    const applied = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [policy, deployment('web', 6)],
    });
    assert.equal(applied.status, 0, applied.stderr);
    assert.deepEqual(await until(replicas, (r) => r[0] === 4 && r[1] === 2), [4, 2, undefined], out.err());
    // member3 has no Node: nothing fits there, and the binding says why it is not chosen.
    const notChosen = await until(
      async () =>
        (
          (await getObject(hub, `/apis/work.flotilla.io/v1alpha1/namespaces/${NS}/resourcebindings/web-deployment`))
            ?.status as Obj | undefined
        )?.notChosen as Obj[] | undefined,
      (n) => n !== undefined && n.length > 0,
    );
    assert.deepEqual(notChosen, [{ name: 'member3', reason: 'gets no replica from the division' }]);

    // member2 grows by a 6-CPU node: 4 and 8 replicas fit, so 6 divide 2 : 4.
    await addNode(members[1] as KubeClient, 'node-c', '6');
    assert.deepEqual(await until(replicas, (r) => r[0] === 2 && r[1] === 4), [2, 4, undefined], out.err());
  });

  void it('a Deployment whose replicas fit nowhere says so in its binding', async () => {
    const applied = await k(['apply', '-f', '-'], deployment('huge', 100));
    assert.equal(applied.status, 0, applied.stderr);
    const binding = await until(
      () => getObject(hub, `/apis/work.flotilla.io/v1alpha1/namespaces/${NS}/resourcebindings/huge-deployment`),
      (b) => Array.isArray((b?.status as Obj | undefined)?.errors),
    );
    assert.match(
      String(((binding?.status as Obj).errors as string[])[0]),
      /Clusters available replicas 12 are not enough to schedule\./,
    );
    assert.equal(
      await getObject(members[0] as KubeClient, `/apis/apps/v1/namespaces/${NS}/deployments/huge`),
      undefined,
    );
  });
});

function isSummary(c: Obj | undefined, cpu: string): boolean {
  const s = (c?.status as Obj | undefined)?.resourceSummary as Obj | undefined;
  return (s?.allocatable as Obj | undefined)?.cpu === cpu;
}
