// `flotilla certs create|patch`: the kube-webhook-certgen flow, so install Jobs can run the flotilla image.
//   create: a CA and a serving certificate for the webhook Service's DNS names, into a Secret (an existing
//           Secret is kept: re-running an install must not rotate the CA under running webhooks) and/or files;
//   patch:  the Secret's CA into the webhook configurations and the CRDs' conversion settings.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';

import type { KubeConfig, V1Secret } from '@kubernetes/client-node';

import { CONVERTIBLE_CRD_NAMES } from '../../api/crds/index.js';
import { createCA, createServingCert, type KeyPair } from '../certs/index.js';
import { parseFlags, UsageError, type Command, type CommandIO } from './command.js';

const usage = `Create the webhook's serving certificate, or put its CA where the apiserver needs it.

Usage:
  flotilla certs create --service NAME --namespace NS [--secret NAME] [--cert-dir DIR] [--hosts H,...]
                        [--valid-days N] [--kubeconfig FILE]
  flotilla certs patch  --secret NAME --namespace NS [--validating NAME] [--mutating NAME]
                        [--crds NAME,...] [--kubeconfig FILE]

create makes a CA and a certificate for NAME, NAME.NS, NAME.NS.svc and NAME.NS.svc.cluster.local (plus
--hosts: DNS names or IP addresses). With --secret it stores ca.crt, tls.crt and tls.key in that Secret
of type kubernetes.io/tls, unless the Secret already exists, whose certificate is then kept. With
--cert-dir it writes the same three files there. At least one of --secret and --cert-dir is required.

patch reads ca.crt from the Secret and sets it as caBundle on every webhook of the named
ValidatingWebhookConfiguration and MutatingWebhookConfiguration and on the conversion webhook of each
CRD (default: the four policy.flotilla.io CRDs; --crds '' for none).

The cluster is reached with --kubeconfig, else $KUBECONFIG, else the pod's service account, else
~/.kube/config.
Exit status: 0 ok; 1 failure; 2 usage.`;

const DEFAULT_VALID_DAYS = 3650;

export class CertsCommandError extends Error {
  readonly code = 'CERTS';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CertsCommandError';
  }
}

/** @kubernetes/client-node, loaded when a command first needs it (render and validate never do). */
const clientNode = () => import('@kubernetes/client-node');

/**
 * The KubeConfig for a command: --kubeconfig, else $KUBECONFIG (first file), else in-cluster, else
 * ~/.kube/config when `homeDefault`. Undefined when none applies.
 */
export async function loadKubeConfig(path: string | undefined, env: NodeJS.ProcessEnv, opts: { homeDefault: boolean }): Promise<KubeConfig | undefined> {
  const { KubeConfig } = await clientNode();
  const kc = new KubeConfig();
  const fromEnv = env.KUBECONFIG?.split(':').find((p) => p !== '');
  if (path) kc.loadFromFile(path);
  else if (fromEnv) kc.loadFromFile(fromEnv);
  else if (env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else if (opts.homeDefault && existsSync(join(env.HOME ?? homedir(), '.kube', 'config'))) kc.loadFromFile(join(env.HOME ?? homedir(), '.kube', 'config'));
  else return undefined;
  return kc;
}

/** A readable message for a client-node failure. */
export function describeKubeError(e: unknown): string {
  if (isApiException(e)) {
    const body = typeof e.body === 'string' ? e.body : JSON.stringify(e.body);
    let message = body;
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === 'string') message = parsed.message;
    } catch {
      // not JSON: keep the raw body
    }
    return `HTTP ${e.code}: ${message}`;
  }
  return e instanceof Error ? e.message : String(e);
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined): string | undefined => (s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8'));
/** client-node's ApiException, recognised without loading the module: an HTTP status `code` and a `body`. */
function isApiException(e: unknown): e is { code: number; body: unknown } {
  return typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'number' && 'body' in e;
}
const isNotFound = (e: unknown): boolean => isApiException(e) && e.code === 404;
const isConflict = (e: unknown): boolean => isApiException(e) && e.code === 409;

function list(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
}

async function requireKubeConfig(path: string | undefined, io: CommandIO): Promise<KubeConfig> {
  const kc = await loadKubeConfig(path, io.env, { homeDefault: true });
  if (!kc) throw new UsageError('no cluster to talk to: pass --kubeconfig, set $KUBECONFIG, or run in a pod');
  return kc;
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

async function create(args: string[], io: CommandIO): Promise<number> {
  const values = parseFlags(args, {
    service: { type: 'string' },
    namespace: { type: 'string' },
    secret: { type: 'string' },
    'cert-dir': { type: 'string' },
    hosts: { type: 'string' },
    'valid-days': { type: 'string' },
    kubeconfig: { type: 'string' },
  });
  const service = values.service;
  const namespace = values.namespace;
  if (!service || !namespace) throw new UsageError('create needs --service and --namespace');
  if (!values.secret && !values['cert-dir']) throw new UsageError('create needs --secret, --cert-dir or both');
  const validDays = values['valid-days'] === undefined ? DEFAULT_VALID_DAYS : Number(values['valid-days']);
  if (!Number.isInteger(validDays) || validDays < 1) throw new UsageError(`--valid-days must be a positive integer, got ${JSON.stringify(values['valid-days'])}`);

  const extra = list(values.hosts);
  const dnsNames = [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`, ...extra.filter((h) => !isIP(h))];
  const ipAddresses = extra.filter((h) => isIP(h) !== 0);
  const fresh = (): Material => {
    const ca = createCA(`${service}.${namespace}-ca`, { validDays });
    return { ca, serving: createServingCert(ca, { commonName: `${service}.${namespace}.svc`, dnsNames, ipAddresses, validDays }) };
  };

  let material: Material | undefined;
  if (values.secret) {
    const { CoreV1Api } = await clientNode();
    const core = (await requireKubeConfig(values.kubeconfig, io)).makeApiClient(CoreV1Api);
    const name = values.secret;
    const read = async (): Promise<V1Secret | undefined> => {
      try {
        return await core.readNamespacedSecret({ name, namespace });
      } catch (e: unknown) {
        if (isNotFound(e)) return undefined;
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
        if (!isConflict(e)) throw new CertsCommandError(`creating Secret ${namespace}/${name}: ${describeKubeError(e)}`, { cause: e });
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

async function patch(args: string[], io: CommandIO): Promise<number> {
  const values = parseFlags(args, {
    secret: { type: 'string' },
    namespace: { type: 'string' },
    validating: { type: 'string' },
    mutating: { type: 'string' },
    crds: { type: 'string' },
    kubeconfig: { type: 'string' },
  });
  const { secret: name, namespace } = values;
  if (!name || !namespace) throw new UsageError('patch needs --secret and --namespace');
  const crds = values.crds === undefined ? [...CONVERTIBLE_CRD_NAMES] : list(values.crds);
  const kc = await requireKubeConfig(values.kubeconfig, io);
  const { AdmissionregistrationV1Api, ApiextensionsV1Api, CoreV1Api } = await clientNode();

  let secret: V1Secret;
  try {
    secret = await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ name, namespace });
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

  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
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
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
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


async function run(args: string[], io: CommandIO): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '-h' || sub === '--help' || rest.includes('-h') || rest.includes('--help')) {
    io.stdout.write(`${usage}\n`);
    return sub === undefined ? 2 : 0;
  }
  try {
    if (sub === 'create') return await create(rest, io);
    if (sub === 'patch') return await patch(rest, io);
  } catch (e: unknown) {
    if (e instanceof CertsCommandError) {
      io.stderr.write(`flotilla certs ${sub}: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
  throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}; use create or patch`);
}

export const command: Command = {
  name: 'certs',
  summary: "Create the webhook's serving certificate, or patch its CA into webhook configurations and CRDs",
  usage,
  run,
};
