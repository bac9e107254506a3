// Certificate material for tests that node-forge cannot make (it signs with RSA keys only).

import { generateKeyPairSync } from 'node:crypto';

import type { KeyPair } from '../pkg/certs/index.js';

/**
 * A self-signed P-256 serving certificate for localhost and 127.0.0.1 (serverAuth, not a CA), valid
 * 2026-11-22 to 2126-10-29, with its PKCS#8 key. Made once with:
 *   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 36500 -subj /CN=ec-fixture \
 *     -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -addext basicConstraints=critical,CA:FALSE \
 *     -addext extendedKeyUsage=serverAuth
 */
export const EC_SERVING_PAIR: KeyPair = {
  certPem: `
-----BEGIN CERTIFICATE-----
MIIBsDCCAVagAwIBAgIUYmmX2uQQ4UafqKUNz5CQk2bFQWkwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKZWMtZml4dHVyZTAgFw0yNjExMjIxMzU3NTZaGA8yMTI2MTAy
OTEzNTc1NlowFTETMBEGA1UEAwwKZWMtZml4dHVyZTBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABBpLJcZh4kFAcFWsb4tCl3NGTsnK2LAZb5X7BH2euL3U4gJmHQNm
RoetuPJA6/38ZSj83kgbAaoMGnw67dYJXEOjgYEwfzAdBgNVHQ4EFgQUUlRBejtq
9yFK621i3nF+BKkHBTIwHwYDVR0jBBgwFoAUUlRBejtq9yFK621i3nF+BKkHBTIw
GgYDVR0RBBMwEYIJbG9jYWxob3N0hwR/AAABMAwGA1UdEwEB/wQCMAAwEwYDVR0l
BAwwCgYIKwYBBQUHAwEwCgYIKoZIzj0EAwIDSAAwRQIgBF20CpPcT95veRIcZo4x
w4Ps0plKp9O5XtGMY3xkdS4CIQCTHx3HY7yci3lVSt1ByK/78DvMCIBZW3gwLD48
urdU5A==
-----END CERTIFICATE-----
`.trimStart(),
  keyPem: `
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgTmGheqAT3vzw7B9q
DAUgtGHv65yyybjAsVN5l2WJnOuhRANCAAQaSyXGYeJBQHBVrG+LQpdzRk7Jytiw
GW+V+wR9nri91OICZh0DZkaHrbjyQOv9/GUo/N5IGwGqDBp8Ou3WCVxD
-----END PRIVATE KEY-----
`.trimStart(),
};

/** A fresh P-256 private key as PKCS#8 PEM. */
export function ecKeyPem(): string {
  return generateKeyPairSync('ec', {
    namedCurve: 'prime256v1',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  }).privateKey;
}
