// What an operator reads during a member outage, on real apiservers: `kubectl get resourcebindings`
// counts the target clusters that hold the copy (APPLIED 2/3 for a binding on three clusters, one of them
// without credentials), and a member whose apiserver hangs (a loopback proxy that accepts connections and
// never answers) says how long was waited, in the same words in the controller's log, its Cluster's Ready
// condition, a ClusterNotReady Event and the binding.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import type { ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { PausableProxy } from '../pausable-proxy.js';
import { applyObject, capturingIO, getObject, prepareHub, startController, type Obj } from './controller-io.js';

const WAIT_MS = 60_000;
const PROBE_TIMEOUT = '2s';

const cluster = (name: string): Obj => ({
  apiVersion: 'cluster.flotilla.io/v1alpha1',
  kind: 'Cluster',
  metadata: { name },
  spec: {},
});

void describe('flotilla controller: what the operator reads (kubectl columns, a hung member)', () => {
  const env = useEnvironment({ members: 2 });
  let hub: KubeClient;
  let proxy: PausableProxy;
  const stop = new AbortController();
  let controller: Promise<number>;
  let out: ReturnType<typeof capturingIO>;
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean) => eventually(probe, done, WAIT_MS, 200);
  const CLUSTER = (name: string) => `/apis/cluster.flotilla.io/v1alpha1/clusters/${name}`;
  const BINDING = '/apis/work.flotilla.io/v1alpha1/namespaces/team/resourcebindings/settings-configmap';
  const ready = (c: Obj | undefined) =>
    (((c?.status as Obj | undefined)?.conditions as Obj[] | undefined) ?? []).find((x) => x.type === 'Ready');
  const entry = (b: Obj | undefined, name: string) =>
    (((b?.status as Obj | undefined)?.clusters as Obj[] | undefined) ?? []).find((c) => c.name === name);
  const rb = async (...extra: string[]) => {
    const r = await kubectl(env().hub.kubeconfigPath, [
      'get',
      'resourcebindings',
      '-n',
      'team',
      '--no-headers',
      ...extra,
    ]);
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim();
  };

  before(async () => {
    const e = env();
    ({ hub } = await prepareHub(e, 'team'));
    const member2 = e.members[1] as ClusterHandle;
    proxy = await PausableProxy.start(member2.server);
    // member2 is reached through the proxy; member3 has a Cluster and no credentials at all.
    const kubeconfig = join(e.dir, 'members-via-proxy.yaml');
    writeFileSync(kubeconfig, readFileSync(e.membersKubeconfigPath, 'utf8').split(member2.server).join(proxy.url));
    for (const name of ['member1', 'member2', 'member3']) await applyObject(hub, CLUSTER(name), cluster(name));
    await applyObject(hub, '/api/v1/namespaces/team/configmaps/settings', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'team' },
      data: { mode: 'hub' },
    });
    await applyObject(hub, '/apis/policy.flotilla.io/v1beta1/namespaces/team/propagationpolicies/settings', {
      apiVersion: 'policy.flotilla.io/v1beta1',
      kind: 'PropagationPolicy',
      metadata: { name: 'settings', namespace: 'team' },
      spec: {
        resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' }],
        placement: { clusterAffinity: { clusterNames: ['member1', 'member2', 'member3'] } },
      },
    });
    out = capturingIO(stop.signal);
    controller = startController(e.hub, kubeconfig, out, [
      '--probe-interval',
      '1s',
      '--probe-timeout',
      PROBE_TIMEOUT,
      '--log-level',
      'debug',
    ]);
  });

  after(async () => {
    await proxy.close();
    stop.abort();
    assert.equal(await controller, 0, out.err());
  });

  void it('kubectl get resourcebindings: APPLIED and READY count the three target clusters (2/3)', async () => {
    const b = await until(
      () => getObject(hub, BINDING),
      (o) => (o?.status as Obj | undefined)?.applied === '2/3',
    );
    assert.equal((b?.status as Obj).applied, '2/3', JSON.stringify(b?.status));
    assert.equal(entry(b, 'member3')?.state, 'Unreachable');
    assert.match(
      await rb(),
      /^settings-configmap\s+ConfigMap\s+settings\s+2\/3\s+2\/3\s+\S+$/,
      'NAME KIND POLICY APPLIED READY AGE',
    );
    // -o wide adds the Applied condition's message, which names the cluster that has no copy.
    assert.match(
      await rb('-o', 'wide'),
      /^settings-configmap\s+ConfigMap\s+settings\s+2\/3\s+2\/3\s+member3: Unreachable: /,
    );
  });

  void it('a member that accepts connections and never answers: the same sentence in log, condition, Event and binding', async () => {
    proxy.freeze();
    const said = `${proxy.url}/readyz: no answer within ${PROBE_TIMEOUT} (probe timeout)`;
    const c = await until(
      () => getObject(hub, CLUSTER('member2')),
      (o) => ready(o)?.status === 'False',
    );
    assert.deepEqual(
      [ready(c)?.status, ready(c)?.reason, ready(c)?.message],
      ['False', 'MemberNotReady', said],
      JSON.stringify(ready(c)),
    );
    const shown = await kubectl(env().hub.kubeconfigPath, ['get', 'clusters', 'member2', '-o', 'wide', '--no-headers']);
    assert.equal(shown.status, 0, shown.stderr);
    // NAME VERSION MODE READY AGE ZONES REGION PROVIDER API-ENDPOINT PROXY-URL MESSAGE: READY False, the sentence last.
    const row = shown.stdout.trim();
    assert.ok(/^member2\s.*\sFalse\s/.test(row) && row.endsWith(` ${said}`), row);
    const lines = out
      .err()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Obj);
    const logged = lines.find((l) => l.msg === 'member not ready; skipped until it is' && l.member === 'member2');
    assert.equal(logged?.error, said, JSON.stringify(logged));
    const events = await until(
      async () => {
        const r = await hub.request<{ items: Obj[] }>({
          method: 'GET',
          path: '/api/v1/namespaces/default/events',
          query: { fieldSelector: 'involvedObject.name=member2,reason=ClusterNotReady' },
        });
        return r.body?.items ?? [];
      },
      (items) => items.length > 0,
    );
    assert.deepEqual(
      events.map((ev) => [ev.type, ev.reason, ev.message, (ev.involvedObject as Obj).kind]),
      [['Warning', 'ClusterNotReady', said, 'Cluster']],
    );
    const b = await until(
      () => getObject(hub, BINDING),
      (o) => entry(o, 'member2')?.state === 'Unreachable',
    );
    assert.equal(entry(b, 'member2')?.message, `not ready: ${said}`);
    assert.match(await rb(), /^settings-configmap\s+ConfigMap\s+settings\s+1\/3\s+1\/3\s+\S+$/);
  });
});
