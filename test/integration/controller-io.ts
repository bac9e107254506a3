// What the controller integration tests share: Flotilla's CRDs installed as users install them, the
// controller started through its CLI entry with stderr captured, and plain reads and server-side applies
// through a KubeClient.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';

import { customResourceDefinitions, type CustomResourceDefinition } from '../../api/crds/index.js';
import type { CommandIO } from '../../pkg/cli/command.js';
import { run } from '../../pkg/cli/index.js';
import { KubeClient } from '../../pkg/kube/client.js';
import { applyManifests, waitForCRDsEstablished, type ClusterHandle, type Environment } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';

export type Obj = Record<string, unknown>;

/** IO for `run(['controller', …])` that keeps what it logs. */
export function capturingIO(signal: AbortSignal): CommandIO & { err: () => string } {
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return { stdout: new PassThrough(), stderr, stdin: new PassThrough(), env: {}, signal, err: () => err };
}

/** The object at `path`, or undefined when the answer is not 200. */
export async function getObject(c: KubeClient, path: string): Promise<Obj | undefined> {
  const r = await c.request<Obj>({ method: 'GET', path });
  return r.status === 200 ? r.body : undefined;
}

/** Server-side apply as a platform team would (field manager platform-team, force). */
export async function applyObject(c: KubeClient, path: string, body: Obj): Promise<void> {
  const r = await c.request({
    method: 'PATCH',
    path,
    query: { fieldManager: 'platform-team', force: 'true' },
    contentType: 'application/apply-patch+yaml',
    body,
  });
  assert.ok(r.status < 300, `apply ${path}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
}

/** CRDs applied with kubectl server-side (client-node's serializer drops parts of CRD schemas), then served. */
export async function installCRDs(cluster: ClusterHandle, crds: readonly CustomResourceDefinition[]): Promise<void> {
  const installed = await kubectl(cluster.kubeconfigPath, ['apply', '--server-side', '-f', '-'], {
    apiVersion: 'v1',
    kind: 'List',
    items: crds,
  });
  assert.equal(installed.status, 0, installed.stderr);
  await waitForCRDsEstablished(
    cluster,
    crds.map((c) => c.metadata.name),
  );
}

/**
 * `flotilla controller --kubeconfig HUB --members-kubeconfig MEMBERS` in this process, metrics on a free
 * port, namespace flotilla-system; runs until `io.signal` aborts. Resolves to its exit status.
 */
export function startController(
  hub: ClusterHandle,
  membersKubeconfig: string,
  io: CommandIO,
  extraArgs: readonly string[] = [],
): Promise<number> {
  return run(
    [
      'controller',
      '--kubeconfig',
      hub.kubeconfigPath,
      '--members-kubeconfig',
      membersKubeconfig,
      '--metrics-port',
      '0',
      '--namespace',
      'flotilla-system',
      ...extraArgs,
    ],
    io,
  );
}

/**
 * A hub with Flotilla's CRDs and `namespace` on the hub and every member, as a platform team sets one up;
 * returns a client for the hub and one per member.
 */
export async function prepareHub(
  e: Environment,
  namespace: string,
): Promise<{ hub: KubeClient; members: KubeClient[] }> {
  await installCRDs(e.hub, customResourceDefinitions());
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } };
  for (const c of [e.hub, ...e.members]) await applyManifests(c, [ns]);
  return {
    hub: new KubeClient(e.hub.kubeConfig(), { concurrency: 4 }),
    members: e.members.map((m: ClusterHandle) => new KubeClient(m.kubeConfig(), { concurrency: 4 })),
  };
}

/** A `flotilla` process: its stderr (JSON log lines) kept in memory and, when a file is given, appended there. */
export interface FlotillaProcess {
  child: ChildProcess;
  log: () => string;
  exited: Promise<number | null>;
}

const MAIN = fileURLToPath(new URL('../../cmd/flotilla/main.js', import.meta.url));

/**
 * `flotilla ARGS… --metrics-port 0 --log-level debug` as a separate process, with a clean environment
 * (PATH, HOME and `env`) and node run with `nodeFlags`. `logFile` (in the environment's logs directory,
 * kept when a test fails) gets the log too, for as long as the directory exists.
 */
export function spawnFlotilla(
  args: readonly string[],
  logFile: string,
  env: Record<string, string> = {},
  nodeFlags: readonly string[] = [],
): FlotillaProcess {
  const child = spawn(process.execPath, [...nodeFlags, MAIN, ...args, '--metrics-port', '0', '--log-level', 'debug'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.on('data', (c: Buffer) => {
    log += c.toString();
    try {
      appendFileSync(logFile, c);
    } catch {
      // the environment's directory is gone (the suite ended): the log stays in memory
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, log: () => log, exited };
}

/** Stops a `flotilla` process still running (SIGTERM) and resolves with its exit code once it has exited. */
export async function stopFlotilla(p: Pick<FlotillaProcess, 'child' | 'exited'>): Promise<number | null> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
  return p.exited;
}

const clusterPath = (name: string) => `/apis/cluster.flotilla.io/v1alpha1/clusters/${name}`;

/** Cluster `name`'s spec.taints on the hub, replaced by `taints` (merge patch), as a person would set them. */
export async function setClusterTaints(hub: KubeClient, name: string, taints: Obj[]): Promise<void> {
  const r = await hub.request({
    method: 'PATCH',
    path: clusterPath(name),
    contentType: 'application/merge-patch+json',
    body: { spec: { taints } },
  });
  assert.ok(r.status < 300, `taints of ${name}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
}

/** Cluster `name`'s spec.taints on the hub (none: []). */
export async function clusterTaints(hub: KubeClient, name: string): Promise<Obj[]> {
  return (((await getObject(hub, clusterPath(name)))?.spec as Obj | undefined)?.taints as Obj[] | undefined) ?? [];
}

/**
 * What the Deployment controller and the kubelets would write of the Deployment at `path` on a member
 * (there are neither here): `replicas` of its current generation, `ready` of them ready and available.
 */
export async function reportDeploymentStatus(
  member: KubeClient,
  path: string,
  replicas: number,
  ready: number,
): Promise<void> {
  const o = await getObject(member, path);
  const r = await member.request({
    method: 'PATCH',
    path: `${path}/status`,
    contentType: 'application/merge-patch+json',
    body: {
      status: {
        observedGeneration: (o?.metadata as Obj | undefined)?.generation,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: ready,
        availableReplicas: ready,
      },
    },
  });
  assert.ok(r.status < 300, `status of ${path}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
}

/**
 * A List of Clusters `clusters`, a Deployment `web` (3 replicas) in `ns`, and the PropagationPolicy that
 * sends it to one of the clusters (spread by cluster, one group), tolerating `taint` for 2 s, with the
 * policy's `failover`: the set-up of the tests of NoExecute taints and cluster failover.
 */
export function webOnOneCluster(ns: string, clusters: string[], taint: Obj, failover: Obj): Obj {
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      ...clusters.map((name) => ({ apiVersion: 'cluster.flotilla.io/v1alpha1', kind: 'Cluster', metadata: { name } })),
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: ns },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
        },
      },
      {
        apiVersion: 'policy.flotilla.io/v1beta1',
        kind: 'PropagationPolicy',
        metadata: { name: 'web', namespace: ns },
        spec: {
          resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
          placement: {
            clusterAffinity: { clusterNames: clusters },
            clusterTolerations: [{ ...taint, operator: 'Exists', tolerationSeconds: 2 }],
            spreadConstraints: [{ spreadByField: 'cluster', maxGroups: 1, minGroups: 1 }],
          },
          failover,
        },
      },
    ],
  };
}
