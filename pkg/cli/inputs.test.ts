// Reading `-f` inputs in `render` and `validate`: YAML as kubectl reads it, directories flat or with -R,
// duplicates, bad input named precisely, and SIGINT/SIGTERM while waiting for input.

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { captureIO } from '../../test/cli-io.js';
import { eventually } from '../../test/eventually.js';
import { readYamlStream } from '../yaml/index.js';
import { run } from './index.js';
import { Interrupted } from './interrupt.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(ROOT, 'dist/cmd/flotilla/main.js');

async function flotilla(args: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  const io = captureIO({ stdin });
  const code = await run(args, io);
  return { code, out: io.out(), err: io.err() };
}

/** The rendered objects, without the comment headers. */
function rendered(out: string): unknown[] {
  const r = readYamlStream(out);
  assert.deepEqual(r.errors, []);
  return r.documents.map((d) => d.value);
}

const POLICY =
  'apiVersion: policy.flotilla.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p, namespace: default}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]\n';
const CLUSTER = 'apiVersion: cluster.flotilla.io/v1alpha1\nkind: Cluster\nmetadata: {name: only}\n';
const configMap = (name: string, data: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: default}\ndata:\n${data}`;

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flotilla-inputs-'));
  await writeFile(join(dir, 'policy.yaml'), `${POLICY}---\n${CLUSTER}`);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: string | Buffer): Promise<string> {
  const p = join(dir, name);
  await mkdir(join(p, '..'), { recursive: true });
  await writeFile(p, content);
  return p;
}

void describe('YAML as kubectl reads and writes it', () => {
  it('reads YAML 1.1 scalars (0644 is 420, yes is true) and writes strings kubectl would misread in quotes', async () => {
    const template = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: web, namespace: default, labels: {tier: "yes", flag: "on", short: "y", count: "1_000", bits: "0b101"}}',
      'spec:',
      '  paused: no',
      '  template:',
      '    spec:',
      '      volumes: [{name: c, configMap: {name: c, defaultMode: 0644}}]',
      '',
    ].join('\n');
    const policy = POLICY.replace('{apiVersion: v1, kind: ConfigMap}', '{apiVersion: apps/v1, kind: Deployment}');
    const r = await flotilla(['render', '-f', '-'], `${template}---\n${policy}---\n${CLUSTER}`);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /tier: "yes"\n {4}flag: "on"\n {4}short: "y"\n {4}count: "1_000"\n {4}bits: "0b101"\n/);
    const [object] = rendered(r.out) as Array<{
      metadata: { labels: object };
      spec: { paused: boolean; template: { spec: { volumes: Array<{ configMap: { defaultMode: number } }> } } };
    }>;
    assert.deepEqual(object?.metadata.labels, { tier: 'yes', flag: 'on', short: 'y', count: '1_000', bits: '0b101' });
    assert.equal(object?.spec.paused, false);
    assert.equal(object?.spec.template.spec.volumes[0]?.configMap.defaultMode, 420);
  });

  it('reads tags as kubectl does: !!binary decoded, !!timestamp as text, !!set and !!omap as plain collections, << merged', async () => {
    const data = [
      '  binary: !!binary aGVsbG8=',
      '  when: !!timestamp 2024-01-01T10:00:00Z',
      'extra:',
      '  set: !!set {a, b}',
      '  omap: !!omap [{a: 1}, {b: 2}]',
      '  base: &base {one: 1, two: 1}',
      '  merged: {<<: *base, two: 2}',
      '',
    ].join('\n');
    const r = await flotilla(['render', '-f', '-'], `${configMap('c', data)}---\n${POLICY}---\n${CLUSTER}`);
    assert.equal(r.code, 0, r.err);
    const [cm] = rendered(r.out) as Array<{ data: object; extra: object }>;
    assert.deepEqual(cm?.data, { binary: 'hello', when: '2024-01-01T10:00:00Z' });
    assert.deepEqual(cm?.extra, {
      set: { a: null, b: null },
      omap: [{ a: 1 }, { b: 2 }],
      base: { one: 1, two: 1 },
      merged: { one: 1, two: 2 },
    });
  });

  it('refuses invalid UTF-8 with file, line and column instead of turning it into U+FFFD', async () => {
    const bad = await file(
      'latin1.yaml',
      Buffer.concat([Buffer.from(configMap('c', '  city: M')), Buffer.from([0xfc]), Buffer.from('nchen\n')]),
    );
    const r = await flotilla(['render', '-f', bad, '-f', join(dir, 'policy.yaml')]);
    assert.equal(r.code, 1);
    assert.match(r.err, /error: .*latin1\.yaml:5:10: invalid UTF-8 \(byte 0xfc/);
    assert.doesNotMatch(r.out, /\uFFFD/);
  });

  it('names the file, line and column of a duplicate key', async () => {
    const dup = await file('dup.yaml', configMap('c', '  a: 1\n  a: 2\n'));
    const r = await flotilla(['validate', '-f', dup]);
    assert.equal(r.code, 1);
    assert.match(r.out, /dup\.yaml:6:3: duplicate key "a" \(first at line 5, column 3\)/);
  });
});

void describe('aliases', () => {
  it('renders a file that uses one scalar alias 150 times, as kubectl does', async () => {
    const items = Array.from({ length: 150 }, (_, i) => `  k${i}: *v`).join('\n');
    const many = await file('aliases.yaml', `${configMap('c', `  first: &v shared\n${items}\n`)}`);
    const r = await flotilla(['render', '-f', many, '-f', join(dir, 'policy.yaml')]);
    assert.equal(r.code, 0, r.err);
    const [cm] = rendered(r.out) as Array<{ data: Record<string, string> }>;
    assert.equal(Object.values(cm?.data ?? {}).filter((v) => v === 'shared').length, 151);
  });

  it('refuses a billion-laughs file by name and still renders the other files', async () => {
    let laughs =
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol, namespace: default}\nlol:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n';
    let previous = 'a';
    for (const name of 'bcdefghi') {
      laughs += `  ${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]\n`;
      previous = name;
    }
    const bomb = await file('laughs.yaml', laughs);
    const good = await file('good.yaml', configMap('good', '  a: b\n'));
    const r = await flotilla(['render', '-f', bomb, '-f', good, '-f', join(dir, 'policy.yaml')]);
    assert.equal(r.code, 1);
    assert.match(r.err, /error: .*laughs\.yaml:\d+:\d+: aliases expand this document by more than 8 MiB/);
    assert.deepEqual(
      (rendered(r.out) as Array<{ metadata: { name: string } }>).map((o) => o.metadata.name),
      ['good'],
    );
  });
});

void describe('documents that are not objects', () => {
  it('are named by their own document number in their own file', async () => {
    const scalars = await file('scalar.yaml', '--- 1\n--- just text\n--- [a, b]\n');
    const before = await file('before.yaml', configMap('x', '  a: b\n---\n') + configMap('y', '  a: b\n'));
    const r = await flotilla(['render', '-f', before, '-f', scalars, '-f', join(dir, 'policy.yaml')]);
    assert.equal(r.code, 1);
    const lines = r.err.split('\n').filter((l) => l.includes('scalar.yaml'));
    assert.deepEqual(
      lines.map((l) => l.replace(/^error: .*scalar\.yaml/, 'scalar.yaml')),
      [
        'scalar.yaml (document 1): a number, not a Kubernetes object (apiVersion, kind, metadata)',
        'scalar.yaml (document 2): a string, not a Kubernetes object (apiVersion, kind, metadata)',
        'scalar.yaml (document 3): a list, not a Kubernetes object (apiVersion, kind, metadata)',
      ],
    );
  });

  it('a missing name is reported against the document that lacks it, the same way by render and validate', async () => {
    const p = await file(
      'noname.yaml',
      `${configMap('ok', '  a: b\n')}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: default}\n`,
    );
    const render = await flotilla(['render', '-f', p, '-f', join(dir, 'policy.yaml')]);
    const validate = await flotilla(['validate', '-f', p]);
    const line = /noname\.yaml \(document 2\): ConfigMap\/default\/<no name>: metadata\.name: Required value/;
    assert.match(render.err, line);
    assert.match(validate.out, line);
    assert.equal(render.code, 1);
    assert.equal(validate.code, 1);
  });
});

void describe('naming objects', () => {
  it('render and validate name a denied policy the same way: FILE: Kind/namespace/name: field: message', async () => {
    const bad = join(ROOT, 'test/fixtures/bad/invalid-policy.yaml');
    const render = await flotilla(['render', '-f', bad]);
    const validate = await flotilla(['validate', '-f', bad]);
    const expected = `${bad}: OverridePolicy/default/bad-paths: spec.overrideRules[0].overriders.plaintext[0].path: Invalid value: "spec/replicas"`;
    assert.ok(render.err.includes(`error: ${expected}`), render.err);
    assert.ok(validate.out.includes(expected), validate.out);
  });

  it('writes names with line breaks into comment headers quoted, so they cannot add YAML to the output', async () => {
    const evil =
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "x\\ninjected: true", namespace: default}\ndata: {a: b}\n';
    const r = await flotilla(['render', '-f', '-'], `${evil}---\n${POLICY}---\n${CLUSTER}`);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^# template: "ConfigMap\/default\/x\\ninjected: true"$/m);
    assert.deepEqual(rendered(r.out), [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'x\ninjected: true', namespace: 'default' },
        data: { a: 'b' },
      },
    ]);
  });
});

void describe('-f DIR and -R', () => {
  let tree = '';
  before(async () => {
    tree = join(dir, 'tree');
    await file('tree/top.yaml', `${configMap('top', '  a: b\n')}---\n${POLICY}---\n${CLUSTER}`);
    await file('tree/nested/deep.yml', configMap('deep', '  a: b\n'));
    await file('tree/notes.txt', 'not a manifest');
    await symlink('..', join(dir, 'tree/nested/back'));
  });
  const names = (out: string): string[] =>
    (rendered(out) as Array<{ metadata: { name: string } }>).map((o) => o.metadata.name);

  it('-f DIR reads only the directory itself and says which subdirectories it left out', async () => {
    const r = await flotilla(['render', '-f', tree]);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(names(r.out), ['top']);
    assert.match(r.err, /note: .*tree: subdirectory nested not read; -R reads it/);
  });

  it('-R descends, in render and validate, and reads a directory reached again through a symlink once', async () => {
    const r = await flotilla(['render', '-f', tree, '-R']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(names(r.out), ['deep', 'top']);
    const v = await flotilla(['validate', '--recursive', '-f', tree]);
    assert.equal(v.code, 0, v.out);
    assert.doesNotMatch(v.err, /note:/);
  });
});

void describe('the same object twice', () => {
  it('is a warning; the later copy is rendered, as kubectl apply would leave it, and the exit code is 0', async () => {
    const first = await file('dup-first.yaml', configMap('same', '  version: "1"\n'));
    const second = await file('dup-second.yaml', configMap('same', '  version: "2"\n'));
    const r = await flotilla(['render', '-f', first, '-f', second, '-f', join(dir, 'policy.yaml')]);
    assert.equal(r.code, 0, r.err);
    assert.match(
      r.err,
      /warning: .*dup-first\.yaml: ConfigMap\/default\/same: also in .*dup-second\.yaml; the later copy is used/,
    );
    assert.doesNotMatch(r.err, /error:/);
    assert.deepEqual(
      (rendered(r.out) as Array<{ data: object }>).map((o) => o.data),
      [{ version: '2' }],
    );
  });

  it('counts as the same object across API versions of a group and with the default namespace left out', async () => {
    const a =
      'apiVersion: policy.flotilla.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]\n';
    const r = await flotilla(['validate', '-f', '-'], `${a}---\n${POLICY}`);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /warning: <stdin> \(document 1\): PropagationPolicy\/p: also in <stdin> \(document 2\)/);
  });
});

void describe('nothing to read', () => {
  it('render -f - with empty stdin says there was nothing to render and exits 1', async () => {
    const r = await flotilla(['render', '-f', '-'], '');
    assert.equal(r.code, 1);
    assert.match(r.err, /error: nothing to render: no objects in stdin \(-f -\)/);
  });
  it('so does a file with only comments and empty documents', async () => {
    const empty = await file('empty.yaml', '# nothing here\n---\n---\n');
    const r = await flotilla(['render', '-f', empty]);
    assert.equal(r.code, 1);
    assert.match(r.err, /nothing to render/);
  });
});

void describe('inputs that are not regular files', () => {
  let fifo = '';
  before(() => {
    fifo = join(dir, 'pipe.yaml');
    const made = spawnSync('mkfifo', [fifo]);
    assert.equal(made.status, 0, 'mkfifo');
  });
  after(() => {
    // Should a reader be blocked on the FIFO, opening its write end lets it go.
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // nobody is reading it
    }
  });

  it('a FIFO given with -f is refused at once, and the other inputs are read', { timeout: 30_000 }, async () => {
    const r = await flotilla(
      ['render', '-f', fifo, '-f', join(dir, 'policy.yaml'), '-f', '-'],
      configMap('c', '  a: b\n'),
    );
    assert.equal(r.code, 1);
    assert.match(r.err, /error: .*pipe\.yaml: not a regular file \(a FIFO\); to read a pipe or a device, use -f - /);
    assert.equal(rendered(r.out).length, 1);
  });

  it('so is a device', { skip: process.platform !== 'linux' }, async () => {
    const r = await flotilla(['validate', '-f', '/dev/null']);
    assert.equal(r.code, 1);
    assert.match(r.out, /^\/dev\/null: not a regular file \(a device\)/m);
  });
});

void describe('SIGINT and SIGTERM while reading input', () => {
  it('a command reading stdin returns 130 when its signal aborts with SIGINT', { timeout: 30_000 }, async () => {
    const io = captureIO();
    const stdin = new PassThrough();
    stdin.write('apiVersion: v1\n'); // a writer that never finishes
    const controller = new AbortController();
    const done = run(['render', '-f', '-'], { ...io, stdin, signal: controller.signal });
    controller.abort(new Interrupted('SIGINT'));
    assert.equal(await done, 130);
    assert.match(io.err(), /interrupted by SIGINT/);
    assert.equal(io.out(), '');
  });

  /** Waits for a child to exit, or gives up at the deadline (returning null) and kills it. */
  async function exitOf(child: ChildProcess, deadlineMs: number): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const code = await Promise.race([
      exited,
      new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), deadlineMs).unref()),
    ]);
    if (code === 'late') {
      child.kill('SIGKILL');
      return null;
    }
    return code;
  }

  /**
   * Whether the process is waiting on its stdin: libuv has put fd 0 into its epoll set (Linux shows the
   * set in /proc/PID/fdinfo). main.ts installs its signal handlers before any command reads, so from then
   * on a signal reaches the command, not Node's default action.
   */
  function readingStdin(pid: number): boolean {
    try {
      return readdirSync(`/proc/${pid}/fdinfo`).some((fd) => {
        try {
          return /^tfd:\s+0\s/m.test(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'));
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  }

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(
      `flotilla render -f - exits ${code} on ${signal} while its stdin pipe stays open`,
      { skip: process.platform !== 'linux', timeout: 60_000 },
      async () => {
        const child = spawn(process.execPath, [CLI, 'render', '-f', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
        try {
          const pid = child.pid ?? 0;
          assert.ok(await eventually(() => readingStdin(pid), Boolean, 20_000), 'never started reading stdin');
          child.kill(signal);
          assert.equal(await exitOf(child, 20_000), code, stderr);
          assert.match(stderr, new RegExp(`interrupted by ${signal}`));
        } finally {
          child.kill('SIGKILL');
        }
      },
    );
  }
});
