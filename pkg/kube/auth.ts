// A kubeconfig context's TLS material and credentials, put on one request's options (config.ts calls it
// for every request). What client-go does, for the kubeconfig fields the project supports:
//   cluster  certificate-authority(-data), insecure-skip-tls-verify, tls-server-name;
//   user     client-certificate(-data) and client-key(-data); token; token-file (read again after a
//            minute); username and password; as (Impersonate-User); exec (an ExecCredential plugin, its
//            credential kept until its expirationTimestamp, one run at a time); the `tokenFile` auth
//            provider of the in-cluster config.
// A proxied cluster and the gcp, azure and oidc auth providers are client-node's (needsClientNode).

import { readFileSync } from 'node:fs';
import type https from 'node:https';

import type { Cluster, User } from './config.js';

/** How long a token read from a file is used before the file is read again (client-go: one minute). */
const TOKEN_FILE_TTL_MS = 60_000;
/** Largest ExecCredential accepted from a plugin's stdout. */
const MAX_EXEC_OUTPUT = 1024 * 1024;
/** A plugin that has not answered by then is killed and the request fails. */
const EXEC_TIMEOUT_MS = 60_000;

const CLIENT_NODE_PROVIDERS = new Set(['gcp', 'azure', 'oidc']);

/** True when only client-node's KubeConfig can reach this context: a proxy, or a gcp/azure/oidc auth provider. */
export function needsClientNode(cluster: Cluster | null, user: User | null): boolean {
  if (cluster?.proxyUrl) return true;
  const provider = user?.authProvider as { name?: unknown } | undefined;
  return typeof provider?.name === 'string' && CLIENT_NODE_PROVIDERS.has(provider.name);
}

interface ExecCredential {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  /** Epoch ms; undefined: never expires. */
  expires?: number;
}

/** An exec plugin's run: in flight, or its credential once it answered. */
interface ExecRun {
  promise: Promise<ExecCredential>;
  value?: ExecCredential;
}

/** Per user entry: the last token read from a file, and the exec plugin's last run. */
interface UserState {
  fileToken?: { token: string; readAt: number; file: string };
  exec?: ExecRun;
}
const state = new WeakMap<User, UserState>();

function stateOf(user: User): UserState {
  let s = state.get(user);
  if (!s) state.set(user, (s = {}));
  return s;
}

function fileOrData(file: string | undefined, data: string | undefined): Buffer | undefined {
  if (file) return readFileSync(file);
  if (data) return Buffer.from(data, 'base64');
  return undefined;
}

/** The TLS options and credentials of `cluster` and `user` on `opts` (headers, auth, ca, cert, key, …). */
export async function applyCredentials(
  cluster: Cluster | null,
  user: User | null,
  opts: https.RequestOptions,
): Promise<void> {
  const headers = (opts.headers ??= {}) as Record<string, string | string[] | number>;
  if (cluster) {
    if (cluster.skipTLSVerify) opts.rejectUnauthorized = false;
    if (cluster.tlsServerName) opts.servername = cluster.tlsServerName;
    const ca = fileOrData(cluster.caFile, cluster.caData);
    if (ca) opts.ca = ca;
  }
  if (!user) return;
  const cert = fileOrData(user.certFile, user.certData);
  if (cert) opts.cert = cert;
  const key = fileOrData(user.keyFile, user.keyData);
  if (key) opts.key = key;
  if (user.impersonateUser) headers['Impersonate-User'] = user.impersonateUser;
  const exec = execConfig(user);
  if (exec) {
    const credential = await execCredential(user, exec);
    if (credential.clientCertificateData) opts.cert = credential.clientCertificateData;
    if (credential.clientKeyData) opts.key = credential.clientKeyData;
    if (credential.token) headers.Authorization = `Bearer ${credential.token}`;
  }
  const file = tokenFileOf(user);
  const token = user.token || (file ? fileToken(user, file) : undefined);
  if (token) headers.Authorization = `Bearer ${token}`;
  if (user.username) opts.auth = `${user.username}:${user.password ?? ''}`;
}

function tokenFileOf(user: User): string | undefined {
  if (user.tokenFile) return user.tokenFile;
  const config = (user.authProvider as { config?: { tokenFile?: unknown } } | undefined)?.config;
  return typeof config?.tokenFile === 'string' && config.tokenFile ? config.tokenFile : undefined;
}

function fileToken(user: User, file: string): string {
  const s = stateOf(user);
  const now = Date.now();
  if (s.fileToken && s.fileToken.file === file && now - s.fileToken.readAt < TOKEN_FILE_TTL_MS)
    return s.fileToken.token;
  const token = readFileSync(file, 'utf8').trim();
  s.fileToken = { token, readAt: now, file };
  return token;
}

interface ExecConfig {
  command: string;
  args: string[];
  env: Array<{ name: string; value: string }>;
  apiVersion: string;
}

/** The user's exec plugin (`exec`, or the auth provider's `config.exec`), or undefined. */
function execConfig(user: User): ExecConfig | undefined {
  const provider = user.authProvider as { config?: { exec?: unknown } } | undefined;
  const raw = (user.exec ?? provider?.config?.exec) as Record<string, unknown> | undefined;
  if (!raw || typeof raw !== 'object') return undefined;
  if (typeof raw.command !== 'string' || raw.command === '')
    throw new Error(`user ${JSON.stringify(user.name)}: exec.command is missing`);
  const args = Array.isArray(raw.args) ? raw.args.map(String) : [];
  const env = Array.isArray(raw.env)
    ? raw.env
        .filter((e): e is { name: string; value: unknown } => typeof (e as { name?: unknown })?.name === 'string')
        .map((e) => ({ name: e.name, value: typeof e.value === 'string' ? e.value : '' }))
    : [];
  const apiVersion = typeof raw.apiVersion === 'string' ? raw.apiVersion : 'client.authentication.k8s.io/v1';
  return { command: raw.command, args, env, apiVersion };
}

/**
 * The credential of the plugin's last run while it has not expired; else one new run, which every request
 * arriving meanwhile waits for. A failed run is not kept: the next request runs the plugin again.
 */
function execCredential(user: User, exec: ExecConfig): Promise<ExecCredential> {
  const s = stateOf(user);
  const last = s.exec;
  if (last && !last.value) return last.promise;
  if (last?.value && (last.value.expires === undefined || last.value.expires > Date.now())) return last.promise;
  const run: ExecRun = { promise: runPlugin(exec) };
  s.exec = run;
  run.promise.then(
    (v) => (run.value = v),
    () => {
      if (s.exec === run) s.exec = undefined;
    },
  );
  return run.promise;
}

/**
 * Runs the plugin. node:child_process is loaded here, the first time a plugin runs: most kubeconfigs have
 * none, and loading it costs a process that has node:https already about 0.5 MiB of RSS.
 */
async function runPlugin(exec: ExecConfig): Promise<ExecCredential> {
  const { spawn } = await import('node:child_process');
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const e of exec.env) env[e.name] = e.value;
  env.KUBERNETES_EXEC_INFO = JSON.stringify({
    apiVersion: exec.apiVersion,
    kind: 'ExecCredential',
    spec: { interactive: false },
  });
  const what = `exec plugin ${exec.command}`;
  return new Promise<ExecCredential>((resolve, reject) => {
    const child = spawn(exec.command, exec.args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let failure: Error | undefined;
    const timer = setTimeout(() => {
      failure = new Error(`${what}: no answer within ${EXEC_TIMEOUT_MS / 1000} s`);
      child.kill('SIGKILL');
    }, EXEC_TIMEOUT_MS);
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      if (out.length > MAX_EXEC_OUTPUT && !failure) {
        failure = new Error(`${what}: output larger than ${MAX_EXEC_OUTPUT} bytes`);
        child.kill('SIGKILL');
      }
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      if (err.length < 4096) err += c;
    });
    child.on('error', (e) => (failure ??= new Error(`${what}: ${e.message}`, { cause: e })));
    child.on('close', (code) => {
      clearTimeout(timer);
      if (failure) return reject(failure);
      if (code !== 0) {
        const line = err.trim().split('\n')[0]?.slice(0, 200) ?? '';
        return reject(new Error(`${what}: exited with code ${code}${line ? `: ${line}` : ''}`));
      }
      try {
        resolve(readExecCredential(out));
      } catch (e: unknown) {
        reject(new Error(`${what}: ${e instanceof Error ? e.message : String(e)}`));
      }
    });
  });
}

/** The status of an ExecCredential (the plugin's stdout); never quotes it (it holds the credential). */
export function readExecCredential(text: string): ExecCredential {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error('its output is not JSON (expected an ExecCredential)');
  }
  const status = (doc as { status?: unknown } | null)?.status;
  if (!status || typeof status !== 'object') throw new Error('its ExecCredential has no status');
  const s = status as Record<string, unknown>;
  const str = (k: string): string | undefined => {
    const v = s[k];
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  const token = str('token');
  const clientCertificateData = str('clientCertificateData');
  const clientKeyData = str('clientKeyData');
  if (!token && !(clientCertificateData && clientKeyData))
    throw new Error('its ExecCredential has neither status.token nor status.clientCertificateData and clientKeyData');
  const expiry = str('expirationTimestamp');
  const expires = expiry === undefined ? undefined : Date.parse(expiry);
  if (expires !== undefined && Number.isNaN(expires))
    throw new Error('its ExecCredential has an expirationTimestamp that is not a time');
  return {
    ...(token ? { token } : {}),
    ...(clientCertificateData ? { clientCertificateData } : {}),
    ...(clientKeyData ? { clientKeyData } : {}),
    ...(expires !== undefined ? { expires } : {}),
  };
}
