import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { agentDecision, agentFieldManager } from './agent.js';

const policy = { kind: 'PropagationPolicy', namespace: 'shop', name: 'web' };

describe("agentDecision: a pull cluster's part of the hub's binding", () => {
  it('renders a template the binding places on the cluster, with the replicas the hub gave it', () => {
    const spec = {
      policy,
      clusters: [
        { name: 'm1', replicas: 4 },
        { name: 'm2', replicas: 2 },
      ],
    };
    assert.deepEqual(agentDecision(spec, 'm2'), { action: 'render', replicas: 2 });
    assert.deepEqual(agentDecision({ policy, clusters: [{ name: 'm2' }] }, 'm2'), { action: 'render' });
  });

  it('removes what the binding does not place there, and everything when there is no binding', () => {
    assert.deepEqual(agentDecision({ policy, clusters: [{ name: 'm1' }] }, 'm2'), { action: 'remove' });
    assert.deepEqual(agentDecision(undefined, 'm2'), { action: 'remove' });
    // A dependency no workload requires any more on this cluster, still required elsewhere.
    const dep = {
      clusters: [{ name: 'm1' }],
      requiredBy: [{ kind: 'Deployment', name: 'web', clusters: [{ name: 'm1' }] }],
    };
    assert.deepEqual(agentDecision(dep, 'm2'), { action: 'remove' });
  });

  it('keeps the copy while an eviction task names the cluster, and when the claim was released', () => {
    const evicting = {
      policy,
      clusters: [{ name: 'm1' }],
      gracefulEvictionTasks: [{ fromCluster: 'm2', purgeMode: 'Gracefully' }],
    };
    assert.equal(agentDecision(evicting, 'm2').action, 'keep');
    assert.equal(agentDecision(evicting, 'm3').action, 'remove');
    assert.equal(agentDecision({ clusters: [] }, 'm2').action, 'keep');
  });

  it('reads junk as nothing placed, without throwing', () => {
    for (const spec of [
      { clusters: 'm2' },
      { policy, clusters: [null, 7, { name: 2 }] },
      { policy, gracefulEvictionTasks: {} },
    ])
      assert.doesNotThrow(() => agentDecision(spec, 'm2'));
    assert.deepEqual(agentDecision({ policy, clusters: [null, { name: 'm2', replicas: '3' }] }, 'm2'), {
      action: 'render',
    });
  });

  it("gives each agent its own field manager, within the apiserver's 128 characters", () => {
    assert.equal(agentFieldManager('member2'), 'flotilla-agent.member2');
    assert.notEqual(agentFieldManager('a'), agentFieldManager('b'));
    assert.ok(agentFieldManager('x'.repeat(253)).length <= 128);
    assert.notEqual(agentFieldManager(`${'x'.repeat(200)}a`), agentFieldManager(`${'x'.repeat(200)}b`));
  });
});
