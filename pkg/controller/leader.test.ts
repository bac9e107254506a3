// The Lease holder's fence, on a fake clock and a transport whose answers the test holds back: a renewal
// that hangs does not keep the holder leading past the renew deadline, the hanging request is abandoned,
// and a configuration that would let another candidate take the Lease before the holder stops is refused.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';

import { FakeClock } from '../../test/fake-clock.js';
import { KubeClient } from '../kube/client.js';
import { TransportError } from '../kube/errors.js';
import type { Transport, TransportRequest, TransportResponse } from '../kube/transport.js';
import { LeaderElector } from './leader.js';

/** Answers the Lease requests at once until `hang` is set; from then on answers nothing until aborted. */
class LeaseServer implements Transport {
  readonly server = 'https://hub.test:6443';
  hang = false;
  lease: Record<string, unknown> | undefined;
  readonly sent: Array<{ method: string; aborted: () => boolean }> = [];

  close(): void {}

  send(req: TransportRequest): Promise<TransportResponse> {
    this.sent.push({ method: req.method, aborted: () => req.signal?.aborted === true });
    if (this.hang)
      return new Promise((_resolve, reject) => {
        const fail = () => reject(new TransportError(`${this.server}: cancelled`, 'ECANCELED'));
        if (req.signal?.aborted) fail();
        else req.signal?.addEventListener('abort', fail, { once: true });
      });
    const answer = (status: number, body?: unknown): Promise<TransportResponse> =>
      Promise.resolve({ status, warnings: [], body: Buffer.from(body === undefined ? '' : JSON.stringify(body)) });
    if (req.method === 'GET') return this.lease ? answer(200, this.lease) : answer(404, { kind: 'Status' });
    const body = JSON.parse(req.body?.toString('utf8') ?? '{}') as Record<string, unknown>;
    this.lease = { ...body, metadata: { ...(body.metadata as object), resourceVersion: String(this.sent.length) } };
    return answer(req.method === 'POST' ? 201 : 200, this.lease);
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await tick();
}

void describe('LeaderElector fencing', () => {
  void it('stops leading at the renew deadline while the renewal hangs, and abandons the request', async () => {
    const clock = new FakeClock();
    const server = new LeaseServer();
    const events: Array<[string, number]> = [];
    const elector = new LeaderElector({
      client: new KubeClient(server, { concurrency: 2 }),
      namespace: 'flotilla-system',
      name: 'flotilla-controller',
      identity: 'a',
      leaseDurationSeconds: 15,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      clock,
      onStartedLeading: () => events.push(['started', clock.now()]),
      onStoppedLeading: () => events.push(['stopped', clock.now()]),
    });
    const stop = new AbortController();
    const running = elector.run(stop.signal);
    await settle();
    assert.deepEqual(events, [['started', 0]]);
    clock.advance(2_000);
    await settle();
    assert.equal(elector.isLeader(), true, 'renewed at 2 s');
    // The hub stops answering: the renewal sent at 4 s hangs (the client's own timeout is 60 s).
    server.hang = true;
    clock.advance(2_000);
    await settle();
    const hanging = server.sent.at(-1)!;
    assert.equal(hanging.method, 'GET');
    // Last renewal sent at 2 s: the deadline is 12 s on this process's clock.
    clock.advance(7_999);
    await settle();
    assert.equal(elector.isLeader(), true, 'still within the deadline');
    clock.advance(1);
    assert.deepEqual(events, [
      ['started', 0],
      ['stopped', 12_000],
    ]);
    assert.equal(hanging.aborted(), true, 'the hanging renewal is abandoned');
    stop.abort();
    await running;
  });

  void it('bounds each attempt by the renew deadline when it does not lead yet', async () => {
    const clock = new FakeClock();
    const server = new LeaseServer();
    server.hang = true;
    const elector = new LeaderElector({
      client: new KubeClient(server, { concurrency: 2 }),
      namespace: 'ns',
      name: 'lease',
      identity: 'a',
      leaseDurationSeconds: 4,
      renewDeadlineMs: 3_000,
      retryPeriodMs: 1_000,
      clock,
      onStartedLeading: () => assert.fail('must not lead'),
      onStoppedLeading: () => assert.fail('never led'),
    });
    const stop = new AbortController();
    const running = elector.run(stop.signal);
    await settle();
    clock.advance(3_000);
    await settle();
    assert.equal(server.sent[0]!.aborted(), true);
    clock.advance(1_000);
    await settle();
    assert.equal(server.sent.length, 2, 'tried again after the retry period');
    stop.abort();
    await running;
  });

  void it("takes another holder's Lease only after seeing it unchanged for its duration on its own clock", async () => {
    const clock = new FakeClock();
    const server = new LeaseServer();
    // The holder's renewTime says long ago (its clock is behind, or this one is ahead): not a reason to take it.
    server.lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'flotilla-controller', namespace: 'flotilla-system', resourceVersion: '7' },
      spec: { holderIdentity: 'b', leaseDurationSeconds: 15, renewTime: '2000-01-01T00:00:00.000000Z' },
    };
    const started: number[] = [];
    const elector = new LeaderElector({
      client: new KubeClient(server, { concurrency: 2 }),
      namespace: 'flotilla-system',
      name: 'flotilla-controller',
      identity: 'a',
      clock,
      onStartedLeading: () => started.push(clock.now()),
      onStoppedLeading: () => undefined,
    });
    const stop = new AbortController();
    const running = elector.run(stop.signal);
    const step = async (ms: number) => {
      clock.advance(ms);
      await settle();
    };
    await settle();
    for (let t = 0; t < 7; t++) await step(2_000);
    assert.deepEqual(started, [], 'first seen at 0, unchanged at the 14 s read: not expired');
    // The holder renews (a new resourceVersion): the wait starts again from the 16 s read.
    server.lease = { ...server.lease, metadata: { ...(server.lease.metadata as object), resourceVersion: '8' } };
    for (let t = 0; t < 8; t++) await step(2_000);
    assert.deepEqual(started, [], 'seen renewed at 16 s: not expired at the 30 s read');
    await step(2_000);
    assert.deepEqual(started, [32_000], 'unchanged since 16 s: taken at the 32 s read');
    assert.equal((server.lease.spec as { holderIdentity?: string }).holderIdentity, 'a');
    stop.abort();
    await running;
  });

  void it('refuses a renew deadline that is not shorter than the lease duration', () => {
    const base = {
      client: new KubeClient(new LeaseServer(), { concurrency: 1 }),
      namespace: 'ns',
      name: 'lease',
      identity: 'a',
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
    };
    assert.throws(
      () => new LeaderElector({ ...base, leaseDurationSeconds: 10, renewDeadlineMs: 10_000 }),
      /renewDeadlineMs \(10000\) must be shorter than the lease duration \(10000 ms\)/,
    );
    assert.throws(
      () => new LeaderElector({ ...base, renewDeadlineMs: 1_000, retryPeriodMs: 2_000 }),
      /retryPeriodMs \(2000\) must be positive and at most renewDeadlineMs \(1000\)/,
    );
  });
});
