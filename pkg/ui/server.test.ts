import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';

import { SyntheticFleet } from '../../test/ui-synthetic.js';
import { CONTENT_SECURITY_POLICY } from './headers.js';
import { UiServer } from './server.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(port: number, path: string, opts: { method?: string; host?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: opts.method ?? 'GET',
        headers: { host: opts.host ?? `127.0.0.1:${port}` },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

void describe('ui server', () => {
  const fleet = new SyntheticFleet(20, 3);
  const stop = new AbortController();
  let port = 0;

  before(async () => {
    ({ port } = await new UiServer({ view: fleet, host: '127.0.0.1', port: 0 }).start(stop.signal));
  });
  after(() => stop.abort());

  void it('serves the page with its security headers and no inline script', async () => {
    const page = await get(port, '/');
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-security-policy'], CONTENT_SECURITY_POLICY);
    assert.match(CONTENT_SECURITY_POLICY, /script-src 'self'(;|$)/);
    assert.match(CONTENT_SECURITY_POLICY, /frame-ancestors 'none'/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['x-frame-options'], 'DENY');
    for (const tag of page.body.match(/<script[^>]*>[^<]*<\/script>/g) ?? []) {
      assert.match(
        tag,
        /^<script type="module" src="\/assets\/[^"]+"><\/script>$/,
        'scripts load from the server only',
      );
    }
    assert.doesNotMatch(page.body, /https?:\/\//, 'nothing is loaded from elsewhere');
    assert.doesNotMatch(page.body, /style="/, 'no inline style');
  });

  void it('serves every script the page imports from itself', async () => {
    const app = await get(port, '/assets/page/app.js');
    assert.equal(app.status, 200);
    assert.match(String(app.headers['content-type']), /^text\/javascript/);
    const imports = [...app.body.matchAll(/from '(\.[^']+)'/g)].map(
      (m) => new URL(m[1] ?? '', 'http://x/assets/page/').pathname,
    );
    assert.ok(imports.length > 0);
    for (const path of imports) assert.equal((await get(port, path)).status, 200, path);
    const css = await get(port, '/assets/style.css');
    assert.doesNotMatch(css.body, /@import|url\(/, 'no remote fonts or images');
  });

  void it('is read-only', async () => {
    const r = await get(port, '/api/snapshot', { method: 'POST' });
    assert.equal(r.status, 405);
    assert.equal(r.headers.allow, 'GET, HEAD');
  });

  void it('answers a loopback-bound request only for a loopback Host (no DNS rebinding)', async () => {
    assert.equal((await get(port, '/api/snapshot', { host: 'attacker.example:8080' })).status, 403);
    assert.equal((await get(port, '/api/snapshot', { host: `localhost:${port}` })).status, 200);
  });

  void it('serves the snapshot and a template by id, 404 for an unknown one', async () => {
    const snap = JSON.parse((await get(port, '/api/snapshot')).body) as { templates: Array<{ id: string }> };
    assert.equal(snap.templates.length, 20);
    const id = snap.templates[0]?.id ?? '';
    const detail = await get(port, `/api/template?id=${encodeURIComponent(id)}`);
    assert.equal(detail.status, 200);
    assert.equal((await get(port, '/api/template?id=nope')).status, 404);
    assert.equal((await get(port, '/nope')).status, 404);
  });
});
