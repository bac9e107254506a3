// `flotilla controller` with members known only from the hub: Cluster objects whose spec.secretRef names a
// Secret holding a kubeconfig, as an operator registers clusters without restarting anything. Real
// apiservers: a hub and two members; the controller runs in this process through the CLI entry with no
// --members-kubeconfig.
//
// Steps: both members connect from their Secrets and receive the template; each Cluster gets a Ready
// condition from its /readyz probe; a Secret that asks for a program to run is refused with the field named
// (the Cluster says why, the binding says the cluster is unreachable) and the corrected Secret connects the
// member without a restart; a stopped member turns its Cluster not Ready and is caught up when it is back;
// a deleted Cluster is no longer a target and its Secret is no longer used.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { customResourceDefinitions } from '../../api/crds/index.js';
import { run } from '../../pkg/cli/index.js';
import { KubeClient } from '../../pkg/kube/client.js';
import { applyManifests, waitForCRDsEstablished, type ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { applyObject, capturingIO, getObject, type Obj } from './controller-io.js';

const WAIT_MS = 30_000;
const POLICY = 'policy.flotilla.io/v1beta1';
const SECRETS_NS = 'flotilla-system';

const configMap = (data: Record<string, string>): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'team' },
  data,
});
const propagation: Obj = {
  apiVersion: POLICY,
  kind: 'PropagationPolicy',
  metadata: { name: 'settings', namespace: 'team' },
  spec: {
    resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
    placement: { clusterAffinity: { clusterNames: ['member1', 'member2'] } },
  },
};
const cluster = (name: string, region: string): Obj => ({
  apiVersion: 'cluster.flotilla.io/v1alpha1',
  kind: 'Cluster',
  metadata: { name },
  spec: { region, secretRef: { namespace: SECRETS_NS, name: `${name}-credentials` } },
});
const secret = (name: string, kubeconfig: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: `${name}-credentials`, namespace: SECRETS_NS },
  data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
});
/** A kubeconfig for `server` whose user would run a program to get a token: refused. */
const execKubeconfig = (server: string) => `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ["-c", "touch /tmp/flotilla-exec-ran"]}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;

void describe('flotilla controller: members from Cluster secretRefs', () => {
  const env = useEnvironment({ members: 2 });
  const client = (c: ClusterHandle) => new KubeClient(c.kubeConfig(), { concurrency: 4 });
  let hub: KubeClient;
  let m1: KubeClient;
  let m2: KubeClient;
  let kubeconfigs: string[];
  const stop = new AbortController();
  let controller: Promise<number>;
  let out: ReturnType<typeof capturingIO>;

  const get = getObject;
  const apply = applyObject;
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean) => eventually(probe, done, WAIT_MS, 100);
  const CM = '/api/v1/namespaces/team/configmaps/settings';
  const CLUSTER = (name: string) => `/apis/cluster.flotilla.io/v1alpha1/clusters/${name}`;
  const SECRET = (name: string) => `/api/v1/namespaces/${SECRETS_NS}/secrets/${name}-credentials`;
  const BINDING = '/apis/work.flotilla.io/v1alpha1/namespaces/team/resourcebindings/settings-configmap';
  const ready = (c: Obj | undefined) =>
    (((c?.status as Obj | undefined)?.conditions as Obj[] | undefined) ?? []).find((x) => x.type === 'Ready');
  const bindingState = (b: Obj | undefined, name: string) =>
    (((b?.status as Obj | undefined)?.clusters as Obj[] | undefined) ?? []).find((c) => c.name === name);

  before(async () => {
    const e = env();
    hub = client(e.hub);
    m1 = client(e.members[0] as ClusterHandle);
    m2 = client(e.members[1] as ClusterHandle);
    kubeconfigs = e.members.map((m) => readFileSync(m.kubeconfigPath, 'utf8'));
    const crds = customResourceDefinitions();
    const installed = await kubectl(e.hub.kubeconfigPath, ['apply', '--server-side', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: crds,
    });
    assert.equal(installed.status, 0, installed.stderr);
    await waitForCRDsEstablished(
      e.hub,
      crds.map((c) => c.metadata.name),
    );
    await applyManifests(e.hub, [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SECRETS_NS } },
    ]);
    await apply(hub, SECRET('member1'), secret('member1', kubeconfigs[0] ?? ''));
    await apply(
      hub,
      SECRET('member2'),
      secret('member2', execKubeconfig(e.members[1]?.server ?? 'https://127.0.0.1:1')),
    );
    await apply(hub, CLUSTER('member1'), cluster('member1', 'eu'));
    await apply(hub, CLUSTER('member2'), cluster('member2', 'us'));
    await apply(hub, CM, configMap({ mode: 'hub' }));
    await apply(hub, '/apis/policy.flotilla.io/v1beta1/namespaces/team/propagationpolicies/settings', propagation);
    out = capturingIO(stop.signal);
    controller = run(
      [
        'controller',
        '--kubeconfig',
        e.hub.kubeconfigPath,
        '--metrics-port',
        '0',
        '--namespace',
        SECRETS_NS,
        '--probe-interval',
        '1s',
        '--probe-timeout',
        '2s',
        '--log-level',
        'debug',
      ],
      out,
    );
  });

  after(async () => {
    if (process.env.FLOTILLA_CONTROLLER_LOG)
      (await import('node:fs')).writeFileSync(process.env.FLOTILLA_CONTROLLER_LOG, out.err());
    stop.abort();
    assert.equal(await controller, 0, out.err());
    assert.ok(
      !/BEGIN (RSA |EC )?PRIVATE KEY|client-key-data: [A-Za-z0-9]|LS0tLS1CRUdJTi/.test(out.err()),
      'no credentials in the logs',
    );
  });

  void it('connects a member from its Secret, delivers to it and marks its Cluster Ready', async () => {
    const cm = await until(
      () => get(m1, CM),
      (o) => o !== undefined,
    );
    assert.deepEqual(cm?.data, { mode: 'hub' });
    const c = await until(
      () => get(hub, CLUSTER('member1')),
      (o) => ready(o)?.status === 'True',
    );
    assert.equal(ready(c)?.status, 'True', JSON.stringify(c?.status));
    assert.equal(ready(c)?.reason, 'MemberReady');
  });

  void it('refuses a kubeconfig that would run a program, says why on the Cluster and in the binding, and runs nothing', async () => {
    const c = await until(
      () => get(hub, CLUSTER('member2')),
      (o) => ready(o)?.status === 'False',
    );
    assert.equal(ready(c)?.reason, 'InvalidCredentials');
    assert.match(String(ready(c)?.message), /users\["u"\]\.exec: only inline credentials are accepted/);
    const b = await until(
      () => get(hub, BINDING),
      (o) => bindingState(o, 'member2')?.state === 'Unreachable',
    );
    assert.match(
      String(bindingState(b, 'member2')?.message),
      /no access to cluster member2: its Secret flotilla-system\/member2-credentials: users\["u"\]\.exec/,
    );
    assert.equal(bindingState(b, 'member1')?.state, 'Applied');
    assert.equal(await get(m2, CM), undefined, 'nothing reached member2');
    assert.throws(() => readFileSync('/tmp/flotilla-exec-ran'), /ENOENT/, 'the exec command never ran');
  });

  void it('connects the member as soon as its Secret is corrected, without a restart', async () => {
    await apply(hub, SECRET('member2'), secret('member2', kubeconfigs[1] ?? ''));
    const cm = await until(
      () => get(m2, CM),
      (o) => o !== undefined,
    );
    assert.deepEqual(cm?.data, { mode: 'hub' });
    const c = await until(
      () => get(hub, CLUSTER('member2')),
      (o) => ready(o)?.status === 'True',
    );
    assert.equal(ready(c)?.status, 'True');
    const b = await until(
      () => get(hub, BINDING),
      (o) => bindingState(o, 'member2')?.state === 'Applied',
    );
    assert.equal(bindingState(b, 'member2')?.state, 'Applied');
  });

  void it('turns a stopped member not Ready, keeps the other in step, and catches it up when it is back', async () => {
    const e = env();
    await e.stopCluster('member2');
    try {
      const c = await until(
        () => get(hub, CLUSTER('member2')),
        (o) => ready(o)?.status === 'False',
      );
      assert.equal(ready(c)?.reason, 'MemberNotReady', JSON.stringify(ready(c)));
      await apply(hub, CM, configMap({ mode: 'during-outage' }));
      const live1 = await until(
        () => get(m1, CM),
        (o) => (o?.data as Obj | undefined)?.mode === 'during-outage',
      );
      assert.equal((live1?.data as Obj).mode, 'during-outage');
      const b = await until(
        () => get(hub, BINDING),
        (o) => bindingState(o, 'member2')?.state === 'Unreachable',
      );
      assert.match(String(bindingState(b, 'member2')?.message), /^not ready: /);
    } finally {
      await e.startCluster('member2');
    }
    const c = await until(
      () => get(hub, CLUSTER('member2')),
      (o) => ready(o)?.status === 'True',
    );
    assert.equal(ready(c)?.status, 'True');
    const live2 = await until(
      () => get(m2, CM),
      (o) => (o?.data as Obj | undefined)?.mode === 'during-outage',
    );
    assert.equal((live2?.data as Obj).mode, 'during-outage');
  });

  void it('stops targeting a deleted Cluster and removes nothing there', async () => {
    const r = await hub.request({ method: 'DELETE', path: CLUSTER('member2') });
    assert.ok(r.status < 300, `HTTP ${r.status}`);
    const b = await until(
      () => get(hub, BINDING),
      (o) => bindingState(o, 'member2') === undefined,
    );
    assert.equal(bindingState(b, 'member2'), undefined, 'member2 is no longer a target');
    // Once disconnected, a template edit reaches member1 only.
    await apply(hub, CM, configMap({ mode: 'after-delete' }));
    await until(
      () => get(m1, CM),
      (o) => (o?.data as Obj | undefined)?.mode === 'after-delete',
    );
    await new Promise((res) => setTimeout(res, 1_000));
    assert.equal(
      ((await get(m2, CM))?.data as Obj | undefined)?.mode,
      'during-outage',
      'a member the controller no longer reaches keeps what it had',
    );
  });
});
