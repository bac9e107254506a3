// `flotilla certs create|patch`: the kube-webhook-certgen flow, so install Jobs can run the flotilla image.
// Flags and help are in commands.ts. The Kubernetes client is loaded only when a cluster is needed.
//   create: a CA and a serving certificate for the webhook Service's DNS names, into a Secret (an existing
//           Secret is kept: re-running an install must not rotate the CA under running webhooks) and/or files;
//   patch:  the Secret's CA into the webhook configurations and the CRDs' conversion settings.

import { mkdirSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';

import type { V1Secret } from '@kubernetes/client-node';

import { CONVERTIBLE_CRD_NAMES } from '../../api/crds/index.js';
import { createCA, createServingCert, type KeyPair } from '../certs/index.js';
import { UsageError, type CommandIO } from './command.js';
import type { CertsCreateFlags, CertsPatchFlags } from './commands.js';
import { loadKubeConfigFor } from './kubeflags.js';

export class CertsCommandError extends Error {
  readonly code = 'CERTS';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CertsCommandError';
  }
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined): string | undefined => (s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8'));

function list(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
}

/** The cluster for --kubeconfig/--context, with client-node and its error helpers, loaded on demand. */
async function connect(values: { kubeconfig?: string | undefined; context?: string | undefined }, io: CommandIO) {
  const [kc, k8s, errors] = await Promise.all([loadKubeConfigFor(values, io), import('@kubernetes/client-node'), import('../kube/client-errors.js')]);
  return { kc, k8s, ...errors };
}

interface Material {
  ca: KeyPair;
  serving: KeyPair;
}

function secretMaterial(secret: V1Secret): Material | undefined {
  const ca = unb64(secret.data?.['ca.crt']);
  const cert = unb64(secret.data?.['tls.crt']);
  const key = unb64(secret.data?.['tls.key']);
  if (!ca || !cert || !key) return undefined;
  // The CA key is not kept anywhere: the CA exists only to sign this one certificate.
  return { ca: { certPem: ca, keyPem: '' }, serving: { certPem: cert, keyPem: key } };
}

export async function create(values: CertsCreateFlags, io: CommandIO): Promise<number> {
  const { service, namespace } = values;
  if (!values.secret && !values['cert-dir']) throw new UsageError('create needs --secret, --cert-dir or both');
  const validDays = Number(values['valid-days']);
  if (!/^\d+$/.test(values['valid-days']) || validDays < 1) throw new UsageError(`--valid-days must be a positive integer, got ${JSON.stringify(values['valid-days'])}`);

  const extra = list(values.hosts);
  const dnsNames = [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`, ...extra.filter((h) => !isIP(h))];
  const ipAddresses = extra.filter((h) => isIP(h) !== 0);
  const fresh = (): Material => {
    const ca = createCA(`${service}.${namespace}-ca`, { validDays });
    return { ca, serving: createServingCert(ca, { commonName: `${service}.${namespace}.svc`, dnsNames, ipAddresses, validDays }) };
  };

  let material: Material | undefined;
  if (values.secret) {
    const { kc, k8s, describeKubeError, httpStatus } = await connect(values, io);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const name = values.secret;
    const read = async (): Promise<V1Secret | undefined> => {
      try {
        return await core.readNamespacedSecret({ name, namespace });
      } catch (e: unknown) {
        if (httpStatus(e) === 404) return undefined;
        throw new CertsCommandError(`reading Secret ${namespace}/${name}: ${describeKubeError(e)}`, { cause: e });
      }
    };
    const existing = await read();
    if (existing) {
      material = secretMaterial(existing);
      if (!material) throw new CertsCommandError(`Secret ${namespace}/${name} exists but lacks ca.crt, tls.crt or tls.key; delete it to create a new one`);
      io.stdout.write(`Secret ${namespace}/${name} exists; keeping its certificate\n`);
    } else {
      material = fresh();
      const body: V1Secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace, labels: { 'app.kubernetes.io/part-of': 'flotilla' } },
        type: 'kubernetes.io/tls',
        data: { 'ca.crt': b64(material.ca.certPem), 'tls.crt': b64(material.serving.certPem), 'tls.key': b64(material.serving.keyPem) },
      };
      try {
        await core.createNamespacedSecret({ namespace, body });
        io.stdout.write(`created Secret ${namespace}/${name} for ${[...dnsNames, ...ipAddresses].join(', ')}\n`);
      } catch (e: unknown) {
        // Another replica of this Job won the race: use what it stored.
        if (httpStatus(e) !== 409) throw new CertsCommandError(`creating Secret ${namespace}/${name}: ${describeKubeError(e)}`, { cause: e });
        const winner = await read();
        material = winner ? secretMaterial(winner) : undefined;
        if (!material) throw new CertsCommandError(`Secret ${namespace}/${name} was created concurrently but cannot be read back`, { cause: e });
        io.stdout.write(`Secret ${namespace}/${name} was created concurrently; keeping its certificate\n`);
      }
    }
  }
  material ??= fresh();

  const dir = values['cert-dir'];
  if (dir) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'ca.crt'), material.ca.certPem);
    writeFileSync(join(dir, 'tls.crt'), material.serving.certPem);
    writeFileSync(join(dir, 'tls.key'), material.serving.keyPem, { mode: 0o600 });
    io.stdout.write(`wrote ${join(dir, 'ca.crt')}, ${join(dir, 'tls.crt')} and ${join(dir, 'tls.key')}\n`);
  }
  return 0;
}

/** JSON patch ops setting caBundle on each of `count` entries under `prefix` (…/<i>/clientConfig/caBundle). */
function caBundleOps(prefix: string, count: number, caBundle: string): Array<{ op: 'add'; path: string; value: string }> {
  // `add` replaces an existing member, so one op works whether or not caBundle was set before.
  return Array.from({ length: count }, (_, i) => ({ op: 'add' as const, path: `${prefix}/${i}/clientConfig/caBundle`, value: caBundle }));
}

export async function patch(values: CertsPatchFlags, io: CommandIO): Promise<number> {
  const { secret: name, namespace } = values;
  const crds = values.crds === undefined ? [...CONVERTIBLE_CRD_NAMES] : list(values.crds);
  const { kc, k8s, describeKubeError } = await connect(values, io);

  let secret: V1Secret;
  try {
    secret = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ name, namespace });
  } catch (e: unknown) {
    throw new CertsCommandError(`reading Secret ${namespace}/${name}: ${describeKubeError(e)}`, { cause: e });
  }
  const caBundle = secret.data?.['ca.crt'];
  if (!caBundle) throw new CertsCommandError(`Secret ${namespace}/${name} has no ca.crt`);

  const failures: string[] = [];
  const attempt = async (what: string, fn: () => Promise<string>): Promise<void> => {
    try {
      io.stdout.write(`${await fn()}\n`);
    } catch (e: unknown) {
      failures.push(`${what}: ${e instanceof CertsCommandError ? e.message : describeKubeError(e)}`);
    }
  };

  const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  if (values.validating) {
    const config = values.validating;
    await attempt(`ValidatingWebhookConfiguration ${config}`, async () => {
      const current = await admission.readValidatingWebhookConfiguration({ name: config });
      const n = current.webhooks?.length ?? 0;
      if (n > 0) await admission.patchValidatingWebhookConfiguration({ name: config, body: caBundleOps('/webhooks', n, caBundle) });
      return `patched the CA bundle of ${n} webhook(s) in ValidatingWebhookConfiguration ${config}`;
    });
  }
  if (values.mutating) {
    const config = values.mutating;
    await attempt(`MutatingWebhookConfiguration ${config}`, async () => {
      const current = await admission.readMutatingWebhookConfiguration({ name: config });
      const n = current.webhooks?.length ?? 0;
      if (n > 0) await admission.patchMutatingWebhookConfiguration({ name: config, body: caBundleOps('/webhooks', n, caBundle) });
      return `patched the CA bundle of ${n} webhook(s) in MutatingWebhookConfiguration ${config}`;
    });
  }
  const extensions = kc.makeApiClient(k8s.ApiextensionsV1Api);
  for (const crd of crds) {
    await attempt(`CustomResourceDefinition ${crd}`, async () => {
      const current = await extensions.readCustomResourceDefinition({ name: crd });
      if (current.spec.conversion?.strategy !== 'Webhook' || !current.spec.conversion.webhook?.clientConfig) {
        throw new CertsCommandError('has no conversion webhook to patch');
      }
      await extensions.patchCustomResourceDefinition({ name: crd, body: [{ op: 'add', path: '/spec/conversion/webhook/clientConfig/caBundle', value: caBundle }] });
      return `patched the conversion CA bundle of CustomResourceDefinition ${crd}`;
    });
  }
  for (const f of failures) io.stderr.write(`flotilla certs patch: ${f}\n`);
  return failures.length > 0 ? 1 : 0;
}
