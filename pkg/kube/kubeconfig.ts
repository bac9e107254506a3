// Loading kubeconfig files the way kubectl finds them, from options the command layer fills in (this
// module reads no environment), and splitting one into a KubeConfig per context (config.ts: the project's
// own kubeconfig model, not client-node's, whose loader brings in every generated API model).
//
// Precedence (kubectl's): the explicit file alone; else every file listed in $KUBECONFIG, merged; else
// ~/.kube/config; else the pod's service account. Merging follows client-go's rules: files are read in
// order, a missing or empty file is skipped, the first file to define a cluster, user or context name wins
// (client-node's merge throws on a duplicate instead), and the first file that sets current-context
// decides it. Relative paths in a file are resolved against that file's directory.
//
// Every member client gets its own KubeConfig holding one context (configForContext): a KubeConfig resolves
// credentials from the *current* context on every request, so sharing one KubeConfig across clusters would
// mix one cluster's server with another's credentials.

import { existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { KubeConfig, MissingFieldError, type Cluster, type Context, type User } from './config.js';

import { YamlError } from '../yaml/index.js';
import { KubeconfigError, displayServer } from './errors.js';

export interface KubeconfigSource {
  /** `--kubeconfig`: read this file and nothing else; it must exist. */
  file?: string | undefined;
  /** `--context`: the context to use instead of the current-context (loadContext only). */
  context?: string | undefined;
  /** The value of $KUBECONFIG: files separated by the platform's path delimiter (`:`), merged. */
  kubeconfigEnv?: string | undefined;
  /** `~/.kube/config`, read when neither `file` nor `kubeconfigEnv` names a file; undefined skips it. */
  homeFile?: string | undefined;
  /** The in-cluster service account (KUBERNETES_SERVICE_HOST/PORT), the last resort; undefined skips it. */
  inCluster?: { host: string; port: string; serviceAccountDir?: string } | undefined;
}

export interface LoadedKubeconfig {
  config: KubeConfig;
  /** Names the file(s) for messages: `kubeconfig /x/y`, `$KUBECONFIG (a:b)`, `the service account`. */
  description: string;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Reads one kubeconfig file; errors name the file and never quote its content. An empty file is an empty config. */
export function readKubeconfigFile(file: string): KubeConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err: unknown) {
    const code = (err as { code?: string }).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'is a directory'
            : (code ?? 'cannot read it');
    throw new KubeconfigError('UNREADABLE', `kubeconfig ${file}: ${why}`, { cause: err });
  }
  const kc = new KubeConfig();
  if (text.trim() === '') {
    kc.loadFromOptions({ clusters: [], users: [], contexts: [], currentContext: '' });
    return kc;
  }
  try {
    kc.loadFromString(text);
  } catch (err: unknown) {
    throw new KubeconfigError('UNREADABLE', `kubeconfig ${file}: ${loadErrorMessage(err)}`);
  }
  kc.makePathsAbsolute(dirname(file));
  return kc;
}

/**
 * The YAML reader's problems give a line and a reason, never the text (which may hold a token); the model's
 * own (`users[2].name is missing`) name fields, not values.
 */
function loadErrorMessage(err: unknown): string {
  if (err instanceof YamlError) {
    const reason =
      err.problem.message
        .replace(/^invalid YAML: /, '')
        .split('\n')[0]
        ?.slice(0, 120) ?? '';
    return `invalid YAML at line ${err.problem.line}${reason ? `: ${reason}` : ''}`;
  }
  if (err instanceof TypeError) return 'not a kubeconfig (expected a mapping with clusters, users and contexts)';
  if (err instanceof MissingFieldError) return err.message;
  return 'not a valid kubeconfig';
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
  merged.loadFromOptions({
    clusters: [...clusters.values()],
    users: [...users.values()],
    contexts: [...contexts.values()],
    currentContext,
  });
  return merged;
}

function isEmpty(kc: KubeConfig): boolean {
  return kc.getClusters().length === 0 && kc.getUsers().length === 0 && kc.getContexts().length === 0;
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

/**
 * Finds and reads the kubeconfig as kubectl would, every context kept. Throws KubeconfigError: NONE
 * saying what was tried when no source applies, UNREADABLE for a missing explicit file or a malformed one.
 */
export function loadKubeconfig(source: KubeconfigSource): LoadedKubeconfig {
  const tried: string[] = [];
  if (source.file !== undefined && source.file !== '') {
    return { config: readKubeconfigFile(source.file), description: `kubeconfig ${source.file}` };
  }
  const listed = (source.kubeconfigEnv ?? '').split(delimiter).filter((f) => f !== '');
  if (listed.length > 0) {
    const configs = listed
      .filter((f) => existsSync(f))
      .map(readKubeconfigFile)
      .filter((kc) => !isEmpty(kc));
    if (configs.length > 0) return { config: merge(configs), description: `$KUBECONFIG (${listed.join(delimiter)})` };
    tried.push(`$KUBECONFIG (${listed.join(delimiter)}: no such file or empty)`);
  } else if (source.homeFile !== undefined) {
    const home = existsSync(source.homeFile) ? readKubeconfigFile(source.homeFile) : undefined;
    if (home && !isEmpty(home)) return { config: home, description: `kubeconfig ${source.homeFile}` };
    tried.push(source.homeFile);
  }
  if (source.inCluster) {
    const dir = source.inCluster.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
    if (existsSync(join(dir, 'token')))
      return {
        config: inClusterConfig(source.inCluster.host, source.inCluster.port, dir),
        description: 'the service account',
      };
    tried.push(`the service account (${join(dir, 'token')}: no such file)`);
  }
  throw new KubeconfigError('NONE', `no kubeconfig found${tried.length > 0 ? ` (tried ${tried.join('; ')})` : ''}`);
}

/**
 * The KubeConfig the options describe, set to `source.context` or the files' current-context. Throws
 * KubeconfigError: NONE when no source applies, UNREADABLE for a missing or malformed file, NO_CONTEXT when
 * the context is unset or unknown or names a cluster or user that is not defined.
 */
export function loadContext(source: KubeconfigSource): KubeConfig {
  const kc = loadKubeconfig(source).config;
  const names = contextNames(kc);
  const known = names.length > 0 ? `contexts: ${names.join(', ')}` : 'it defines no contexts';
  const name = source.context ?? kc.getCurrentContext();
  if (!name)
    throw new KubeconfigError('NO_CONTEXT', `no context given and the kubeconfig sets no current-context (${known})`);
  const context = kc.getContextObject(name);
  if (!context)
    throw new KubeconfigError('NO_CONTEXT', `context ${JSON.stringify(name)} is not in the kubeconfig (${known})`);
  if (!kc.getCluster(context.cluster))
    throw new KubeconfigError(
      'NO_CONTEXT',
      `context ${JSON.stringify(name)} names cluster ${JSON.stringify(context.cluster)}, which the kubeconfig does not define`,
    );
  if (context.user && !kc.getUser(context.user))
    throw new KubeconfigError(
      'NO_CONTEXT',
      `context ${JSON.stringify(name)} names user ${JSON.stringify(context.user)}, which the kubeconfig does not define`,
    );
  kc.setCurrentContext(name);
  return kc;
}

/** Context names in file order. */
export function contextNames(kc: KubeConfig): string[] {
  return kc.getContexts().map((c) => c.name);
}

/**
 * A KubeConfig holding only `context` and the cluster and user it names, with that context current.
 * A context whose cluster or user is missing is a KubeconfigError naming both.
 */
export function configForContext(kc: KubeConfig, context: string, description: string): KubeConfig {
  const ctx: Context | undefined = kc.getContexts().find((c) => c.name === context);
  if (!ctx)
    throw new KubeconfigError(
      'NO_CONTEXT',
      `${description}: no context ${JSON.stringify(context)} (contexts: ${contextNames(kc).join(', ') || 'none'})`,
    );
  const cluster: Cluster | undefined = kc.getClusters().find((c) => c.name === ctx.cluster);
  if (!cluster)
    throw new KubeconfigError(
      'NO_CONTEXT',
      `${description}: context ${JSON.stringify(context)} names cluster ${JSON.stringify(ctx.cluster)}, which is not in the kubeconfig`,
    );
  let user: User | undefined;
  if (ctx.user) {
    user = kc.getUsers().find((u) => u.name === ctx.user);
    if (!user)
      throw new KubeconfigError(
        'NO_CONTEXT',
        `${description}: context ${JSON.stringify(context)} names user ${JSON.stringify(ctx.user)}, which is not in the kubeconfig`,
      );
  }
  try {
    new URL(cluster.server);
  } catch {
    throw new KubeconfigError(
      'NO_CONTEXT',
      `${description}: cluster ${JSON.stringify(cluster.name)} (context ${JSON.stringify(context)}): server is not a URL`,
    );
  }
  const one = new KubeConfig();
  one.loadFromOptions({ clusters: [cluster], users: user ? [user] : [], contexts: [ctx], currentContext: context });
  return one;
}

/** scheme://host:port of the context's server, for messages. */
export function serverOf(kc: KubeConfig): string {
  return displayServer(kc.getCurrentCluster()?.server ?? '');
}
