import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { captureIO } from '../../test/cli-io.js';
import { readYaml, readYamlStream } from '../yaml/index.js';
import { run } from './index.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = (p: string) => join(root, 'test/fixtures', p);
const quickstart = join(root, 'examples/quickstart');

async function flotilla(args: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  const io = captureIO({ stdin });
  const code = await run(args, io);
  return { code, out: io.out(), err: io.err() };
}

describe('flotilla (dispatch)', () => {
  it('prints help listing the commands', async () => {
    const r = await flotilla(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.out, /render +Render/);
    assert.match(r.out, /validate +Check/);
  });
  it('exits 2 for an unknown command', async () => {
    const r = await flotilla(['rendr']);
    assert.equal(r.code, 2);
    assert.match(r.err, /unknown command "rendr"/);
  });
  it('exits 2 for an unknown flag and shows the usage', async () => {
    const r = await flotilla(['render', '--frobnicate']);
    assert.equal(r.code, 2);
    assert.match(r.err, /Usage:\n {2}flotilla render/);
  });
  it('exits 2 when render is given no files', async () => {
    assert.equal((await flotilla(['render'])).code, 2);
  });
});

describe('flotilla render', () => {
  it('renders the quickstart: one document per (template, cluster)', async () => {
    const r = await flotilla(['render', '-f', quickstart]);
    assert.equal(r.code, 0, r.err);
    const docs = readYamlStream(r.out).documents.map((d) => d.value as { kind: string; metadata: { name: string } });
    assert.ok(docs.length >= 4);
    assert.match(r.out, /# cluster: eu-west/);
    assert.doesNotMatch(r.err, /error:/);
  });

  it('filters by --cluster and prints JSON with -o json', async () => {
    const r = await flotilla(['render', '-f', quickstart, '--cluster', 'dev', '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    const out = JSON.parse(r.out) as { placements: Array<{ cluster: string }> };
    assert.ok(out.placements.length > 0);
    assert.ok(out.placements.every((p) => p.cluster === 'dev'));
  });

  it('explains which rule set each field', async () => {
    const r = await flotilla(['render', '-f', quickstart, '--cluster', 'dev', '--explain']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /set by OverridePolicy shop\/web-images spec\.overrideRules\[1\]\.overriders\.imageOverrider\[0\]/);
  });

  it('reads documents from stdin', async () => {
    const input = [
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {a: b}',
      'apiVersion: policy.flotilla.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p, namespace: default}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]',
      'apiVersion: cluster.flotilla.io/v1alpha1\nkind: Cluster\nmetadata: {name: only}',
    ].join('\n---\n');
    const r = await flotilla(['render', '-f', '-'], input);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(readYaml(r.out.split('\n').filter((l) => !l.startsWith('#')).join('\n')), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { a: 'b' } });
  });

  const bad: Array<{ name: string; file: string; message: RegExp }> = [
    { name: 'malformed YAML names the file, line and column', file: 'bad/malformed.yaml', message: /error: .*malformed\.yaml:\d+:\d+: invalid YAML/ },
    { name: 'an invalid policy names the file, object and field', file: 'bad/invalid-policy.yaml', message: /error: .*invalid-policy\.yaml: OverridePolicy\/default\/bad-paths: spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]\.path: Invalid value: "spec\/replicas"/ },
    { name: 'an unknown policy kind is reported', file: 'bad/unknown-kind.yaml', message: /unknown-kind\.yaml: PlacementPolicy\/default\/typo: kind: Unsupported value: "PlacementPolicy"/ },
    { name: 'a path missing on one cluster fails that cluster only', file: 'bad/missing-path.yaml', message: /missing-path\.yaml \(document 1\): Deployment\/default\/web on cluster member2: OverridePolicy default\/pause: spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]: replace operation does not apply/ },
    { name: 'a file that does not exist', file: 'bad/nope.yaml', message: /nope\.yaml: no such file or directory/ },
  ];
  for (const c of bad) {
    it(`${c.name}, exits 1 and prints no stack trace`, async () => {
      const r = await flotilla(['render', '-f', fixture(c.file)]);
      assert.equal(r.code, 1);
      assert.match(r.err, c.message);
      assert.doesNotMatch(r.err + r.out, /\n\s+at .+:\d+:\d+/);
    });
  }

  it('still renders the cluster whose copy is fine when another fails', async () => {
    const r = await flotilla(['render', '-f', fixture('bad/missing-path.yaml')]);
    assert.match(r.out, /# cluster: member1/);
    assert.doesNotMatch(r.out, /# cluster: member2/);
  });
});

describe('flotilla validate', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flotilla-cli-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('allows the quickstart', async () => {
    const r = await flotilla(['validate', '-f', quickstart]);
    assert.equal(r.code, 0, r.out);
  });

  it('prints every field error as FILE: KIND/NS/NAME: field.path: message and exits 1', async () => {
    const r = await flotilla(['validate', '-f', fixture('bad/invalid-policy.yaml')]);
    assert.equal(r.code, 1);
    const lines = r.out.trim().split('\n');
    assert.ok(lines.some((l) => /invalid-policy\.yaml: OverridePolicy\/default\/bad-paths: spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]\.path: /.test(l)), r.out);
    assert.ok(lines.some((l) => /labelsOverrider\[0\]\.value.*unknown variable/.test(l)), r.out);
  });

  it('exits 1 for unreadable YAML', async () => {
    const f = join(dir, 'x.yaml');
    await writeFile(f, 'a: [\n');
    const r = await flotilla(['validate', '-f', f]);
    assert.equal(r.code, 1);
    assert.match(r.out, /x\.yaml:\d+:\d+: invalid YAML/);
  });
});
