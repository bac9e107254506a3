import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';

import type { KubeClient } from '../kube/client.js';
import type { JsonObject } from '../kube/objects.js';
import type { Watcher } from '../kube/watch.js';
import { createLogger } from '../runtime/log.js';
import { MemberRegistry } from './members.js';
import { agentLeaseVerdict, type AgentLeaseVerdict } from './pull-health.js';

const NOW = Date.parse('2026-01-02T03:04:30Z');
const lease = (spec: JsonObject): JsonObject => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: 'p1', namespace: 'flotilla-cluster-lease' },
  spec,
});

describe("agentLeaseVerdict: a pull cluster's health from its agent's Lease, with the exact sentence", () => {
  const cases: Array<[string, JsonObject | undefined, AgentLeaseVerdict]> = [
    [
      'no Lease',
      undefined,
      { ready: false, message: 'no agent holds Lease flotilla-cluster-lease/p1 on the hub: it does not exist' },
    ],
    [
      'a Lease without a holder (released)',
      lease({ leaseDurationSeconds: 40, renewTime: '2026-01-02T03:04:20.000000Z' }),
      { ready: false, message: 'no agent holds Lease flotilla-cluster-lease/p1 on the hub: it has no holderIdentity' },
    ],
    [
      'held, never renewed',
      lease({ holderIdentity: 'agent-a', leaseDurationSeconds: 40 }),
      { ready: false, message: 'its agent agent-a has never renewed Lease flotilla-cluster-lease/p1' },
    ],
    [
      'held, renewTime not a time',
      lease({ holderIdentity: 'agent-a', leaseDurationSeconds: 40, renewTime: 'yesterday' }),
      {
        ready: false,
        message: 'its agent agent-a holds Lease flotilla-cluster-lease/p1, whose renewTime "yesterday" is not a time',
      },
    ],
    [
      'held, no leaseDurationSeconds',
      lease({ holderIdentity: 'agent-a', renewTime: '2026-01-02T03:04:20.000000Z' }),
      {
        ready: false,
        message:
          'its agent agent-a holds Lease flotilla-cluster-lease/p1, which has no leaseDurationSeconds: it cannot say how long the agent is alive',
      },
    ],
    [
      'renewed too long ago',
      lease({ holderIdentity: 'agent-a', leaseDurationSeconds: 40, renewTime: '2026-01-02T03:03:50.000000Z' }),
      {
        ready: false,
        message:
          'its agent agent-a has not renewed Lease flotilla-cluster-lease/p1 since 2026-01-02T03:03:50.000000Z (leaseDurationSeconds 40)',
      },
    ],
    [
      'renewed in time',
      lease({ holderIdentity: 'agent-a', leaseDurationSeconds: 40, renewTime: '2026-01-02T03:04:20.000000Z' }),
      {
        ready: true,
        message: 'its agent agent-a renews Lease flotilla-cluster-lease/p1',
        expiresAt: Date.parse('2026-01-02T03:05:00Z'),
      },
    ],
  ];
  for (const [situation, l, want] of cases)
    it(situation, () => assert.deepEqual(agentLeaseVerdict(l, 'flotilla-cluster-lease', 'p1', NOW), want));

  it('says the same while renewed again and again (no status write per renewal)', () => {
    const at = (renewTime: string) =>
      agentLeaseVerdict(lease({ holderIdentity: 'a', leaseDurationSeconds: 40, renewTime }), 'ns', 'p1', NOW).message;
    assert.equal(at('2026-01-02T03:04:10Z'), at('2026-01-02T03:04:20Z'));
  });
});

describe('MemberRegistry.setAgentLease: the log line of a pull cluster turning ready or not ready', () => {
  it('writes the verdict as the message field, the msg unchanged', () => {
    const stream = new PassThrough();
    const lines: Array<Record<string, unknown>> = [];
    stream.on('data', (c: Buffer) => {
      for (const l of c.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
    });
    const registry = new MemberRegistry(
      {
        hub: {} as KubeClient,
        hubWatcher: {} as Watcher,
        clusterSecrets: true,
        probeIntervalMs: 10_000,
        probeTimeoutMs: 5_000,
        memberConcurrency: 1,
        userAgent: 'test',
        logger: createLogger({ level: 'info', stream }),
        cluster: () => undefined,
        onChange: () => undefined,
        onConnect: () => undefined,
        onOwnedEvent: () => undefined,
      },
      [],
    );
    registry.onCluster({ metadata: { name: 'p1' }, spec: { syncMode: 'Pull' } });
    const down = agentLeaseVerdict(undefined, 'flotilla-cluster-lease', 'p1', NOW);
    const up = agentLeaseVerdict(
      lease({ holderIdentity: 'agent-a', leaseDurationSeconds: 40, renewTime: '2026-01-02T03:04:20Z' }),
      'flotilla-cluster-lease',
      'p1',
      NOW,
    );
    registry.setAgentLease('p1', down.ready, down.message);
    registry.setAgentLease('p1', up.ready, up.message);
    const text = lines.map(({ time: _t, ...rest }) => rest);
    assert.deepEqual(text, [
      { level: 'info', msg: 'cluster in Pull mode: its agent delivers there', cluster: 'p1' },
      {
        level: 'warn',
        msg: 'pull cluster not ready',
        cluster: 'p1',
        message: 'no agent holds Lease flotilla-cluster-lease/p1 on the hub: it does not exist',
      },
      {
        level: 'info',
        msg: 'pull cluster ready',
        cluster: 'p1',
        message: 'its agent agent-a renews Lease flotilla-cluster-lease/p1',
      },
    ]);
    assert.deepEqual(registry.condition('p1'), {
      status: 'True',
      reason: 'AgentLeaseRenewed',
      message: 'its agent agent-a renews Lease flotilla-cluster-lease/p1',
    });
  });
});
