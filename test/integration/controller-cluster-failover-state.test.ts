// Cluster failover with statePreservation (Karmada's StatefulFailoverInjection, as its e2e suite's "cluster
// failover testing with purgeMode directly" spec uses it): a NoExecute taint moves a Deployment from
// member1 to member2 with purgeMode Directly, and the copy on member2 carries the label the policy's
// failover.cluster.statePreservation takes from member1's copy's status as last reported. The binding's
// eviction task keeps that state (preservedLabelState, clustersBeforeFailover); once the new placement is
// healthy the task ends and the label goes, as Karmada's binding controller injects it only while the
// task lasts. Real apiservers.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import {
  capturingIO,
  getObject,
  prepareHub,
  reportDeploymentStatus,
  setClusterTaints,
  type Obj,
  startController,
  webOnOneCluster,
} from './controller-io.js';

const WAIT_MS = 45_000;
const NS = 'shop';
const CLUSTERS = ['member1', 'member2'];
const TAINT = { key: 'fail-test', effect: 'NoExecute' };
const LABEL = 'failover.example.com/replicas';
const PATH = `/apis/apps/v1/namespaces/${NS}/deployments/web`;

void describe('flotilla controller: cluster failover keeps the state failover.cluster.statePreservation names', () => {
  const env = useEnvironment({ members: 2 });
  let hub: KubeClient;
  let members: KubeClient[];
  const stop = new AbortController();
  let controller: Promise<number>;
  let out: ReturnType<typeof capturingIO>;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean) => eventually(probe, done, WAIT_MS, 200);
  const member = (name: string) => members[CLUSTERS.indexOf(name)] as KubeClient;
  /** The Deployment's labels on each member (undefined: no copy there). */
  const labels = async () => {
    const on: Record<string, Obj | undefined> = {};
    for (const c of CLUSTERS) {
      const o = await getObject(member(c), PATH);
      on[c] = o ? (((o.metadata as Obj).labels as Obj | undefined) ?? {}) : undefined;
    }
    return on;
  };
  const binding = async () =>
    getObject(hub, `/apis/work.flotilla.io/v1alpha1/namespaces/${NS}/resourcebindings/web-deployment`);
  const health = async (c: string) =>
    ((((await binding())?.status as Obj | undefined)?.clusters as Obj[] | undefined) ?? []).find((e) => e.name === c)
      ?.health as Obj | undefined;
  /** What the Deployment controller and kubelets write on a member: 3 replicas, `ready` of them ready. */
  const reportStatus = (c: string, ready: number) => reportDeploymentStatus(member(c), PATH, 3, ready);

  before(async () => {
    const e = env();
    ({ hub, members } = await prepareHub(e, NS));
    const applied = await k(
      ['apply', '-f', '-'],
      webOnOneCluster(NS, CLUSTERS, TAINT, {
        cluster: {
          purgeMode: 'Directly',
          statePreservation: { rules: [{ aliasLabelName: LABEL, jsonPath: '{.replicas}' }] },
        },
      }),
    );
    assert.equal(applied.status, 0, applied.stderr);
    out = capturingIO(stop.signal);
    controller = startController(e.hub, e.membersKubeconfigPath, out, ['--failover', 'true']);
    // Equal clusters: the first by name.
    await until(labels, (l) => l.member1 !== undefined && l.member2 === undefined);
    await reportStatus('member1', 3);
    // The controller has read member1's status once the binding says the copy there is healthy.
    assert.equal(
      (
        await until(
          () => health('member1'),
          (h) => h?.state === 'Healthy',
        )
      )?.state,
      'Healthy',
      out.err(),
    );
  });

  after(async () => {
    stop.abort();
    assert.equal(await controller, 0, out.err());
  });

  void it('the copy on the cluster the template moves to carries the label taken from the evicted copy', async () => {
    await setClusterTaints(hub, 'member1', [TAINT]);
    const moved = await until(labels, (l) => l.member1 === undefined && l.member2 !== undefined);
    assert.equal(moved.member2?.[LABEL], '3', out.err());
    // The binding is written beside the members' work, not before it: its task may land a moment later.
    const evictionTasks = async () =>
      (((await binding())?.spec as Obj | undefined)?.gracefulEvictionTasks as Obj[] | undefined) ?? [];
    const tasks = await until(evictionTasks, (t) => t.length > 0);
    assert.deepEqual(
      tasks.map((t) => [t.fromCluster, t.purgeMode, t.preservedLabelState, t.clustersBeforeFailover]),
      [['member1', 'Directly', { [LABEL]: '3' }, ['member1']]],
    );
  });

  void it('once the new placement is healthy the task ends, and the label goes with it', async () => {
    await reportStatus('member2', 3);
    const after = await until(labels, (l) => l.member2 !== undefined && !Object.hasOwn(l.member2, LABEL));
    assert.equal(after.member2?.[LABEL], undefined, out.err());
    const spec = await until(
      async () => ((await binding())?.spec as Obj | undefined) ?? {},
      (b) => b.gracefulEvictionTasks === undefined,
    );
    assert.equal(spec.gracefulEvictionTasks, undefined, out.err());
  });
});
