// Start-up cost is mostly module loading: @kubernetes/client-node alone takes most of a second. These
// tests run the real entry point and check which modules each command loads, so a static import that
// drags the Kubernetes client (or the webhook server, or node-forge) into `--version` or `render` fails
// here rather than only in the benchmark (test/bench/cli.bench.ts).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const main = fileURLToPath(new URL('../../cmd/flotilla/main.js', import.meta.url));
const trace = new URL('../../test/module-trace.js', import.meta.url).href;

/** The modules `flotilla …args` loads, as URLs. */
function modulesLoadedBy(args: string[]): { code: number | null; modules: string[]; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', trace, main, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: tmp },
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  const modules = (r.output[3] ?? '').split('\n').filter((l) => l !== '');
  return { code: r.status, modules, stderr: r.stderr };
}

const tmp = mkdtempSync(join(tmpdir(), 'flotilla-startup-'));
// A kubeconfig whose server listens nowhere: the commands read it and fail to reach it.
const kubeconfig = join(tmp, 'kubeconfig');
writeFileSync(
  kubeconfig,
  JSON.stringify({
    'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  }),
);

const HEAVY = {
  'the Kubernetes client': '/node_modules/@kubernetes/client-node/',
  'node-forge': '/node_modules/node-forge/',
  'the webhook server': '/dist/pkg/webhook/',
  // An ES import of node:http reads its WebSocket, CloseEvent and MessageEvent getters, which load it
  // (about 9 MiB of RSS); pkg/runtime/node-http.ts gives node:http without them.
  "Node's bundled fetch": 'node-internal:internal/deps/undici/',
  // Needed only to run a kubeconfig's exec plugin (pkg/kube/auth.ts loads it then): about 0.5 MiB of RSS.
  "Node's child_process": 'node-internal:child_process',
  // The controller's shape (its template reconciler, with the Karmada objects and sharding it brings): an
  // agent runs none of it (pkg/controller/shape-parts.ts); about 1.5 MiB of an agent's RSS.
  "the controller's template reconciler": '/dist/pkg/controller/template.js',
} as const;
type Heavy = keyof typeof HEAVY;

const cases: Array<{ args: string[]; code: number; loads: Heavy[] }> = [
  { args: ['--version'], code: 0, loads: [] },
  { args: ['version'], code: 0, loads: [] },
  { args: ['--help'], code: 0, loads: [] },
  { args: ['render', '-f', 'examples/quickstart'], code: 0, loads: [] },
  { args: ['render', '-f', 'examples/quickstart', '-o', 'json'], code: 0, loads: [] },
  { args: ['validate', '-f', 'examples/quickstart'], code: 0, loads: [] },
  { args: ['completion', 'bash'], code: 0, loads: [] },
  { args: ['certs', 'create', '--help'], code: 0, loads: [] },
  { args: ['webhook', '--help'], code: 0, loads: [] },
  // Writing certificate files needs node-forge and no cluster.
  {
    args: ['certs', 'create', '--service', 's', '--namespace', 'n', '--cert-dir', join(tmp, 'certs')],
    code: 0,
    loads: ['node-forge'],
  },
  // Talking to a cluster loads the client (the kubeconfig does not exist, so it fails after loading it).
  {
    args: ['certs', 'patch', '--secret', 's', '--namespace', 'n', '--kubeconfig', join(tmp, 'missing')],
    code: 1,
    loads: ['the Kubernetes client', 'node-forge', "Node's bundled fetch", "Node's child_process"],
  },
  {
    args: [
      'webhook',
      '--tls-cert-file',
      join(tmp, 'missing.crt'),
      '--tls-private-key-file',
      join(tmp, 'missing.key'),
      '--port',
      '0',
    ],
    code: 1,
    loads: ['the webhook server'],
  },
  // The long-running processes read kubeconfigs with the project's own loader, not client-node's.
  {
    args: [
      'webhook',
      '--kubeconfig',
      kubeconfig,
      '--tls-cert-file',
      join(tmp, 'missing.crt'),
      '--tls-private-key-file',
      join(tmp, 'missing.key'),
    ],
    code: 1,
    loads: ['the webhook server'],
  },
  {
    args: ['controller', '--kubeconfig', join(tmp, 'missing')],
    code: 1,
    loads: ["the controller's template reconciler"],
  },
  {
    args: ['controller', '--kubeconfig', kubeconfig, '--context', 'unknown'],
    code: 1,
    loads: ["the controller's template reconciler"],
  },
  {
    args: ['agent', '--cluster-name', 'm', '--hub-kubeconfig', kubeconfig, '--kubeconfig', join(tmp, 'missing')],
    code: 1,
    loads: [],
  },
];

describe('modules each command loads', () => {
  after(() => rmSync(tmp, { recursive: true, force: true }));

  for (const c of cases) {
    const loads = c.loads.length > 0 ? `loads only ${c.loads.join(' and ')} of` : 'loads none of';
    it(`'flotilla ${c.args.join(' ').replaceAll(tmp, '$TMP')}' ${loads} ${Object.keys(HEAVY).join(', ')}`, () => {
      const r = modulesLoadedBy(c.args);
      assert.equal(r.code, c.code, r.stderr);
      assert.ok(
        r.modules.some((m) => m.endsWith('/dist/pkg/cli/index.js')),
        'the trace saw the CLI load',
      );
      for (const [what, marker] of Object.entries(HEAVY) as Array<[Heavy, string]>) {
        const hit = r.modules.find((m) => m.includes(marker));
        if (c.loads.includes(what)) assert.ok(hit, `loads ${what}`);
        else assert.equal(hit, undefined, `does not load ${what}`);
      }
    });
  }
});
