import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { captureIO } from '../../test/cli-io.js';
import { run } from './index.js';

describe('flotilla controller: usage', () => {
  const base = ['controller', '--kubeconfig', '/nonexistent/hub.kubeconfig', '--metrics-port', '0'];
  const refused: Array<{ args: string[]; message: RegExp }> = [
    { args: [...base, '--concurrency', '0'], message: /--concurrency must be an integer from 1 to 1000/ },
    { args: [...base, '--member-concurrency', '0'], message: /--member-concurrency must be an integer from 1 to 1000/ },
    {
      args: [...base, '--member-concurrency', '1001'],
      message: /--member-concurrency must be an integer from 1 to 1000/,
    },
    { args: [...base, '--member-concurrency', 'four'], message: /--member-concurrency must be an integer/ },
  ];
  for (const r of refused)
    it(`exits 2 for ${JSON.stringify(r.args.slice(5).join(' '))}, naming the flag`, async () => {
      const io = captureIO({});
      const code = await run(r.args, io);
      assert.equal(code, 2, io.err());
      assert.match(io.err(), r.message);
    });

  it('takes --member-concurrency 1000, then fails on the kubeconfig, naming it', async () => {
    const io = captureIO({});
    const code = await run([...base, '--member-concurrency', '1000'], io);
    assert.equal(code, 1);
    assert.match(io.err(), /\/nonexistent\/hub\.kubeconfig/);
  });
});
