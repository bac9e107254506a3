// Loading kubeconfig files the way kubectl finds them, and splitting one into a KubeConfig per context.
//
// Where the file comes from is decided by the caller (the command layer reads $KUBECONFIG and $HOME):
// an explicit path is used alone; otherwise every file of $KUBECONFIG is merged, the first file that
// names a cluster, user or context winning (kubectl's rule; client-node's own merge throws on a
// duplicate instead); otherwise ~/.kube/config.
//
// Every client gets its own KubeConfig holding one context: client-node resolves credentials from the
// *current* context on every request, so sharing one KubeConfig across clusters mixes one cluster's
// server with another's credentials.

import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { KubeConfig, type Cluster, type Context, type User } from '@kubernetes/client-node';

import { KubeconfigError, displayServer } from './errors.js';

export interface KubeconfigSource {
  /** `--kubeconfig`: this file only. */
  path?: string | undefined;
  /** `$KUBECONFIG`, already split on the path delimiter; empty entries are ignored. */
  envPaths?: readonly string[] | undefined;
  /** `~/.kube/config`, used when neither of the above is given. */
  homePath?: string | undefined;
}

export interface LoadedKubeconfig {
  config: KubeConfig;
  /** Names the file(s) for messages: `kubeconfig /x/y`, `$KUBECONFIG (a:b)`. */
  description: string;
}

/** Reads one kubeconfig file; errors name the file and never quote its content. */
export function readKubeconfigFile(file: string): KubeConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err: unknown) {
    const code = (err as { code?: string }).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (code ?? 'cannot read it');
    throw new KubeconfigError(`kubeconfig ${file}: ${why}`, { cause: err });
  }
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (err: unknown) {
    throw new KubeconfigError(`kubeconfig ${file}: ${loadErrorMessage(err)}`);
  }
  kc.makePathsAbsolute(dirname(file));
  return kc;
}

/**
 * client-node parses with js-yaml, whose messages quote the offending lines (which may hold a token);
 * only the position and the reason are kept. Its own validation messages (`users[2].name is missing`)
 * name fields, not values.
 */
function loadErrorMessage(err: unknown): string {
  if (err instanceof Error && err.name === 'YAMLException') {
    const e = err as Error & { mark?: { line?: number; column?: number }; reason?: string };
    const where = e.mark?.line !== undefined ? ` at line ${e.mark.line + 1}` : '';
    return `invalid YAML${where}${e.reason ? `: ${e.reason.split('\n')[0]?.slice(0, 120) ?? ''}` : ''}`;
  }
  if (err instanceof TypeError) return 'not a kubeconfig (expected a mapping with clusters, users and contexts)';
  if (err instanceof Error && /^(clusters|users|contexts)\[\d+\]\.[\w.]+ is missing$/.test(err.message)) return err.message;
  return 'not a valid kubeconfig';
}

/** Finds and reads the kubeconfig as kubectl would; a missing source is a KubeconfigError saying what was tried. */
export function loadKubeconfig(source: KubeconfigSource): LoadedKubeconfig {
  if (source.path !== undefined && source.path !== '') {
    return { config: readKubeconfigFile(source.path), description: `kubeconfig ${source.path}` };
  }
  const envPaths = (source.envPaths ?? []).filter((p) => p !== '');
  if (envPaths.length > 0) {
    const merged = new KubeConfig();
    merged.loadFromOptions({ clusters: [], users: [], contexts: [], currentContext: '' });
    for (const file of envPaths) mergeFirstWins(merged, readKubeconfigFile(file));
    return { config: merged, description: `$KUBECONFIG (${envPaths.join(':')})` };
  }
  if (source.homePath) {
    return { config: readKubeconfigFile(source.homePath), description: `kubeconfig ${source.homePath}` };
  }
  throw new KubeconfigError('no kubeconfig: pass --kubeconfig FILE or set KUBECONFIG');
}

function mergeFirstWins(into: KubeConfig, from: KubeConfig): void {
  const has = <T extends { name: string }>(list: readonly T[], name: string) => list.some((x) => x.name === name);
  for (const c of from.getClusters()) if (!has(into.getClusters(), c.name)) into.clusters.push(c);
  for (const u of from.getUsers()) if (!has(into.getUsers(), u.name)) into.users.push(u);
  for (const c of from.getContexts()) if (!has(into.getContexts(), c.name)) into.contexts.push(c);
  if (!into.currentContext && from.currentContext) into.currentContext = from.currentContext;
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
  if (!ctx) throw new KubeconfigError(`${description}: no context ${JSON.stringify(context)} (contexts: ${contextNames(kc).join(', ') || 'none'})`);
  const cluster: Cluster | undefined = kc.getClusters().find((c) => c.name === ctx.cluster);
  if (!cluster) throw new KubeconfigError(`${description}: context ${JSON.stringify(context)} names cluster ${JSON.stringify(ctx.cluster)}, which is not in the kubeconfig`);
  let user: User | undefined;
  if (ctx.user) {
    user = kc.getUsers().find((u) => u.name === ctx.user);
    if (!user) throw new KubeconfigError(`${description}: context ${JSON.stringify(context)} names user ${JSON.stringify(ctx.user)}, which is not in the kubeconfig`);
  }
  try {
    new URL(cluster.server);
  } catch {
    throw new KubeconfigError(`${description}: cluster ${JSON.stringify(cluster.name)} (context ${JSON.stringify(context)}): server is not a URL`);
  }
  const one = new KubeConfig();
  one.loadFromOptions({ clusters: [cluster], users: user ? [user] : [], contexts: [ctx], currentContext: context });
  return one;
}

/** scheme://host:port of the context's server, for messages. */
export function serverOf(kc: KubeConfig): string {
  return displayServer(kc.getCurrentCluster()?.server ?? '');
}
