// Karmada's lifecycle behaviours on a Flotilla hub, as a platform team uses them with kubectl: `suspension`
// (dispatchingOnClusters, then lifted), `preserveResourcesOnDeletion`, retained replicas under a scaler
// on the member, and the template's status aggregated from the members (`kubectl rollout status` on the
// hub). Real apiservers, a hub and two members; the controller runs in this process through the CLI entry.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { customResourceDefinitions } from '../../api/crds/index.js';
import { render } from '../../pkg/engine/index.js';
import { KubeClient } from '../../pkg/kube/client.js';
import { applyManifests, type ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { capturingIO, getObject, installCRDs, type Obj, startController } from './controller-io.js';

const WAIT_MS = 30_000;
const CM = '/api/v1/namespaces/team/configmaps/settings';
const BINDING = '/apis/work.flotilla.io/v1alpha1/namespaces/team/resourcebindings/settings-configmap';

const cluster = (name: string): Obj => ({
  apiVersion: 'cluster.flotilla.io/v1alpha1',
  kind: 'Cluster',
  metadata: { name },
});
const settings = (value: string): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'team' },
  data: { value },
});
const policy = (spec: Obj = {}): Obj => ({
  apiVersion: 'policy.flotilla.io/v1beta1',
  kind: 'PropagationPolicy',
  metadata: { name: 'settings', namespace: 'team' },
  spec: {
    resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' }],
    placement: { clusterAffinity: { clusterNames: ['member1', 'member2'] } },
    ...spec,
  },
});

void describe('flotilla controller: suspension, deletion, retain, aggregated status', () => {
  const env = useEnvironment({ members: 2 });
  let hub: KubeClient;
  let m1: KubeClient;
  let m2: KubeClient;
  const stop = new AbortController();
  let controller: Promise<number>;
  let out: ReturnType<typeof capturingIO>;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);
  const value = async (c: KubeClient) => ((await getObject(c, CM))?.data as Obj | undefined)?.value;
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean) => eventually(probe, done, WAIT_MS, 100);
  const clusterStates = async () =>
    (((await getObject(hub, BINDING))?.status as Obj | undefined)?.clusters as Obj[] | undefined)?.map(
      (c) => `${String(c.name)}=${String(c.state)}`,
    ) ?? [];
  const reasons = async () => {
    const r = await k([
      'get',
      'events',
      '-n',
      'team',
      '--field-selector',
      'involvedObject.name=settings',
      '-o',
      'json',
    ]);
    return ((JSON.parse(r.stdout || '{"items":[]}') as { items: Obj[] }).items ?? []).map((e) => String(e.reason));
  };

  before(async () => {
    const e = env();
    hub = new KubeClient(e.hub.kubeConfig(), { concurrency: 4 });
    m1 = new KubeClient((e.members[0] as ClusterHandle).kubeConfig(), { concurrency: 4 });
    m2 = new KubeClient((e.members[1] as ClusterHandle).kubeConfig(), { concurrency: 4 });
    const crds = customResourceDefinitions();
    await installCRDs(e.hub, crds);
    await applyManifests(e.hub, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } }]);
    const applied = await k(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: [settings('1'), policy()] });
    assert.equal(applied.status, 0, applied.stderr);
    out = capturingIO(stop.signal);
    controller = startController(e.hub, e.membersKubeconfigPath, out);
    assert.deepEqual(
      await until(
        async () => [await value(m1), await value(m2)],
        (v) => v[0] === '1' && v[1] === '1',
      ),
      ['1', '1'],
      out.err(),
    );
  });

  after(async () => {
    stop.abort();
    assert.equal(await controller, 0, out.err());
  });

  void it('writes nothing to a suspended cluster: not the template edit, not over drift; the binding and an Event say Suspended', async () => {
    const suspended = await k(
      ['apply', '-f', '-'],
      policy({ suspension: { dispatchingOnClusters: { clusterNames: ['member2'] } } }),
    );
    assert.equal(suspended.status, 0, suspended.stderr);
    assert.deepEqual(await until(clusterStates, (s) => s.includes('member2=Suspended')), [
      'member1=Applied',
      'member2=Suspended',
    ]);
    const edited = await k(['apply', '-f', '-'], settings('2'));
    assert.equal(edited.status, 0, edited.stderr);
    const drift = await kubectl((env().members[1] as ClusterHandle).kubeconfigPath, [
      'patch',
      'configmap',
      'settings',
      '-n',
      'team',
      '--type=merge',
      '-p',
      '{"data":{"value":"edited-on-member2"}}',
    ]);
    assert.equal(drift.status, 0, drift.stderr);
    assert.equal(
      await until(
        () => value(m1),
        (v) => v === '2',
      ),
      '2',
    );
    // member1 has the edit; give member2 the same time again and more: it must still hold what it had.
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(await value(m2), 'edited-on-member2');
    const binding = await getObject(hub, BINDING);
    const condition = ((binding?.status as Obj).conditions as Obj[]).find((c) => c.type === 'Suspended');
    assert.equal(condition?.status, 'True');
    assert.match(String(condition?.message), /dispatching to member2 is suspended by PropagationPolicy team\/settings/);
    assert.ok((await until(reasons, (r) => r.includes('Suspended'))).includes('Suspended'));
  });

  void it('delivers what changed meanwhile when the suspension is lifted', async () => {
    const lifted = await k(['apply', '-f', '-'], policy());
    assert.equal(lifted.status, 0, lifted.stderr);
    assert.equal(
      await until(
        () => value(m2),
        (v) => v === '2',
      ),
      '2',
    );
    assert.deepEqual(await until(clusterStates, (s) => s.join() === 'member1=Applied,member2=Applied'), [
      'member1=Applied',
      'member2=Applied',
    ]);
  });

  void it('preserveResourcesOnDeletion: kubectl delete of the template leaves the copies, without ownership labels', async () => {
    const preserve = await k(['apply', '-f', '-'], policy({ preserveResourcesOnDeletion: true }));
    assert.equal(preserve.status, 0, preserve.stderr);
    // The binding carries the claiming policy's preserveResourcesOnDeletion once the controller planned with it.
    const binding = await until(
      () => getObject(hub, BINDING),
      (b) => (b?.spec as Obj | undefined)?.preserveResourcesOnDeletion === true,
    );
    assert.equal((binding?.spec as Obj).preserveResourcesOnDeletion, true);
    const deleted = await k(['delete', 'configmap', 'settings', '-n', 'team', '--timeout=60s']);
    assert.equal(deleted.status, 0, deleted.stderr);
    assert.equal(await getObject(hub, CM), undefined, 'the template is gone from the hub');
    for (const m of [m1, m2]) {
      const copy = await getObject(m, CM);
      assert.equal((copy?.data as Obj | undefined)?.value, '2');
      const labels = ((copy?.metadata as Obj).labels as Obj | undefined) ?? {};
      const annotations = ((copy?.metadata as Obj).annotations as Obj | undefined) ?? {};
      assert.deepEqual(
        Object.keys(labels).filter((l) => l.startsWith('flotilla.io/')),
        [],
      );
      assert.deepEqual(
        Object.keys(annotations).filter((a) => a.startsWith('flotilla.io/')),
        [],
      );
    }
    assert.ok((await until(reasons, (r) => r.includes('Preserved'))).includes('Preserved'));
    // A new template of the same name does not silently take the released copy (Abort: a conflict).
    const again = await k(['apply', '-f', '-'], settings('3'));
    assert.equal(again.status, 0, again.stderr);
    assert.deepEqual(await until(clusterStates, (s) => s.join() === 'member1=Conflict,member2=Conflict'), [
      'member1=Conflict',
      'member2=Conflict',
    ]);
    assert.equal(await value(m1), '2');
  });

  void it('leaves spec.replicas to a scaler on the member: kubectl scale is not reverted, the binding shows it, no flapping', async () => {
    const web = (annotation: string): Obj => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'team', annotations: { note: annotation } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
      },
    });
    const webPolicy: Obj = {
      apiVersion: 'policy.flotilla.io/v1beta1',
      kind: 'PropagationPolicy',
      metadata: { name: 'web', namespace: 'team' },
      spec: {
        resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
        placement: { clusterAffinity: { clusterNames: ['member1', 'member2'] } },
      },
    };
    const DEPLOY = '/apis/apps/v1/namespaces/team/deployments/web';
    const replicas = async (c: KubeClient) => ((await getObject(c, DEPLOY))?.spec as Obj | undefined)?.replicas;
    const created = await k(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: [web('a'), webPolicy] });
    assert.equal(created.status, 0, created.stderr);
    assert.deepEqual(
      await until(
        async () => [await replicas(m1), await replicas(m2)],
        (v) => v[0] === 2 && v[1] === 2,
      ),
      [2, 2],
    );
    // What an autoscaler does: write spec.replicas through the scale subresource.
    const scaled = await kubectl((env().members[0] as ClusterHandle).kubeconfigPath, [
      'scale',
      'deployment/web',
      '-n',
      'team',
      '--replicas=5',
    ]);
    assert.equal(scaled.status, 0, scaled.stderr);
    // A template edit makes the controller apply again everywhere.
    const edited = await k(['apply', '-f', '-'], web('b'));
    assert.equal(edited.status, 0, edited.stderr);
    const note = async (c: KubeClient) =>
      (((await getObject(c, DEPLOY))?.metadata as Obj | undefined)?.annotations as Obj | undefined)?.note;
    assert.deepEqual(
      await until(
        async () => [await note(m1), await note(m2)],
        (v) => v[0] === 'b' && v[1] === 'b',
      ),
      ['b', 'b'],
    );
    assert.equal(await replicas(m1), 5, 'the scaled member keeps its replicas');
    assert.equal(await replicas(m2), 2);
    const BIND = '/apis/work.flotilla.io/v1alpha1/namespaces/team/resourcebindings/web-deployment';
    const line = async () =>
      (((await getObject(hub, BIND))?.status as Obj | undefined)?.clusters as Obj[] | undefined)?.find(
        (c) => c.name === 'member1',
      );
    const member1 = await until(line, (c) => typeof c?.message === 'string' && String(c.message).includes('(5)'));
    assert.match(String(member1?.message), /spec\.replicas is left as the member has it \(5\): the member scales it/);
    // No flapping: the member object is not written again while nothing changes.
    const rv = async () => ((await getObject(m1, DEPLOY))?.metadata as Obj | undefined)?.resourceVersion;
    const before = await rv();
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(await rv(), before);
    assert.equal(await replicas(m1), 5);
  });

  void it('kubectl rollout status against the hub returns when every member has rolled out (statuses written as a kubelet would)', async () => {
    const api: Obj = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'api', namespace: 'team' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'api' } },
        template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'api', image: 'nginx' }] } },
      },
    };
    const apiPolicy: Obj = {
      apiVersion: 'policy.flotilla.io/v1beta1',
      kind: 'PropagationPolicy',
      metadata: { name: 'api', namespace: 'team' },
      spec: {
        resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' }],
        placement: { clusterAffinity: { clusterNames: ['member1', 'member2'] } },
      },
    };
    const DEPLOY = '/apis/apps/v1/namespaces/team/deployments/api';
    const created = await k(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: [api, apiPolicy] });
    assert.equal(created.status, 0, created.stderr);
    const members = [m1, m2];
    await until(
      async () => Promise.all(members.map((m) => getObject(m, DEPLOY))),
      (objects) => objects.every((o) => o !== undefined),
    );
    let done = false;
    const rollout = k(['rollout', 'status', 'deployment/api', '-n', 'team', '--timeout=60s']).then((r) => {
      done = true;
      return r;
    });
    /** What the member's deployment controller and kubelet would write, through the status subresource. */
    const rollOut = async (m: KubeClient) => {
      const live = await getObject(m, DEPLOY);
      const generation = (live?.metadata as Obj).generation;
      const r = await m.request({
        method: 'PATCH',
        path: `${DEPLOY}/status`,
        contentType: 'application/merge-patch+json',
        body: {
          status: {
            observedGeneration: generation,
            replicas: 2,
            updatedReplicas: 2,
            readyReplicas: 2,
            availableReplicas: 2,
          },
        },
      });
      assert.equal(r.status, 200);
    };
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(done, false, 'rollout status returned before any member rolled out');
    await rollOut(m1);
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(done, false, 'rollout status returned with one member of two rolled out');
    const partial = (await getObject(hub, DEPLOY))?.status as Obj | undefined;
    assert.equal(partial?.updatedReplicas, 2, 'the hub shows the one member that rolled out');
    await rollOut(m2);
    const r = await rollout;
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /successfully rolled out/);
    const status = (await getObject(hub, DEPLOY))?.status as Obj;
    assert.equal(status.readyReplicas, 4);
    assert.equal(status.observedGeneration, ((await getObject(hub, DEPLOY))?.metadata as Obj).generation);
  });

  void it('claims stick: a later PropagationPolicy takes a claimed template only with preemption: Always; render agrees', async () => {
    const NAME = 'claimed';
    const cm: Obj = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: NAME, namespace: 'team' },
      data: { v: '1' },
    };
    const cpp: Obj = {
      apiVersion: 'policy.flotilla.io/v1beta1',
      kind: 'ClusterPropagationPolicy',
      metadata: { name: 'team-configs' },
      spec: {
        resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team', name: NAME }],
        placement: { clusterAffinity: { clusterNames: ['member1'] } },
      },
    };
    const pp = (preemption?: string): Obj => ({
      apiVersion: 'policy.flotilla.io/v1beta1',
      kind: 'PropagationPolicy',
      metadata: { name: 'mine', namespace: 'team' },
      spec: {
        resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', name: NAME }],
        placement: { clusterAffinity: { clusterNames: ['member2'] } },
        ...(preemption ? { preemption } : {}),
      },
    });
    const PATH = `/api/v1/namespaces/team/configmaps/${NAME}`;
    const on = async () => [(await getObject(m1, PATH)) !== undefined, (await getObject(m2, PATH)) !== undefined];
    const claim = async () =>
      ((await getObject(hub, PATH))?.metadata as Obj | undefined)?.annotations as Record<string, string> | undefined;
    assert.equal((await k(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: [cm, cpp] })).status, 0);
    assert.deepEqual(await until(on, (v) => v[0] === true), [true, false]);
    assert.equal(
      (await until(claim, (a) => a?.['clusterpropagationpolicy.karmada.io/name'] === 'team-configs'))?.[
        'clusterpropagationpolicy.karmada.io/name'
      ],
      'team-configs',
    );

    // A PropagationPolicy would beat it on a fresh match, but the claim is recorded: nothing moves.
    assert.equal((await k(['apply', '-f', '-'], pp())).status, 0);
    await new Promise((r) => setTimeout(r, 2000));
    assert.deepEqual(await on(), [true, false]);
    // Offline render of the template as the hub holds it, with both policies, gives the same claim.
    const held = await getObject(hub, PATH);
    const r = render({ objects: [held, cpp, pp(), cluster('member1'), cluster('member2')] });
    assert.deepEqual(
      r.placements.map((p) => [p.cluster, p.policy.name]),
      [['member1', 'team-configs']],
    );

    // preemption: Always takes it.
    assert.equal((await k(['apply', '-f', '-'], pp('Always'))).status, 0);
    assert.deepEqual(await until(on, (v) => v[0] === false && v[1] === true), [false, true]);
    const after = await until(claim, (a) => a?.['propagationpolicy.karmada.io/name'] === 'mine');
    assert.equal(after?.['propagationpolicy.karmada.io/name'], 'mine');
    assert.equal(after?.['clusterpropagationpolicy.karmada.io/name'], undefined);
  });
});
