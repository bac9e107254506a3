// The CLI as a shell pipeline runs it: a reader that stops early (`flotilla render … | head -1`).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../../cmd/flotilla/main.js', import.meta.url));
const root = fileURLToPath(new URL('../../..', import.meta.url));

void describe('flotilla writing to a pipe', () => {
  void it('stops quietly with exit 141 when the reader closes the pipe, as a program killed by SIGPIPE', async () => {
    // Far more output than a pipe holds: 2,000 ConfigMaps for one cluster.
    const dir = mkdtempSync(join(tmpdir(), 'pipe-'));
    const docs = [
      'apiVersion: cluster.flotilla.io/v1alpha1\nkind: Cluster\nmetadata: {name: one}',
      'apiVersion: policy.flotilla.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {name: all}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]\n  placement: {clusterAffinity: {clusterNames: [one]}}',
      ...Array.from(
        { length: 2000 },
        (_, i) =>
          `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c${i}, namespace: d}\ndata: {k: "${'v'.repeat(200)}"}`,
      ),
    ];
    writeFileSync(join(dir, 'in.yaml'), docs.join('\n---\n'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const child = spawn(process.execPath, [main, 'render', '-f', join(dir, 'in.yaml')], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    assert.equal(code, 141, stderr);
    assert.doesNotMatch(stderr, /EPIPE|Unhandled|^\s+at /m);
  });
});
