import assert from 'node:assert/strict';
import type { TLSSocket } from 'node:tls';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';

import { CertError, createCA, createClientCert, createServingCert, type KeyPair } from './index.js';

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const DAY_MS = 24 * 60 * 60 * 1000;

// Key generation is the slow part, so the certificates most tests look at are made once.
const ca = createCA('flotilla-test-ca');
const otherCA = createCA('some-other-ca');
const serving = createServingCert(ca, {
  commonName: 'localhost',
  dnsNames: ['localhost', 'webhook.flotilla-system.svc'],
  ipAddresses: ['127.0.0.1', '::1'],
});
const client = createClientCert(ca, { commonName: 'admin', organizations: ['system:masters', 'team-a'] });

function x509(pair: KeyPair): X509Certificate {
  return new X509Certificate(pair.certPem);
}

function subjectLines(cert: X509Certificate): string[] {
  return cert.subject.split('\n');
}

void describe('createCA', () => {
  void it('makes a self-signed CA certificate whose key matches it', () => {
    const cert = x509(ca);
    assert.equal(cert.ca, true);
    assert.equal(cert.subject, 'CN=flotilla-test-ca');
    assert.equal(cert.issuer, 'CN=flotilla-test-ca');
    assert.equal(cert.verify(cert.publicKey), true);
    assert.equal(cert.checkPrivateKey(createPrivateKey(ca.keyPem)), true);
  });

  void it('writes the key as an unencrypted PKCS#8 PEM of a 2048-bit RSA key', () => {
    assert.match(ca.keyPem, /^-----BEGIN PRIVATE KEY-----\n/);
    const key = createPrivateKey(ca.keyPem);
    assert.equal(key.asymmetricKeyType, 'rsa');
    assert.equal(key.asymmetricKeyDetails?.modulusLength, 2048);
  });

  void it('gives each certificate its own key and serial number', () => {
    const a = x509(ca);
    const b = x509(otherCA);
    assert.notEqual(a.serialNumber, b.serialNumber);
    assert.notEqual(
      a.publicKey.export({ format: 'pem', type: 'spki' }),
      b.publicKey.export({ format: 'pem', type: 'spki' }),
    );
  });
});

void describe('validity', () => {
  const now = new Date('2030-01-02T03:04:05.678Z');
  const cases: Array<{ name: string; make: () => KeyPair; days: number }> = [
    { name: 'a CA defaults to 365 days', make: () => createCA('c', { now }), days: 365 },
    { name: 'a CA honours validDays', make: () => createCA('c', { now, validDays: 7 }), days: 7 },
    {
      name: 'a serving certificate honours validDays',
      make: () => createServingCert(ca, { commonName: 's', now, validDays: 30 }),
      days: 30,
    },
    {
      name: 'a client certificate defaults to 365 days',
      make: () => createClientCert(ca, { commonName: 'u', now }),
      days: 365,
    },
  ];
  for (const c of cases) {
    void it(`${c.name}, counted from the injected clock`, () => {
      const cert = x509(c.make());
      const notBefore = new Date(cert.validFrom).getTime();
      const notAfter = new Date(cert.validTo).getTime();
      const nowSeconds = Date.parse('2030-01-02T03:04:05Z');
      assert.ok(notBefore <= nowSeconds, `notBefore ${cert.validFrom} is after now`);
      assert.ok(nowSeconds - notBefore <= 60 * 60 * 1000, `notBefore ${cert.validFrom} is backdated more than an hour`);
      assert.equal(notAfter, nowSeconds + c.days * DAY_MS);
    });
  }
});

void describe('createServingCert', () => {
  void it('is signed by the CA and not by another CA', () => {
    const cert = x509(serving);
    assert.equal(cert.verify(x509(ca).publicKey), true);
    assert.equal(cert.verify(x509(otherCA).publicKey), false);
    assert.equal(cert.checkIssued(x509(ca)), true);
    assert.equal(cert.issuer, 'CN=flotilla-test-ca');
  });

  void it('is a leaf for server authentication only', () => {
    const cert = x509(serving);
    assert.equal(cert.ca, false);
    assert.deepEqual(cert.keyUsage, [SERVER_AUTH]);
    assert.equal(cert.subject, 'CN=localhost');
    assert.equal(cert.checkPrivateKey(createPrivateKey(serving.keyPem)), true);
  });

  void it('carries exactly the DNS names and IP addresses given as SANs', () => {
    assert.equal(
      x509(serving).subjectAltName,
      'DNS:localhost, DNS:webhook.flotilla-system.svc, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
    );
  });

  void it('can last until 9999-12-31T23:59:59Z and no longer', () => {
    const now = new Date('9999-01-01T00:00:00Z');
    assert.equal(
      x509(createServingCert(ca, { commonName: 'late', now, validDays: 364 })).validToDate.toISOString(),
      '9999-12-31T00:00:00.000Z',
    );
    assert.throws(
      () => createServingCert(ca, { commonName: 'late', now, validDays: 365 }),
      /ends after 9999-12-31T23:59:59\.000Z/,
    );
  });

  void it('accepts a wildcard DNS name as the whole first label', () => {
    assert.equal(
      x509(createServingCert(ca, { commonName: 'w', dnsNames: ['*.hook.example'] })).subjectAltName,
      'DNS:*.hook.example',
    );
  });

  void it('has no SAN extension when no names are given', () => {
    const bare = createServingCert(ca, { commonName: 'bare' });
    assert.equal(x509(bare).subjectAltName, undefined);
  });
});

void describe('createClientCert', () => {
  void it('is signed by the CA and usable for client authentication only', () => {
    const cert = x509(client);
    assert.equal(cert.verify(x509(ca).publicKey), true);
    assert.equal(cert.ca, false);
    assert.deepEqual(cert.keyUsage, [CLIENT_AUTH]);
    assert.equal(cert.subjectAltName, undefined);
  });

  void it('puts the user in CN and every group in its own O', () => {
    const lines = subjectLines(x509(client));
    assert.deepEqual(
      lines.filter((l) => l.startsWith('O=')),
      ['O=system:masters', 'O=team-a'],
    );
    assert.deepEqual(
      lines.filter((l) => l.startsWith('CN=')),
      ['CN=admin'],
    );
  });

  void it('has no O when no organizations are given', () => {
    assert.equal(x509(createClientCert(ca, { commonName: 'alice' })).subject, 'CN=alice');
  });
});

void describe('argument errors', () => {
  const cases: Array<{ name: string; call: () => unknown; code: string }> = [
    { name: 'an empty CA common name', call: () => createCA(''), code: 'INVALID_ARGUMENT' },
    { name: 'a zero validity', call: () => createCA('c', { validDays: 0 }), code: 'INVALID_ARGUMENT' },
    { name: 'an invalid clock', call: () => createCA('c', { now: new Date('nope') }), code: 'INVALID_ARGUMENT' },
    {
      name: 'a validity of more than 36500 days',
      call: () => createCA('c', { validDays: 36501 }),
      code: 'INVALID_ARGUMENT',
    },
    {
      name: 'a validity of 3,000,000 days',
      call: () => createCA('c', { validDays: 3_000_000 }),
      code: 'INVALID_ARGUMENT',
    },
    {
      name: 'a validity ending after 9999-12-31',
      call: () => createCA('c', { now: new Date('9999-06-01T00:00:00Z'), validDays: 365 }),
      code: 'INVALID_ARGUMENT',
    },
    {
      name: 'a DNS SAN with a space',
      call: () => createServingCert(ca, { commonName: 's', dnsNames: ['a b'] }),
      code: 'INVALID_ARGUMENT',
    },
    {
      name: 'a DNS SAN that is a malformed IP address',
      call: () => createServingCert(ca, { commonName: 's', dnsNames: ['300.1.1.1'] }),
      code: 'INVALID_ARGUMENT',
    },
    {
      name: 'an IP SAN with a zone index',
      call: () => createServingCert(ca, { commonName: 's', ipAddresses: ['fe80::1%eth0'] }),
      code: 'INVALID_ARGUMENT',
    },
    {
      name: 'an IP SAN that is not an IP address',
      call: () => createServingCert(ca, { commonName: 's', ipAddresses: ['localhost'] }),
      code: 'INVALID_ARGUMENT',
    },
    {
      name: 'an empty organization',
      call: () => createClientCert(ca, { commonName: 'u', organizations: [''] }),
      code: 'INVALID_ARGUMENT',
    },
    {
      name: 'a CA that is not PEM',
      call: () => createServingCert({ certPem: 'x', keyPem: 'y' }, { commonName: 's' }),
      code: 'INVALID_CA',
    },
    {
      name: 'a CA whose key belongs to another certificate',
      call: () => createClientCert({ certPem: ca.certPem, keyPem: otherCA.keyPem }, { commonName: 'u' }),
      code: 'INVALID_CA',
    },
  ];
  for (const c of cases) {
    void it(`rejects ${c.name} with ${c.code}`, () => {
      assert.throws(c.call, (err: unknown) => err instanceof CertError && err.code === c.code);
    });
  }
});

void describe('TLS on loopback', () => {
  interface Outcome {
    status?: number;
    body?: string;
    error?: string;
  }

  /**
   * Serves `serving` on 127.0.0.1, requiring a client certificate from `ca`, and makes one request with
   * `trust` as the only trusted root. The response body is the subject of the client's certificate.
   */
  async function roundTrip(o: { trust: string; servername?: string; clientPair?: KeyPair }): Promise<Outcome> {
    const server = https.createServer(
      { cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        res.end(JSON.stringify({ O: peer.subject.O, CN: peer.subject.CN }));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      return await new Promise<Outcome>((resolve) => {
        const req = https.request(
          {
            host: '127.0.0.1',
            port,
            path: '/',
            servername: o.servername,
            ca: o.trust,
            cert: o.clientPair?.certPem,
            key: o.clientPair?.keyPem,
            agent: false,
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (body += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
        req.end();
      });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  void it('completes a mutual-TLS handshake and the server sees the client groups', async () => {
    const out = await roundTrip({ trust: ca.certPem, servername: 'localhost', clientPair: client });
    assert.equal(out.error, undefined);
    assert.equal(out.status, 200);
    assert.deepEqual(JSON.parse(out.body ?? ''), { O: ['system:masters', 'team-a'], CN: 'admin' });
  });

  void it('verifies the server by its IP SAN when no server name is sent', async () => {
    // Without a server name, Node checks the certificate against the host, 127.0.0.1.
    const out = await roundTrip({ trust: ca.certPem, clientPair: client });
    assert.equal(out.status, 200);
  });

  void it('refuses a server name the certificate does not list', async () => {
    const out = await roundTrip({ trust: ca.certPem, servername: 'elsewhere.example', clientPair: client });
    assert.equal(out.error, 'ERR_TLS_CERT_ALTNAME_INVALID');
  });

  void it('refuses the server when the client trusts another CA', async () => {
    const out = await roundTrip({ trust: otherCA.certPem, servername: 'localhost', clientPair: client });
    // The server sends its CA along with its certificate, so OpenSSL reports an untrusted self-signed root.
    assert.ok(
      out.error === 'SELF_SIGNED_CERT_IN_CHAIN' || out.error === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      `expected a certificate verification failure, got ${out.error ?? `HTTP ${out.status}`}`,
    );
  });

  void it('refuses a client whose certificate comes from another CA', async () => {
    const stranger = createClientCert(otherCA, { commonName: 'mallory', organizations: ['system:masters'] });
    const out = await roundTrip({ trust: ca.certPem, servername: 'localhost', clientPair: stranger });
    assert.ok(out.error !== undefined, `expected a TLS failure, got HTTP ${out.status}`);
  });

  void it('refuses a serving certificate used as a client certificate', async () => {
    const out = await roundTrip({ trust: ca.certPem, servername: 'localhost', clientPair: serving });
    assert.ok(out.error !== undefined, `expected a TLS failure, got HTTP ${out.status}`);
  });
});
