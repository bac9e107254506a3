// A real control plane for integration tests: one etcd and N+1 kube-apiservers (a hub and N members),
// built by hack/envtest/build.sh. See hack/envtest/README.md for versions, flags and figures.
//
// Every cluster has its own CA, serving certificate, admin client certificate (O=system:masters),
// service-account key pair, secure port and etcd prefix (/hub/registry, /member1/registry, ...). One etcd
// serves them all: clusters cannot see each other's keys (different prefixes), the apiservers already
// coordinate the shared compaction the way HA apiservers do, and on two cores one etcd starts faster
// and costs less memory than N+1. etcd runs with --unsafe-no-fsync (nothing here needs durability).
//
// Nothing runs in kube-controller-manager's place: no garbage collection, namespace deletion never
// finishes, no ServiceAccount tokens, no Pods behind Deployments. Use unique names per test.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';

import { startWatchdog, stopWatchdog, track, untrack, type Cleanable, type Watchdog } from './cleanup.js';
import {
  EnvtestError,
  ManagedProcess,
  freePort,
  killGroup,
  retryOnPortInUse,
  sleep,
  waitUntilReady,
} from './process.js';
import { writeClusterPki, writeKubeconfig, type ClusterPki } from './pki.js';

export { EnvtestError, type EnvtestErrorCode } from './process.js';

export interface ClusterHandle {
  /** 'hub', 'member1', 'member2', ... */
  name: string;
  /** https://127.0.0.1:<port> */
  server: string;
  /** A kubeconfig for this cluster only; its one context is named like the cluster. */
  kubeconfigPath: string;
  /** A fresh KubeConfig for this cluster only (client-node's clients must not share one across clusters). */
  kubeConfig(): KubeConfig;
  /** The apiserver's log file. */
  logPath: string;
}

export interface StopOptions {
  /**
   * Keep the environment directory minus etcd's data (certificates, kubeconfigs, logs) and print where
   * the logs are. For a test run that failed.
   */
  keepLogs?: boolean;
}

export interface Environment {
  hub: ClusterHandle;
  members: ClusterHandle[];
  /** One file, one context per member (context name = member name); current-context is member1. */
  membersKubeconfigPath: string;
  /** Temp dir holding certificates, kubeconfigs, logs and etcd's data. */
  dir: string;
  /** Every process the environment started and has not yet seen exit: etcd, apiservers, the watchdog. */
  readonly pids: number[];
  /**
   * Idempotent: SIGTERM to every process group, SIGKILL after a grace period, then removes `dir`,
   * unless the environment was started with `keep` or `options.keepLogs` is set.
   */
  stop(options?: StopOptions): Promise<void>;
  /**
   * Stops one cluster's apiserver (SIGTERM, then SIGKILL after the grace period), as an outage: its
   * port refuses connections until startCluster(). Its data stays in etcd. Resolves once it has exited.
   */
  stopCluster(name: string): Promise<void>;
  /** Starts a stopped cluster's apiserver again on the same port; resolves when it is ready. */
  startCluster(name: string): Promise<void>;
}

export interface EnvironmentOptions {
  /** Number of member clusters. Default 2. */
  members?: number;
  /** Extra kube-apiserver flags for every cluster (e.g. for webhooks); later flags win. */
  apiserverArgs?: string[];
  /** Directory holding kube-apiserver and etcd. Default: the last line printed by hack/envtest/build.sh. */
  binDir?: string;
  /** Keep the whole directory on stop() and print its path. Default: FLOTILLA_ENVTEST_KEEP=1. */
  keep?: boolean;
  /**
   * Start the apiservers at the same time rather than one after another. Default true: on two cores,
   * hub + 2 members are ready in about 7.5 s in parallel against 11 s one at a time (hack/envtest/README.md).
   */
  parallel?: boolean;
  /** How long each process may take to become ready. Default 120 s. */
  startTimeoutMs?: number;
  /** Where progress and kept-file paths are reported. Default: stderr. */
  log?: (line: string) => void;
}

type ResolvedOptions = Required<Omit<EnvironmentOptions, 'binDir'>> & { binDir: string | undefined };

/** SIGTERM → SIGKILL grace period. kube-apiserver drains in about a second with default flags. */
const STOP_GRACE_MS = 10_000;
/** Starts per process before giving up; only a port taken between choosing and binding it is retried. */
const START_ATTEMPTS = 5;

/**
 * Fills in defaults. This is the only place the harness reads the environment: FLOTILLA_ENVTEST_KEEP=1
 * keeps the directory (hack/envtest/build.sh reads FLOTILLA_ENVTEST_BIN, KUBE_APISERVER and ETCD).
 */
export function resolveOptions(opts: EnvironmentOptions, env: NodeJS.ProcessEnv = process.env): ResolvedOptions {
  const members = opts.members ?? 2;
  if (!Number.isInteger(members) || members < 0)
    throw new RangeError(`members must be a non-negative integer, got ${members}`);
  return {
    members,
    apiserverArgs: opts.apiserverArgs ?? [],
    binDir: opts.binDir,
    keep: opts.keep ?? env.FLOTILLA_ENVTEST_KEEP === '1',
    parallel: opts.parallel ?? true,
    startTimeoutMs: opts.startTimeoutMs ?? 120_000,
    log: opts.log ?? ((line: string) => void process.stderr.write(`envtest: ${line}\n`)),
  };
}

export async function startEnvironment(opts: EnvironmentOptions = {}): Promise<Environment> {
  const o = resolveOptions(opts);
  const binDir = o.binDir ?? (await buildBinaries());
  const env = new TestEnvironment(mkdtempSync(join(tmpdir(), 'flotilla-envtest-')), o);
  try {
    await env.start(binDir);
  } catch (err: unknown) {
    await env.stop({ keepLogs: true });
    throw err;
  }
  return env.handle();
}

/** Server-side apply of each object, in order, with field manager 'flotilla-test' and force. */
export async function applyManifests(cluster: ClusterHandle, objects: object[]): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(cluster.kubeConfig());
  for (const obj of objects) {
    const o = obj as KubernetesObject;
    try {
      await client.patch(o, undefined, undefined, 'flotilla-test', true, PatchStrategy.ServerSideApply);
    } catch (err: unknown) {
      const what = `${o.kind ?? '?'} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name ?? '?'}`;
      throw new EnvtestError('APPLY_FAILED', `${cluster.name}: applying ${what}: ${describeApiError(err)}`, {
        cause: err,
      });
    }
  }
}

/**
 * Waits until each named CRD has Established=True, every served version is in discovery (when
 * KubernetesObjectApi, which caches discovery, can use it) and a LIST of it answers 200: right after a
 * CRD is created or changed the apiserver can still answer 429 "storage is (re)initializing" (measured
 * here on kube-apiserver 1.33 under load, after Established and discovery were both there).
 */
export async function waitForCRDsEstablished(
  cluster: ClusterHandle,
  names: string[],
  timeoutMs = 30_000,
): Promise<void> {
  const kc = cluster.kubeConfig();
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    let last = 'not found';
    for (;;) {
      last = await crdNotReadyReason(kc, name);
      if (last === '') break;
      if (Date.now() > deadline) {
        throw new EnvtestError('CRD_TIMEOUT', `${cluster.name}: CRD ${name} not ready after ${timeoutMs} ms: ${last}`);
      }
      await sleep(200);
    }
  }
}

interface CrdStatus {
  spec?: { group?: string; names?: { plural?: string }; versions?: Array<{ name: string; served?: boolean }> };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

/** '' when ready, else why not. */
async function crdNotReadyReason(kc: KubeConfig, name: string): Promise<string> {
  const crd = await getJson<CrdStatus>(kc, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
  if (crd.status !== 200 || !crd.body) return `GET returned ${crd.status}`;
  const established = crd.body.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  if (!established) return 'not Established';
  const group = crd.body.spec?.group ?? '';
  const plural = crd.body.spec?.names?.plural ?? '';
  for (const v of crd.body.spec?.versions ?? []) {
    if (v.served === false) continue;
    const list = await getJson<{ resources?: Array<{ name: string }> }>(kc, `/apis/${group}/${v.name}`);
    if (list.status !== 200 || !list.body?.resources?.some((r) => r.name === plural)) {
      return `${group}/${v.name} ${plural} not in discovery yet`;
    }
    const items = await getJson(kc, `/apis/${group}/${v.name}/${plural}`);
    if (items.status !== 200) return `LIST ${group}/${v.name} ${plural} answered ${items.status}`;
  }
  return '';
}

interface ClusterState {
  name: string;
  dir: string;
  pki: ClusterPki;
  kubeconfigPath: string;
  logPath: string;
  port?: number;
  /** The running (or last) apiserver process. */
  process?: ManagedProcess;
}

class TestEnvironment implements Cleanable {
  private readonly dir: string;
  private readonly o: ResolvedOptions;
  private readonly pgidFile: string;
  private readonly watchdog: Watchdog;
  /** Every process started, in order (etcd first), including failed attempts. */
  private readonly processes: ManagedProcess[] = [];
  private etcdUrl = '';
  private apiserverBin = '';
  private readonly clusters: ClusterState[] = [];
  private stopping: Promise<void> | undefined;
  private stopped = false;

  constructor(dir: string, o: ResolvedOptions) {
    this.dir = dir;
    this.o = o;
    mkdirSync(join(dir, 'logs'));
    this.pgidFile = join(dir, 'pgids');
    track(this);
    this.watchdog = startWatchdog(dir, this.pgidFile);
  }

  async start(binDir: string): Promise<void> {
    const etcdReady = this.startEtcd(join(binDir, 'etcd'));
    etcdReady.catch(() => undefined); // awaited below; this only stops an early failure counting as unhandled
    // Key generation is synchronous and CPU-bound (about 0.6 s per cluster); etcd boots meanwhile.
    const names = ['hub', ...Array.from({ length: this.o.members }, (_, i) => `member${i + 1}`)];
    for (const name of names) {
      const dir = join(this.dir, name);
      mkdirSync(dir);
      this.clusters.push({
        name,
        dir,
        pki: writeClusterPki(dir, name),
        kubeconfigPath: join(dir, 'kubeconfig'),
        logPath: join(this.dir, 'logs', `kube-apiserver-${name}.log`),
      });
    }
    await etcdReady;
    const apiserver = join(binDir, 'kube-apiserver');
    this.apiserverBin = apiserver;
    if (this.o.parallel) {
      await Promise.all(this.clusters.map((c) => this.startApiserver(apiserver, c)));
    } else {
      for (const c of this.clusters) await this.startApiserver(apiserver, c);
    }
    const members = this.clusters.slice(1);
    if (members.length > 0)
      writeKubeconfig(
        join(this.dir, 'members.kubeconfig'),
        members.map((c) => this.entry(c)),
      );
  }

  handle(): Environment {
    const [hub, ...members] = this.clusters.map((c) => this.clusterHandle(c));
    if (!hub) throw new Error('unreachable: an environment always has a hub');
    const livePids = () => this.livePids();
    return {
      hub,
      members,
      membersKubeconfigPath: join(this.dir, 'members.kubeconfig'),
      dir: this.dir,
      get pids() {
        return livePids();
      },
      stop: (options?: StopOptions) => this.stop(options),
      stopCluster: (name: string) => this.stopCluster(name),
      startCluster: (name: string) => this.startCluster(name),
    };
  }

  private cluster(name: string): ClusterState {
    const c = this.clusters.find((x) => x.name === name);
    if (!c)
      throw new RangeError(
        `no cluster named ${JSON.stringify(name)} (clusters: ${this.clusters.map((x) => x.name).join(', ')})`,
      );
    return c;
  }

  private async stopCluster(name: string): Promise<void> {
    const c = this.cluster(name);
    await c.process?.stop(STOP_GRACE_MS);
    this.recordPgids();
  }

  private async startCluster(name: string): Promise<void> {
    const c = this.cluster(name);
    if (c.process && !c.process.exitStatus) return;
    if (c.port === undefined) throw new EnvtestError('PROCESS_EXITED', `${name}: never started`);
    // The same port, so kubeconfigs written earlier stay valid; no retry with another one.
    await this.launchApiserver(this.apiserverBin, c, c.port);
  }

  private livePids(): number[] {
    const pids = this.running().map((p) => p.pid);
    return this.stopped ? pids : [...pids, this.watchdog.pid];
  }

  private clusterHandle(c: ClusterState): ClusterHandle {
    return {
      name: c.name,
      server: `https://127.0.0.1:${c.port ?? 0}`,
      kubeconfigPath: c.kubeconfigPath,
      logPath: c.logPath,
      kubeConfig: () => {
        const kc = new KubeConfig();
        kc.loadFromFile(c.kubeconfigPath);
        return kc;
      },
    };
  }

  private entry(c: ClusterState) {
    return { name: c.name, server: `https://127.0.0.1:${c.port ?? 0}`, pki: c.pki };
  }

  private async startEtcd(bin: string): Promise<void> {
    const logPath = join(this.dir, 'logs', 'etcd.log');
    const dataDir = join(this.dir, 'etcd-data');
    await this.withPortRetries('etcd', async () => {
      const [client, peer] = [await freePort(), await freePort()];
      const clientUrl = `http://127.0.0.1:${client}`;
      const peerUrl = `http://127.0.0.1:${peer}`;
      rmSync(dataDir, { recursive: true, force: true }); // a failed attempt may have initialised it
      const p = await this.spawn(
        'etcd',
        bin,
        [
          '--name=flotilla-envtest',
          `--data-dir=${dataDir}`,
          `--listen-client-urls=${clientUrl}`,
          `--advertise-client-urls=${clientUrl}`,
          `--listen-peer-urls=${peerUrl}`,
          `--initial-advertise-peer-urls=${peerUrl}`,
          `--initial-cluster=flotilla-envtest=${peerUrl}`,
          '--unsafe-no-fsync=true',
          // Progress notifications let an apiserver's watch cache catch up on quiet resources quickly; the
          // default (10 min) can leave watches failing with "Too large resource version" meanwhile.
          '--experimental-watch-progress-notify-interval=5s',
          '--logger=zap',
          '--log-outputs=stderr',
        ],
        logPath,
      );
      await this.waitUntil(p, async () => (await getPlain(`${clientUrl}/health`)).includes('"health":"true"'));
      this.etcdUrl = clientUrl;
    });
  }

  private async startApiserver(bin: string, c: ClusterState): Promise<void> {
    await this.withPortRetries(`kube-apiserver ${c.name}`, async () => this.launchApiserver(bin, c, await freePort()));
  }

  private async launchApiserver(bin: string, c: ClusterState, port: number): Promise<void> {
    const server = `https://127.0.0.1:${port}`;
    const p = await this.spawn(
      `kube-apiserver-${c.name}`,
      bin,
      [
        `--etcd-servers=${this.etcdUrl}`,
        `--etcd-prefix=/${c.name}/registry`,
        `--cert-dir=${c.pki.certDir}`,
        `--tls-cert-file=${c.pki.servingCertPath}`,
        `--tls-private-key-file=${c.pki.servingKeyPath}`,
        `--client-ca-file=${c.pki.caCertPath}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${port}`,
        // No endpoint reconciler: nothing writes the `kubernetes` Endpoints, so a loopback advertise
        // address is accepted and no default route is needed.
        '--advertise-address=127.0.0.1',
        '--endpoint-reconciler-type=none',
        '--service-cluster-ip-range=10.0.0.0/24',
        `--service-account-issuer=${server}`,
        `--service-account-key-file=${c.pki.saPublicKeyPath}`,
        `--service-account-signing-key-file=${c.pki.saPrivateKeyPath}`,
        '--authorization-mode=RBAC',
        // No ServiceAccount controller runs, so the `default` ServiceAccount never appears and the
        // plugin would reject every Pod.
        '--disable-admission-plugins=ServiceAccount',
        '--allow-privileged=true',
        '--profiling=false',
        ...this.o.apiserverArgs,
      ],
      c.logPath,
    );
    c.port = port;
    c.process = p;
    writeKubeconfig(c.kubeconfigPath, [this.entry(c)]);
    const kc = new KubeConfig();
    kc.loadFromFile(c.kubeconfigPath);
    await this.waitUntil(p, async () => (await getJson(kc, '/readyz')).status === 200);
    // /readyz can pass a moment before the bootstrap controller has created `default`.
    await this.waitUntil(p, async () => (await getJson(kc, '/api/v1/namespaces/default')).status === 200);
  }

  private withPortRetries(what: string, attempt: () => Promise<void>): Promise<void> {
    return retryOnPortInUse(
      START_ATTEMPTS,
      (n) => this.o.log(`${what}: its port was taken before it could bind; attempt ${n} of ${START_ATTEMPTS}`),
      attempt,
    );
  }

  /** Starts a process and records it, so stop() and the watchdog know its process group. */
  private async spawn(name: string, bin: string, args: string[], logPath: string): Promise<ManagedProcess> {
    if (this.stopping) throw new EnvtestError('PROCESS_EXITED', `${name}: not started, the environment is stopping`);
    const p = await ManagedProcess.start(name, bin, args, logPath);
    this.processes.push(p);
    this.recordPgids();
    if (this.stopping) {
      // stop() began while this one was being spawned and did not see it.
      await p.stop(STOP_GRACE_MS);
      throw new EnvtestError('PROCESS_EXITED', `${name}: stopped at once, the environment is stopping`);
    }
    return p;
  }

  /** Rewrites the watchdog's list with the processes still running (exited pids may be reused). */
  private recordPgids(): void {
    writeFileSync(
      this.pgidFile,
      this.running()
        .map((p) => `${p.pid}\n`)
        .join(''),
    );
  }

  private running(): ManagedProcess[] {
    return this.processes.filter((p) => !p.exitStatus);
  }

  private waitUntil(p: ManagedProcess, ready: () => Promise<boolean>): Promise<void> {
    return waitUntilReady(p, ready, this.o.startTimeoutMs, () => this.stopping !== undefined).catch((err: unknown) => {
      this.recordPgids();
      throw err;
    });
  }

  stop(options: StopOptions = {}): Promise<void> {
    this.stopping ??= this.shutdown(options);
    return this.stopping;
  }

  private async shutdown(options: StopOptions): Promise<void> {
    // Apiservers first, then etcd, so no apiserver loses its storage while still shutting down.
    const isEtcd = (p: ManagedProcess) => p.name === 'etcd';
    await Promise.all(this.processes.filter((p) => !isEtcd(p)).map((p) => p.stop(STOP_GRACE_MS)));
    await Promise.all(this.processes.filter(isEtcd).map((p) => p.stop(STOP_GRACE_MS)));
    await stopWatchdog(this.watchdog);
    this.stopped = true;
    untrack(this);
    if (this.o.keep) {
      this.o.log(`kept ${this.dir} (FLOTILLA_ENVTEST_KEEP=1); logs in ${join(this.dir, 'logs')}`);
    } else if (options.keepLogs) {
      rmSync(join(this.dir, 'etcd-data'), { recursive: true, force: true });
      this.o.log(`kept logs for inspection: ${this.logPaths().join(' ')}`);
    } else {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  private logPaths(): string[] {
    const paths = [join(this.dir, 'logs', 'etcd.log'), ...this.clusters.map((c) => c.logPath)];
    return paths.filter((p) => existsSync(p));
  }

  killNow(): void {
    for (const p of this.running()) killGroup(p.pid, 'SIGKILL');
    void stopWatchdog(this.watchdog);
    this.stopped = true;
    if (!this.o.keep) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Runs hack/envtest/build.sh (a no-op when the binaries are cached) and returns the directory it prints. */
async function buildBinaries(): Promise<string> {
  const script = join(findRepoRoot(), 'hack', 'envtest', 'build.sh');
  const out = await new Promise<string>((resolvePromise, reject) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (stdout += chunk));
    child.once('error', (err) => reject(new EnvtestError('BUILD_FAILED', `cannot run ${script}`, { cause: err })));
    child.once('close', (code) => {
      if (code === 0) resolvePromise(stdout);
      else reject(new EnvtestError('BUILD_FAILED', `${script} failed with exit code ${code}; see its output above`));
    });
  });
  const dir = out.trim().split('\n').pop() ?? '';
  if (!dir) throw new EnvtestError('BUILD_FAILED', `${script} printed no directory`);
  return dir;
}

/** The nearest ancestor of this file that holds hack/envtest/build.sh (works from test/ and from dist/test/). */
function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'hack', 'envtest', 'build.sh'))) return dir;
    const parent = resolve(dir, '..');
    if (parent === dir) throw new EnvtestError('BUILD_FAILED', 'cannot find hack/envtest/build.sh above the harness');
    dir = parent;
  }
}

/** GET with the KubeConfig's current-context server and credentials; body parsed as JSON when it is. */
export async function getJson<T = unknown>(
  kc: KubeConfig,
  path: string,
): Promise<{ status: number; body: T | undefined }> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('kubeconfig has no current cluster');
  const url = new URL(path, server);
  const opts: https.RequestOptions = {
    method: 'GET',
    hostname: url.hostname,
    port: url.port,
    path: url.pathname,
    agent: false,
    timeout: 5000,
  };
  await kc.applyToHTTPSOptions(opts);
  return new Promise((resolvePromise, reject) => {
    const req = https.request(opts, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let body: T | undefined;
        try {
          body = JSON.parse(text) as T;
        } catch {
          body = undefined;
        }
        resolvePromise({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url.href} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

function getPlain(url: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const req = http.get(url, { agent: false, timeout: 5000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolvePromise(text));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
  });
}

/** The message of a client-node ApiException (a Status body) or any other error. */
function describeApiError(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { code?: number; body?: unknown; message?: string };
    let body = e.body;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body) as unknown;
      } catch {
        // keep the string
      }
    }
    if (body && typeof body === 'object' && 'message' in body) return `HTTP ${e.code ?? '?'}: ${String(body.message)}`;
    if (e.message) return e.message;
  }
  return String(err);
}
