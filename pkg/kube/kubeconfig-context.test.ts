import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeconfigError, type KubeconfigErrorCode } from './errors.js';
import { loadContext } from './kubeconfig.js';

interface Entry {
  name: string;
  server?: string;
  ca?: string;
}

/** A kubeconfig with one cluster, user and context per entry (all named alike). */
function kubeconfig(entries: Entry[], current?: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    ...(current ? { 'current-context': current } : {}),
    clusters: entries.map((e) => ({
      name: e.name,
      cluster: {
        server: e.server ?? `https://${e.name}.example:6443`,
        ...(e.ca ? { 'certificate-authority': e.ca } : {}),
      },
    })),
    users: entries.map((e) => ({ name: e.name, user: { token: `token-${e.name}` } })),
    contexts: entries.map((e) => ({ name: e.name, context: { cluster: e.name, user: e.name } })),
  });
}

describe('loadContext', () => {
  let dir = '';
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  let a = '';
  let b = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
    mkdirSync(join(dir, 'sub'));
    a = file('a', kubeconfig([{ name: 'alpha' }, { name: 'shared', server: 'https://from-a:6443' }], 'alpha'));
    b = file(
      'sub/b',
      kubeconfig(
        [
          { name: 'beta', ca: 'ca.crt' },
          { name: 'shared', server: 'https://from-b:6443' },
        ],
        'beta',
      ),
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('merges every $KUBECONFIG file as kubectl does: the first current-context and the first of each name win', () => {
    const kc = loadContext({ kubeconfigEnv: [join(dir, 'missing'), a, b].join(':'), homeFile: join(dir, 'home') });
    assert.deepEqual(
      kc.getContexts().map((c) => c.name),
      ['alpha', 'shared', 'beta'],
    );
    assert.equal(kc.getCurrentContext(), 'alpha');
    assert.equal(kc.getCluster('shared')?.server, 'https://from-a:6443');
  });

  it('resolves relative paths against the file that holds them', () => {
    const kc = loadContext({ kubeconfigEnv: `${a}:${b}`, context: 'beta' });
    assert.equal(kc.getCurrentContext(), 'beta');
    assert.equal(kc.getCurrentCluster()?.caFile, join(dir, 'sub', 'ca.crt'));
  });

  it('reads only the explicit file when one is given', () => {
    const kc = loadContext({ file: b, kubeconfigEnv: a });
    assert.deepEqual(
      kc.getContexts().map((c) => c.name),
      ['beta', 'shared'],
    );
    assert.equal(kc.getCurrentCluster()?.server, 'https://beta.example:6443');
  });

  it('reads ~/.kube/config only when $KUBECONFIG is unset', () => {
    assert.equal(loadContext({ homeFile: a }).getCurrentContext(), 'alpha');
    assert.equal(loadContext({ homeFile: a, kubeconfigEnv: b }).getCurrentContext(), 'beta');
  });

  it('skips empty files in $KUBECONFIG', () => {
    const empty = file('empty', '\n');
    assert.equal(loadContext({ kubeconfigEnv: `${empty}:${b}` }).getCurrentContext(), 'beta');
  });

  it("uses the pod's service account when nothing else applies", () => {
    const sa = join(dir, 'serviceaccount');
    mkdirSync(sa);
    writeFileSync(join(sa, 'token'), 't');
    writeFileSync(join(sa, 'namespace'), 'flotilla-system\n');
    const kc = loadContext({
      homeFile: join(dir, 'nohome'),
      inCluster: { host: 'fd00::1', port: '443', serviceAccountDir: sa },
    });
    assert.equal(kc.getCurrentCluster()?.server, 'https://[fd00::1]:443');
    assert.equal(kc.getCurrentCluster()?.caFile, join(sa, 'ca.crt'));
    assert.equal(kc.getContextObject(kc.getCurrentContext())?.namespace, 'flotilla-system');
  });

  const failures: Array<{
    name: string;
    source: () => Parameters<typeof loadContext>[0];
    code: KubeconfigErrorCode;
    message: RegExp;
  }> = [
    {
      name: 'no source applies',
      source: () => ({
        homeFile: join(dir, 'nohome'),
        inCluster: { host: 'h', port: '443', serviceAccountDir: join(dir, 'nosa') },
      }),
      code: 'NONE',
      message: /^no kubeconfig found \(tried .*nohome; the service account \(.*nosa\/token: no such file\)\)$/,
    },
    {
      name: 'every $KUBECONFIG file is missing',
      source: () => ({ kubeconfigEnv: join(dir, 'x') }),
      code: 'NONE',
      message: /\$KUBECONFIG \(.*x: no such file or empty\)/,
    },
    {
      name: 'the explicit file is missing',
      source: () => ({ file: join(dir, 'nope') }),
      code: 'UNREADABLE',
      message: /^kubeconfig .*nope: no such file$/,
    },
    {
      name: 'a file is not YAML',
      source: () => ({ kubeconfigEnv: file('bad', 'clusters: [') }),
      code: 'UNREADABLE',
      message: /^kubeconfig .*bad: /,
    },
    {
      name: 'the context is unknown',
      source: () => ({ file: a, context: 'gamma' }),
      code: 'NO_CONTEXT',
      message: /^context "gamma" is not in the kubeconfig \(contexts: alpha, shared\)$/,
    },
    {
      name: 'no context is set',
      source: () => ({ file: file('nocurrent', kubeconfig([{ name: 'x' }])) }),
      code: 'NO_CONTEXT',
      message: /no context given and the kubeconfig sets no current-context \(contexts: x\)/,
    },
    {
      name: 'the context names an undefined cluster',
      source: () => ({
        file: file(
          'dangling',
          JSON.stringify({
            'current-context': 'c',
            contexts: [{ name: 'c', context: { cluster: 'gone', user: 'u' } }],
            users: [{ name: 'u', user: {} }],
          }),
        ),
      }),
      code: 'NO_CONTEXT',
      message: /context "c" names cluster "gone", which the kubeconfig does not define/,
    },
  ];
  for (const f of failures) {
    it(`throws ${f.code} when ${f.name}`, () => {
      assert.throws(
        () => loadContext(f.source()),
        (e: unknown) => e instanceof KubeconfigError && e.code === f.code && f.message.test(e.message),
      );
    });
  }
});
