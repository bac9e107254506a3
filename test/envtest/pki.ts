// Certificates, service-account keys and kubeconfig files for one test cluster.

import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';

import { createCA, createClientCert, createServingCert } from '../../pkg/certs/index.js';

export interface ClusterPki {
  /** Passed as --cert-dir; holds apiserver.crt and apiserver.key. */
  certDir: string;
  caCertPath: string;
  servingCertPath: string;
  servingKeyPath: string;
  /** Public half of the service-account key (--service-account-key-file). */
  saPublicKeyPath: string;
  /** Private half (--service-account-signing-key-file). */
  saPrivateKeyPath: string;
  caPem: string;
  adminCertPem: string;
  adminKeyPem: string;
}

/**
 * Writes a fresh PKI for one cluster under `dir`. One CA per cluster signs both the apiserver's serving
 * certificate and the admin client certificate (CN=admin, O=system:masters, which bypasses RBAC); the
 * extended key usages keep the two roles apart. Nothing is shared between clusters, so a client of one
 * cluster cannot authenticate to another.
 */
export function writeClusterPki(dir: string, clusterName: string): ClusterPki {
  const certDir = join(dir, 'pki');
  mkdirSync(certDir, { recursive: true, mode: 0o700 });
  const ca = createCA(`flotilla-envtest-${clusterName}-ca`, { validDays: 7 });
  const serving = createServingCert(ca, {
    commonName: 'kube-apiserver',
    // What in-cluster clients and the tests use to reach the apiserver; 10.0.0.1 is the first address of
    // --service-cluster-ip-range, i.e. the `kubernetes` Service.
    dnsNames: [
      'localhost',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
    ],
    ipAddresses: ['127.0.0.1', '10.0.0.1'],
    validDays: 7,
  });
  const admin = createClientCert(ca, { commonName: 'admin', organizations: ['system:masters'], validDays: 7 });
  const sa = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });

  const files = {
    caCertPath: join(certDir, 'ca.crt'),
    servingCertPath: join(certDir, 'apiserver.crt'),
    servingKeyPath: join(certDir, 'apiserver.key'),
    saPublicKeyPath: join(certDir, 'sa.pub'),
    saPrivateKeyPath: join(certDir, 'sa.key'),
  };
  const write = (path: string, data: string) => writeFileSync(path, data, { mode: 0o600 });
  write(files.caCertPath, ca.certPem);
  write(join(certDir, 'ca.key'), ca.keyPem);
  write(files.servingCertPath, serving.certPem);
  write(files.servingKeyPath, serving.keyPem);
  write(join(certDir, 'admin.crt'), admin.certPem);
  write(join(certDir, 'admin.key'), admin.keyPem);
  write(files.saPublicKeyPath, sa.publicKey);
  write(files.saPrivateKeyPath, sa.privateKey);
  return { certDir, ...files, caPem: ca.certPem, adminCertPem: admin.certPem, adminKeyPem: admin.keyPem };
}

export interface KubeconfigEntry {
  /** Cluster, context and (suffixed with -admin) user name. */
  name: string;
  server: string;
  pki: Pick<ClusterPki, 'caPem' | 'adminCertPem' | 'adminKeyPem'>;
}

/**
 * A kubeconfig with one context per entry, named like the cluster, credentials embedded so the file
 * stands alone; current-context is the first entry.
 */
export function kubeconfigYaml(entries: KubeconfigEntry[]): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': entries[0]?.name ?? '',
    clusters: entries.map((e) => ({
      name: e.name,
      cluster: { server: e.server, 'certificate-authority-data': b64(e.pki.caPem) },
    })),
    users: entries.map((e) => ({
      name: `${e.name}-admin`,
      user: { 'client-certificate-data': b64(e.pki.adminCertPem), 'client-key-data': b64(e.pki.adminKeyPem) },
    })),
    contexts: entries.map((e) => ({ name: e.name, context: { cluster: e.name, user: `${e.name}-admin` } })),
    preferences: {},
  });
}

export function writeKubeconfig(path: string, entries: KubeconfigEntry[]): void {
  writeFileSync(path, kubeconfigYaml(entries), { mode: 0o600 });
}
