import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { captureIO } from '../../test/cli-io.js';
import { run } from './index.js';

async function flotilla(args: string[]): Promise<{ code: number; err: string }> {
  const io = captureIO({});
  const code = await run(args, io);
  return { code, err: io.err() };
}

describe('flotilla agent: usage', () => {
  const base = ['agent', '--cluster-name', 'member2', '--hub-kubeconfig', '/nonexistent/hub.kubeconfig'];
  const refused: Array<{ args: string[]; message: RegExp }> = [
    { args: ['agent', '--hub-kubeconfig', 'x'], message: /--cluster-name/ },
    { args: ['agent', '--cluster-name', 'member2'], message: /--hub-kubeconfig/ },
    {
      args: ['agent', '--cluster-name', 'Member_2', '--hub-kubeconfig', 'x'],
      message: /--cluster-name must be a Cluster's name/,
    },
    { args: [...base, '--lease-namespace', 'Not A Label'], message: /--lease-namespace must be a DNS label/ },
    { args: [...base, '--concurrency', '0'], message: /--concurrency must be an integer from 1 to 1000/ },
    {
      args: [...base, '--lease-duration', '10s', '--renew-interval', '10s'],
      message: /--renew-interval must be shorter than --lease-duration/,
    },
  ];
  for (const r of refused)
    it(`exits 2 for ${JSON.stringify(r.args.slice(1).join(' '))}, naming the flag`, async () => {
      const got = await flotilla(r.args);
      assert.equal(got.code, 2, got.err);
      assert.match(got.err, r.message);
    });

  it('exits 1 naming the file when the hub kubeconfig cannot be read', async () => {
    const got = await flotilla([...base, '--metrics-port', '0']);
    assert.equal(got.code, 1);
    assert.match(got.err, /cannot load the kubeconfigs/);
    assert.match(got.err, /\/nonexistent\/hub\.kubeconfig/);
    assert.doesNotMatch(got.err, /\n\s+at /); // no stack trace
  });
});
