import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { SendQueues, parseTables } from './unacked.js';

// Two lines as Linux writes them: a listening socket on 8443, and an established connection from port
// 40000 to 8443 with 0x2625A0 (2,500,000) bytes in its send queue.
const TCP = [
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 0100007F:20FB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0',
  '   1: 0100007F:20FB 0100007F:9C40 01 002625A0:00000000 01:00000014 00000000     0        0 2 1 0 20 4 30 10 -1',
].join('\n');

describe('send queues from /proc/net/tcp', () => {
  it("reads an established connection's tx_queue by its ports, and ignores listening sockets", () => {
    assert.deepEqual([...parseTables([TCP])], [['8443:40000', 2_500_000]]);
  });

  it('says 0 for a connection the table does not hold, and undefined where there is no table', () => {
    assert.equal(new SendQueues(() => TCP).unacknowledged(8443, 40000), 2_500_000);
    assert.equal(new SendQueues(() => TCP).unacknowledged(8443, 40001), 0);
    const none = new SendQueues(() => {
      throw new Error('ENOENT');
    });
    assert.equal(none.unacknowledged(8443, 40000), undefined);
  });

  it('reads the tables at most once per 200 ms however many connections ask', () => {
    let reads = 0;
    const q = new SendQueues(() => {
      reads++;
      return TCP;
    });
    for (let i = 0; i < 100; i++) q.unacknowledged(8443, 40000 + i, 1_000);
    q.unacknowledged(8443, 40000, 1_150);
    assert.equal(reads, 2, 'tcp and tcp6 once');
    q.unacknowledged(8443, 40000, 1_300);
    assert.equal(reads, 4);
  });
});
