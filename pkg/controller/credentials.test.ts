import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { credentialsFromSecret, fromKubeconfigText } from './credentials.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const CA = b64('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');

const kubeconfig = (
  user: string,
  cluster = `server: https://member.example:6443, certificate-authority-data: ${CA}`,
) => `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {${cluster}}}]
users: [{name: u, user: {${user}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;

function ok(r: ReturnType<typeof fromKubeconfigText>) {
  if ('error' in r) assert.fail(r.error);
  return r;
}

void describe('member credentials from a kubeconfig', () => {
  void it('takes inline credentials: server, CA, token', () => {
    const r = ok(fromKubeconfigText(kubeconfig('token: abc.def')));
    assert.equal(r.server, 'https://member.example:6443');
    const user = r.kubeConfig.getCurrentUser();
    assert.equal(user?.token, 'abc.def');
    assert.equal(r.kubeConfig.getCurrentCluster()?.caData, CA);
    assert.equal(r.kubeConfig.getCurrentCluster()?.skipTLSVerify, false);
  });

  void it('takes client certificates given as data', () => {
    const r = ok(fromKubeconfigText(kubeconfig(`client-certificate-data: ${CA}, client-key-data: ${b64('key')}`)));
    assert.equal(r.kubeConfig.getCurrentUser()?.certData, CA);
    assert.equal(r.kubeConfig.getCurrentUser()?.keyData, b64('key'));
  });

  void it('uses the only context when current-context is not set', () => {
    const text = kubeconfig('token: t').replace('current-context: x\n', '');
    assert.equal(ok(fromKubeconfigText(text)).kubeConfig.getCurrentUser()?.token, 't');
  });

  for (const [field, user] of [
    ['exec', 'exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}'],
    ['auth-provider', 'auth-provider: {name: gcp}'],
    ['client-certificate', 'client-certificate: /etc/flotilla/tls.crt'],
    ['client-key', 'client-key: /var/run/secrets/kubernetes.io/serviceaccount/token'],
    ['tokenFile', 'tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token'],
    ['as', 'token: t, as: system:admin'],
  ] as const) {
    void it(`refuses users[].${field}, naming the field and not its value`, () => {
      const r = fromKubeconfigText(kubeconfig(user));
      assert.ok('error' in r);
      assert.match(r.error, new RegExp(`^users\\["u"\\]\\.${field}: only inline credentials`));
      assert.ok(!r.error.includes('/bin/sh') && !r.error.includes('/var/run') && !r.error.includes('/etc/'), r.error);
    });
  }

  void it('refuses a CA read from a file of the controller', () => {
    const r = fromKubeconfigText(
      kubeconfig('token: t', 'server: https://m:6443, certificate-authority: /etc/ssl/ca.pem'),
    );
    assert.ok('error' in r);
    assert.match(r.error, /^clusters\["c"\]\.certificate-authority: a file path/);
  });

  void it('refuses servers that are not http(s) URLs or carry credentials', () => {
    for (const [server, why] of [
      ['file:///etc/passwd', /must be an https URL/],
      ['https://user:pw@m:6443', /must not carry credentials/],
      ['not a url', /not a URL/],
    ] as const) {
      const r = fromKubeconfigText(kubeconfig('token: t', `server: "${server}"`));
      assert.ok('error' in r, server);
      assert.match(r.error, why);
    }
  });

  void it('names what is missing: context, cluster, user; and never quotes the text', () => {
    const cases: Array<[string, RegExp]> = [
      ['{}', /no current-context/],
      ['contexts: [{name: a}, {name: b}]', /no current-context and has more than one context/],
      [
        'current-context: x\ncontexts: [{name: x, context: {cluster: gone, user: u}}]\nclusters: []',
        /no cluster named "gone"/,
      ],
      [kubeconfig('token: t').replace('users: [{name: u', 'users: [{name: other'), /no user named "u"/],
      ['- a list', /not a mapping/],
      ['token: "secret-value\n  : : bad', /not valid YAML/],
    ];
    for (const [text, why] of cases) {
      const r = fromKubeconfigText(text);
      assert.ok('error' in r, text);
      assert.match(r.error, why);
      assert.ok(!r.error.includes('secret-value'));
    }
  });

  void it('refuses a kubeconfig larger than a Secret can hold, and bounds alias expansion', () => {
    const big = fromKubeconfigText(`# ${'x'.repeat(1024 * 1024)}\n`);
    assert.ok('error' in big && /larger than/.test(big.error));
    const laughs = [
      'a: &a [x,x,x,x,x,x,x,x,x,x]',
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`,
      ),
    ].join('\n');
    const r = fromKubeconfigText(laughs);
    assert.ok('error' in r && /not valid YAML/.test(r.error));
  });
});

void describe('member credentials from a Cluster Secret', () => {
  void it('reads the kubeconfig key first', () => {
    const r = credentialsFromSecret(
      {},
      { data: { kubeconfig: b64(kubeconfig('token: from-kubeconfig')), token: b64('ignored') } },
    );
    assert.equal(ok(r).kubeConfig.getCurrentUser()?.token, 'from-kubeconfig');
  });

  void it("reads Karmada's token and caBundle with the Cluster's apiEndpoint", () => {
    const r = ok(
      credentialsFromSecret({ apiEndpoint: 'member.example:6443' }, { data: { token: b64('tok\n'), caBundle: CA } }),
    );
    assert.equal(r.server, 'https://member.example:6443');
    assert.equal(r.kubeConfig.getCurrentUser()?.token, 'tok');
    assert.equal(r.kubeConfig.getCurrentCluster()?.caData, CA);
    assert.equal(r.kubeConfig.getCurrentCluster()?.skipTLSVerify, false);
    const insecure = ok(
      credentialsFromSecret(
        { apiEndpoint: 'https://10.0.0.1', insecureSkipTLSVerification: true },
        { data: { token: b64('t') } },
      ),
    );
    assert.equal(insecure.kubeConfig.getCurrentCluster()?.skipTLSVerify, true);
    assert.equal(insecure.server, 'https://10.0.0.1');
  });

  void it('says what is missing', () => {
    const none = credentialsFromSecret({}, { data: {} });
    assert.ok('error' in none && /neither a kubeconfig key nor a token key/.test(none.error));
    const noEndpoint = credentialsFromSecret({}, { data: { token: b64('t') } });
    assert.ok('error' in noEndpoint && /no spec\.apiEndpoint/.test(noEndpoint.error));
    const notData = credentialsFromSecret({}, { data: 'x' });
    assert.ok('error' in notData);
  });

  void it('reads only own properties of the Secret data', () => {
    const data = Object.create({ kubeconfig: b64(kubeconfig('token: inherited')) }) as Record<string, unknown>;
    const r = credentialsFromSecret({}, { data });
    assert.ok('error' in r, 'an inherited key is not a key');
  });
});
