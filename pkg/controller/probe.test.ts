import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, it } from 'node:test';

import { KubeConfig } from '@kubernetes/client-node';

import { Member } from './member.js';
import { probeMessage } from './member-probe.js';

describe('probeMessage: what a failed /readyz probe says (log, Ready condition and Event alike)', () => {
  const server = 'https://127.0.0.1:6443';
  const cases: Array<[string, Parameters<typeof probeMessage>[1], string]> = [
    ['no answer within 2 s', { timeoutMs: 2000 }, 'https://127.0.0.1:6443/readyz: no answer within 2s (probe timeout)'],
    [
      'no answer within 1.5 s',
      { timeoutMs: 1500 },
      'https://127.0.0.1:6443/readyz: no answer within 1.5s (probe timeout)',
    ],
    [
      'no answer within 500 ms',
      { timeoutMs: 500 },
      'https://127.0.0.1:6443/readyz: no answer within 500ms (probe timeout)',
    ],
    ['an answer that is not 200', { status: 500 }, 'https://127.0.0.1:6443/readyz answered HTTP 500'],
    [
      'a transport error naming the server',
      { error: 'https://127.0.0.1:6443: connect ECONNREFUSED 127.0.0.1:6443' },
      'https://127.0.0.1:6443: connect ECONNREFUSED 127.0.0.1:6443',
    ],
    ['an error that does not name it', { error: 'socket hang up' }, 'https://127.0.0.1:6443: socket hang up'],
  ];
  for (const [situation, outcome, want] of cases)
    it(situation, () => assert.equal(probeMessage(server, outcome), want));
});

describe('Member.probe against an apiserver that accepts connections and never answers', () => {
  it('is unreachable, and says how long it waited rather than "cancelled"', async () => {
    const held = new Set<Socket>();
    const hung = createServer((s) => {
      held.add(s);
      s.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const port = (hung.address() as AddressInfo).port;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const m = new Member({
      name: 'm1',
      kubeConfig,
      userAgent: 'test',
      concurrency: 1,
      onOwnedEvent: () => undefined,
      onWatchError: () => undefined,
    });
    try {
      assert.equal(await m.probe(300), true, 'the readiness changed (from unknown)');
      assert.equal(held.size, 1, 'the probe reached the server');
      assert.deepEqual(
        { ready: m.readiness.ready, unreachable: m.readiness.unreachable, message: m.readiness.message },
        {
          ready: false,
          unreachable: true,
          message: `http://127.0.0.1:${port}/readyz: no answer within 300ms (probe timeout)`,
        },
      );
    } finally {
      await m.close();
      for (const s of held) s.destroy();
      await new Promise<void>((resolve) => hung.close(() => resolve()));
    }
  });
});
