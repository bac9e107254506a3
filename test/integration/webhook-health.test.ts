// The webhook's probe port, on the real process: `flotilla webhook --override --health-port` against a
// real apiserver, as the chart runs it (its liveness and readiness probes go to that port in plain HTTP).
// /readyz there follows the process's readiness (its policies loaded from the apiserver, or not while
// the apiserver does not answer); /healthz and /readyz keep answering while every admission connection
// the HTTPS port allows is taken; both ports close on SIGTERM.

import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { customResourceDefinitions } from '../../api/crds/index.js';
import { waitForCRDsEstablished } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { freePort } from '../envtest/process.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { stopFlotilla } from './controller-io.js';
import { httpsStatus, spawnWebhook, webhookCerts, type WebhookCerts, type WebhookProcess } from './webhook-io.js';

type Obj = Record<string, unknown>;
const WAIT_MS = 40_000;
/** The HTTPS port's connection limit (server.ts MAX_CONNECTIONS). */
const HTTPS_CONNECTIONS = 1024;

/** Status of GET `path` on a new plain-HTTP connection (0: no answer within 5 s). */
const plain = (port: number, path: string) =>
  new Promise<number>((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });

void describe('flotilla webhook --health-port: probes in plain HTTP on the real process', () => {
  const env = useEnvironment({ members: 0 });
  let certs: WebhookCerts;
  const started: WebhookProcess[] = [];
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);

  /** Status of GET `path` on a new HTTPS connection to the admission port (0: refused or closed). */
  const secure = (port: number, path: string) => httpsStatus(port, path, certs.caPem);

  const startWebhook = async (kubeconfig: string): Promise<WebhookProcess> => {
    const w = await spawnWebhook({
      certs,
      kubeconfig,
      healthPort: await freePort(),
      args: ['--override', '--cluster-name', 'eu-1'],
    });
    started.push(w);
    return w;
  };

  before(async () => {
    certs = webhookCerts('webhook-health-it');
    const crds = customResourceDefinitions();
    const installed = await k(['apply', '--server-side', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: crds });
    assert.equal(installed.status, 0, installed.stderr);
    await waitForCRDsEstablished(
      env().hub,
      crds.map((c) => String((c.metadata as Obj).name)),
      60_000,
    );
  });

  after(async () => {
    for (const w of started) {
      w.child.kill('SIGKILL');
      await w.exited;
    }
    rmSync(certs.dir, { recursive: true, force: true });
  });

  void it('is alive and not ready on the probe port while the apiserver it reads its policies from does not answer', async () => {
    // A kubeconfig naming a port nothing listens on.
    const nowhere = join(certs.dir, 'nowhere.kubeconfig');
    writeFileSync(
      nowhere,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${await freePort()}` } }],
        users: [{ name: 'u', user: { token: 'x' } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'c',
      }),
    );
    const w = await startWebhook(nowhere);
    const alive = await eventually(
      () => plain(w.healthPort, '/healthz'),
      (s) => s === 200,
      WAIT_MS,
    );
    assert.equal(alive, 200, w.log());
    assert.equal(await plain(w.healthPort, '/readyz'), 503, w.log());
    assert.equal(await secure(w.port, '/readyz'), 503, 'the HTTPS port says the same');
    assert.equal(await stopFlotilla(w), 0, w.log());
  });

  void it('is ready on the probe port once its policies are loaded, and keeps answering while every admission connection is taken', async () => {
    const w = await startWebhook(env().hub.kubeconfigPath);
    const ready = await eventually(
      () => plain(w.healthPort, '/readyz'),
      (s) => s === 200,
      WAIT_MS,
    );
    assert.equal(ready, 200, w.log());
    assert.equal(await secure(w.port, '/readyz'), 200);

    // Every connection the HTTPS port takes, held open without a byte sent (closed by its handshake
    // timeout, 10 s, so the checks below come right after).
    const held: Socket[] = [];
    await Promise.all(
      Array.from(
        { length: HTTPS_CONNECTIONS + 8 },
        () =>
          new Promise<void>((resolve) => {
            const s = connect({ host: '127.0.0.1', port: w.port }, () => resolve());
            s.on('error', () => resolve());
            s.on('close', () => resolve());
            held.push(s);
          }),
      ),
    );
    try {
      const admission = await eventually(
        () => secure(w.port, '/healthz'),
        (s) => s === 0,
        3_000,
        100,
      );
      assert.equal(admission, 0, 'the HTTPS port takes no more connections');
      assert.equal(await plain(w.healthPort, '/healthz'), 200, 'the probe port still answers /healthz');
      assert.equal(await plain(w.healthPort, '/readyz'), 200, 'and /readyz');
    } finally {
      for (const s of held) s.destroy();
    }
    const back = await eventually(
      () => secure(w.port, '/healthz'),
      (s) => s === 200,
      WAIT_MS,
      200,
    );
    assert.equal(back, 200, 'the HTTPS port answers again once they are gone');

    assert.equal(await stopFlotilla(w), 0, w.log());
    assert.equal(await plain(w.healthPort, '/healthz'), 0, 'the probe port is closed with the process');
  });
});
