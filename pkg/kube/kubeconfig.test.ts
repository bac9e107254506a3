import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { stringify } from 'yaml';

import { KubeconfigError } from './errors.js';
import { configForContext, contextNames, loadKubeconfig, readKubeconfigFile } from './kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = 'super-secret-token-value';

function kubeconfig(
  contexts: Array<{ name: string; server?: string; user?: string; cluster?: string }>,
  current?: string,
): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': current ?? contexts[0]?.name ?? '',
    clusters: contexts.map((c) => ({
      name: c.cluster ?? c.name,
      cluster: { server: c.server ?? `https://${c.name}.example.com:6443` },
    })),
    users: contexts.map((c) => ({ name: c.user ?? `${c.name}-user`, user: { token: `${TOKEN}-${c.name}` } })),
    contexts: contexts.map((c) => ({
      name: c.name,
      context: { cluster: c.cluster ?? c.name, user: c.user ?? `${c.name}-user` },
    })),
  });
}

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

function rejects(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof KubeconfigError, `a KubeconfigError, got ${String(e)}`);
    assert.match(e.message, pattern);
    assert.ok(!e.message.includes(TOKEN), `no credentials in ${JSON.stringify(e.message)}`);
    return true;
  });
}

void describe('readKubeconfigFile', () => {
  it('names a missing file', () => {
    rejects(() => readKubeconfigFile(join(dir, 'absent')), /^kubeconfig .*absent: no such file$/);
  });

  it('reports bad YAML by line without quoting the file (which may hold a token)', () => {
    const p = file('bad.yaml', `users:\n  token: ${TOKEN}\n  - x\n`);
    rejects(
      () => readKubeconfigFile(p),
      /^kubeconfig .*bad\.yaml: invalid YAML at line 3: A block sequence may not be used as an implicit map key$/,
    );
  });

  it('names the missing field of an incomplete entry', () => {
    const p = file('incomplete.yaml', 'clusters:\n- name: x\n');
    rejects(() => readKubeconfigFile(p), /clusters\[0\]\.cluster is missing/);
  });

  it('reads contexts in file order', () => {
    const p = file('two.yaml', kubeconfig([{ name: 'eu-west' }, { name: 'us-east' }]));
    assert.deepEqual(contextNames(readKubeconfigFile(p)), ['eu-west', 'us-east']);
  });
});

void describe('loadKubeconfig', () => {
  const a = file(
    'a.yaml',
    kubeconfig([
      { name: 'one', server: 'https://a.example.com' },
      { name: 'shared', server: 'https://from-a.example.com' },
    ]),
  );
  const b = file(
    'b.yaml',
    kubeconfig([{ name: 'shared', server: 'https://from-b.example.com' }, { name: 'two' }], 'two'),
  );

  it('uses --kubeconfig alone', () => {
    const l = loadKubeconfig({ file: b, kubeconfigEnv: a, homeFile: a });
    assert.deepEqual(contextNames(l.config), ['shared', 'two']);
    assert.equal(l.description, `kubeconfig ${b}`);
  });

  it('merges $KUBECONFIG files with the first one winning, as kubectl does', () => {
    const l = loadKubeconfig({ kubeconfigEnv: `${a}::${b}` });
    assert.deepEqual(contextNames(l.config), ['one', 'shared', 'two']);
    assert.equal(l.config.getCluster('shared')?.server, 'https://from-a.example.com');
    assert.equal(l.config.currentContext, 'one');
  });

  it('falls back to the home file, and says what to do when there is none', () => {
    assert.deepEqual(contextNames(loadKubeconfig({ homeFile: a }).config), ['one', 'shared']);
    rejects(() => loadKubeconfig({}), /^no kubeconfig found$/);
  });
});

void describe('configForContext', () => {
  const p = file(
    'three.yaml',
    kubeconfig([{ name: 'eu-west' }, { name: 'us-east' }, { name: 'broken', cluster: 'nowhere' }]),
  );
  const kc = readKubeconfigFile(p);
  // The 'broken' context names a cluster that is not in the file.
  kc.clusters = kc.clusters.filter((c) => c.name !== 'nowhere');

  it('keeps only that context, its cluster and its user, current', () => {
    const one = configForContext(kc, 'us-east', 'kubeconfig x');
    assert.deepEqual(contextNames(one), ['us-east']);
    assert.equal(one.getCurrentContext(), 'us-east');
    assert.equal(one.getCurrentCluster()?.server, 'https://us-east.example.com:6443');
    assert.deepEqual(
      one.getUsers().map((u) => u.name),
      ['us-east-user'],
    );
  });

  it('names an unknown context and the ones there are', () => {
    rejects(
      () => configForContext(kc, 'ap-south', 'kubeconfig x'),
      /^kubeconfig x: no context "ap-south" \(contexts: eu-west, us-east, broken\)$/,
    );
  });

  it('names a context whose cluster is missing', () => {
    rejects(
      () => configForContext(kc, 'broken', 'kubeconfig x'),
      /context "broken" names cluster "nowhere", which is not in the kubeconfig/,
    );
  });
});
