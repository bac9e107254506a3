// Loading a KubeConfig the way kubectl does, from options the command layer fills in (this module reads
// no environment). It imports @kubernetes/client-node, which takes most of a second to load, so commands
// import this module dynamically, only when they talk to an apiserver.
//
// Precedence (kubectl's): the explicit file; else every file listed in $KUBECONFIG, merged; else
// ~/.kube/config; else the pod's service account. Merging follows client-go's rules: files are read in
// order, a missing file is skipped, the first file to define a cluster, user or context name wins, and
// the first file that sets current-context decides it.

import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { KubeConfig, type Cluster, type Context, type User } from '@kubernetes/client-node';

export interface KubeConfigSource {
  /** `--kubeconfig`: read this file and nothing else; it must exist. */
  file?: string;
  /** `--context`: the context to use instead of the current-context. */
  context?: string;
  /** The value of $KUBECONFIG: files separated by the platform's path delimiter (`:`), merged. */
  kubeconfigEnv?: string;
  /** `~/.kube/config`, read when neither `file` nor `kubeconfigEnv` names a file; undefined skips it. */
  homeFile?: string;
  /** The in-cluster service account (KUBERNETES_SERVICE_HOST/PORT), the last resort; undefined skips it. */
  inCluster?: { host: string; port: string; serviceAccountDir?: string };
}

/** NONE: no source applies; UNREADABLE: a file is missing or malformed; NO_CONTEXT: see loadKubeConfig. */
export type KubeConfigErrorCode = 'NONE' | 'UNREADABLE' | 'NO_CONTEXT';

export class KubeConfigError extends Error {
  readonly code: KubeConfigErrorCode;
  constructor(code: KubeConfigErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KubeConfigError';
    this.code = code;
  }
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

function readFile(file: string): KubeConfig | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err: unknown) {
    throw new KubeConfigError('UNREADABLE', `kubeconfig ${file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  // An empty file is an empty config to kubectl; client-node would fail on it.
  if (text.trim() === '') return undefined;
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(file);
  } catch (err: unknown) {
    throw new KubeConfigError('UNREADABLE', `kubeconfig ${file}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`, { cause: err });
  }
  return kc;
}

/** Merges configs with client-go's rules: the first definition of each name, and the first current-context. */
function merge(configs: readonly KubeConfig[]): KubeConfig {
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let currentContext = '';
  for (const kc of configs) {
    for (const c of kc.getClusters()) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of kc.getUsers()) if (!users.has(u.name)) users.set(u.name, u);
    for (const c of kc.getContexts()) if (!contexts.has(c.name)) contexts.set(c.name, c);
    if (!currentContext && kc.getCurrentContext()) currentContext = kc.getCurrentContext();
  }
  const merged = new KubeConfig();
  merged.loadFromOptions({ clusters: [...clusters.values()], users: [...users.values()], contexts: [...contexts.values()], currentContext });
  return merged;
}

function inClusterConfig(host: string, port: string, dir: string): KubeConfig {
  const server = `${port === '80' || port === '8080' || port === '8001' ? 'http' : 'https'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const namespaceFile = join(dir, 'namespace');
  const namespace = existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8').trim() : undefined;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'in-cluster', server, caFile: join(dir, 'ca.crt'), skipTLSVerify: false }],
    users: [{ name: 'in-cluster', authProvider: { name: 'tokenFile', config: { tokenFile: join(dir, 'token') } } }],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster', ...(namespace ? { namespace } : {}) }],
    currentContext: 'in-cluster',
  });
  return kc;
}

function load(source: KubeConfigSource): KubeConfig {
  const tried: string[] = [];
  if (source.file !== undefined) {
    if (!existsSync(source.file)) throw new KubeConfigError('UNREADABLE', `kubeconfig ${source.file}: no such file`);
    return readFile(source.file) ?? merge([]);
  }
  const listed = (source.kubeconfigEnv ?? '').split(delimiter).filter((f) => f !== '');
  if (listed.length > 0) {
    const configs = listed.filter((f) => existsSync(f)).map(readFile).filter((kc): kc is KubeConfig => kc !== undefined);
    if (configs.length > 0) return merge(configs);
    tried.push(`$KUBECONFIG (${listed.join(delimiter)}: no such file or empty)`);
  } else if (source.homeFile !== undefined) {
    const home = existsSync(source.homeFile) ? readFile(source.homeFile) : undefined;
    if (home) return home;
    tried.push(source.homeFile);
  }
  if (source.inCluster) {
    const dir = source.inCluster.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
    if (existsSync(join(dir, 'token'))) return inClusterConfig(source.inCluster.host, source.inCluster.port, dir);
    tried.push(`the service account (${join(dir, 'token')}: no such file)`);
  }
  throw new KubeConfigError('NONE', `no kubeconfig found${tried.length > 0 ? ` (tried ${tried.join('; ')})` : ''}`);
}

/**
 * The KubeConfig the options describe, set to `source.context` or the files' current-context. Throws
 * KubeConfigError: NONE when no source applies, UNREADABLE for a missing or malformed file, NO_CONTEXT when the
 * context is unset or unknown or names a cluster or user that is not defined.
 */
export function loadKubeConfig(source: KubeConfigSource): KubeConfig {
  const kc = load(source);
  const names = kc.getContexts().map((c) => c.name);
  const known = names.length > 0 ? `contexts: ${names.join(', ')}` : 'it defines no contexts';
  const name = source.context ?? kc.getCurrentContext();
  if (!name) throw new KubeConfigError('NO_CONTEXT', `no context given and the kubeconfig sets no current-context (${known})`);
  const context = kc.getContextObject(name);
  if (!context) throw new KubeConfigError('NO_CONTEXT', `context ${JSON.stringify(name)} is not in the kubeconfig (${known})`);
  if (!kc.getCluster(context.cluster)) throw new KubeConfigError('NO_CONTEXT', `context ${JSON.stringify(name)} names cluster ${JSON.stringify(context.cluster)}, which the kubeconfig does not define`);
  if (context.user && !kc.getUser(context.user)) throw new KubeConfigError('NO_CONTEXT', `context ${JSON.stringify(name)} names user ${JSON.stringify(context.user)}, which the kubeconfig does not define`);
  kc.setCurrentContext(name);
  return kc;
}
