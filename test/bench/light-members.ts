// A process hosting light members for `bench:fleet` (fleet-light.ts starts it): `node light-members.js
// COUNT FIRST` serves COUNT in-memory apiservers (test/fake-apiserver.ts over HTTPS,
// test/fake-apiserver-server.ts), named light<FIRST>, light<FIRST+1>, ..., each holding the namespace
// `fleet`, and answers its parent over IPC:
//   { id, op: 'stats' }                 → { id, members: [{ name, requests, watches, copies, unserved }] }
//   { id, op: 'shown', name, value }    → { id, shown: members whose ConfigMap `name` holds data.value === value }
//   { op: 'stop' }                      → servers closed, process exits
// It says { op: 'ready', members: [{ name, url }] } once every server listens. A request a member cannot
// serve is written to stderr at once (`unserved light7: GET /apis/...`) and listed in the next stats.

import { CORE_KINDS, FakeApiserver, type FakeKind } from '../fake-apiserver.js';
import { serveFake, type FakeServer } from '../fake-apiserver-server.js';
import { NS } from './fleet-common.js';

/** What a member serves: the core kinds, and the Nodes and Pods the controller's cluster status reads. */
const MEMBER_KINDS: FakeKind[] = [
  ...CORE_KINDS,
  { group: '', version: 'v1', kind: 'Node', resource: 'nodes', namespaced: false },
  { group: '', version: 'v1', kind: 'Pod', resource: 'pods', namespaced: true },
];

interface Member {
  name: string;
  fake: FakeApiserver;
  server: FakeServer;
  reported: number;
}

type Ask = { id: number; op: 'stats' } | { id: number; op: 'shown'; name: string; value: string } | { op: 'stop' };

const send = (m: unknown) => process.send?.(m);

async function main(): Promise<void> {
  const count = Number(process.argv[2]);
  const first = Number(process.argv[3]);
  if (!Number.isInteger(count) || count < 1 || !Number.isInteger(first))
    throw new Error('usage: light-members.js COUNT FIRST');
  const members: Member[] = [];
  for (let i = first; i < first + count; i++) {
    const name = `light${i}`;
    const fake = new FakeApiserver({ server: `https://${name}.test`, kinds: MEMBER_KINDS, record: false });
    fake.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }, 'bench');
    fake.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: `${name}-node` }, status: {} }, 'bench');
    const server = await serveFake(fake, {
      onUnserved: (line) => process.stderr.write(`unserved ${name}: ${line}\n`),
    });
    members.push({ name, fake, server, reported: 0 });
  }
  process.on('message', (ask: Ask) => {
    if (ask.op === 'stop') {
      void Promise.all(members.map((m) => m.server.close())).then(() => process.exit(0));
      return;
    }
    if (ask.op === 'stats') {
      send({
        id: ask.id,
        members: members.map((m) => {
          const unserved = m.fake.unserved.slice(m.reported);
          m.reported = m.fake.unserved.length;
          return {
            name: m.name,
            requests: m.server.served.requests - m.server.served.watches,
            watches: m.server.served.watches,
            copies: m.fake.count('v1', 'ConfigMap', NS),
            unserved,
          };
        }),
      });
      return;
    }
    let shown = 0;
    for (const m of members) {
      const data = m.fake.get('v1', 'ConfigMap', NS, ask.name)?.data as Record<string, unknown> | undefined;
      if (data?.value === ask.value) shown++;
    }
    send({ id: ask.id, shown });
  });
  process.on('disconnect', () => process.exit(0));
  send({ op: 'ready', members: members.map((m) => ({ name: m.name, url: m.server.url })) });
}

await main();
