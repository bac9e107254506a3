// The test environment itself: real etcd + kube-apiservers (a hub and two members) start, are reachable
// and kept apart, take objects from client-node and from kubectl, and leave nothing behind when stopped
// or interrupted.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api, VersionApi, type V1ManagedFieldsEntry } from '@kubernetes/client-node';
import { stringify } from 'yaml';

import { applyManifests, waitForCRDsEstablished, type ClusterHandle } from '../envtest/index.js';
import { START_TIMEOUT_MS, useEnvironment } from '../envtest/suite.js';
import { kubectl } from '../envtest/kubectl.js';
import { eventually, isEmpty } from '../eventually.js';

const K8S_VERSION = 'v1.33.13';

function namespace(name: string) {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

function configMap(ns: string, name: string, data: Record<string, string>) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: ns, name }, data };
}

function deployment(ns: string, name: string, image: string) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { namespace: ns, name },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'main', image }] },
      },
    },
  };
}

/** HTTP status of a client-node ApiException, or undefined for anything else. */
function statusOf(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'number'
    ? err.code
    : undefined;
}

async function readConfigMap(cluster: ClusterHandle, ns: string, name: string) {
  return cluster.kubeConfig().makeApiClient(CoreV1Api).readNamespacedConfigMap({ namespace: ns, name });
}

function managers(entries: V1ManagedFieldsEntry[] | undefined): string[] {
  return (entries ?? []).map((e) => `${e.manager ?? ''}/${e.operation ?? ''}`);
}

/**
 * True while the pid names a process that has not terminated. A zombie (terminated, not yet reaped by
 * its parent, e.g. an orphan waiting for init) counts as gone.
 */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Pids of running processes whose command line mentions `text` (every environment process names its dir). */
function processesMentioning(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text) && running(Number(entry)))
        found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** Sum of VmHWM (peak resident set) over the pids, in MiB. */
function peakRssMiB(pids: number[]): number {
  let kib = 0;
  for (const pid of pids) {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    kib += Number(m?.[1] ?? 0);
  }
  return Math.round(kib / 1024);
}

void describe('a hub and two member clusters', () => {
  const startedAt = Date.now();
  const env = useEnvironment();
  const all = () => [env().hub, ...env().members];

  void it('starts all three apiservers on distinct addresses, each serving the pinned Kubernetes version', async (t) => {
    t.diagnostic(`hub + 2 members ready ${((Date.now() - startedAt) / 1000).toFixed(1)} s after the suite began`);
    assert.deepEqual(
      all().map((c) => c.name),
      ['hub', 'member1', 'member2'],
    );
    assert.equal(new Set(all().map((c) => c.server)).size, 3);
    for (const c of all()) {
      assert.match(c.server, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.ok(existsSync(c.logPath), `${c.name} has a log file`);
      const version = await c.kubeConfig().makeApiClient(VersionApi).getCode();
      assert.equal(version.gitVersion, K8S_VERSION, c.name);
    }
  });

  void it('keeps the clusters apart: an object made on member1 is absent on member2 and on the hub', async () => {
    const [member1, member2] = env().members;
    assert.ok(member1 && member2);
    await applyManifests(member1, [
      namespace('only-on-member1'),
      configMap('only-on-member1', 'marker', { on: 'member1' }),
    ]);
    assert.deepEqual((await readConfigMap(member1, 'only-on-member1', 'marker')).data, { on: 'member1' });
    for (const other of [member2, env().hub]) {
      await assert.rejects(
        readConfigMap(other, 'only-on-member1', 'marker'),
        (err) => statusOf(err) === 404,
        other.name,
      );
    }
  });

  void it("does not accept one cluster's admin credentials on another cluster", async () => {
    const [member1, member2] = env().members;
    assert.ok(member1 && member2);
    const crossed = member1.kubeConfig();
    const cluster = crossed.getCurrentCluster();
    assert.ok(cluster);
    // member1's CA and client certificate, member2's address: the TLS handshake itself must fail.
    crossed.clusters = [{ ...cluster, server: member2.server }];
    await assert.rejects(crossed.makeApiClient(VersionApi).getCode());
  });

  void it('applies a Namespace, ConfigMap and Deployment to every cluster with client-node server-side apply', async () => {
    for (const c of all()) {
      await applyManifests(c, [
        namespace('ssa-client-node'),
        configMap('ssa-client-node', 'settings', { cluster: c.name }),
        deployment('ssa-client-node', 'web', `registry.example/web:${c.name}`),
      ]);
    }
    for (const c of all()) {
      const cm = await readConfigMap(c, 'ssa-client-node', 'settings');
      assert.deepEqual(cm.data, { cluster: c.name });
      assert.ok(managers(cm.metadata?.managedFields).includes('flotilla-test/Apply'), c.name);
      const dep = await c
        .kubeConfig()
        .makeApiClient(AppsV1Api)
        .readNamespacedDeployment({ namespace: 'ssa-client-node', name: 'web' });
      assert.equal(dep.spec?.replicas, 2);
      assert.equal(dep.spec?.template.spec?.containers[0]?.image, `registry.example/web:${c.name}`);
    }
  });

  void it('applies the same objects with kubectl apply --server-side using each cluster kubeconfig', async () => {
    for (const c of all()) {
      const docs = [
        namespace('ssa-kubectl'),
        configMap('ssa-kubectl', 'settings', { cluster: c.name, via: 'kubectl' }),
        deployment('ssa-kubectl', 'web', `registry.example/web:${c.name}`),
      ];
      const yaml = docs.map((d) => stringify(d)).join('---\n');
      const out = await kubectl(c.kubeconfigPath, ['apply', '--server-side', '-f', '-'], yaml);
      assert.equal(out.status, 0, `${c.name}: ${out.stderr}`);
      assert.match(out.stdout, /configmap\/settings serverside-applied/);
      assert.match(out.stdout, /deployment\.apps\/web serverside-applied/);
    }
    for (const c of all()) {
      const cm = await readConfigMap(c, 'ssa-kubectl', 'settings');
      assert.deepEqual(cm.data, { cluster: c.name, via: 'kubectl' });
      assert.ok(managers(cm.metadata?.managedFields).includes('kubectl/Apply'), c.name);
      const dep = await c
        .kubeConfig()
        .makeApiClient(AppsV1Api)
        .readNamespacedDeployment({ namespace: 'ssa-kubectl', name: 'web' });
      assert.equal(dep.spec?.template.spec?.containers[0]?.image, `registry.example/web:${c.name}`);
    }
  });

  void it('writes a members kubeconfig whose context for each member reaches that member', async () => {
    for (const member of env().members) {
      const out = await kubectl(env().membersKubeconfigPath, [
        '--context',
        member.name,
        'get',
        'configmap',
        'settings',
        '-n',
        'ssa-client-node',
        '-o',
        'jsonpath={.data.cluster}',
      ]);
      assert.equal(out.status, 0, out.stderr);
      assert.equal(out.stdout, member.name);
    }
    const contexts = await kubectl(env().membersKubeconfigPath, ['config', 'get-contexts', '-o', 'name']);
    assert.deepEqual(contexts.stdout.trim().split('\n'), ['member1', 'member2']);
  });

  void it('reports a CRD as established only once its custom resources can be applied', async () => {
    const hub = env().hub;
    await applyManifests(hub, [
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.envtest.flotilla.io' },
        spec: {
          group: 'envtest.flotilla.io',
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
                },
              },
            },
          ],
        },
      },
    ]);
    await waitForCRDsEstablished(hub, ['widgets.envtest.flotilla.io']);
    await applyManifests(hub, [
      {
        apiVersion: 'envtest.flotilla.io/v1',
        kind: 'Widget',
        metadata: { namespace: 'default', name: 'w' },
        spec: { size: 3 },
      },
    ]);
    const out = await kubectl(hub.kubeconfigPath, [
      'get',
      'widgets',
      'w',
      '-n',
      'default',
      '-o',
      'jsonpath={.spec.size}',
    ]);
    assert.equal(out.stdout, '3', out.stderr);
  });

  void it('stops every process it started and removes its directory', async (t) => {
    const { dir } = env();
    const pids = env().pids;
    assert.equal(pids.length, 5, 'etcd, three apiservers and the watchdog');
    assert.ok(pids.every(running));
    t.diagnostic(`peak RSS of the environment (sum of VmHWM over ${pids.length} processes): ${peakRssMiB(pids)} MiB`);
    const stopping = Date.now();
    await env().stop();
    t.diagnostic(`stop() took ${((Date.now() - stopping) / 1000).toFixed(1)} s`);
    assert.deepEqual(await eventually(() => pids.filter(running), isEmpty, 10_000), []);
    assert.deepEqual(await eventually(() => processesMentioning(dir), isEmpty, 10_000), []);
    assert.equal(existsSync(dir), false);
    assert.deepEqual(env().pids, []);
    await env().stop(); // idempotent
  });
});

const harnessUrl = new URL('../envtest/index.js', import.meta.url).href;

// Started as a separate node process: starts hub + one member, prints its directory and pids, then
// idles until a signal ends it.
const CHILD = `
const { startEnvironment } = await import(process.argv[1]);
const env = await startEnvironment({ members: 1 });
process.stdout.write(JSON.stringify({ dir: env.dir, pids: env.pids }) + '\\n');
setInterval(() => {}, 1 << 30);
`;

interface ChildRun {
  dir: string;
  pids: number[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal: NodeJS.Signals): void;
}

function startChildEnvironment(): Promise<ChildRun> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, harnessUrl], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      const line = stdout.split('\n')[0];
      if (stdout.includes('\n') && line) {
        const info = JSON.parse(line) as { dir: string; pids: number[] };
        resolve({ ...info, exit, kill: (s) => child.kill(s) });
      }
    });
    void exit.then((s) => reject(new Error(`child exited early (${s.signal ?? s.code}): ${stderr}`)));
  });
}

void describe('an interrupted test run', () => {
  const cases: Array<{ signal: NodeJS.Signals; how: string; graceMs: number }> = [
    // graceMs bounds the wait for cleanup that trails the exit; the wait ends as soon as cleanup is seen.
    {
      signal: 'SIGTERM',
      how: 'its signal handler stops the environment, then the process ends by the signal',
      graceMs: 10_000,
    },
    { signal: 'SIGKILL', how: 'the watchdog notices the process is gone and kills what it left', graceMs: 15_000 },
  ];
  for (const c of cases) {
    void it(
      `leaves no etcd or apiserver behind when the test process gets ${c.signal}: ${c.how}`,
      { timeout: START_TIMEOUT_MS },
      async () => {
        const run = await startChildEnvironment();
        assert.equal(run.pids.length, 4, 'etcd, two apiservers and the watchdog');
        assert.ok(run.pids.every(running));
        assert.ok(existsSync(run.dir));
        run.kill(c.signal);
        assert.deepEqual(await run.exit, { code: null, signal: c.signal });
        // SIGKILL runs no handler: cleanup is the watchdog's, which polls once a second.
        const deadline = Date.now() + c.graceMs;
        while (Date.now() < deadline && (run.pids.some(running) || existsSync(run.dir))) {
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.deepEqual(run.pids.filter(running), []);
        assert.deepEqual(await eventually(() => processesMentioning(run.dir), isEmpty, 5000), []);
        assert.equal(existsSync(run.dir), false);
      },
    );
  }
});
