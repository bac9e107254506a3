// What the controller writes in a Cluster's status from its member: Karmada's resource summary from
// Nodes and Pods, the API enablements from discovery, and how it reads them (paginated, finished Pods
// left out by the apiserver, an aggregated API that is down skipped).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FakeApiserver, type Obj } from '../../test/fake-apiserver.js';
import { KubeClient } from '../kube/client.js';
import { readClusterFacts } from './cluster-facts.js';
import { apiEnablements, podRequests, resourceSummary } from './cluster-summary.js';

const node = (cpu: string, memory: string, pods = '110'): Obj => ({ status: { allocatable: { cpu, memory, pods } } });
const pod = (nodeName: string, phase: string, cpu: string, extra: Obj = {}): Obj => ({
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', resources: { requests: { cpu } } }], ...extra },
  status: { phase },
});

describe('resourceSummary', () => {
  it('sums allocatable over Nodes, allocated over bound unfinished Pods and allocating over unbound ones, counting pods', () => {
    const s = resourceSummary(
      [node('4', '8Gi'), node('2500m', '4Gi', '20')],
      [
        pod('n1', 'Running', '500m'),
        pod('n2', 'Running', '1', { initContainers: [{ name: 'i', resources: { requests: { cpu: '2' } } }] }),
        pod('n1', 'Succeeded', '3'),
        pod('n1', 'Failed', '3'),
        pod('', 'Pending', '250m', { overhead: { cpu: '50m' } }),
      ],
    );
    assert.deepEqual(s, {
      allocatable: { cpu: '6500m', memory: '12Gi', pods: '130' },
      allocated: { cpu: '2500m', pods: '2' },
      allocating: { cpu: '300m', pods: '1' },
    });
  });

  it("writes canonical quantities as Karmada does: the Nodes' format for allocatable, BinarySI for requested bytes", () => {
    const requests = (r: Obj): Obj => ({ containers: [{ name: 'c', resources: { requests: r } }] });
    const s = resourceSummary(
      [
        {
          status: { allocatable: { cpu: '4', memory: '16331024Ki', 'ephemeral-storage': '95491281146', pods: '110' } },
        },
        {
          status: {
            allocatable: { cpu: '3500m', memory: '16331024Ki', 'ephemeral-storage': '95491281146', pods: '110' },
          },
        },
      ],
      [
        {
          spec: {
            nodeName: 'n1',
            ...requests({ cpu: '1500m', memory: '1.5Gi', 'ephemeral-storage': '1Gi', 'hugepages-2Mi': '4Mi' }),
          },
          status: { phase: 'Running' },
        },
        { spec: { nodeName: 'n2', ...requests({ cpu: '500m', memory: '512Mi', 'nvidia.com/gpu': '2' }) }, status: {} },
        { spec: requests({ memory: '1000000000' }), status: { phase: 'Pending' } },
      ],
    );
    assert.deepEqual(s, {
      allocatable: { cpu: '7500m', 'ephemeral-storage': '190982562292', memory: '32662048Ki', pods: '220' },
      allocated: {
        cpu: '2',
        'ephemeral-storage': '1Gi',
        'hugepages-2Mi': '4Mi',
        memory: '2Gi',
        'nvidia.com/gpu': '2',
        pods: '2',
      },
      allocating: { memory: '1000000000', pods: '1' },
    });
  });

  it('reads junk as nothing and own properties only', () => {
    const s = resourceSummary(
      [{ status: { allocatable: JSON.parse('{"__proto__":"1","cpu":"lots"}') as Obj } }, {}],
      [{}],
    );
    assert.deepEqual(Object.keys(s.allocatable), ['__proto__']);
    assert.equal(Object.getPrototypeOf(s.allocatable), Object.prototype);
    assert.deepEqual(podRequests({ containers: 'x', initContainers: [null] }), {});
  });
});

describe('apiEnablements', () => {
  it('lists kinds by group-version, sorted, without subresources', () => {
    assert.deepEqual(
      apiEnablements([
        {
          groupVersion: 'v1',
          resources: [
            { name: 'pods', kind: 'Pod' },
            { name: 'pods/status', kind: 'Pod' },
            { name: 'configmaps', kind: 'ConfigMap' },
          ],
        },
        { groupVersion: 'apps/v1', resources: [{ name: 'deployments', kind: 'Deployment' }, 'junk'] },
      ]),
      [
        { groupVersion: 'apps/v1', resources: [{ name: 'deployments', kind: 'Deployment' }] },
        {
          groupVersion: 'v1',
          resources: [
            { name: 'configmaps', kind: 'ConfigMap' },
            { name: 'pods', kind: 'Pod' },
          ],
        },
      ],
    );
  });
});

describe('readClusterFacts', () => {
  it('follows list pagination, asks the apiserver to leave finished Pods out, and skips an API group that answers 503', async () => {
    const server = new FakeApiserver();
    server.hook = (req) => {
      if (req.path === '/version') return { status: 200, body: { gitVersion: 'v1.31.2' } };
      if (req.path === '/api') return { status: 200, body: { versions: ['v1'] } };
      if (req.path === '/apis')
        return {
          status: 200,
          body: {
            groups: [
              { versions: [{ groupVersion: 'apps/v1' }] },
              { versions: [{ groupVersion: 'metrics.k8s.io/v1beta1' }] },
            ],
          },
        };
      if (req.path === '/api/v1') return { status: 200, body: { resources: [{ name: 'pods', kind: 'Pod' }] } };
      if (req.path === '/apis/apps/v1')
        return { status: 200, body: { resources: [{ name: 'deployments', kind: 'Deployment' }] } };
      if (req.path === '/apis/metrics.k8s.io/v1beta1') return { status: 503, body: { kind: 'Status' } };
      if (req.path === '/api/v1/nodes')
        return req.query.get('continue') === 'page2'
          ? { status: 200, body: { items: [node('2', '1Gi')], metadata: {} } }
          : { status: 200, body: { items: [node('2', '1Gi')], metadata: { continue: 'page2' } } };
      if (req.path === '/api/v1/pods')
        return { status: 200, body: { items: [pod('n1', 'Running', '1')], metadata: {} } };
      return undefined;
    };
    const facts = await readClusterFacts(
      new KubeClient(server, { concurrency: 2 }),
      new AbortController().signal,
      true,
    );
    assert.equal(facts.kubernetesVersion, 'v1.31.2');
    assert.deepEqual(facts.resourceSummary?.allocatable, { cpu: '4', memory: '2Gi', pods: '220' });
    assert.deepEqual(facts.resourceSummary?.allocated, { cpu: '1', pods: '1' });
    assert.deepEqual(
      facts.apiEnablements?.map((e) => e.groupVersion),
      ['apps/v1', 'v1'],
    );
    assert.equal(server.sent('GET', '/api/v1/nodes').length, 2);
    assert.equal(
      server.sent('GET', '/api/v1/pods')[0]?.query.get('fieldSelector'),
      'status.phase!=Succeeded,status.phase!=Failed',
    );
  });
});
