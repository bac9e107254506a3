// Checks on certificates read from elsewhere (files, Secrets) before they are used: that a private key
// belongs to its certificate, that a CA bundle holds only CA certificates, and whether a stored serving
// certificate can still be used for the names it is needed for. OpenSSL does not catch all of this:
// `tls.createSecureContext` accepts an RSA certificate with an EC key (it keeps one key per type) and
// every handshake then fails.
//
// Pure functions of their arguments (the clock is a parameter); failures are CertError or lists of
// problems, never OpenSSL's exceptions.

import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';

import { CertError } from './errors.js';

export interface ParsedPair {
  /** The first certificate of the PEM; the rest, if any, is the chain sent along with it. */
  certificate: X509Certificate;
  key: KeyObject;
}

export interface PairLabels {
  /** How messages name the certificate, e.g. its file name. Default "the certificate". */
  cert?: string;
  /** How messages name the key. Default "the private key". */
  key?: string;
}

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
const PEM_BEGIN = /-----BEGIN ([A-Z0-9 ]+)-----/g;
const DAY_MS = 24 * 60 * 60 * 1000;

/** OpenSSL's messages start with a code (error:0480006C:PEM routines::no start line); keep the words. */
function reason(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.replace(/^error:[0-9A-F]+:/, '').replace(/::/, ': ');
}

function keyType(type: string | undefined): string {
  if (type === undefined) return 'unknown';
  return type === 'rsa' || type === 'ec' || type === 'dsa' ? type.toUpperCase() : type;
}

/**
 * Parses a PEM certificate and a PEM private key and checks that the key is the one for the
 * certificate's public key. Throws CertError('INVALID_PAIR') naming what is wrong.
 */
export function checkKeyPair(certPem: string | Buffer, keyPem: string | Buffer, labels: PairLabels = {}): ParsedPair {
  const certName = labels.cert ?? 'the certificate';
  const keyName = labels.key ?? 'the private key';
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(certPem);
  } catch (e: unknown) {
    throw new CertError('INVALID_PAIR', `${certName} is not a PEM certificate (${reason(e)})`, { cause: e });
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch (e: unknown) {
    throw new CertError('INVALID_PAIR', `${keyName} is not a PEM private key that can be read (${reason(e)})`, {
      cause: e,
    });
  }
  let publicType: string | undefined;
  try {
    publicType = certificate.publicKey.asymmetricKeyType;
  } catch (e: unknown) {
    throw new CertError('INVALID_PAIR', `the public key of ${certName} cannot be read (${reason(e)})`, { cause: e });
  }
  if (publicType !== key.asymmetricKeyType) {
    throw new CertError(
      'INVALID_PAIR',
      `${keyName} is a key of type ${keyType(key.asymmetricKeyType)} but ${certName} holds a public key of type ${keyType(publicType)}`,
    );
  }
  if (!certificate.checkPrivateKey(key)) {
    throw new CertError(
      'INVALID_PAIR',
      `${keyName} does not belong to ${certName} (another ${keyType(publicType)} key)`,
    );
  }
  return { certificate, key };
}

/**
 * Parses a PEM bundle of CA certificates, as a caBundle holds it. Throws CertError('INVALID_CA') when it
 * holds no certificate, anything but certificates (a private key must never reach a caBundle), a
 * certificate that does not parse, or one that is not a CA; with `now`, also when none of them is valid
 * at that time.
 */
export function checkCABundle(pem: string, opts: { label?: string; now?: Date } = {}): X509Certificate[] {
  const label = opts.label ?? 'the CA bundle';
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  const others = [...pem.replace(PEM_CERTIFICATE, '').matchAll(PEM_BEGIN)].map((m) => m[1] ?? '');
  if (others.length > 0)
    throw new CertError('INVALID_CA', `${label} holds a PEM block that is not a certificate (${others.join(', ')})`);
  if (blocks.length === 0) throw new CertError('INVALID_CA', `${label} holds no PEM certificate`);
  const certificates = blocks.map((block, i) => {
    const which = blocks.length > 1 ? `certificate ${i + 1} of ${label}` : label;
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(block);
    } catch (e: unknown) {
      throw new CertError('INVALID_CA', `${which} does not parse (${reason(e)})`, { cause: e });
    }
    if (!cert.ca) throw new CertError('INVALID_CA', `${which} (${oneLine(cert.subject)}) is not a CA certificate`);
    return cert;
  });
  const now = opts.now;
  if (
    now !== undefined &&
    !certificates.some((c) => c.validFromDate.getTime() <= now.getTime() && now.getTime() < c.validToDate.getTime())
  ) {
    const validity = certificates
      .map((c) => `${c.validFromDate.toISOString()} to ${c.validToDate.toISOString()}`)
      .join(', ');
    throw new CertError('INVALID_CA', `${label} is not valid now (${now.toISOString()}): valid ${validity}`);
  }
  return certificates;
}

export interface ServingMaterial {
  caPem?: string;
  certPem?: string;
  keyPem?: string;
}

export interface ServingRequirements {
  /** Names the certificate must be valid for; a wildcard SAN covers one label, as in Go. */
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  now: Date;
  /** The material is refused when a certificate expires less than this long after `now`. */
  renewBeforeMs: number;
}

/**
 * Everything that keeps stored serving material (a CA, a certificate it signed and the certificate's
 * key, named ca.crt, tls.crt and tls.key as in a kubernetes.io/tls Secret) from being used again for
 * `req`; empty when it can be. Each problem is a short clause naming the item.
 */
export function servingMaterialProblems(m: ServingMaterial, req: ServingRequirements): string[] {
  const problems: string[] = [];
  const missing = (['caPem', 'certPem', 'keyPem'] as const).filter((k) => !m[k]).map((k) => FILE[k]);
  if (missing.length > 0) return [`${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} missing or empty`];
  const { caPem = '', certPem = '', keyPem = '' } = m;

  let cas: X509Certificate[] = [];
  try {
    cas = checkCABundle(caPem, { label: FILE.caPem });
  } catch (e: unknown) {
    problems.push(e instanceof CertError ? e.message : String(e));
  }
  let certificate: X509Certificate | undefined;
  try {
    certificate = checkKeyPair(certPem, keyPem, { cert: FILE.certPem, key: FILE.keyPem }).certificate;
  } catch (e: unknown) {
    problems.push(e instanceof CertError ? e.message : String(e));
  }

  for (const [label, cert] of [
    ...cas.map((c) => [FILE.caPem, c] as const),
    ...(certificate ? [[FILE.certPem, certificate] as const] : []),
  ]) {
    const problem = validityProblem(cert, req);
    if (problem) problems.push(`${label} ${problem}`);
  }
  if (!certificate) return problems;

  if (cas.length > 0 && !cas.some((ca) => certificate.checkIssued(ca) && certificate.verify(ca.publicKey))) {
    problems.push(`${FILE.certPem} is not signed by ${FILE.caPem}`);
  }
  if (certificate.keyUsage !== undefined && !certificate.keyUsage.includes(SERVER_AUTH)) {
    problems.push(`${FILE.certPem} is not for server authentication`);
  }
  const uncovered = [
    ...(req.dnsNames ?? []).filter(
      (name) => certificate.checkHost(name, { subject: 'never', partialWildcards: false }) === undefined,
    ),
    ...(req.ipAddresses ?? []).filter((ip) => certificate.checkIP(ip) === undefined),
  ];
  if (uncovered.length > 0) problems.push(`${FILE.certPem} is not valid for ${uncovered.join(', ')}`);
  return problems;
}

const FILE = { caPem: 'ca.crt', certPem: 'tls.crt', keyPem: 'tls.key' } as const;

function validityProblem(cert: X509Certificate, req: ServingRequirements): string | undefined {
  const from = cert.validFromDate;
  const to = cert.validToDate;
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) return 'has a validity period that cannot be read';
  if (req.now.getTime() < from.getTime()) return `is not valid before ${from.toISOString()}`;
  if (to.getTime() <= req.now.getTime()) return `expired on ${to.toISOString()}`;
  if (to.getTime() - req.now.getTime() < req.renewBeforeMs) {
    return `expires on ${to.toISOString()}, within the renewal window of ${formatDuration(req.renewBeforeMs)}`;
  }
  return undefined;
}

function formatDuration(ms: number): string {
  const days = ms / DAY_MS;
  return Number.isInteger(days) ? `${days} day${days === 1 ? '' : 's'}` : `${(ms / 3_600_000).toFixed(1)} hours`;
}

function oneLine(distinguishedName: string): string {
  return distinguishedName.split('\n').join(', ');
}
