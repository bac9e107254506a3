// A NoExecute taint a person adds to a Cluster, as Karmada's e2e suite adds one: without a timeAdded.
// Karmada's Cluster API stamps the time on every NoExecute taint that lacks one, and tolerationSeconds
// count from it; the controller stamps it the same way, so a template that tolerates the taint for 2 s
// is evicted 2 s later (not tolerated for ever). Once the taint is removed, the template stays on the
// cluster it moved to (Karmada's ClusterLocality score) rather than move back. Real apiservers.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import {
  capturingIO,
  clusterTaints,
  getObject,
  prepareHub,
  setClusterTaints,
  type Obj,
  startController,
  webOnOneCluster,
} from './controller-io.js';

const WAIT_MS = 45_000;
const NS = 'shop';
const CLUSTERS = ['member1', 'member2'];
const TAINT = { key: 'fail-test', effect: 'NoExecute' };

void describe('flotilla controller: a NoExecute taint added without timeAdded', () => {
  const env = useEnvironment({ members: 2 });
  let hub: KubeClient;
  let members: KubeClient[];
  const stop = new AbortController();
  let controller: Promise<number>;
  let out: ReturnType<typeof capturingIO>;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean) => eventually(probe, done, WAIT_MS, 200);
  /** Which members hold the Deployment. */
  const holders = async () => {
    const on: string[] = [];
    for (const [i, m] of members.entries())
      if (await getObject(m, `/apis/apps/v1/namespaces/${NS}/deployments/web`)) on.push(CLUSTERS[i] as string);
    return on;
  };
  const taints = (name: string) => clusterTaints(hub, name);
  const setTaints = (name: string, list: Obj[]) => setClusterTaints(hub, name, list);
  const notChosen = async () =>
    ((
      (await getObject(hub, `/apis/work.flotilla.io/v1alpha1/namespaces/${NS}/resourcebindings/web-deployment`))
        ?.status as Obj | undefined
    )?.notChosen as Obj[] | undefined) ?? [];

  before(async () => {
    const e = env();
    ({ hub, members } = await prepareHub(e, NS));
    const applied = await k(
      ['apply', '-f', '-'],
      webOnOneCluster(NS, CLUSTERS, TAINT, { cluster: { purgeMode: 'Directly' } }),
    );
    assert.equal(applied.status, 0, applied.stderr);
    out = capturingIO(stop.signal);
    controller = startController(e.hub, e.membersKubeconfigPath, out, ['--failover', 'true']);
    // Equal clusters: the first by name.
    assert.deepEqual(await until(holders, (h) => h.join() === 'member1'), ['member1'], out.err());
  });

  after(async () => {
    stop.abort();
    assert.equal(await controller, 0, out.err());
  });

  void it('the taint gets its timeAdded, and the template leaves the cluster when the toleration runs out', async () => {
    const before = Date.now();
    await setTaints('member1', [TAINT, { key: 'team', effect: 'NoSchedule' }]);
    const stamped = await until(
      () => taints('member1'),
      (t) => typeof t[0]?.timeAdded === 'string',
    );
    const at = Date.parse(String(stamped[0]?.timeAdded));
    // RFC 3339 to the second: the stamp is the second the taint was seen in, or later.
    assert.ok(at >= Math.floor(before / 1000) * 1000 && at <= Date.now(), JSON.stringify(stamped));
    assert.deepEqual(stamped[1], { key: 'team', effect: 'NoSchedule' }, 'only NoExecute taints are stamped');
    assert.deepEqual(await until(holders, (h) => h.join() === 'member2'), ['member2'], out.err());
    const why = await until(notChosen, (n) => n.some((c) => c.name === 'member1'));
    assert.equal(
      why.find((c) => c.name === 'member1')?.reason,
      'evicted: tolerationSeconds 2 of taint fail-test:NoExecute ran out',
    );
  });

  void it('with the taint removed, the template stays where it went', async () => {
    await setTaints('member1', []);
    // member1 is a candidate again, and is left out for member2, where the template is.
    const why = await until(notChosen, (n) =>
      n.some((c) => c.name === 'member1' && String(c.reason).startsWith('cut by spread constraints')),
    );
    assert.ok(why.length > 0);
    assert.deepEqual(await holders(), ['member2'], out.err());
  });
});
