import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FakeApiserver } from '../../test/fake-apiserver.js';
import { FLEET_KINDS, fakeFleet } from '../../test/fleet-hub.js';
import type { Fleet } from './fleet.js';
import { conflictWriter } from './rows.js';

const NOW = Date.parse('2026-11-26T12:00:00Z');
const ago = (s: number) => new Date(NOW - s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
const WEB_UID = 'uid-web';

function hub(): FakeApiserver {
  const api = new FakeApiserver({ kinds: FLEET_KINDS });
  api.put({
    apiVersion: 'cluster.flotilla.io/v1alpha1',
    kind: 'Cluster',
    metadata: { name: 'member1', labels: { env: 'prod' } },
    spec: { syncMode: 'Push', region: 'eu', taints: [{ key: 'dedicated', effect: 'NoSchedule', timeAdded: ago(600) }] },
    status: {
      kubernetesVersion: 'v1.33.0',
      conditions: [
        { type: 'Ready', status: 'True', reason: 'ClusterReady', message: 'ok', lastTransitionTime: ago(900) },
      ],
      resourceSummary: {
        allocatable: { cpu: '8', memory: '16Gi', pods: '110' },
        allocated: { cpu: '2500m', pods: '12' },
      },
      apiEnablements: [
        { groupVersion: 'v1', resources: [{ name: 'configmaps', kind: 'ConfigMap' }] },
        { groupVersion: 'apps/v1', resources: [{ name: 'deployments', kind: 'Deployment' }] },
        { groupVersion: 'apps/v1beta1', resources: [] },
      ],
    },
  });
  api.put({
    apiVersion: 'cluster.flotilla.io/v1alpha1',
    kind: 'Cluster',
    metadata: { name: 'member2' },
    spec: { syncMode: 'Pull', proxyURL: 'http://proxy.example:3128' },
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'AgentLeaseRenewed' }] },
  });
  api.put({
    apiVersion: 'cluster.karmada.io/v1alpha1',
    kind: 'Cluster',
    metadata: { name: 'member3' },
    spec: {
      syncMode: 'Push',
      taints: [{ key: 'cluster.karmada.io/not-ready', effect: 'NoExecute', timeAdded: ago(120) }],
    },
    status: { conditions: [{ type: 'Ready', status: 'False', reason: 'ClusterNotReady', message: 'probe failed' }] },
  });
  api.put({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'member2', namespace: 'flotilla-cluster-lease' },
    spec: { holderIdentity: 'agent-7', renewTime: ago(12), leaseDurationSeconds: 40 },
  });
  api.put({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'shop', uid: WEB_UID, resourceVersion: '5', generation: 2 },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [{ name: 'web', image: 'docker.io/library/nginx:1.25' }],
          volumes: [{ name: 'cfg', configMap: { name: 'settings' } }],
        },
      },
    },
  });
  api.put({
    apiVersion: 'policy.flotilla.io/v1beta1',
    kind: 'PropagationPolicy',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
      placement: { clusterAffinity: { clusterNames: ['member1', 'member2', 'member3'] } },
      propagateDeps: true,
    },
    status: {
      templates: 1,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Claimed', message: 'claims 1 template; all render' }],
    },
  });
  api.put({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', namespace: 'shop', uid: 'uid-settings' },
    data: { mode: 'hub' },
  });
  api.put({
    apiVersion: 'policy.flotilla.io/v1beta1',
    kind: 'OverridePolicy',
    metadata: { name: 'registry', namespace: 'shop' },
    spec: {
      resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment' }],
      overrideRules: [
        {
          targetCluster: { clusterNames: ['member1'] },
          overriders: { imageOverrider: [{ component: 'Registry', operator: 'replace', value: 'mirror.example' }] },
        },
      ],
    },
  });
  api.put({
    apiVersion: 'policy.karmada.io/v1alpha1',
    kind: 'PropagationPolicy',
    metadata: { name: 'legacy', namespace: 'shop' },
    spec: {
      resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', labelSelector: { matchLabels: { team: 'a' } } }],
      schedulePriority: { priorityClassSource: 'KubePriorityClass', priorityClassName: 'high' },
    },
  });
  api.put({
    apiVersion: 'work.flotilla.io/v1alpha1',
    kind: 'ResourceBinding',
    metadata: { name: 'web-deployment', namespace: 'shop' },
    spec: {
      resource: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web', uid: WEB_UID },
      policy: { kind: 'PropagationPolicy', namespace: 'shop', name: 'web' },
      clusters: [
        { name: 'member1', replicas: 2 },
        { name: 'member2', replicas: 1 },
      ],
      gracefulEvictionTasks: [
        {
          fromCluster: 'member3',
          purgeMode: 'Gracefully',
          reason: 'TaintUntolerated',
          producer: 'TaintManager',
          creationTimestamp: ago(60),
        },
      ],
    },
    status: {
      applied: '1/2',
      ready: '1/2',
      conditions: [{ type: 'Applied', status: 'False', reason: 'Conflict', message: 'member2: Conflict' }],
      clusters: [
        {
          name: 'member1',
          state: 'Applied',
          health: { state: 'Healthy' },
          overrides: [{ kind: 'OverridePolicy', namespace: 'shop', name: 'registry' }],
        },
        { name: 'member3', state: 'Evicting', keptUntil: '2026-11-26T12:10:00Z' },
      ],
    },
  });
  api.put({
    apiVersion: 'work.flotilla.io/v1alpha1',
    kind: 'Work',
    metadata: {
      name: 'shop.web-deployment',
      namespace: 'flotilla-es-member2',
      labels: { 'flotilla.io/template-uid': WEB_UID },
    },
    spec: {},
    status: {
      state: 'Conflict',
      message:
        "already exists on the member and is not the flotilla agent's (it was written by kubectl-client-side-apply); left alone — set conflictResolution: Overwrite on the claiming policy to take it over",
    },
  });
  api.put({
    apiVersion: 'work.flotilla.io/v1alpha1',
    kind: 'ResourceBinding',
    metadata: { name: 'settings-configmap', namespace: 'shop' },
    spec: {
      resource: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'settings', uid: 'uid-settings' },
      clusters: [{ name: 'member1' }],
      requiredBy: [
        { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web', clusters: [{ name: 'member1' }] },
      ],
    },
    status: {
      applied: '1/1',
      ready: '1/1',
      clusters: [{ name: 'member1', state: 'Applied', health: { state: 'Healthy' } }],
    },
  });
  for (const [i, reason, name] of [
    [1, 'Conflict', 'web'],
    [2, 'Applied', 'web'],
    [3, 'Applied', 'settings'],
  ] as const)
    api.put({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `e${i}`, namespace: 'shop' },
      involvedObject: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name },
      reason,
      message: `${reason} ${i}`,
      type: 'Normal',
      count: 1,
      lastTimestamp: ago(100 - i),
      source: { component: 'flotilla-controller' },
    });
  return api;
}

async function synced(): Promise<{ fleet: Fleet; stop: AbortController }> {
  const fleet = fakeFleet(hub(), NOW);
  const stop = new AbortController();
  void fleet.start(stop.signal);
  await fleet.waitForSync(stop.signal, 10_000);
  return { fleet, stop };
}

void describe('fleet read model', () => {
  void it('describes each cluster of both groups: Ready, Lease age, sync mode, taints, capacity, version, API groups', async () => {
    const { fleet, stop } = await synced();
    try {
      assert.deepEqual(fleet.problems(), []);
      const [m1, m2, m3] = fleet.clusters();
      assert.deepEqual(
        [m1?.name, m1?.ready, m1?.syncMode, m1?.kubernetesVersion, m1?.apiGroups],
        ['member1', 'True', 'Push', 'v1.33.0', 2],
      );
      assert.deepEqual(m1?.taints, [{ key: 'dedicated', effect: 'NoSchedule', timeAdded: ago(600) }]);
      const cpu = m1?.capacity.find((c) => c.resource === 'cpu');
      assert.deepEqual([cpu?.allocatable, cpu?.allocated, cpu?.text.allocated], [8000, 2500, '2500m']);
      assert.equal(m1?.lease, undefined);
      assert.deepEqual(
        [m2?.syncMode, m2?.lease?.holder, m2?.lease?.ageSeconds, m2?.lease?.expired],
        ['Pull', 'agent-7', 12, false],
      );
      assert.match(m2?.notActedUpon[0] ?? '', /spec\.proxyURL is accepted but not acted upon/);
      assert.deepEqual(
        [m3?.apiVersion, m3?.ready, m3?.readyMessage, m3?.taints[0]?.effect],
        ['cluster.karmada.io/v1alpha1', 'False', 'probe failed', 'NoExecute'],
      );
    } finally {
      stop.abort();
    }
  });

  void it('fills the placement matrix from bindings and Works: replicas, Conflict naming the writer, Evicting, RequiredBy', async () => {
    const { fleet, stop } = await synced();
    try {
      const m = fleet.matrix();
      assert.deepEqual(m.clusters, ['member1', 'member2', 'member3']);
      assert.equal(m.total, 2);
      const web = m.rows.find((r) => r.template.name === 'web');
      const cells = Object.fromEntries((web?.cells ?? []).map((c) => [c.cluster, c]));
      assert.deepEqual(
        [cells.member1?.state, cells.member1?.replicas, cells.member1?.reportedBy],
        ['Applied', 2, 'binding'],
      );
      assert.deepEqual(
        [cells.member2?.state, cells.member2?.conflictWith, cells.member2?.reportedBy, cells.member2?.replicas],
        ['Conflict', 'kubectl-client-side-apply', 'work', 1],
      );
      assert.deepEqual(cells.member3?.evicting, {
        purgeMode: 'Gracefully',
        reason: 'TaintUntolerated',
        producer: 'TaintManager',
        since: ago(60),
        deadline: '2026-11-26T12:10:00Z',
      });
      assert.equal(web?.problem, 'member2: Conflict');
      const settings = m.rows.find((r) => r.template.name === 'settings');
      assert.deepEqual(settings?.cells[0]?.requiredBy, [
        { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' },
      ]);
    } finally {
      stop.abort();
    }
  });

  void it('filters rows by namespace, kind, policy, cluster and state', async () => {
    const { fleet, stop } = await synced();
    try {
      const names = (f: Parameters<Fleet['matrix']>[0]) => fleet.matrix(f).rows.map((r) => r.template.name);
      assert.deepEqual(names({ state: 'Conflict' }), ['web']);
      assert.deepEqual(names({ state: 'Conflict', cluster: 'member1' }), []);
      assert.deepEqual(names({ state: 'RequiredBy' }), ['settings']);
      assert.deepEqual(names({ kind: 'configmap' }), ['settings']);
      assert.deepEqual(names({ policy: 'shop/web' }), ['web']);
      assert.deepEqual(names({ policy: 'propagationpolicy/web' }), ['web']);
      assert.deepEqual(names({ cluster: 'member3' }), ['web']);
      assert.deepEqual(names({ namespace: 'other' }), []);
    } finally {
      stop.abort();
    }
  });

  void it('lists the policies of both groups with their counts, READY and the Karmada fields not acted upon', async () => {
    const { fleet, stop } = await synced();
    try {
      const ps = fleet.policies();
      const web = ps.find((p) => p.name === 'web');
      assert.deepEqual([web?.templates, web?.bindings, web?.ready, web?.notActedUpon], [1, 1, 'True', []]);
      const legacy = ps.find((p) => p.name === 'legacy');
      assert.equal(legacy?.apiVersion, 'policy.karmada.io/v1alpha1');
      assert.deepEqual(legacy?.selects, ['v1 ConfigMap shop/* [team=a]']);
      assert.match(legacy?.notActedUpon[0] ?? '', /spec\.schedulePriority is accepted but not acted upon/);
      assert.deepEqual(ps.find((p) => p.name === 'registry')?.role, 'override');
      assert.deepEqual([legacy?.warnings, legacy?.errors, web?.warnings, web?.errors], [[], [], [], []]);
    } finally {
      stop.abort();
    }
  });

  void it('explains one template: why each cluster, and each changed field with the override policy and rule', async () => {
    const { fleet, stop } = await synced();
    try {
      const [ref] = fleet.findTemplates({ name: 'deployment/web', namespace: 'shop' });
      assert.ok(ref);
      const d = await fleet.template(ref);
      assert.deepEqual(d.errors, []);
      assert.deepEqual(d.policy, { kind: 'PropagationPolicy', namespace: 'shop', name: 'web' });
      const byCluster = Object.fromEntries(d.clusters.map((c) => [c.cluster, c]));
      assert.equal(byCluster.member1?.chosen, true);
      const image = byCluster.member1?.changes.find((c) => c.path === '/spec/template/spec/containers/0/image');
      assert.deepEqual(image, {
        path: '/spec/template/spec/containers/0/image',
        op: 'replace',
        before: 'docker.io/library/nginx:1.25',
        after: 'mirror.example/library/nginx:1.25',
        setBy: 'OverridePolicy shop/registry spec.overrideRules[0].overriders.imageOverrider[0]',
        policy: { kind: 'OverridePolicy', namespace: 'shop', name: 'registry' },
      });
      assert.match(byCluster.member1?.explanation ?? '', /claimed by PropagationPolicy shop\/web/);
      assert.equal(byCluster.member2?.chosen, true);
      assert.equal(byCluster.member2?.cell?.state, 'Conflict');
      assert.equal(
        byCluster.member2?.changes.some((c) => c.path.includes('image')),
        false,
      );
      assert.equal(byCluster.member3?.chosen, false);
      assert.ok(byCluster.member3?.reason, 'member3 says why not');
    } finally {
      stop.abort();
    }
  });

  void it('explains a dependency no policy claims by the workloads that take it along (propagateDeps)', async () => {
    const { fleet, stop } = await synced();
    try {
      const [ref] = fleet.findTemplates({ name: 'settings', kind: 'ConfigMap' });
      assert.ok(ref);
      const d = await fleet.template(ref);
      assert.deepEqual(d.errors, []);
      assert.equal(d.policy, undefined, 'no policy claims it');
      assert.deepEqual(d.requiredBy, [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' }]);
      const m1 = d.clusters.find((c) => c.cluster === 'member1');
      assert.deepEqual([m1?.chosen, m1?.cell?.state, m1?.changes], [true, 'Applied', []]);
      assert.match(
        m1?.explanation ?? '',
        /^# ConfigMap shop\/settings -> cluster member1\n# {3}required by Deployment shop\/web \(propagateDeps\)\n/,
      );
    } finally {
      stop.abort();
    }
  });

  void it('reads the recent hub Events of one object, newest first', async () => {
    const { fleet, stop } = await synced();
    try {
      const events = await fleet.events({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' });
      assert.deepEqual(
        events.map((e) => [e.reason, e.source]),
        [
          ['Applied', 'flotilla-controller'],
          ['Conflict', 'flotilla-controller'],
        ],
      );
    } finally {
      stop.abort();
    }
  });

  void it(
    'says which collections it may not read, without waiting for them to become readable',
    { timeout: 60_000 },
    async () => {
      const api = hub();
      api.hook = (req) =>
        req.method === 'GET' && (req.path.endsWith('/leases') || req.path.endsWith('/resourcebindings'))
          ? {
              status: 403,
              body: { kind: 'Status', code: 403, reason: 'Forbidden', message: 'forbidden: user "dev" cannot list' },
            }
          : undefined;
      const fleet = fakeFleet(api, NOW);
      const stop = new AbortController();
      void fleet.start(stop.signal);
      // A sync timeout no test waits for: the wait ends because each collection was listed or refused once.
      await fleet.waitForSync(stop.signal, 3_600_000);
      stop.abort();
      assert.deepEqual(fleet.problems(), [
        'resourcebindings.work.flotilla.io: not listed: forbidden: user "dev" cannot list',
      ]);
      assert.deepEqual(fleet.warnings(), [
        'leases.coordination.k8s.io in flotilla-cluster-lease: not listed: forbidden: user "dev" cannot list',
      ]);
      assert.equal(fleet.clusters().length, 3);
    },
  );

  void it('says what admission says of a policy now: a cluster the hub has no Cluster for, a rule it denies', async () => {
    const api = hub();
    api.put({
      apiVersion: 'policy.flotilla.io/v1beta1',
      kind: 'PropagationPolicy',
      metadata: { name: 'typo', namespace: 'shop' },
      spec: {
        resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
        placement: { clusterAffinity: { clusterNames: ['member1', 'memebr2'] } },
      },
    });
    api.put({
      apiVersion: 'policy.flotilla.io/v1beta1',
      kind: 'OverridePolicy',
      metadata: { name: 'bad', namespace: 'shop' },
      spec: { overrideRules: [{ overriders: { plaintext: [{ path: 'no-slash', operator: 'replace', value: 1 }] } }] },
    });
    const fleet = fakeFleet(api, NOW);
    const stop = new AbortController();
    void fleet.start(stop.signal);
    await fleet.waitForSync(stop.signal, 10_000);
    stop.abort();
    const typo = fleet.policies().find((p) => p.name === 'typo');
    assert.match(typo?.warnings.join('\n') ?? '', /memebr2/);
    assert.deepEqual(typo?.errors, []);
    const bad = fleet.policies().find((p) => p.name === 'bad');
    assert.match(bad?.errors.join('\n') ?? '', /spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]\.path/);
  });

  void it('says what the hub does not serve instead of showing an empty fleet', async () => {
    const api = new FakeApiserver({ kinds: FLEET_KINDS.filter((k) => k.group !== 'work.flotilla.io') });
    const fleet = fakeFleet(api, NOW);
    const stop = new AbortController();
    void fleet.start(stop.signal);
    await fleet.waitForSync(stop.signal, 10_000);
    stop.abort();
    assert.match(fleet.problems().join('\n'), /the hub does not serve ResourceBinding in work\.flotilla\.io\/v1alpha1/);
  });
});

void describe('conflictWriter', () => {
  const cases: Array<[string, string | undefined]> = [
    [
      'already exists … (it was written by kubectl-client-side-apply, helm); left alone',
      'kubectl-client-side-apply, helm',
    ],
    [
      'already exists … (it belongs to apply set applyset-abc-v1 (flotilla apply)); left alone',
      'apply set applyset-abc-v1',
    ],
    [
      "already exists … (it is the flotilla controller's copy of Deployment shop/api); left alone",
      'flotilla-controller (Deployment shop/api)',
    ],
    [
      'was created on the member by someone else meanwhile: Apply failed with 1 conflict: conflict with "kubectl-edit": .spec.replicas',
      'kubectl-edit',
    ],
    ['the apiserver said no', undefined],
  ];
  for (const [message, writer] of cases)
    void it(`reads ${JSON.stringify(writer)} from ${JSON.stringify(message.slice(0, 40))}…`, () => {
      assert.equal(conflictWriter(message), writer);
    });
});
