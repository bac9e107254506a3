import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeClient, KubeRequest } from '../kube/client.js';
import { EventRecorder } from './events.js';

const template = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web', uid: 'u-1' };

function recorder(opts: { hold?: Promise<void>; now?: () => number } = {}) {
  const sent: KubeRequest[] = [];
  const client = {
    request: async (req: KubeRequest) => {
      await opts.hold;
      sent.push(req);
      return { status: 201, body: {}, warnings: [] };
    },
  } as unknown as KubeClient;
  return {
    sent,
    events: new EventRecorder(client, {
      component: 'flotilla-controller',
      instance: 'pod-1',
      ...(opts.now ? { now: opts.now } : {}),
    }),
  };
}

void describe('EventRecorder', () => {
  void it('writes a core/v1 Event about the template in its namespace', async () => {
    const { sent, events } = recorder({ now: () => Date.UTC(2026, 10, 22, 12, 0, 0) });
    events.record(template, 'Warning', 'ApplyFailed', 'member1: denied');
    await events.flush();
    assert.equal(sent.length, 1);
    assert.equal(sent[0]?.method, 'POST');
    assert.equal(sent[0]?.path, '/api/v1/namespaces/shop/events');
    const body = sent[0]?.body as Record<string, unknown>;
    assert.deepEqual(body.involvedObject, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'web',
      uid: 'u-1',
      namespace: 'shop',
    });
    assert.equal(body.type, 'Warning');
    assert.equal(body.reason, 'ApplyFailed');
    assert.equal(body.message, 'member1: denied');
    assert.equal(body.firstTimestamp, '2026-11-22T12:00:00Z');
    assert.match((body.metadata as { name: string }).name, /^web\.[0-9a-f]+$/);
  });

  void it('puts events of cluster-scoped objects in default, and cuts long messages', async () => {
    const { sent, events } = recorder();
    events.record(
      { apiVersion: 'v1', kind: 'Namespace', name: 'team', uid: 'u-2' },
      'Normal',
      'Applied',
      'x'.repeat(5000),
    );
    await events.flush();
    assert.equal(sent[0]?.path, '/api/v1/namespaces/default/events');
    assert.equal(((sent[0]?.body as Record<string, unknown>).message as string).length, 1024);
  });

  void it('sends the same event once per ten minutes', async () => {
    let now = 0;
    const { sent, events } = recorder({ now: () => now });
    events.record(template, 'Warning', 'Conflict', 'member1: not ours');
    events.record(template, 'Warning', 'Conflict', 'member1: not ours');
    events.record(template, 'Warning', 'Conflict', 'member2: not ours');
    now += 10 * 60_000;
    events.record(template, 'Warning', 'Conflict', 'member1: not ours');
    await events.flush();
    assert.deepEqual(
      sent.map((r) => (r.body as { message: string }).message),
      ['member1: not ours', 'member2: not ours', 'member1: not ours'],
    );
  });

  void it('holds at most 1,000 unsent events and counts the ones it drops', async () => {
    let release = () => {};
    const hold = new Promise<void>((r) => (release = r));
    const { sent, events } = recorder({ hold });
    for (let i = 0; i < 1_500; i++)
      events.record({ ...template, uid: `u-${i}` }, 'Normal', 'Applied', 'applied to member1');
    assert.equal(events.dropped, 500);
    release();
    await events.flush();
    assert.equal(sent.length, 1_000);
  });
});
