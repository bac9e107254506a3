// The Lease holder's fence, on a fake clock and a transport whose answers the test holds back: a renewal
// that hangs does not keep the holder leading past the renew deadline, the hanging request is abandoned,
// and a configuration that would let another candidate take the Lease before the holder stops is refused.
// And the holder is not stricter than it must be: a renewal is one request while it leads (slow answers
// still fit in the deadline), and a refused write of its own Lease is looked into before it gives up.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';

import { FakeClock } from '../../test/fake-clock.js';
import { KubeClient } from '../kube/client.js';
import { TransportError } from '../kube/errors.js';
import type { Transport, TransportRequest, TransportResponse } from '../kube/transport.js';
import { LeaderElector } from './leader.js';

/**
 * Answers the Lease requests at once (or `delayMs` later on `clock`) until `hang` is set; from then on
 * answers nothing until aborted. `conflicts`: that many next writes are refused (409).
 */
class LeaseServer implements Transport {
  readonly server = 'https://hub.test:6443';
  hang = false;
  conflicts = 0;
  lease: Record<string, unknown> | undefined;
  readonly sent: Array<{ method: string; aborted: () => boolean }> = [];

  constructor(
    private readonly clock?: FakeClock,
    private readonly delayMs = 0,
  ) {}

  close(): void {}

  async send(req: TransportRequest): Promise<TransportResponse> {
    const clock = this.clock;
    if (clock && this.delayMs > 0)
      await new Promise((resolve, reject) => {
        const t = clock.setTimeout(() => resolve(undefined), this.delayMs);
        req.signal?.addEventListener(
          'abort',
          () => {
            clock.clearTimeout(t);
            reject(new TransportError(`${this.server}: cancelled`, 'ECANCELED'));
          },
          { once: true },
        );
      });
    return this.answer(req);
  }

  private answer(req: TransportRequest): Promise<TransportResponse> {
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
    const version = (o: Record<string, unknown> | undefined) =>
      (o?.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
    const body = JSON.parse(req.body?.toString('utf8') ?? '{}') as Record<string, unknown>;
    if ((req.method === 'PUT' && version(body) !== version(this.lease)) || this.conflicts > 0) {
      this.conflicts = Math.max(0, this.conflicts - 1);
      return answer(409, { kind: 'Status', reason: 'Conflict' });
    }
    this.lease = { ...body, metadata: { ...(body.metadata as object), resourceVersion: String(this.sent.length) } };
    return answer(req.method === 'POST' ? 201 : 200, this.lease);
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await tick();
}

/**
 * Candidate 'a' for flotilla-system/flotilla-controller (15 s / 10 s / 2 s) running on a fake clock, against
 * a LeaseServer answering after `delayMs`; its events as [what, when].
 */
function start(delayMs = 0) {
  const clock = new FakeClock();
  const server = new LeaseServer(clock, delayMs);
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
    onStoppedLeading: (why) => events.push([`stopped: ${why}`, clock.now()]),
  });
  const stop = new AbortController();
  return { clock, server, events, elector, stop, running: elector.run(stop.signal) };
}

void describe('LeaderElector fencing', () => {
  void it('stops leading at the renew deadline while the renewal hangs, and abandons the request', async () => {
    const { clock, server, events, elector, stop, running } = start();
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
    assert.equal(hanging.method, 'PUT', 'a renewal writes the Lease last written (no read first)');
    // Last renewal sent at 2 s: the deadline is 12 s on this process's clock.
    clock.advance(7_999);
    await settle();
    assert.equal(elector.isLeader(), true, 'still within the deadline');
    clock.advance(1);
    assert.deepEqual(events, [
      ['started', 0],
      [
        'stopped: no renewal within the renew deadline (10000 ms since the last one was sent); PUT in flight for 8000 ms; deadline seen 0 ms late',
        12_000,
      ],
    ]);
    assert.equal(hanging.aborted(), true, 'the hanging renewal is abandoned');
    stop.abort();
    await running;
  });

  void it('keeps leading when every request takes 3 s: a renewal is one request while it leads', async () => {
    const { clock, server, events, stop, running } = start(3_000);
    for (let t = 0; t < 60_000; t += 250) {
      await settle();
      clock.advance(250);
    }
    await settle();
    // GET (404) answered at 3 s, POST sent then and answered at 6 s; then a PUT every 5 s (3 s + 2 s).
    assert.deepEqual(events, [['started', 6_000]]);
    assert.deepEqual(
      server.sent.slice(0, 4).map((s) => s.method),
      ['GET', 'POST', 'PUT', 'PUT'],
    );
    stop.abort();
    await running;
  });

  void it('looks into a refused renewal of its own Lease, and stops at once only when another holder has it', async () => {
    const { clock, server, events, elector, stop, running } = start();
    const step = async (ms: number) => {
      clock.advance(ms);
      await settle();
    };
    await settle();
    // Refused twice (the fast path, then the write after reading the Lease, which still names 'a').
    server.conflicts = 2;
    await step(2_000);
    assert.equal(elector.isLeader(), true, 'a refused write of its own Lease is not another holder');
    await step(2_000);
    assert.equal(elector.isLeader(), true);
    assert.deepEqual(events, [['started', 0]]);
    // Another holder writes the Lease: seen at the next renewal, which stops at once.
    const lease = server.lease!;
    server.lease = {
      ...lease,
      metadata: { ...(lease.metadata as object), resourceVersion: '99' },
      spec: { ...(lease.spec as object), holderIdentity: 'b' },
    };
    await step(2_000);
    assert.deepEqual(events, [
      ['started', 0],
      ['stopped: another holder has the Lease', 6_000],
    ]);
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
