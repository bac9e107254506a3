// KubeClient.fence: when the fence aborts, the request in flight is abandoned, the queued ones fail
// without being sent, and so does every later one. A transport that never answers stands in for a
// member that is slow to answer a write.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { KubeClient } from './client.js';
import { TransportError } from './errors.js';
import type { Transport, TransportRequest, TransportResponse } from './transport.js';

class SilentServer implements Transport {
  readonly server = 'https://member.test:6443';
  readonly sent: TransportRequest[] = [];
  close(): void {}
  send(req: TransportRequest): Promise<TransportResponse> {
    this.sent.push(req);
    return new Promise((_resolve, reject) => {
      const fail = () => reject(new TransportError(`${this.server}: cancelled`, 'ECANCELED'));
      if (req.signal?.aborted) fail();
      else req.signal?.addEventListener('abort', fail, { once: true });
    });
  }
}

const write = (name: string) => ({
  method: 'PATCH' as const,
  path: `/api/v1/namespaces/shop/configmaps/${name}`,
  body: { data: { value: 'v1' } },
});

void describe('KubeClient.fence', () => {
  void it('abandons the write in flight and sends none of the queued or later ones', async () => {
    const server = new SilentServer();
    const client = new KubeClient(server, { concurrency: 1 });
    const fence = new AbortController();
    client.fence(fence.signal);
    const inFlight = client.request(write('a'));
    const queued = client.request(write('b'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      server.sent.map((r) => r.path),
      ['/api/v1/namespaces/shop/configmaps/a'],
    );
    fence.abort();
    await assert.rejects(inFlight, (e: unknown) => e instanceof TransportError && e.errno === 'ECANCELED');
    await assert.rejects(queued, /cancelled before it was sent/);
    await assert.rejects(client.request(write('c')), /cancelled before it was sent/);
    assert.equal(server.sent.length, 1, 'nothing sent after the fence');
  });

  void it('a new fence replaces the old one (a member bound to a new run)', async () => {
    const server = new SilentServer();
    const client = new KubeClient(server, { concurrency: 1 });
    const first = new AbortController();
    client.fence(first.signal);
    first.abort();
    client.fence(new AbortController().signal);
    const pending = client.request(write('d'));
    await new Promise((r) => setImmediate(r));
    assert.equal(server.sent.length, 1);
    assert.equal(server.sent[0]!.signal?.aborted, false);
    void pending.catch(() => undefined);
  });
});
