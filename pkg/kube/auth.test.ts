import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { KubeConfig } from './config.js';

const dir = mkdtempSync(join(tmpdir(), 'kube-auth-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function config(user: string, cluster = 'server: https://127.0.0.1:6443'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(
    [
      'current-context: c',
      'clusters:',
      `- name: c\n  cluster:\n    ${cluster}`,
      'users:',
      `- name: u\n  user:\n${user.replace(/^/gm, '    ')}`,
      'contexts:',
      '- name: c\n  context: {cluster: c, user: u}',
    ].join('\n'),
  );
  kc.makePathsAbsolute(dir);
  return kc;
}

async function options(kc: KubeConfig): Promise<https.RequestOptions & { headers: Record<string, unknown> }> {
  const o: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(o);
  return o as https.RequestOptions & { headers: Record<string, unknown> };
}

/** An exec plugin that counts its runs in `<name>.runs` and prints `status` as its ExecCredential's status. */
function plugin(name: string, status: object, exit = 0): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `#!/bin/sh\necho run >> "${path}.runs"\necho "info: $KUBERNETES_EXEC_INFO" >&2\n` +
      `echo '${JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status })}'\n` +
      (exit ? `echo "plugin failed: no session" >&2\nexit ${exit}\n` : ''),
  );
  chmodSync(path, 0o755);
  return path;
}
const runs = (path: string) => readFileSync(`${path}.runs`, 'utf8').split('\n').filter(Boolean).length;

void describe('KubeConfig credentials', () => {
  it('sends a token, basic auth and Impersonate-User; verifies with the CA and the TLS server name', async () => {
    const o = await options(
      config(
        'token: t0k3n\nusername: alice\npassword: pw\nas: bob',
        'server: https://h:1\n    certificate-authority-data: Y2E=\n    tls-server-name: api.example',
      ),
    );
    assert.equal(o.headers.Authorization, 'Bearer t0k3n');
    assert.equal(o.headers['Impersonate-User'], 'bob');
    assert.equal(o.auth, 'alice:pw');
    assert.deepEqual(o.ca, Buffer.from('ca'));
    assert.equal(o.servername, 'api.example');
    assert.equal(o.rejectUnauthorized, undefined);
  });

  it('reads client certificate and key files relative to the kubeconfig, and insecure-skip-tls-verify', async () => {
    writeFileSync(join(dir, 'client.crt'), 'CERT');
    writeFileSync(join(dir, 'client.key'), 'KEY');
    const o = await options(
      config(
        'client-certificate: client.crt\nclient-key: client.key',
        'server: https://h:1\n    insecure-skip-tls-verify: true',
      ),
    );
    assert.deepEqual(o.cert, Buffer.from('CERT'));
    assert.deepEqual(o.key, Buffer.from('KEY'));
    assert.equal(o.rejectUnauthorized, false);
    assert.equal(o.headers.Authorization, undefined);
  });

  it('reads a token-file relative to the kubeconfig', async () => {
    writeFileSync(join(dir, 'token'), 'from-file\n');
    assert.equal((await options(config('token-file: token'))).headers.Authorization, 'Bearer from-file');
  });

  it('runs an exec plugin once for concurrent requests and keeps its credential until it expires', async () => {
    const later = new Date(Date.now() + 3600_000).toISOString();
    const p = plugin('fresh', { token: 'exec-token', expirationTimestamp: later });
    const kc = config(`exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ${p}`);
    const all = await Promise.all([options(kc), options(kc), options(kc)]);
    assert.deepEqual(
      all.map((o) => o.headers.Authorization),
      ['Bearer exec-token', 'Bearer exec-token', 'Bearer exec-token'],
    );
    await options(kc);
    assert.equal(runs(p), 1);
  });

  it('runs the plugin again once its credential has expired; takes a client certificate from it', async () => {
    const p = plugin('expired', {
      clientCertificateData: 'PEM-CERT',
      clientKeyData: 'PEM-KEY',
      expirationTimestamp: '2000-01-01T00:00:00Z',
    });
    const kc = config(`exec:\n  command: ${p}\n  env:\n  - {name: X, value: y}`);
    const o = await options(kc);
    assert.equal(o.cert, 'PEM-CERT');
    assert.equal(o.key, 'PEM-KEY');
    await options(kc);
    assert.equal(runs(p), 2);
  });

  it("fails with the plugin's first line of stderr and exit code, and runs it again on the next request", async () => {
    const p = plugin('failing', { token: 'never-used' }, 3);
    const kc = config(`exec:\n  command: ${p}`);
    await assert.rejects(options(kc), /^Error: exec plugin .*failing: exited with code 3: info: \{"apiVersion"/);
    await assert.rejects(options(kc), /exited with code 3/);
    assert.equal(runs(p), 2);
  });

  it('refuses a plugin answer without a credential, never quoting it', async () => {
    const p = plugin('empty', { secret: 'do-not-print' });
    await assert.rejects(options(config(`exec:\n  command: ${p}`)), (e: unknown) => {
      assert.match(String(e), /neither status\.token nor status\.clientCertificateData/);
      assert.doesNotMatch(String(e), /do-not-print/);
      return true;
    });
  });
});
