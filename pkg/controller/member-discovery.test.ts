// How the controller reads a member's API enablements each round: aggregated discovery in two requests
// where served; otherwise the group-version lists each round and each group version's resources only when
// that list changed (or every tenth round). Fake HTTP at the transport level.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { KubeClient } from '../kube/client.js';
import type { Transport, TransportRequest, TransportResponse } from '../kube/transport.js';
import { aggregatedLists, DISCOVERY_ACCEPT, MemberDiscovery, readAPIEnablements } from './member-discovery.js';

type Answer = { status: number; body?: unknown };

class Discovering implements Transport {
  readonly server = 'https://member.test:6443';
  readonly sent: Array<{ path: string; accept: string }> = [];
  constructor(public answer: (path: string, aggregated: boolean) => Answer | undefined) {}
  close(): void {}
  send(req: TransportRequest): Promise<TransportResponse> {
    const accept = String(req.headers.Accept ?? '');
    this.sent.push({ path: req.path, accept });
    const a = this.answer(req.path, accept.includes('as=APIGroupDiscoveryList')) ?? { status: 404, body: {} };
    return Promise.resolve({ status: a.status, warnings: [], body: Buffer.from(JSON.stringify(a.body ?? {})) });
  }
}

const resource = (name: string, kind: string) => ({ resource: name, responseKind: { group: '', version: '', kind } });
const aggregatedCore = {
  apiVersion: 'apidiscovery.k8s.io/v2',
  kind: 'APIGroupDiscoveryList',
  items: [{ metadata: { name: '' }, versions: [{ version: 'v1', resources: [resource('pods', 'Pod')] }] }],
};
const aggregatedGroups = (extra: unknown[] = []) => ({
  apiVersion: 'apidiscovery.k8s.io/v2',
  kind: 'APIGroupDiscoveryList',
  items: [
    {
      metadata: { name: 'apps' },
      versions: [
        {
          version: 'v1',
          resources: [
            { ...resource('deployments', 'Deployment'), subresources: [{ subresource: 'scale' }] },
            { resource: 'no-kind' },
          ],
        },
      ],
    },
    {
      metadata: { name: 'metrics.k8s.io' },
      versions: [{ version: 'v1beta1', freshness: 'Stale', resources: [resource('pods', 'PodMetrics')] }],
    },
    ...extra,
  ],
});

const legacy = (groupVersions: string[], resources: Record<string, unknown[]>) => (path: string) => {
  if (path === '/api') return { status: 200, body: { versions: ['v1'] } };
  if (path === '/apis')
    return { status: 200, body: { groups: groupVersions.map((gv) => ({ versions: [{ groupVersion: gv }] })) } };
  const gv = path.replace(/^\/apis?\//, '');
  const r = resources[gv];
  return r ? { status: 200, body: { resources: r } } : { status: 503, body: {} };
};

const signal = new AbortController().signal;

describe('aggregatedLists', () => {
  it('reads groups, versions and resources with their kinds; leaves out stale versions and resources without a kind', () => {
    assert.deepEqual(aggregatedLists(aggregatedGroups()), [
      { groupVersion: 'apps/v1', resources: [{ name: 'deployments', kind: 'Deployment' }] },
    ]);
    assert.deepEqual(aggregatedLists(aggregatedCore), [
      { groupVersion: 'v1', resources: [{ name: 'pods', kind: 'Pod' }] },
    ]);
  });

  it('is undefined for anything else (a plain group list, a Status, garbage)', () => {
    for (const body of [
      { kind: 'APIGroupList', groups: [] },
      { kind: 'Status' },
      'text',
      null,
      { kind: 'APIGroupDiscoveryList' },
    ])
      assert.equal(aggregatedLists(body), undefined);
  });
});

describe('MemberDiscovery', () => {
  it('aggregated discovery: two requests a round, each round, asking for the aggregated form', async () => {
    let extra: unknown[] = [];
    const t = new Discovering((path, aggregated) => {
      assert.ok(aggregated);
      if (path === '/api') return { status: 200, body: aggregatedCore };
      if (path === '/apis') return { status: 200, body: aggregatedGroups(extra) };
      return undefined;
    });
    const client = new KubeClient(t, { concurrency: 2 });
    const d = new MemberDiscovery();
    const first = await d.read(client, signal);
    assert.deepEqual(
      first?.map((e) => e.groupVersion),
      ['apps/v1', 'v1'],
    );
    extra = [
      { metadata: { name: 'example.com' }, versions: [{ version: 'v1', resources: [resource('widgets', 'Widget')] }] },
    ];
    const second = await d.read(client, signal);
    assert.deepEqual(second?.find((e) => e.groupVersion === 'example.com/v1')?.resources, [
      { name: 'widgets', kind: 'Widget' },
    ]);
    assert.deepEqual(
      t.sent.map((s) => s.path),
      ['/api', '/apis', '/api', '/apis'],
    );
    assert.ok(t.sent.every((s) => s.accept === DISCOVERY_ACCEPT));
  });

  it('plain discovery: each group version is read only when the list changed, or every tenth round', async () => {
    let groupVersions = ['apps/v1'];
    const resources: Record<string, unknown[]> = {
      v1: [{ name: 'pods', kind: 'Pod' }],
      'apps/v1': [{ name: 'deployments', kind: 'Deployment' }],
      'example.com/v1': [{ name: 'widgets', kind: 'Widget' }],
    };
    const t = new Discovering((path) => legacy(groupVersions, resources)(path));
    const client = new KubeClient(t, { concurrency: 2 });
    const d = new MemberDiscovery();
    assert.deepEqual(
      (await d.read(client, signal))?.map((e) => e.groupVersion),
      ['apps/v1', 'v1'],
    );
    assert.equal(await d.read(client, signal), undefined, 'nothing new: undefined');
    assert.equal(t.sent.length, 4 + 2, 'the second round asked for the lists only');
    groupVersions = ['apps/v1', 'example.com/v1'];
    assert.deepEqual(
      (await d.read(client, signal))?.map((e) => e.groupVersion),
      ['apps/v1', 'example.com/v1', 'v1'],
    );
    for (let round = 3; round < 10; round++) assert.equal(await d.read(client, signal), undefined);
    assert.ok(await d.read(client, signal), 'the tenth round reads everything again');
  });

  it('plain discovery: a group version that did not answer is asked again the next round', async () => {
    const resources: Record<string, unknown[]> = { v1: [{ name: 'pods', kind: 'Pod' }] };
    const t = new Discovering((path) => legacy(['metrics.k8s.io/v1beta1'], resources)(path));
    const client = new KubeClient(t, { concurrency: 2 });
    const d = new MemberDiscovery();
    assert.deepEqual(
      (await d.read(client, signal))?.map((e) => e.groupVersion),
      ['v1'],
    );
    resources['metrics.k8s.io/v1beta1'] = [{ name: 'pods', kind: 'PodMetrics' }];
    assert.deepEqual(
      (await d.read(client, signal))?.map((e) => e.groupVersion),
      ['metrics.k8s.io/v1beta1', 'v1'],
    );
  });

  it('readAPIEnablements reads everything at once, in either form', async () => {
    const t = new Discovering((path) => legacy(['apps/v1'], { v1: [], 'apps/v1': [] })(path));
    assert.deepEqual(
      (await readAPIEnablements(new KubeClient(t, { concurrency: 2 }), signal)).map((e) => e.groupVersion),
      ['apps/v1', 'v1'],
    );
  });
});
