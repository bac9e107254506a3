// The container image, run as Kubernetes would run it but without a container runtime (none can start
// containers on the machines this runs on): the image's filesystem is mounted with buildah, made
// read-only, and its programs are run under chroot as UID 65532. `hack/image/build.sh` builds the image
// (and, where the default base images cannot be pulled, local stand-ins for them) before this runs.

import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { eventually } from '../eventually.js';
import { chartCommand } from '../helm-binary.js';
import { freePort } from '../envtest/process.js';

const run = promisify(execFile);
const repo = resolve(fileURLToPath(import.meta.url), '../../../..');
const buildah = ['--storage-driver', process.env.BUILDAH_STORAGE_DRIVER ?? 'vfs'];
const NONROOT = 65532;
const MiB = 1024 * 1024;
/** chroot lives in sbin, which a non-login shell's PATH may leave out. */
const CHROOT = ['/usr/sbin/chroot', '/sbin/chroot'].find((p) => existsSync(p)) ?? 'chroot';

interface ImageConfig {
  config: { User?: string; Entrypoint?: string[]; Labels?: Record<string, string>; WorkingDir?: string };
}

/** Fails unless `stdout` names package.json's version. */
function assertVersion(stdout: string): void {
  const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string };
  assert.match(stdout, new RegExp(`\\b${pkg.version.replace(/\./g, '\\.')}\\b`));
}

function sh(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * MiB });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout;
}

void describe('the container image', () => {
  let image = '';
  let container = '';
  let rw = ''; // the container's writable root, where test files are put
  let root = ''; // the same root mounted read-only: what the programs run in
  let work = '';
  const mounts: string[] = [];

  /** Runs a program from the image as UID 65532 in the read-only root; resolves with its output. */
  function inImage(args: string[]) {
    return run(CHROOT, [`--userspec=${NONROOT}:${NONROOT}`, root, ...args], {
      encoding: 'utf8',
      maxBuffer: 64 * MiB,
      timeout: 60_000,
    });
  }

  before(
    async () => {
      const built = await run('bash', [join(repo, 'hack/image/build.sh')], {
        encoding: 'utf8',
        cwd: repo,
        maxBuffer: 64 * MiB,
        timeout: 40 * 60_000,
      });
      image = built.stdout.trim().split('\n').pop() ?? '';
      assert.ok(image, 'build.sh printed the image name');
      container = sh('buildah', [...buildah, 'from', '--pull-never', image]).trim();
      rw = sh('buildah', [...buildah, 'mount', container]).trim();
      work = mkdtempSync(join(tmpdir(), 'flotilla-image-'));
      // Test inputs go in through the writable layer, before the root is made read-only.
      cpSync(join(repo, 'examples/quickstart'), join(rw, 'quickstart'), { recursive: true });
      root = join(work, 'root');
      mkdirSync(root);
      sh('mount', ['--bind', rw, root]);
      mounts.unshift(root);
      sh('mount', ['-o', 'remount,bind,ro', root]);
      // What the kubelet provides: /proc, /dev, and a writable /tmp (emptyDir) under a read-only root.
      for (const [fs, target, opts] of [
        ['proc', 'proc', []],
        ['tmpfs', 'tmp', ['-o', 'mode=1777']],
        ['devtmpfs', 'dev', []],
      ] as const) {
        sh('mount', ['-t', fs, ...opts, fs, join(root, target)]);
        mounts.unshift(join(root, target));
      }
    },
    { timeout: 45 * 60_000 },
  );

  after(() => {
    for (const m of mounts) spawnSync('umount', ['-l', m]);
    if (container) spawnSync('buildah', [...buildah, 'rm', container]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  void it('runs as UID 65532 with `flotilla` as its entry point, OCI labels, and under 200 MiB', (t) => {
    const info = JSON.parse(sh('buildah', [...buildah, 'inspect', '--type', 'image', image])) as { OCIv1: ImageConfig };
    const config = info.OCIv1.config;
    assert.equal(config?.User, `${NONROOT}:${NONROOT}`);
    assert.deepEqual(config?.Entrypoint, ['flotilla']);
    const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string; license: string };
    assert.equal(config?.Labels?.['org.opencontainers.image.version'], pkg.version);
    assert.equal(config?.Labels?.['org.opencontainers.image.licenses'], pkg.license);
    assert.ok(config?.Labels?.['org.opencontainers.image.source'] !== undefined);
    const bytes = Number(sh('du', ['-sb', rw]).split('\t')[0]);
    t.diagnostic(`${image}: ${(bytes / MiB).toFixed(1)} MiB unpacked`);
    assert.ok(bytes < 200 * MiB, `the image's filesystem is ${(bytes / MiB).toFixed(0)} MiB`);
  });

  void it('prints the package version', async () => {
    assertVersion((await inImage(['/usr/local/bin/flotilla', 'version'])).stdout);
  });

  for (const kind of ['agent', 'controller'] as const)
    void it(`runs the chart's ${kind} command: the image's node with ${kind}.nodeFlags, then the program`, async () => {
      const command = chartCommand(kind);
      assert.ok(command.length > 2, `the ${kind}'s command: ${JSON.stringify(command)}`);
      assertVersion((await inImage([...command, 'version'])).stdout);
    });

  void it('renders the quickstart exactly as the checkout does', async () => {
    const inside = await inImage(['/usr/local/bin/flotilla', 'render', '-f', '/quickstart']);
    const outside = await run(
      process.execPath,
      [join(repo, 'dist/cmd/flotilla/main.js'), 'render', '-f', join(repo, 'examples/quickstart')],
      { encoding: 'utf8', maxBuffer: 64 * MiB },
    );
    assert.ok(inside.stdout.length > 0);
    assert.equal(inside.stdout, outside.stdout);
  });

  void it("carries the ui page's scripts (compiled for the browser by the page's own tsconfig)", () => {
    for (const dir of ['dist/pkg/ui/page', 'dist/pkg/ui/shared']) {
      const scripts = readdirSync(join(repo, dir)).filter((f) => f.endsWith('.js') && !f.endsWith('.test.js'));
      assert.ok(scripts.includes(dir.endsWith('page') ? 'app.js' : 'model.js'));
      for (const f of scripts) assert.ok(existsSync(join(rw, 'app', dir, f)), `${dir}/${f} is in the image`);
    }
  });

  void it('serves the webhook’s /healthz over TLS from a read-only root', async (t) => {
    const tls = join(root, 'tmp/tls');
    // /tmp in the read-only root is the writable tmpfs mounted above, as an emptyDir would be.
    await run(process.execPath, [
      join(repo, 'dist/cmd/flotilla/main.js'),
      'certs',
      'create',
      '--service',
      'flotilla-webhook',
      '--namespace',
      'flotilla-system',
      '--hosts',
      '127.0.0.1',
      '--cert-dir',
      tls,
    ]);
    for (const f of ['ca.crt', 'tls.crt', 'tls.key']) chownSync(join(tls, f), NONROOT, NONROOT);
    chmodSync(tls, 0o755);
    const port = await freePort();
    const server = spawn(
      CHROOT,
      [
        `--userspec=${NONROOT}:${NONROOT}`,
        root,
        '/usr/local/bin/flotilla',
        'webhook',
        '--tls-cert-file',
        '/tmp/tls/tls.crt',
        '--tls-private-key-file',
        '/tmp/tls/tls.key',
        '--port',
        String(port),
        '--health-port',
        '0',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let log = '';
    server.stdout.setEncoding('utf8').on('data', (c: string) => (log += c));
    server.stderr.setEncoding('utf8').on('data', (c: string) => (log += c));
    const exited = new Promise<void>((done) => {
      server.once('exit', () => done());
      server.once('error', (e) => {
        log += `cannot start ${CHROOT}: ${e.message}\n`;
        done();
      });
    });
    t.after(async () => {
      server.kill('SIGTERM');
      await exited;
    });
    const ca = readFileSync(join(tls, 'ca.crt'));
    const healthz = () =>
      new Promise<number>((done) => {
        const req = request({ host: '127.0.0.1', port, path: '/healthz', ca, timeout: 2000 }, (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        });
        req.on('error', () => done(0));
        req.on('timeout', () => req.destroy());
        req.end();
      });
    const status = await eventually(healthz, (s) => s === 200, 30_000, 200);
    assert.equal(status, 200, `webhook log: ${log}`);
  });
});
