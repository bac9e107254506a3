import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, it } from 'node:test';

import type { UiChange } from './shared/model.js';
import { EventStreams } from './sse.js';

/** A response whose socket takes `accept` writes, then says to wait until drain() is called. */
class SlowResponse extends EventEmitter {
  written: string[] = [];
  status = 0;
  constructor(public accept: number) {
    super();
  }
  writeHead(status: number) {
    this.status = status;
    return this;
  }
  write(chunk: string): boolean {
    this.written.push(chunk);
    return this.written.length < this.accept;
  }
  end(chunk?: string) {
    if (chunk) this.written.push(chunk);
  }
  drain(accept: number) {
    this.accept = this.written.length + accept;
    this.emit('drain');
  }
  events(kind: string): string[] {
    return this.written.filter((w) => w.startsWith(`event: ${kind}\n`));
  }
}

const change = (seq: number, id: string): UiChange => ({ seq, type: 'template', id });

function open(streams: EventStreams, accept = 1e9): SlowResponse {
  const res = new SlowResponse(accept);
  streams.open(new EventEmitter() as IncomingMessage, res as unknown as ServerResponse);
  return res;
}

void describe('ui event streams', () => {
  const source = { snapshotJson: () => '{"seq":0}' };

  void it('send the snapshot first, then each change', () => {
    const s = new EventStreams(source, { maxConnections: 4, maxPending: 10, keepAliveMs: 60_000 });
    const res = open(s);
    s.broadcast(change(1, 'a'));
    s.broadcast(change(2, 'b'));
    assert.equal(res.events('snapshot').length, 1);
    assert.deepEqual(
      res.events('change').map((w) => (JSON.parse(w.split('data: ')[1] ?? '') as UiChange).id),
      ['a', 'b'],
    );
    s.close();
  });

  void it('refuse connections past the limit with 503', () => {
    const s = new EventStreams(source, { maxConnections: 2, maxPending: 10, keepAliveMs: 60_000 });
    open(s);
    open(s);
    const third = open(s);
    assert.equal(third.status, 503);
    assert.equal(s.size, 2);
    s.close();
  });

  void it('coalesce a slow reader by object, and past maxPending drop to one fresh snapshot', () => {
    const s = new EventStreams(source, { maxConnections: 2, maxPending: 100, keepAliveMs: 60_000 });
    const res = open(s, 2); // retry line, snapshot: then the socket is full
    for (let i = 1; i <= 50; i++) s.broadcast(change(i, 'same'));
    assert.equal(s.maxBacklog, 1, 'changes to one object coalesce');
    for (let i = 0; i < 10_000; i++) s.broadcast(change(100 + i, `t${i}`));
    assert.ok(s.maxBacklog <= 100, `backlog ${s.maxBacklog} stays bounded`);
    res.drain(1e9);
    assert.equal(res.events('snapshot').length, 2, 'the reader gets a fresh snapshot instead of what it missed');
    assert.ok(res.events('change').length <= 100);
    s.close();
  });
});
