import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';

import { run } from './index.js';
import { parseAddress } from './ui.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await run(args, { stdout, stderr, stdin: new PassThrough(), env: {}, signal: AbortSignal.abort() });
  return { code, out, err };
}

void describe('flotilla ui: flags', () => {
  const addresses: Array<[string, { host: string; port: number } | RegExp]> = [
    ['127.0.0.1:8080', { host: '127.0.0.1', port: 8080 }],
    ['[::1]:0', { host: '::1', port: 0 }],
    [':9000', { host: '0.0.0.0', port: 9000 }],
    ['localhost', /--address takes HOST:PORT/],
    ['127.0.0.1:99999', /--address takes HOST:PORT/],
  ];
  for (const [text, want] of addresses)
    void it(`--address ${text}`, () => {
      if (want instanceof RegExp) assert.throws(() => parseAddress(text), want);
      else assert.deepEqual(parseAddress(text), want);
    });

  void it('exits 2 on a bad --address, saying so', async () => {
    const r = await cli(['ui', '--address', 'nowhere', '--kubeconfig', '/nonexistent/hub.yaml']);
    assert.equal(r.code, 2);
    assert.match(r.err, /--address takes HOST:PORT/);
  });

  void it('names the kubeconfig it cannot read and exits 1 without a stack trace', async () => {
    const r = await cli(['ui', '--kubeconfig', '/nonexistent/hub.yaml']);
    assert.equal(r.code, 1);
    assert.match(r.err, /\/nonexistent\/hub\.yaml/);
    assert.doesNotMatch(r.err, /\n\s+at /);
  });
});
