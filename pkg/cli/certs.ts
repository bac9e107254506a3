// `flotilla certs create|patch`: the kube-webhook-certgen flow, so install Jobs can run the flotilla image.
// Flags and help are in commands.ts. The Kubernetes client is loaded only when a cluster is needed.
//   create: a CA and a serving certificate for the webhook Service's DNS names, into a Secret and/or files.
//           An existing Secret is kept when it still serves (re-running an install must not rotate the CA
//           under running webhooks) and replaced, saying why, when it does not;
//   patch:  the Secret's CA into the webhook configurations and the CRDs' conversion settings.

import type * as ClientErrors from '../kube/client-errors.js';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fchmodSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';

import { CONVERTIBLE_CRD_NAMES } from '../../api/crds/index.js';
import {
  CertError,
  MAX_VALID_DAYS,
  checkCABundle,
  createCA,
  createServingCert,
  parseHost,
  servingMaterialProblems,
  type KeyPair,
  type ServingRequirements,
} from '../certs/index.js';
import { UsageError, type CommandIO } from './command.js';
import type { CertsCreateFlags, CertsPatchFlags } from './commands.js';
import { loadKubeConfigFor } from './kubeflags.js';
import { errorClass } from '../../api/internal/errors.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * A kept certificate must outlive this many days, or a third of --valid-days when that is shorter (so a
 * certificate made by this run is never already due, as cert-manager renews at two thirds).
 */
const RENEW_BEFORE_DAYS = 30;
/** Writes of the Secret that lose a race with another writer are retried this often, each time re-read. */
const MAX_SECRET_WRITES = 3;
/** RFC 1123 label, as Kubernetes requires of namespace names (Service names are stricter still). */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export class CertsCommandError extends errorClass('CertsCommandError', 'CERTS') {}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined): string | undefined =>
  s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8');

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

type KubeErrors = typeof ClientErrors;

/** The cluster for --kubeconfig/--context, with client-node and its error helpers, loaded on demand. */
async function connect(values: { kubeconfig?: string | undefined; context?: string | undefined }, io: CommandIO) {
  const [config, k8s, errors, { clientNodeConfig }] = await Promise.all([
    loadKubeConfigFor(values, io),
    import('@kubernetes/client-node'),
    import('../kube/client-errors.js'),
    import('../kube/config.js'),
  ]);
  return { kc: await clientNodeConfig(config), k8s, ...errors };
}

interface Material {
  ca: KeyPair;
  serving: KeyPair;
}

function secretMaterial(secret: V1Secret): { caPem?: string; certPem?: string; keyPem?: string } {
  return {
    caPem: unb64(secret.data?.['ca.crt']),
    certPem: unb64(secret.data?.['tls.crt']),
    keyPem: unb64(secret.data?.['tls.key']),
  };
}

function secretData(m: Material): Record<string, string> {
  return { 'ca.crt': b64(m.ca.certPem), 'tls.crt': b64(m.serving.certPem), 'tls.key': b64(m.serving.keyPem) };
}

function requireDNSLabel(flag: string, value: string): void {
  if (value.length > 63 || !DNS_LABEL.test(value)) {
    throw new UsageError(
      `${flag} must be a DNS label (at most 63 lowercase letters, digits and "-", starting and ending with a letter or digit), got ${JSON.stringify(value)}`,
    );
  }
}

function parseValidDays(value: string): number {
  const days = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (!(days >= 1 && days <= MAX_VALID_DAYS))
    throw new UsageError(
      `--valid-days must be a whole number of days from 1 to ${MAX_VALID_DAYS}, got ${JSON.stringify(value)}`,
    );
  return days;
}

/** --hosts split into DNS names and IP addresses; a usage error names every entry that is neither. */
function parseHosts(value: string | undefined): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  const bad: string[] = [];
  for (const host of list(value)) {
    const parsed = parseHost(host);
    if (parsed.type === 'invalid') bad.push(`${JSON.stringify(host)} ${parsed.problem}`);
    else (parsed.type === 'dns' ? dnsNames : ipAddresses).push(parsed.value);
  }
  if (bad.length > 0) throw new UsageError(`--hosts: ${bad.join('; ')}`);
  return { dnsNames, ipAddresses };
}

export async function create(values: CertsCreateFlags, io: CommandIO): Promise<number> {
  const { service, namespace } = values;
  if (!values.secret && !values['cert-dir']) throw new UsageError('create needs --secret, --cert-dir or both');
  requireDNSLabel('--service', service);
  requireDNSLabel('--namespace', namespace);
  const validDays = parseValidDays(values['valid-days']);
  const extra = parseHosts(values.hosts);

  const dnsNames = [
    ...new Set([
      service,
      `${service}.${namespace}`,
      `${service}.${namespace}.svc`,
      `${service}.${namespace}.svc.cluster.local`,
      ...extra.dnsNames,
    ]),
  ];
  const ipAddresses = [...new Set(extra.ipAddresses)];
  const fresh = (): Material => {
    const ca = createCA(`${service}.${namespace}-ca`, { validDays });
    return {
      ca,
      serving: createServingCert(ca, { commonName: `${service}.${namespace}.svc`, dnsNames, ipAddresses, validDays }),
    };
  };

  let material: Material | undefined;
  if (values.secret) {
    const { kc, k8s, describeKubeError, httpStatus } = await connect(values, io);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const requirements: ServingRequirements = {
      dnsNames,
      ipAddresses,
      now: new Date(),
      renewBeforeMs: Math.min(RENEW_BEFORE_DAYS, validDays / 3) * DAY_MS,
    };
    material = await storeInSecret(
      core,
      { describeKubeError, httpStatus },
      { name: values.secret, namespace },
      { fresh, requirements, names: [...dnsNames, ...ipAddresses] },
      io,
    );
  }
  material ??= fresh();

  const dir = values['cert-dir'];
  if (dir) {
    writeCertDir(dir, material);
    io.stdout.write(`wrote ${join(dir, 'ca.crt')}, ${join(dir, 'tls.crt')} and ${join(dir, 'tls.key')}\n`);
  }
  return 0;
}

/**
 * The material in Secret `ref`: what it holds when that still meets `want.requirements`, else new
 * material written there (created, or replaced at the resourceVersion that was judged). A write that
 * loses a race with another writer (409) starts over from a fresh read, so concurrent runs agree on
 * whatever was stored first.
 */
async function storeInSecret(
  core: CoreV1Api,
  errors: Pick<KubeErrors, 'describeKubeError' | 'httpStatus'>,
  ref: { name: string; namespace: string },
  want: { fresh: () => Material; requirements: ServingRequirements; names: string[] },
  io: CommandIO,
): Promise<Material> {
  const { name, namespace } = ref;
  const id = `Secret ${namespace}/${name}`;
  for (let attempt = 1; ; attempt++) {
    let existing: V1Secret | undefined;
    try {
      existing = await core.readNamespacedSecret({ name, namespace });
    } catch (e: unknown) {
      if (errors.httpStatus(e) !== 404)
        throw new CertsCommandError(`reading ${id}: ${errors.describeKubeError(e)}`, { cause: e });
    }
    const found = attempt === 1 ? `${id} exists` : `${id} was written concurrently`;
    if (existing) {
      const stored = secretMaterial(existing);
      const problems = servingMaterialProblems(stored, want.requirements);
      if (problems.length === 0) {
        io.stdout.write(`${found}; keeping its certificate\n`);
        // The CA key is not kept anywhere: the CA exists only to sign this one certificate.
        return {
          ca: { certPem: stored.caPem ?? '', keyPem: '' },
          serving: { certPem: stored.certPem ?? '', keyPem: stored.keyPem ?? '' },
        };
      }
      io.stdout.write(`${found} but its certificate cannot be kept: ${problems.join('; ')}\n`);
    }

    const next = want.fresh();
    try {
      if (existing) {
        // Keep the Secret's type (immutable) and any other keys; its resourceVersion makes the write conditional.
        await core.replaceNamespacedSecret({
          name,
          namespace,
          body: { ...existing, data: { ...existing.data, ...secretData(next) } },
        });
        io.stdout.write(
          `replaced the certificate in ${id} with a new CA and certificate for ${want.names.join(', ')}\n`,
        );
      } else {
        const body: V1Secret = {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace, labels: { 'app.kubernetes.io/part-of': 'flotilla' } },
          type: 'kubernetes.io/tls',
          data: secretData(next),
        };
        await core.createNamespacedSecret({ namespace, body });
        io.stdout.write(`created ${id} for ${want.names.join(', ')}\n`);
      }
      return next;
    } catch (e: unknown) {
      if (errors.httpStatus(e) !== 409)
        throw new CertsCommandError(`${existing ? 'replacing' : 'creating'} ${id}: ${errors.describeKubeError(e)}`, {
          cause: e,
        });
      if (attempt >= MAX_SECRET_WRITES)
        throw new CertsCommandError(
          `${id} was changed by another writer each of the ${attempt} times it was written; run again`,
          { cause: e },
        );
    }
  }
}

/**
 * Writes ca.crt, tls.crt and tls.key into `dir`. Each file is written under a temporary name with its
 * mode set outright (open's mode passes through the umask) and renamed into place, so an existing file
 * never keeps its old mode and a reader never sees half a file. Directories made here get 0700; an
 * existing directory keeps its mode.
 */
function writeCertDir(dir: string, m: Material): void {
  let created: string | undefined;
  try {
    created = mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (created !== undefined) {
      const top = resolve(created);
      for (let d = resolve(dir); ; d = dirname(d)) {
        chmodSync(d, 0o700);
        if (d === top || d === dirname(d)) break;
      }
    }
  } catch (e: unknown) {
    throw new CertsCommandError(`creating directory ${dir}: ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    });
  }
  writeFileReplacing(join(dir, 'ca.crt'), m.ca.certPem, 0o644);
  writeFileReplacing(join(dir, 'tls.crt'), m.serving.certPem, 0o644);
  writeFileReplacing(join(dir, 'tls.key'), m.serving.keyPem, 0o600);
}

function writeFileReplacing(path: string, data: string, mode: number): void {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    // wx: a fresh file, never one planted under the temporary name or a link.
    fd = openSync(tmp, 'wx', mode);
    fchmodSync(fd, mode);
    writeFileSync(fd, data);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch (e: unknown) {
    if (fd !== undefined) closeSync(fd);
    rmSync(tmp, { force: true });
    throw new CertsCommandError(`writing ${path}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

/** JSON patch ops setting caBundle on each of `count` entries under `prefix` (…/<i>/clientConfig/caBundle). */
function caBundleOps(
  prefix: string,
  count: number,
  caBundle: string,
): Array<{ op: 'add'; path: string; value: string }> {
  // `add` replaces an existing member, so one op works whether or not caBundle was set before.
  return Array.from({ length: count }, (_, i) => ({
    op: 'add' as const,
    path: `${prefix}/${i}/clientConfig/caBundle`,
    value: caBundle,
  }));
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
  const caData = secret.data?.['ca.crt'];
  if (!caData) throw new CertsCommandError(`Secret ${namespace}/${name} has no ca.crt`);
  const caPem = unb64(caData) ?? '';
  try {
    checkCABundle(caPem, { label: `ca.crt of Secret ${namespace}/${name}`, now: new Date() });
  } catch (e: unknown) {
    if (!(e instanceof CertError)) throw e;
    throw new CertsCommandError(`${e.message}; not writing it into any caBundle`, { cause: e });
  }
  // What was checked is what is written.
  const caBundle = b64(caPem);

  const failures: string[] = [];
  const attempt = async (what: string, fn: () => Promise<string>): Promise<void> => {
    try {
      io.stdout.write(`${await fn()}\n`);
    } catch (e: unknown) {
      failures.push(`${what}: ${e instanceof CertsCommandError ? e.message : describeKubeError(e)}`);
    }
  };

  const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  const configs = [
    {
      kind: 'ValidatingWebhookConfiguration',
      name: values.validating,
      read: (name: string) => admission.readValidatingWebhookConfiguration({ name }),
      patch: (name: string, body: object[]) => admission.patchValidatingWebhookConfiguration({ name, body }),
    },
    {
      kind: 'MutatingWebhookConfiguration',
      name: values.mutating,
      read: (name: string) => admission.readMutatingWebhookConfiguration({ name }),
      patch: (name: string, body: object[]) => admission.patchMutatingWebhookConfiguration({ name, body }),
    },
  ];
  for (const { kind, name: config, read, patch } of configs) {
    if (!config) continue;
    await attempt(`${kind} ${config}`, async () => {
      const n = (await read(config)).webhooks?.length ?? 0;
      if (n > 0) await patch(config, caBundleOps('/webhooks', n, caBundle));
      return `patched the CA bundle of ${n} webhook(s) in ${kind} ${config}`;
    });
  }
  const extensions = kc.makeApiClient(k8s.ApiextensionsV1Api);
  for (const crd of crds) {
    await attempt(`CustomResourceDefinition ${crd}`, async () => {
      const current = await extensions.readCustomResourceDefinition({ name: crd });
      if (current.spec.conversion?.strategy !== 'Webhook' || !current.spec.conversion.webhook?.clientConfig) {
        throw new CertsCommandError('has no conversion webhook to patch');
      }
      await extensions.patchCustomResourceDefinition({
        name: crd,
        body: [{ op: 'add', path: '/spec/conversion/webhook/clientConfig/caBundle', value: caBundle }],
      });
      return `patched the conversion CA bundle of CustomResourceDefinition ${crd}`;
    });
  }
  for (const f of failures) io.stderr.write(`flotilla certs patch: ${f}\n`);
  return failures.length > 0 ? 1 : 0;
}
