import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { EC_SERVING_PAIR, ecKeyPem } from '../../test/certs.js';
import {
  CertError,
  checkCABundle,
  checkKeyPair,
  createCA,
  createClientCert,
  createServingCert,
  servingMaterialProblems,
  type KeyPair,
  type ServingMaterial,
} from './index.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const NOW = new Date('2030-06-01T00:00:00Z');

const ca = createCA('pair-ca', { now: NOW });
const otherCA = createCA('other-ca', { now: NOW });
const serving = createServingCert(ca, {
  commonName: 'hook.sys.svc',
  dnsNames: ['hook', 'hook.sys.svc', '*.example.com'],
  ipAddresses: ['10.0.0.7'],
  now: NOW,
});
const sibling = createServingCert(ca, { commonName: 'other', dnsNames: ['hook'], now: NOW });

function fails(call: () => unknown, code: string, message: RegExp): void {
  assert.throws(call, (e: unknown) => {
    assert.ok(e instanceof CertError, `expected a CertError, got ${String(e)}`);
    assert.equal(e.code, code);
    assert.match(e.message, message);
    return true;
  });
}

void describe('checkKeyPair', () => {
  void it('accepts an RSA certificate with its key, and an EC certificate with its key', () => {
    assert.equal(checkKeyPair(serving.certPem, serving.keyPem).certificate.subject, 'CN=hook.sys.svc');
    assert.equal(
      checkKeyPair(Buffer.from(EC_SERVING_PAIR.certPem), Buffer.from(EC_SERVING_PAIR.keyPem)).key.asymmetricKeyType,
      'ec',
    );
  });

  void it('checks the first certificate of a chain', () => {
    checkKeyPair(serving.certPem + ca.certPem, serving.keyPem);
    fails(() => checkKeyPair(ca.certPem + serving.certPem, serving.keyPem), 'INVALID_PAIR', /does not belong/);
  });

  const cases: Array<{ name: string; cert: string; key: string; message: RegExp }> = [
    {
      name: 'an RSA certificate with an EC key',
      cert: serving.certPem,
      key: ecKeyPem(),
      message: /^tls\.key is a key of type EC but tls\.crt holds a public key of type RSA$/,
    },
    {
      name: 'an EC certificate with an RSA key',
      cert: EC_SERVING_PAIR.certPem,
      key: serving.keyPem,
      message: /^tls\.key is a key of type RSA but tls\.crt holds a public key of type EC$/,
    },
    {
      name: 'an RSA certificate with another RSA key',
      cert: serving.certPem,
      key: sibling.keyPem,
      message: /^tls\.key does not belong to tls\.crt \(another RSA key\)$/,
    },
    {
      name: 'an EC certificate with another EC key',
      cert: EC_SERVING_PAIR.certPem,
      key: ecKeyPem(),
      message: /^tls\.key does not belong to tls\.crt \(another EC key\)$/,
    },
    {
      name: 'a certificate that is not PEM',
      cert: 'garbage',
      key: serving.keyPem,
      message: /^tls\.crt is not a PEM certificate \(PEM routines: no start line\)$/,
    },
    {
      name: 'a key that is not PEM',
      cert: serving.certPem,
      key: 'garbage',
      message: /^tls\.key is not a PEM private key that can be read/,
    },
    {
      name: 'the two files swapped',
      cert: serving.keyPem,
      key: serving.certPem,
      message: /^tls\.crt is not a PEM certificate/,
    },
  ];
  for (const c of cases) {
    void it(`refuses ${c.name}, naming both`, () =>
      fails(() => checkKeyPair(c.cert, c.key, { cert: 'tls.crt', key: 'tls.key' }), 'INVALID_PAIR', c.message));
  }
});

void describe('checkCABundle', () => {
  void it('returns every CA certificate of a bundle', () => {
    assert.deepStrictEqual(
      checkCABundle(`${ca.certPem}\n${otherCA.certPem}`).map((c) => c.subject),
      ['CN=pair-ca', 'CN=other-ca'],
    );
  });

  void it('accepts a bundle with one CA valid now and one expired', () => {
    const old = createCA('old', { now: new Date(NOW.getTime() - 10 * DAY_MS), validDays: 1 });
    assert.equal(checkCABundle(old.certPem + ca.certPem, { now: NOW }).length, 2);
  });

  const cases: Array<{ name: string; pem: string; now?: Date; message: RegExp }> = [
    { name: 'text without a certificate', pem: 'garbage', message: /^ca\.crt holds no PEM certificate$/ },
    { name: 'an empty bundle', pem: '', message: /holds no PEM certificate/ },
    {
      name: 'a serving certificate',
      pem: serving.certPem,
      message: /^ca\.crt \(CN=hook\.sys\.svc\) is not a CA certificate$/,
    },
    {
      name: 'a CA followed by a leaf',
      pem: ca.certPem + serving.certPem,
      message: /^certificate 2 of ca\.crt \(CN=hook\.sys\.svc\) is not a CA certificate$/,
    },
    {
      name: 'a private key next to the CA',
      pem: ca.certPem + ca.keyPem,
      message: /^ca\.crt holds a PEM block that is not a certificate \(PRIVATE KEY\)$/,
    },
    {
      name: 'a certificate block with a broken body',
      pem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
      message: /^ca\.crt does not parse/,
    },
    {
      name: 'a CA that has expired',
      pem: ca.certPem,
      now: new Date(NOW.getTime() + 366 * DAY_MS),
      message:
        /^ca\.crt is not valid now \(2031-06-02T00:00:00\.000Z\): valid 2030-05-31T23:55:00\.000Z to 2031-06-01T00:00:00\.000Z$/,
    },
  ];
  for (const c of cases) {
    void it(`refuses ${c.name}`, () =>
      fails(
        () => checkCABundle(c.pem, { label: 'ca.crt', ...(c.now ? { now: c.now } : {}) }),
        'INVALID_CA',
        c.message,
      ));
  }
});

void describe('servingMaterialProblems', () => {
  const good: ServingMaterial = { caPem: ca.certPem, certPem: serving.certPem, keyPem: serving.keyPem };
  const requirements = {
    dnsNames: ['hook', 'hook.sys.svc', 'api.example.com'],
    ipAddresses: ['10.0.0.7'],
    now: new Date(NOW.getTime() + DAY_MS),
    renewBeforeMs: 30 * DAY_MS,
  };

  void it('finds nothing wrong with matching material that covers every name and has time left', () => {
    assert.deepStrictEqual(servingMaterialProblems(good, requirements), []);
  });

  const expiring = (days: number): KeyPair =>
    createServingCert(ca, { commonName: 'x', dnsNames: ['hook'], now: NOW, validDays: days });
  const shortCA = createCA('short-ca', { now: NOW, validDays: 20 });
  const cases: Array<{
    name: string;
    material: ServingMaterial;
    req?: Partial<typeof requirements>;
    problems: RegExp[];
  }> = [
    {
      name: 'missing entries',
      material: { caPem: ca.certPem, certPem: '' },
      problems: [/^tls\.crt, tls\.key are missing or empty$/],
    },
    {
      name: 'garbage everywhere',
      material: { caPem: 'x', certPem: 'y', keyPem: 'z' },
      problems: [/^ca\.crt holds no PEM certificate$/, /^tls\.crt is not a PEM certificate/],
    },
    {
      name: 'a key of another type',
      material: { ...good, keyPem: ecKeyPem() },
      problems: [/^tls\.key is a key of type EC but tls\.crt holds a public key of type RSA$/],
    },
    {
      name: 'a key of another certificate',
      material: { ...good, keyPem: sibling.keyPem },
      problems: [/^tls\.key does not belong to tls\.crt/],
    },
    {
      name: 'a certificate signed by another CA',
      material: { ...good, caPem: otherCA.certPem },
      problems: [/^tls\.crt is not signed by ca\.crt$/],
    },
    {
      name: 'a ca.crt that is a leaf',
      material: { ...good, caPem: sibling.certPem },
      problems: [/^ca\.crt \(CN=other\) is not a CA certificate$/],
    },
    {
      name: 'names the certificate does not cover',
      material: good,
      req: { dnsNames: ['hook', 'other.sys.svc', 'a.b.example.com'], ipAddresses: ['10.0.0.8'] },
      problems: [/^tls\.crt is not valid for other\.sys\.svc, a\.b\.example\.com, 10\.0\.0\.8$/],
    },
    {
      name: 'a certificate that has expired',
      material: good,
      req: { now: new Date(NOW.getTime() + 400 * DAY_MS) },
      problems: [/^ca\.crt expired on 2031-06-01T00:00:00\.000Z$/, /^tls\.crt expired on 2031-06-01/],
    },
    {
      name: 'a certificate that is not valid yet',
      material: good,
      req: { now: new Date(NOW.getTime() - DAY_MS) },
      problems: [/^ca\.crt is not valid before 2030-05-31T23:55:00\.000Z$/, /^tls\.crt is not valid before/],
    },
    {
      name: 'a CA expiring within the renewal window',
      material: { ...good, caPem: shortCA.certPem },
      problems: [
        /^ca\.crt expires on 2030-06-21T00:00:00\.000Z, within the renewal window of 30 days$/,
        /^tls\.crt is not signed by ca\.crt$/,
      ],
    },
    {
      name: 'a client certificate',
      material: { caPem: ca.certPem, ...pairOf(createClientCert(ca, { commonName: 'admin', now: NOW })) },
      req: { dnsNames: [], ipAddresses: [] },
      problems: [/^tls\.crt is not for server authentication$/],
    },
  ];
  for (const c of cases) {
    void it(`reports ${c.name}`, () => {
      const problems = servingMaterialProblems(c.material, { ...requirements, ...c.req });
      assert.equal(problems.length, c.problems.length, problems.join('\n'));
      c.problems.forEach((p, i) => assert.match(problems[i] ?? '', p));
    });
  }

  void it('reports a serving certificate expiring within the renewal window, and not one just outside it', () => {
    const soon = expiring(10);
    const req = { ...requirements, dnsNames: ['hook'], ipAddresses: [] };
    assert.deepStrictEqual(servingMaterialProblems({ caPem: ca.certPem, ...pairOf(soon) }, req), [
      'tls.crt expires on 2030-06-11T00:00:00.000Z, within the renewal window of 30 days',
    ]);
    assert.deepStrictEqual(
      servingMaterialProblems({ caPem: ca.certPem, ...pairOf(soon) }, { ...req, renewBeforeMs: 8 * DAY_MS }),
      [],
    );
  });
});

function pairOf(p: KeyPair): { certPem: string; keyPem: string } {
  return { certPem: p.certPem, keyPem: p.keyPem };
}
