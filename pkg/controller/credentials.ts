// Member credentials kept on the hub: a Cluster's spec.secretRef names a Secret whose data holds either
//   kubeconfig          a kubeconfig: its current-context (or its only context) reaches the member; or
//   token (+ caBundle)  Karmada's form: a bearer token for the Cluster's spec.apiEndpoint, verified with
//                       caBundle unless spec.insecureSkipTLSVerification is true.
//
// A Secret is input written by whoever may write Secrets in that namespace, and the controller reading it
// holds credentials of its own. So only inline credentials are taken: a kubeconfig that would run a
// program (`exec`, `auth-provider`) or read a file of the controller's (`certificate-authority`,
// `client-certificate`, `client-key`, `tokenFile`) is refused with the field named, never with its value.

import { KubeConfig } from '../kube/config.js';

import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import { readYaml } from '../yaml/index.js';

/** The Secret key holding a kubeconfig. */
export const KUBECONFIG_KEY = 'kubeconfig';
/** A Secret holds at most 1 MiB; a kubeconfig larger than this is not one. */
const MAX_KUBECONFIG_BYTES = 1024 * 1024;
const YAML_LIMITS = { maxDepth: 20, maxAliasExpansion: 64 * 1024 };

const FORBIDDEN_CLUSTER_FIELDS = ['certificate-authority'];
const FORBIDDEN_USER_FIELDS = [
  'exec',
  'auth-provider',
  'client-certificate',
  'client-key',
  'tokenFile',
  'token-file',
  'as',
  'as-groups',
  'as-user-extra',
];

export type Credentials = { kubeConfig: KubeConfig; server: string } | { error: string };

function decode(data: JsonObject, key: string): string | undefined {
  const v = ownString(data, key);
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
}

function named(list: unknown, name: string, what: string): JsonObject | string {
  if (!Array.isArray(list)) return `the kubeconfig has no ${what}s`;
  const found = list.filter(isObject).find((e) => ownString(e, 'name') === name);
  return found ?? `the kubeconfig has no ${what} named ${JSON.stringify(name)}`;
}

/** A KubeConfig with one context from a kubeconfig's text, inline credentials only. */
export function fromKubeconfigText(text: string): Credentials {
  if (Buffer.byteLength(text) > MAX_KUBECONFIG_BYTES)
    return { error: `the kubeconfig is larger than ${MAX_KUBECONFIG_BYTES} bytes` };
  let doc: unknown;
  try {
    doc = readYaml(text, YAML_LIMITS);
  } catch {
    return { error: 'the kubeconfig is not valid YAML' };
  }
  if (!isObject(doc)) return { error: 'the kubeconfig is not a mapping' };
  const contexts = Array.isArray(doc.contexts) ? doc.contexts.filter(isObject) : [];
  const current =
    ownString(doc, 'current-context') || (contexts.length === 1 ? ownString(contexts[0], 'name') : undefined);
  if (!current) return { error: 'the kubeconfig sets no current-context and has more than one context' };
  const ctxEntry = named(doc.contexts, current, 'context');
  if (typeof ctxEntry === 'string') return { error: ctxEntry };
  const ctx = isObject(ctxEntry.context) ? ctxEntry.context : {};
  const clusterName = ownString(ctx, 'cluster') ?? '';
  const clusterEntry = named(doc.clusters, clusterName, 'cluster');
  if (typeof clusterEntry === 'string') return { error: clusterEntry };
  const cluster = isObject(clusterEntry.cluster) ? clusterEntry.cluster : {};
  for (const f of FORBIDDEN_CLUSTER_FIELDS) {
    if (Object.prototype.hasOwnProperty.call(cluster, f))
      return {
        error: `clusters[${JSON.stringify(clusterName)}].${f}: a file path on the controller's machine is not accepted; use ${f}-data`,
      };
  }
  const server = ownString(cluster, 'server') ?? '';
  const userName = ownString(ctx, 'user');
  let user: JsonObject = {};
  if (userName) {
    const userEntry = named(doc.users, userName, 'user');
    if (typeof userEntry === 'string') return { error: userEntry };
    user = isObject(userEntry.user) ? userEntry.user : {};
    for (const f of FORBIDDEN_USER_FIELDS) {
      if (Object.prototype.hasOwnProperty.call(user, f))
        return {
          error: `users[${JSON.stringify(userName)}].${f}: only inline credentials are accepted (token, client-certificate-data and client-key-data, username and password)`,
        };
    }
  }
  return build({
    server,
    caData: ownString(cluster, 'certificate-authority-data'),
    skipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
    tlsServerName: ownString(cluster, 'tls-server-name'),
    token: ownString(user, 'token'),
    certData: ownString(user, 'client-certificate-data'),
    keyData: ownString(user, 'client-key-data'),
    username: ownString(user, 'username'),
    password: ownString(user, 'password'),
  });
}

interface Parts {
  server: string;
  caData: string | undefined;
  skipTLSVerify: boolean;
  tlsServerName?: string | undefined;
  token?: string | undefined;
  certData?: string | undefined;
  keyData?: string | undefined;
  username?: string | undefined;
  password?: string | undefined;
}

function build(p: Parts): Credentials {
  let url: URL;
  try {
    url = new URL(p.server);
  } catch {
    return { error: 'the server is not a URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { error: `the server must be an https URL, not ${url.protocol}` };
  if (url.username || url.password) return { error: 'the server URL must not carry credentials' };
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'member',
        server: p.server,
        skipTLSVerify: p.skipTLSVerify,
        ...(p.caData ? { caData: p.caData } : {}),
        ...(p.tlsServerName ? { tlsServerName: p.tlsServerName } : {}),
      },
    ],
    users: [
      {
        name: 'member',
        ...(p.token ? { token: p.token } : {}),
        ...(p.certData ? { certData: p.certData } : {}),
        ...(p.keyData ? { keyData: p.keyData } : {}),
        ...(p.username ? { username: p.username } : {}),
        ...(p.password ? { password: p.password } : {}),
      },
    ],
    contexts: [{ name: 'member', cluster: 'member', user: 'member' }],
    currentContext: 'member',
  });
  return { kubeConfig: kc, server: `${url.protocol}//${url.host}` };
}

/**
 * The credentials a Cluster's Secret gives, or why there are none (no value of the Secret is quoted).
 * `spec` is the Cluster's spec (apiEndpoint and insecureSkipTLSVerification serve Karmada's token form).
 */
export function credentialsFromSecret(spec: JsonObject, secret: JsonObject): Credentials {
  const data = isObject(secret.data) ? secret.data : {};
  const kubeconfig = decode(data, KUBECONFIG_KEY);
  if (kubeconfig !== undefined) return fromKubeconfigText(kubeconfig);
  const token = decode(data, 'token');
  if (token === undefined) return { error: `the Secret has neither a ${KUBECONFIG_KEY} key nor a token key` };
  const endpoint = ownString(spec, 'apiEndpoint');
  if (!endpoint) return { error: 'the Secret holds a token but the Cluster has no spec.apiEndpoint' };
  const server = /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `https://${endpoint}`;
  const ca = ownString(data, 'caBundle');
  return build({ server, caData: ca, skipTLSVerify: spec.insecureSkipTLSVerification === true, token: token.trim() });
}
