// `flotilla apply` and `flotilla diff` up to the point where they would talk to a cluster: flags, input
// and kubeconfig problems, messages and exit codes. The cluster side is in test/integration/apply.test.ts.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { captureIO } from '../../test/cli-io.js';
import { kubeConfigSource } from './kubeflags.js';

const kubeconfigSource = (flag: string | undefined, env: NodeJS.ProcessEnv) =>
  kubeConfigSource({ kubeconfig: flag }, env);
import { defaultApplySetName } from './delivery.js';
import { run } from './index.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const QUICKSTART = join(ROOT, 'examples', 'quickstart');
const dir = mkdtempSync(join(tmpdir(), 'apply-cli-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const TOKEN = 'kubeconfig-token-never-printed';

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const kubeconfig = (contexts: string[]) =>
  write(
    `kc-${contexts.join('-')}.yaml`,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: contexts.map((c) => ({ name: c, cluster: { server: 'https://127.0.0.1:1' } })),
      users: contexts.map((c) => ({ name: c, user: { token: TOKEN } })),
      contexts: contexts.map((c) => ({ name: c, context: { cluster: c, user: c } })),
      'current-context': contexts[0],
    }),
  );

async function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const io = captureIO({ env });
  const code = await run(args, io);
  const all = io.out() + io.err();
  assert.ok(!all.includes(TOKEN), 'credentials never appear in output');
  assert.ok(!/^\s+at .+:\d+:\d+\)?$/m.test(all), `no stack trace in:\n${all}`);
  return { code, out: io.out(), err: io.err() };
}

void describe('flotilla apply and diff: usage', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['no -f', ['apply'], /flotilla apply: -f\/--filename is required/],
    ['an unknown flag', ['apply', '-f', 'x', '--frobnicate'], /unknown flag --frobnicate/],
    [
      'a bad --concurrency',
      ['apply', '-f', 'x', '--concurrency', '0'],
      /--concurrency must be an integer from 1 to 1000/,
    ],
    [
      'client-side dry run',
      ['apply', '-f', 'x', '--dry-run=client'],
      /--dry-run must be one of none, server; got "client"/,
    ],
    [
      'a bad --applyset',
      ['apply', '-f', 'x', '--applyset', 'Not_A_Name'],
      /--applyset "Not_A_Name": must be a lowercase DNS subdomain/,
    ],
    ['a bad -o', ['apply', '-f', 'x', '-o', 'yaml'], /--output must be one of text, json; got "yaml"/],
    ['diff without -f', ['diff'], /flotilla diff: -f\/--filename is required/],
  ];
  for (const [name, args, message] of cases) {
    it(`exits 2 on ${name}`, async () => {
      const r = await cli(args);
      assert.equal(r.code, 2);
      assert.match(r.err, message);
    });
  }

  it('has help', async () => {
    for (const c of ['apply', 'diff']) {
      const r = await cli([c, '--help']);
      assert.equal(r.code, 0);
      assert.match(r.out, new RegExp(`flotilla ${c} -f PATH`));
    }
  });
});

void describe('flotilla apply and diff: problems before any cluster is touched', () => {
  it('names a missing kubeconfig file; apply exits 1, diff 2', async () => {
    const missing = join(dir, 'no-such-kubeconfig');
    const a = await cli(['apply', '-f', QUICKSTART, '--kubeconfig', missing]);
    assert.equal(a.code, 1);
    assert.match(a.err, new RegExp(`error: kubeconfig ${missing}: no such file\\n`));
    assert.match(a.err, /nothing was applied/);
    const d = await cli(['diff', '-f', QUICKSTART, '--kubeconfig', missing]);
    assert.equal(d.code, 2);
    assert.match(d.err, /no such file/);
  });

  it('gives the problems as JSON with -o json', async () => {
    const r = await cli(['apply', '-f', QUICKSTART, '--kubeconfig', join(dir, 'absent'), '-o', 'json']);
    assert.equal(r.code, 1);
    const j = JSON.parse(r.out) as { members: unknown[]; errors: string[] };
    assert.deepEqual(j.members, []);
    assert.match(j.errors[0] ?? '', /absent: no such file$/);
  });

  it('reports bad kubeconfig YAML by line, without its content', async () => {
    const bad = write('bad-kubeconfig.yaml', `users:\n- name: u\n  user:\n    token: ${TOKEN}\n   oops: [\n`);
    const r = await cli(['apply', '-f', QUICKSTART, '--kubeconfig', bad]);
    assert.equal(r.code, 1);
    assert.match(r.err, new RegExp(`error: kubeconfig ${bad}: invalid YAML at line \\d+`));
  });

  it('names a --context that is not in the kubeconfig', async () => {
    const r = await cli([
      'apply',
      '-f',
      QUICKSTART,
      '--kubeconfig',
      kubeconfig(['eu-west', 'us-east', 'dev']),
      '--context',
      'ap-south',
    ]);
    assert.equal(r.code, 1);
    assert.match(r.err, /--context ap-south: no such context in kubeconfig .* \(contexts: eu-west, us-east, dev\)/);
  });

  it('names a Cluster object that has no context, with its file and the kubeconfig', async () => {
    const kc = kubeconfig(['eu-west', 'us-east']);
    const r = await cli(['apply', '-f', QUICKSTART, '--kubeconfig', kc]);
    assert.equal(r.code, 1);
    assert.match(
      r.err,
      new RegExp(`clusters\\.yaml \\(document 3\\): Cluster "dev" has no context of that name in kubeconfig ${kc}`),
    );
    assert.match(r.err, /nothing was applied/);
  });

  it('names an unreadable input file and applies nothing', async () => {
    const r = await cli([
      'apply',
      '-f',
      join(dir, 'missing.yaml'),
      '--kubeconfig',
      kubeconfig(['eu-west', 'us-east', 'dev']),
    ]);
    assert.equal(r.code, 1);
    assert.match(r.err, /missing\.yaml: no such file or directory/);
    assert.match(r.err, /nothing was applied/);
  });

  it('refuses an input with a render error, naming file, object and cluster', async () => {
    const bad = write(
      'bad-override.yaml',
      [
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: d}\ndata: {a: b}',
        'apiVersion: policy.flotilla.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p, namespace: d}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]',
        'apiVersion: policy.flotilla.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: o, namespace: d}\nspec:\n  overrideRules:\n  - overriders:\n      plaintext: [{path: /data/missing/deeper, operator: replace, value: x}]',
      ].join('\n---\n'),
    );
    const r = await cli(['apply', '-f', bad, '--kubeconfig', kubeconfig(['one'])]);
    assert.equal(r.code, 1);
    assert.match(
      r.err,
      /bad-override\.yaml \(document 1\): ConfigMap\/d\/c on cluster one: OverridePolicy d\/o: spec\.overrideRules\[0\]/,
    );
  });

  it('finds no kubeconfig without --kubeconfig, KUBECONFIG or HOME', async () => {
    const home = join(dir, 'empty-home');
    mkdirSync(home, { recursive: true });
    const r = await cli(['apply', '-f', QUICKSTART], { HOME: home });
    assert.equal(r.code, 1);
    assert.match(
      r.err,
      /no kubeconfig found \(tried .*empty-home\/\.kube\/config\): pass --kubeconfig FILE or set KUBECONFIG/,
    );
  });
});

void describe('kubeconfigSource', () => {
  it('carries --kubeconfig, $KUBECONFIG and ~/.kube/config for the loader to choose from (it prefers them in that order)', () => {
    assert.deepEqual(kubeconfigSource('/x', { KUBECONFIG: '/a:/b', HOME: '/h' }), {
      file: '/x',
      kubeconfigEnv: '/a:/b',
      homeFile: '/h/.kube/config',
    });
    assert.deepEqual(kubeconfigSource(undefined, { KUBECONFIG: '/a::/b', HOME: '/h' }), {
      kubeconfigEnv: '/a::/b',
      homeFile: '/h/.kube/config',
    });
    assert.deepEqual(kubeconfigSource(undefined, { HOME: '/h' }), { homeFile: '/h/.kube/config' });
  });
});

void describe('defaultApplySetName', () => {
  it('is flotilla- and the base names of the inputs, whatever the directory they are given from', () => {
    assert.equal(defaultApplySetName(['examples/quickstart']), 'flotilla-quickstart');
    assert.equal(defaultApplySetName(['/abs/examples/quickstart/']), 'flotilla-quickstart');
    assert.equal(defaultApplySetName(['b/web.yaml', 'a/DB_Config.json', '-']), 'flotilla-db-config-stdin-web');
  });

  it('stays a valid name for long inputs, and distinct', () => {
    const long = Array.from({ length: 12 }, (_, i) => `very-long-directory-name-${i}`);
    const name = defaultApplySetName(long);
    assert.ok(name.length <= 63);
    assert.match(name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    assert.notEqual(name, defaultApplySetName(long.slice(1)));
  });
});

void describe('loading the Kubernetes client', () => {
  const probe = `data:text/javascript,${encodeURIComponent(
    "import { registerHooks } from 'node:module'; registerHooks({ resolve(s, c, next) { const r = next(s, c); if (r.url.includes('@kubernetes/client-node')) process.stderr.write('LOADED-CLIENT-NODE\\n'); return r; } });",
  )}`;
  const main = join(ROOT, 'dist', 'cmd', 'flotilla', 'main.js');
  const flotilla = (args: string[]) =>
    spawnSync(process.execPath, ['--import', probe, main, ...args], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    });

  it('render and validate never load it', () => {
    for (const args of [['render', '-f', QUICKSTART], ['validate', '-f', QUICKSTART], ['--help']]) {
      const r = flotilla(args);
      assert.equal(r.status, 0, r.stderr);
      assert.ok(!r.stderr.includes('LOADED-CLIENT-NODE'), `${args.join(' ')} loaded @kubernetes/client-node`);
    }
  });

  it('apply reads a kubeconfig itself, and loads it only for a user of another auth provider', () => {
    const missing = flotilla(['apply', '-f', QUICKSTART, '--kubeconfig', join(dir, 'none')]);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /kubeconfig .*none: no such file/);
    assert.doesNotMatch(missing.stderr, /LOADED-CLIENT-NODE/);
    const oidc = join(dir, 'oidc-kubeconfig');
    writeFileSync(
      oidc,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
        'users: [{name: u, user: {auth-provider: {name: oidc, config: {id-token: x, idp-issuer-url: "https://127.0.0.1:1"}}}}]',
        'contexts:',
        ...['eu-west', 'us-east', 'dev'].map((n) => `- {name: ${n}, context: {cluster: c, user: u}}`),
        'current-context: dev',
        '',
      ].join('\n'),
    );
    const r = flotilla(['apply', '-f', QUICKSTART, '--kubeconfig', oidc]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /LOADED-CLIENT-NODE/);
  });
});
