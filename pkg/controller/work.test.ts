import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { agentDecision } from './agent.js';
import {
  executionSpace,
  workEntry,
  workName,
  workObject,
  workSpec,
  workStatus,
  workTemplate,
  workWanted,
} from './work.js';

const policy = { kind: 'PropagationPolicy', namespace: 'shop', name: 'web' };
const resource = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web', uid: 'u1' };
const web = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web', uid: 'u1' };

describe("Works: a pull cluster's share of a binding", () => {
  it("names the cluster's namespace after it, and hashes a name that is no namespace name", () => {
    assert.equal(executionSpace('member2'), 'flotilla-es-member2');
    const dotted = executionSpace('eu.member2');
    const long = executionSpace('m'.repeat(60));
    for (const ns of [dotted, long]) assert.match(ns, /^flotilla-es-[0-9a-f]{20}$/);
    assert.notEqual(dotted, executionSpace('eu.member3'));
  });

  it("names a Work after its binding's namespace and name, distinct across namespaces, at most 253 characters", () => {
    assert.equal(workName(web, 'flotilla-system'), 'shop.web-deployment');
    const { namespace: _ns, ...cm } = { ...web, kind: 'ClusterRole' };
    assert.equal(workName(cm, 'flotilla-system'), 'flotilla-system.web-clusterrole');
    assert.notEqual(workName({ ...web, namespace: 'a' }, 'x'), workName({ ...web, namespace: 'b' }, 'x'));
    const long = workName({ ...web, name: 'n'.repeat(250) }, 'x');
    assert.ok(long.length <= 253);
    assert.notEqual(long, workName({ ...web, name: `${'n'.repeat(249)}m` }, 'x'));
  });

  it("cuts the binding's spec down to the cluster: its entry, its eviction task, its part of requiredBy", () => {
    const spec = {
      resource,
      policy,
      conflictResolution: 'Abort',
      preserveResourcesOnDeletion: true,
      clusters: [
        { name: 'm1', replicas: 4 },
        { name: 'm2', replicas: 2 },
      ],
      gracefulEvictionTasks: [{ fromCluster: 'm3', purgeMode: 'Gracefully' }],
      requiredBy: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api', clusters: [{ name: 'm1' }, { name: 'm2' }] },
      ],
    };
    assert.deepEqual(workSpec(spec, 'm2'), {
      resource,
      policy,
      conflictResolution: 'Abort',
      preserveResourcesOnDeletion: true,
      clusters: [{ name: 'm2', replicas: 2 }],
      requiredBy: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'api', clusters: [{ name: 'm2' }] }],
    });
    const m3 = workSpec(spec, 'm3');
    assert.deepEqual(m3.clusters, []);
    assert.deepEqual(m3.gracefulEvictionTasks, [{ fromCluster: 'm3', purgeMode: 'Gracefully' }]);
    // The agent decides on the cut-down spec as it would on the whole binding.
    for (const c of ['m1', 'm2', 'm3', 'm4'])
      assert.deepEqual(agentDecision(workSpec(spec, c), c), agentDecision(spec, c), c);
  });

  it('is kept while placed, evicting, reported, or released; deleted once the agent holds nothing', () => {
    const placed = { resource, policy, clusters: [{ name: 'm2' }] };
    assert.equal(workWanted(placed, 'm2', undefined), true);
    // Moved to m1: a Work the agent still reports a copy in stays (the agent removes it, then clears the status).
    const moved = { resource, policy, clusters: [{ name: 'm1' }] };
    const reporting = { ...workObject(web, 'x', 'm2', placed), status: { state: 'Applied' } };
    assert.equal(workWanted(moved, 'm2', reporting), true);
    assert.equal(workWanted(moved, 'm2', workObject(web, 'x', 'm2', placed)), false);
    assert.equal(workWanted(moved, 'm2', undefined), false);
    // Evicted from m2: kept while the task lasts.
    const evicting = { ...moved, gracefulEvictionTasks: [{ fromCluster: 'm2', purgeMode: 'Gracefully' }] };
    assert.equal(workWanted(evicting, 'm2', undefined), true);
    // No policy claims it any more: what was propagated stays, and so does the Work saying so.
    const released = { resource, clusters: [] };
    assert.equal(workWanted(released, 'm2', workObject(web, 'x', 'm2', placed)), true);
    assert.equal(workWanted(released, 'm2', undefined), false);
  });

  it('carries the template uid label and the template it is about', () => {
    const w = workObject(web, 'x', 'member2', { resource, policy, clusters: [{ name: 'member2' }] });
    assert.deepEqual(w.metadata, {
      name: 'shop.web-deployment',
      namespace: 'flotilla-es-member2',
      labels: { 'flotilla.io/template-uid': 'u1' },
    });
    assert.deepEqual(workTemplate(w), web);
    assert.equal(workTemplate({ spec: { resource: { kind: 'Deployment' } } }), undefined);
  });

  it("reads the agent's status back as the binding entry it wrote, and junk as nothing", () => {
    const entry = {
      name: 'm2',
      state: 'Applied' as const,
      replicas: 2,
      observedGeneration: 3,
      health: { state: 'Healthy' as const, readyReplicas: 2 },
    };
    const status = workStatus(entry);
    assert.equal(status.name, undefined);
    assert.deepEqual(workEntry({ status }, 'm2'), entry);
    assert.deepEqual(workStatus(undefined), {});
    assert.equal(workEntry({ status: {} }, 'm2'), undefined);
    assert.equal(workEntry({ status: { state: 7 } }, 'm2'), undefined);
    assert.equal(workEntry({ status: 'Applied' }, 'm2'), undefined);
    assert.equal(
      workStatus({ name: 'm2', state: 'Failed', message: 'x'.repeat(5000) }).message?.toString().length,
      1024,
    );
  });
});
