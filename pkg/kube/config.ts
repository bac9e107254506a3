// The kubeconfig model the project loads and talks through: clusters, users and contexts read from a
// kubeconfig's YAML, and `applyToHTTPSOptions`, which puts a context's TLS material and credentials on
// one request's options. Its shape is client-node's `KubeConfig` (the same field and method names), so a
// client-node KubeConfig is accepted wherever this one is; but loading it costs no generated API models
// (client-node's loader pulls in all of them: ~85 MiB of RSS, most of a second), which is most of what a
// pull agent would otherwise hold.
//
// Credentials (auth.ts): token, token-file (read again after a minute, as client-go does), client
// certificate and key (files or inline data), basic auth, `as` (Impersonate-User), exec plugins
// (client.authentication.k8s.io ExecCredential) and the `tokenFile` auth provider of the in-cluster
// config. A cluster reached through a `proxy-url`, or a user of another auth provider (gcp, azure, oidc),
// is handed to client-node's own KubeConfig, loaded only then.

import type https from 'node:https';
import { isAbsolute, join } from 'node:path';
import type { KubeConfig as ClientNodeConfig } from '@kubernetes/client-node';

import { readYaml } from '../yaml/index.js';
import { applyCredentials, needsClientNode } from './auth.js';
import { isObject, ownString, type JsonObject } from './objects.js';

export interface Cluster {
  readonly name: string;
  readonly server: string;
  readonly caData?: string | undefined;
  caFile?: string | undefined;
  readonly tlsServerName?: string | undefined;
  readonly skipTLSVerify: boolean;
  readonly proxyUrl?: string | undefined;
}

export interface User {
  readonly name: string;
  readonly token?: string | undefined;
  /** `token-file`: read when a request needs it, and again once a minute. */
  tokenFile?: string | undefined;
  readonly certData?: string | undefined;
  certFile?: string | undefined;
  readonly keyData?: string | undefined;
  keyFile?: string | undefined;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly impersonateUser?: string | undefined;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as client-node types it, so its configs fit
  exec?: any;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as client-node types it, so its configs fit
  readonly authProvider?: any;
}

export interface Context {
  readonly name: string;
  readonly cluster: string;
  readonly user?: string | undefined;
  readonly namespace?: string | undefined;
}

export interface ConfigParts {
  clusters: Cluster[];
  users: User[];
  contexts: Context[];
  currentContext: string;
}

/** A kubeconfig's entry that lacks a required field: `clusters[2].cluster.server is missing`. */
export class MissingFieldError extends Error {}

/** Limits for the kubeconfig's YAML (a kubeconfig is small and flat). */
const YAML_LIMITS = { maxDepth: 20, maxAliasExpansion: 64 * 1024 };

export class KubeConfig {
  clusters: Cluster[] = [];
  users: User[] = [];
  contexts: Context[] = [];
  currentContext = '';

  getClusters(): Cluster[] {
    return this.clusters;
  }
  getUsers(): User[] {
    return this.users;
  }
  getContexts(): Context[] {
    return this.contexts;
  }
  getCurrentContext(): string {
    return this.currentContext;
  }
  setCurrentContext(name: string): void {
    this.currentContext = name;
  }
  getContextObject(name: string): Context | null {
    return this.contexts.find((c) => c.name === name) ?? null;
  }
  getCluster(name: string): Cluster | null {
    return this.clusters.find((c) => c.name === name) ?? null;
  }
  getUser(name: string): User | null {
    return this.users.find((u) => u.name === name) ?? null;
  }
  getCurrentCluster(): Cluster | null {
    const ctx = this.getContextObject(this.currentContext);
    return ctx ? this.getCluster(ctx.cluster) : null;
  }
  getCurrentUser(): User | null {
    const ctx = this.getContextObject(this.currentContext);
    return ctx?.user ? this.getUser(ctx.user) : null;
  }

  loadFromOptions(parts: ConfigParts): void {
    this.clusters = parts.clusters;
    this.users = parts.users;
    this.contexts = parts.contexts;
    this.currentContext = parts.currentContext;
  }

  /**
   * Reads a kubeconfig's YAML. Throws YamlError (with line and column; the text is never quoted),
   * TypeError for a document that is not a mapping, MissingFieldError naming an entry's missing field.
   */
  loadFromString(text: string): void {
    const doc = readYaml(text, YAML_LIMITS);
    if (!isObject(doc)) throw new TypeError('a kubeconfig is a mapping');
    this.loadFromOptions({
      clusters: entries(doc, 'clusters').map(readCluster),
      users: entries(doc, 'users').map(readUser),
      contexts: entries(doc, 'contexts').map(readContext),
      currentContext: ownString(doc, 'current-context') ?? '',
    });
  }

  /** Resolves the files the kubeconfig names against `dir` (the directory of the file that holds them). */
  makePathsAbsolute(dir: string): void {
    const abs = (f: string | undefined) => (f && !isAbsolute(f) ? join(dir, f) : f);
    for (const c of this.clusters) if (c.caFile) c.caFile = abs(c.caFile);
    for (const u of this.users) {
      if (u.certFile) u.certFile = abs(u.certFile);
      if (u.keyFile) u.keyFile = abs(u.keyFile);
      if (u.tokenFile) u.tokenFile = abs(u.tokenFile);
      // A plugin named by a path (not looked up in $PATH) is found from the kubeconfig's directory, as kubectl does.
      const exec: unknown = u.exec;
      const command = isObject(exec) ? exec.command : undefined;
      if (isObject(exec) && typeof command === 'string' && command.includes('/'))
        u.exec = { ...exec, command: abs(command) };
    }
  }

  /**
   * Puts the current context's TLS material (CA, client certificate and key, server name, verification)
   * and credentials (Authorization, Impersonate-User, basic auth) on `opts`. Runs an exec plugin when its
   * credential is missing or expired. A proxied cluster also gets its proxy agent (`opts.agent`).
   */
  async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    const cluster = this.getCurrentCluster();
    const user = this.getCurrentUser();
    if (needsClientNode(cluster, user)) return (await clientNodeTwin(this)).applyToHTTPSOptions(opts);
    await applyCredentials(cluster, user, opts);
  }
}

/** client-node's KubeConfig for the same contexts, made once per KubeConfig (it keeps auth state). */
const twins = new WeakMap<KubeConfig, Promise<ClientNodeConfig>>();

function clientNodeTwin(kc: KubeConfig): Promise<ClientNodeConfig> {
  let twin = twins.get(kc);
  if (!twin) twins.set(kc, (twin = clientNodeConfig(kc)));
  return twin;
}

/**
 * client-node's KubeConfig holding the same clusters, users and contexts, for the commands that use its
 * generated API classes (`flotilla certs`). Loads client-node.
 */
export async function clientNodeConfig(kc: KubeConfig): Promise<ClientNodeConfig> {
  const { KubeConfig: Config } = await import('@kubernetes/client-node');
  const out = new Config();
  out.loadFromOptions({
    clusters: kc.clusters,
    // client-node knows a token file only as the in-cluster config's auth provider.
    users: kc.users.map((u) =>
      u.tokenFile && !u.token && !u.authProvider
        ? { ...u, authProvider: { name: 'tokenFile', config: { tokenFile: u.tokenFile } } }
        : u,
    ),
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return out;
}

/** The list under `key`, its entries mappings (a missing or non-list value is an empty list). */
function entries(doc: JsonObject, key: 'clusters' | 'users' | 'contexts'): Array<[JsonObject, string]> {
  const list = doc[key];
  if (!Array.isArray(list)) return [];
  return list.map((e, i) => {
    const where = `${key}[${i}]`;
    if (!isObject(e)) throw new MissingFieldError(`${where}.name is missing`);
    return [e, where];
  });
}

function required(entry: JsonObject, where: string, field: string): string {
  const v = ownString(entry, field);
  if (!v) throw new MissingFieldError(`${where}.${field} is missing`);
  return v;
}

function section(entry: JsonObject, where: string, key: string, need: boolean): JsonObject {
  const v = Object.prototype.hasOwnProperty.call(entry, key) ? entry[key] : undefined;
  if (isObject(v)) return v;
  if (need) throw new MissingFieldError(`${where}.${key} is missing`);
  return {};
}

function readCluster([e, where]: [JsonObject, string]): Cluster {
  const name = required(e, where, 'name');
  const c = section(e, where, 'cluster', true);
  return {
    name,
    server: required(c, `${where}.cluster`, 'server').replace(/\/$/, ''),
    caData: ownString(c, 'certificate-authority-data'),
    caFile: ownString(c, 'certificate-authority'),
    tlsServerName: ownString(c, 'tls-server-name'),
    skipTLSVerify: c['insecure-skip-tls-verify'] === true,
    proxyUrl: ownString(c, 'proxy-url'),
  };
}

function readUser([e, where]: [JsonObject, string]): User {
  const name = required(e, where, 'name');
  const u = section(e, where, 'user', false);
  const own = (k: string) => (Object.prototype.hasOwnProperty.call(u, k) && isObject(u[k]) ? u[k] : undefined);
  return {
    name,
    token: ownString(u, 'token'),
    tokenFile: ownString(u, 'token-file'),
    certData: ownString(u, 'client-certificate-data'),
    certFile: ownString(u, 'client-certificate'),
    keyData: ownString(u, 'client-key-data'),
    keyFile: ownString(u, 'client-key'),
    username: ownString(u, 'username'),
    password: ownString(u, 'password'),
    impersonateUser: ownString(u, 'as'),
    exec: own('exec'),
    authProvider: own('auth-provider'),
  };
}

function readContext([e, where]: [JsonObject, string]): Context {
  const name = required(e, where, 'name');
  const c = section(e, where, 'context', true);
  return {
    name,
    cluster: required(c, `${where}.context`, 'cluster'),
    user: ownString(c, 'user') || undefined,
    namespace: ownString(c, 'namespace') || undefined,
  };
}
