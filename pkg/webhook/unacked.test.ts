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
    const read = new SendQueues(() => TCP).read();
    assert.ok(read);
    assert.equal(read(8443, 40000), 2_500_000);
    assert.equal(read(8443, 40001), 0);
    assert.equal(read(undefined, 40000), undefined, 'a port not known');
    const none = new SendQueues(() => {
      throw new Error('ENOENT');
    });
    assert.equal(none.read(), undefined);
  });

  it('reads the tables afresh each time it is asked', () => {
    let reads = 0;
    const q = new SendQueues(() => {
      reads++;
      return TCP;
    });
    q.read();
    q.read();
    assert.equal(reads, 4, 'tcp and tcp6, twice');
  });
});
