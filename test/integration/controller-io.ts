// What the controller integration tests share: the controller's CLI IO with stderr captured, and plain
// reads and server-side applies through a KubeClient.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';

import type { CommandIO } from '../../pkg/cli/command.js';
import type { KubeClient } from '../../pkg/kube/client.js';

export type Obj = Record<string, unknown>;

/** IO for `run(['controller', …])` that keeps what it logs. */
export function capturingIO(signal: AbortSignal): CommandIO & { err: () => string } {
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return { stdout: new PassThrough(), stderr, stdin: new PassThrough(), env: {}, signal, err: () => err };
}

/** The object at `path`, or undefined when the answer is not 200. */
export async function getObject(c: KubeClient, path: string): Promise<Obj | undefined> {
  const r = await c.request<Obj>({ method: 'GET', path });
  return r.status === 200 ? r.body : undefined;
}

/** Server-side apply as a platform team would (field manager platform-team, force). */
export async function applyObject(c: KubeClient, path: string, body: Obj): Promise<void> {
  const r = await c.request({
    method: 'PATCH',
    path,
    query: { fieldManager: 'platform-team', force: 'true' },
    contentType: 'application/apply-patch+yaml',
    body,
  });
  assert.ok(r.status < 300, `apply ${path}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
}
