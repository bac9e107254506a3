// What may go into a certificate's subjectAltName: DNS names (RFC 1123 host names, a wildcard only as the
// whole first label, as Go's crypto/x509 and the apiserver match them) and IPv4/IPv6 addresses.

import { isIP } from 'node:net';

const MAX_NAME_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;
const LDH = /^[A-Za-z0-9-]+$/;
const NUMERIC = /^[0-9]+$/;

/** Why `name` is not a DNS name a certificate can carry, or undefined when it is one. */
export function dnsNameProblem(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (name.length > MAX_NAME_LENGTH) return `is longer than ${MAX_NAME_LENGTH} characters`;
  if (name.endsWith('.')) return 'ends with "."';
  const labels = name.split('.');
  for (const [i, label] of labels.entries()) {
    if (label === '') return 'has an empty label';
    if (label === '*') {
      if (i !== 0) return 'has "*" in a label other than the first';
      if (labels.length < 2) return 'is a bare "*"';
      continue;
    }
    if (label.length > MAX_LABEL_LENGTH) return `has a label longer than ${MAX_LABEL_LENGTH} characters`;
    if (label.includes('*')) return 'has "*" inside a label (a wildcard must be the whole first label)';
    if (!LDH.test(label))
      return `has a label with characters other than letters, digits and "-": ${JSON.stringify(label)}`;
    if (label.startsWith('-') || label.endsWith('-'))
      return `has a label that starts or ends with "-": ${JSON.stringify(label)}`;
  }
  // No top-level domain is all digits (RFC 3696 §2): such a name is a mistyped address, e.g. 300.1.1.1.
  if (NUMERIC.test(labels[labels.length - 1] ?? '')) {
    return labels.every((l) => NUMERIC.test(l))
      ? 'looks like an IPv4 address but is not one'
      : 'ends in an all-numeric label';
  }
  return undefined;
}

/** Why `address` is not an IP address a certificate can carry, or undefined when it is one. */
export function ipAddressProblem(address: string): string | undefined {
  if (isIP(address) === 0) return 'is not an IPv4 or IPv6 address';
  if (address.includes('%')) return 'has a zone index, which a certificate cannot carry';
  return undefined;
}

export type SubjectAltName = { type: 'dns'; value: string } | { type: 'ip'; value: string };

/**
 * Reads a host as an IP address when it is one, else as a DNS name. Throws nothing: `problem` says why
 * it is neither.
 */
export function parseHost(host: string): SubjectAltName | { type: 'invalid'; problem: string } {
  if (isIP(host) !== 0) {
    const problem = ipAddressProblem(host);
    return problem === undefined ? { type: 'ip', value: host } : { type: 'invalid', problem };
  }
  const problem = dnsNameProblem(host);
  if (problem === undefined) return { type: 'dns', value: host };
  return { type: 'invalid', problem: `is neither an IP address nor a DNS name: it ${problem}` };
}
