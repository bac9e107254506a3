// A restarted controller reconciles nothing before every hub informer has listed. A Deployment takes its
// ConfigMap to a member (propagateDeps); the controller is restarted with its hub reached through a proxy
// that holds the Deployment list for a few seconds, so the ConfigMap informer has listed and the
// Deployment informer has not. Reconciled alone, the ConfigMap would be "required by no workload" and
// removed from the member, to come back once the Deployment is listed. Real apiservers throughout.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { HoldingProxy } from '../holding-proxy.js';
import { getObject, prepareHub, spawnFlotilla, stopFlotilla, type FlotillaProcess, type Obj } from './controller-io.js';

const WAIT_MS = 60_000;
const NS = 'deps';
/** How long the Deployment list is held: well past the moment the ConfigMap was listed and queued. */
const HOLD_MS = 5_000;

void describe('flotilla controller: templates wait for every hub informer to list', () => {
  const env = useEnvironment({ members: 1 });
  let members: KubeClient[];
  let controller: FlotillaProcess | undefined;
  let proxy: HoldingProxy | undefined;
  let starts = 0;

  const spawn = (hubKubeconfig: string) => {
    const e = env();
    controller = spawnFlotilla(
      [
        'controller',
        '--kubeconfig',
        hubKubeconfig,
        '--members-kubeconfig',
        e.membersKubeconfigPath,
        '--namespace',
        'flotilla-system',
        '--probe-interval',
        '500ms',
      ],
      join(e.dir, 'logs', `flotilla-controller-${starts++}.log`),
    );
    return controller;
  };
  const stop = async () => {
    if (controller) await stopFlotilla(controller);
  };
  /** uid and resourceVersion of the member's copies, or 'absent'. */
  const copies = async () => {
    const out: Record<string, string> = {};
    for (const path of [
      `/api/v1/namespaces/${NS}/configmaps/app-config`,
      `/apis/apps/v1/namespaces/${NS}/deployments/app`,
    ]) {
      const o = await getObject(members[0]!, path);
      const meta = o?.metadata as Obj | undefined;
      out[path.split('/').slice(-2).join('/')] = meta
        ? `${String(meta.uid)} ${String(meta.resourceVersion)}`
        : 'absent';
    }
    return out;
  };

  before(async () => {
    const e = env();
    ({ members } = await prepareHub(e, NS));
    const applied = await kubectl(e.hub.kubeconfigPath, ['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'cluster.flotilla.io/v1alpha1', kind: 'Cluster', metadata: { name: 'member1' } },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app-config', namespace: NS }, data: { a: '1' } },
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'app', namespace: NS },
          spec: {
            selector: { matchLabels: { app: 'app' } },
            template: {
              metadata: { labels: { app: 'app' } },
              spec: {
                containers: [{ name: 'app', image: 'nginx:1.25', envFrom: [{ configMapRef: { name: 'app-config' } }] }],
              },
            },
          },
        },
        {
          apiVersion: 'policy.flotilla.io/v1beta1',
          kind: 'PropagationPolicy',
          metadata: { name: 'app', namespace: NS },
          spec: {
            resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'app' }],
            propagateDeps: true,
            placement: { clusterAffinity: { clusterNames: ['member1'] } },
          },
        },
      ],
    });
    assert.equal(applied.status, 0, applied.stderr);
  });

  after(async () => {
    await stop();
    await proxy?.close();
  });

  void it('a dependency listed before its workload is left on the member as it is', async () => {
    const e = env();
    spawn(e.hub.kubeconfigPath);
    const placed = await eventually(copies, (c) => !Object.values(c).includes('absent'), WAIT_MS, 200);
    assert.ok(!Object.values(placed).includes('absent'), JSON.stringify(placed));
    // Settled: the binding and the finalizers are written before the restart.
    await sleep(3_000);
    const first = await copies();
    await stop();

    proxy = await HoldingProxy.start(e.hub.kubeconfigPath);
    const viaProxy = join(e.dir, 'hub-via-proxy.kubeconfig');
    proxy.writeKubeconfig(viaProxy);
    const isList = (kind: string) => (method: string, url: URL) =>
      method === 'GET' && url.pathname.endsWith(`/${kind}`) && url.searchParams.get('watch') !== 'true';
    proxy.hold(isList('deployments'));
    const c = spawn(viaProxy);
    const configMapsListed = await eventually(
      () =>
        Promise.resolve(
          proxy!.held > 0 &&
            proxy!.seen.some((s) => s.startsWith('GET /api/v1/configmaps') && !s.includes('watch=true')),
        ),
      (x) => x,
      WAIT_MS,
      100,
    );
    assert.ok(configMapsListed, `requests seen: ${proxy.seen.join('\n')}\n${c.log().slice(-3000)}`);
    await sleep(HOLD_MS);
    const whileHeld = await copies();
    proxy.release();
    const synced = await eventually(
      () => Promise.resolve(c.log().includes('caches synced')),
      (x) => x,
      WAIT_MS,
      200,
    );
    assert.ok(synced, c.log().slice(-3000));
    await sleep(3_000);
    const after = await copies();
    assert.deepEqual({ whileHeld, after }, { whileHeld: first, after: first }, c.log().slice(-4000));
  });
});
