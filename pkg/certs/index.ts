// Small X.509 helpers: a self-signed CA, and serving and client certificates signed by it. Used by the
// integration-test environment (apiserver serving certs, admin client certs) and by
// `flotilla certs create` (webhook serving certs).
//
// Keys are RSA 2048, generated natively by node:crypto and written as PKCS#8 PEM; node-forge builds and
// signs the certificates (SHA-256). Everything is synchronous and depends only on the arguments, apart
// from key material and serial numbers, which are random. names.ts says what a SAN may hold; pair.ts
// checks certificates and keys read back from files and Secrets before they are used.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

import { CertError } from './errors.js';
import { dnsNameProblem, ipAddressProblem } from './names.js';

export { CertError, type CertErrorCode } from './errors.js';
export { dnsNameProblem, ipAddressProblem, parseHost, type SubjectAltName } from './names.js';
export {
  checkCABundle,
  checkKeyPair,
  servingMaterialProblems,
  type PairLabels,
  type ParsedPair,
  type ServingMaterial,
  type ServingRequirements,
} from './pair.js';

export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export interface CertOptions {
  /** Days from `now` until the certificate expires, at most MAX_VALID_DAYS. Default 365. */
  validDays?: number;
  /** The clock; default the current time. */
  now?: Date;
}

/** A hundred years: longer is a typo, and far past anything a peer will still be checking. */
export const MAX_VALID_DAYS = 36500;
/** The last time an X.509 GeneralizedTime can hold (RFC 5280 §4.1.2.5). */
export const LATEST_NOT_AFTER = new Date('9999-12-31T23:59:59Z');

const DEFAULT_VALID_DAYS = 365;
/** notBefore is set this far before `now`, so a peer whose clock is slightly behind accepts a new cert. */
const BACKDATE_MS = 5 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export function createCA(commonName: string, opts: CertOptions = {}): KeyPair {
  requireName('commonName', commonName);
  const key = newKey();
  const cert = newCertificate(key.publicKey, opts);
  const subject = [{ shortName: 'CN', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(key.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: key.pem };
}

export function createServingCert(
  ca: KeyPair,
  o: { commonName: string; dnsNames?: string[]; ipAddresses?: string[] } & CertOptions,
): KeyPair {
  requireName('commonName', o.commonName);
  const altNames: Array<{ type: number; value?: string; ip?: string }> = [];
  for (const name of o.dnsNames ?? []) {
    const problem = typeof name === 'string' ? dnsNameProblem(name) : 'is not a string';
    if (problem) throw new CertError('INVALID_ARGUMENT', `dnsNames: ${JSON.stringify(name)} ${problem}`);
    altNames.push({ type: 2, value: name }); // dNSName
  }
  for (const ip of o.ipAddresses ?? []) {
    const problem = typeof ip === 'string' ? ipAddressProblem(ip) : 'is not a string';
    if (problem) throw new CertError('INVALID_ARGUMENT', `ipAddresses: ${JSON.stringify(ip)} ${problem}`);
    altNames.push({ type: 7, ip }); // iPAddress
  }
  return issue(ca, [{ shortName: 'CN', value: o.commonName }], { serverAuth: true }, altNames, o);
}

/**
 * A client certificate for `CN=<commonName>, O=<organization>...`. Kubernetes reads CN as the user name
 * and each O as a group (O=system:masters is the cluster admin group).
 */
export function createClientCert(
  ca: KeyPair,
  o: { commonName: string; organizations?: string[] } & CertOptions,
): KeyPair {
  requireName('commonName', o.commonName);
  const subject = (o.organizations ?? []).map((org) => {
    requireName('organizations[]', org);
    return { shortName: 'O', value: org };
  });
  subject.push({ shortName: 'CN', value: o.commonName });
  return issue(ca, subject, { clientAuth: true }, [], o);
}

function issue(
  ca: KeyPair,
  subject: Array<{ shortName: string; value: string }>,
  extKeyUsage: { serverAuth?: boolean; clientAuth?: boolean },
  altNames: Array<{ type: number; value?: string; ip?: string }>,
  opts: CertOptions,
): KeyPair {
  const { caCert, caKey } = parseCA(ca);
  const key = newKey();
  const cert = newCertificate(key.publicKey, opts);
  cert.setSubject(subject);
  cert.setIssuer(caCert.subject.attributes);
  const extensions: object[] = [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', ...extKeyUsage },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ];
  if (altNames.length > 0) extensions.push({ name: 'subjectAltName', altNames });
  cert.setExtensions(extensions);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: key.pem };
}

function parseCA(ca: KeyPair): { caCert: forge.pki.Certificate; caKey: forge.pki.rsa.PrivateKey } {
  let caCert: forge.pki.Certificate;
  let caKey: forge.pki.rsa.PrivateKey;
  try {
    caCert = forge.pki.certificateFromPem(ca.certPem);
    caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  } catch (err: unknown) {
    throw new CertError('INVALID_CA', 'the CA certificate or key is not an RSA PEM that can be parsed', { cause: err });
  }
  const caPublic = caCert.publicKey as forge.pki.rsa.PublicKey;
  if (caPublic.n === undefined || caPublic.n.compareTo(caKey.n) !== 0) {
    throw new CertError('INVALID_CA', 'the CA key does not belong to the CA certificate');
  }
  return { caCert, caKey };
}

function newKey(): { pem: string; publicKey: forge.pki.rsa.PublicKey; privateKey: forge.pki.rsa.PrivateKey } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    pem: privateKey,
    publicKey: forge.pki.publicKeyFromPem(publicKey),
    privateKey: forge.pki.privateKeyFromPem(privateKey),
  };
}

function newCertificate(publicKey: forge.pki.rsa.PublicKey, opts: CertOptions): forge.pki.Certificate {
  const validDays = opts.validDays ?? DEFAULT_VALID_DAYS;
  if (typeof validDays !== 'number' || !Number.isFinite(validDays) || validDays <= 0 || validDays > MAX_VALID_DAYS) {
    throw new CertError(
      'INVALID_ARGUMENT',
      `validDays must be a number of days from 1 to ${MAX_VALID_DAYS}, got ${String(validDays)}`,
    );
  }
  // X.509 times have whole seconds; truncating keeps notAfter exactly validDays after `now`.
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000) * 1000;
  if (Number.isNaN(now)) throw new CertError('INVALID_ARGUMENT', 'now is not a valid date');
  const notAfter = new Date(now + validDays * DAY_MS);
  if (notAfter.getTime() > LATEST_NOT_AFTER.getTime()) {
    throw new CertError(
      'INVALID_ARGUMENT',
      `validDays ${validDays} from ${new Date(now).toISOString()} ends after ${LATEST_NOT_AFTER.toISOString()}, the latest time a certificate can hold`,
    );
  }
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = new Date(now - BACKDATE_MS);
  cert.validity.notAfter = notAfter;
  return cert;
}

/**
 * 128 random bits as DER INTEGER hex. The first byte is kept in 0x01..0x7f: a set top bit would make the
 * serial negative and a zero byte would be a non-minimal encoding, both of which Go's x509 rejects.
 */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return bytes.toString('hex');
}

function requireName(field: string, value: string): void {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new CertError('INVALID_ARGUMENT', `${field} must be a non-empty string`);
  }
}
