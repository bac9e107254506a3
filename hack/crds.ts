// Writes or checks the chart's crds/ (deploy/helm/flotilla/crds) against api/crds. Run through
// hack/update-crds and hack/verify-crds.
//
//   node dist/hack/crds.js write DIR    render every file into DIR (stale YAML files there are removed)
//   node dist/hack/crds.js verify DIR   exit 1 with a unified diff when DIR differs from the rendering

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { renderCRDFiles } from '../api/crds/index.js';

function write(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const files = renderCRDFiles();
  const names = new Set(files.map((f) => f.name));
  for (const existing of readdirSync(dir)) if (existing.endsWith('.yaml') && !names.has(existing)) unlinkSync(join(dir, existing));
  for (const f of files) writeFileSync(join(dir, f.name), f.content);
}

function verify(dir: string): number {
  const expected = mkdtempSync(join(tmpdir(), 'flotilla-crds-'));
  try {
    write(expected);
    const diff = spawnSync('diff', ['-ruN', dir, expected], { encoding: 'utf8' });
    if (diff.error) throw diff.error;
    if (diff.status === 0) return 0;
    process.stderr.write(`${dir} is out of date with api/crds; run hack/update-crds.\n${diff.stdout}`);
    return 1;
  } finally {
    rmSync(expected, { recursive: true, force: true });
  }
}

const [command, dir] = process.argv.slice(2);
if ((command !== 'write' && command !== 'verify') || !dir) {
  process.stderr.write('usage: crds.js write|verify DIR\n');
  process.exit(2);
}
if (command === 'write') write(dir);
else process.exit(verify(dir));
