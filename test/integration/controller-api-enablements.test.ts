// A member's API enablements follow its discovery each status round: a CRD installed on a member shows in
// its Cluster's status.apiEnablements by the next round (Karmada's cluster status controller reads
// discovery each sync), so templates of that kind are placed there without waiting many rounds. Real
// apiservers (which serve aggregated discovery), a hub and one member; the controller runs in this process.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { KubeClient } from '../../pkg/kube/client.js';
import { waitForCRDsEstablished, type ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { capturingIO, getObject, type Obj, prepareHub, startController } from './controller-io.js';

const INTERVAL_S = 5;
const CLUSTER = '/apis/cluster.flotilla.io/v1alpha1/clusters/member1';

const widgets: Obj = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

void describe('flotilla controller: API enablements follow the member', () => {
  const env = useEnvironment({ members: 1 });
  let hub: KubeClient;
  const stop = new AbortController();
  const out = capturingIO(stop.signal);
  let controller: Promise<number>;
  const enablements = async () =>
    ((await getObject(hub, CLUSTER))?.status as Obj | undefined)?.apiEnablements as Obj[] | undefined;

  before(async () => {
    const e = env();
    ({ hub } = await prepareHub(e, 'default-ns'));
    const made = await kubectl(e.hub.kubeconfigPath, ['apply', '-f', '-'], {
      apiVersion: 'cluster.flotilla.io/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'member1' },
    });
    assert.equal(made.status, 0, made.stderr);
    controller = startController(e.hub, e.membersKubeconfigPath, out, ['--cluster-status-interval', `${INTERVAL_S}s`]);
  });

  after(async () => {
    stop.abort();
    assert.equal(await controller, 0, out.err());
  });

  void it('a CRD installed on a member is in its Cluster status within two status rounds', async () => {
    const first = await eventually(enablements, (e) => e !== undefined, 60_000, 200);
    assert.ok(
      first?.some((e) => e.groupVersion === 'apps/v1'),
      `no API enablements written: ${out.err()}`,
    );
    assert.ok(!first?.some((e) => e.groupVersion === 'example.com/v1'));

    const member = env().members[0] as ClusterHandle;
    const installed = await kubectl(member.kubeconfigPath, ['apply', '-f', '-'], widgets);
    assert.equal(installed.status, 0, installed.stderr);
    await waitForCRDsEstablished(member, ['widgets.example.com']);
    const since = Date.now();
    // Two rounds and a margin for a loaded machine; reading discovery only every tenth round took up to ten.
    const limitMs = 2 * INTERVAL_S * 1000 + 10_000;
    const seen = await eventually(
      enablements,
      (e) => e?.some((x) => x.groupVersion === 'example.com/v1') ?? false,
      limitMs,
      200,
    );
    const widgetsEnabled = seen?.find((x) => x.groupVersion === 'example.com/v1');
    assert.deepEqual(
      widgetsEnabled?.resources,
      [{ name: 'widgets', kind: 'Widget' }],
      `not in status.apiEnablements ${Date.now() - since} ms after the CRD was established`,
    );
  });
});
