// What a Karmada user types and sees on a hub that serves both Flotilla's groups and Karmada's
// (karmadaAPI.enabled), on a real apiserver with kubectl: Clusters of either group show Karmada's columns
// (VERSION, MODE, READY from the Ready condition, AGE; -o wide: ZONES, REGION, PROVIDER, API-ENDPOINT,
// PROXY-URL). A CRD column prints a list as JSON and an absent field as an empty cell (Karmada's table: <none>).

import assert from 'node:assert/strict';
import { describe, it, before } from 'node:test';

import { customResourceDefinitions, karmadaCustomResourceDefinitions } from '../../api/crds/index.js';
import { waitForCRDsEstablished } from '../envtest/index.js';
import { useEnvironment } from '../envtest/suite.js';
import { kubectl } from '../envtest/kubectl.js';

async function run(kubeconfig: string, args: string[], input?: unknown): Promise<string> {
  const r = await kubectl(kubeconfig, args, input);
  assert.equal(r.status, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** A Cluster in `group` with the status the controller writes (kubernetesVersion, a Ready condition). */
async function cluster(kubeconfig: string, group: string, name: string, ready: 'True' | 'False'): Promise<void> {
  await run(kubeconfig, ['apply', '--server-side', '--field-manager=flotilla-test', '-f', '-'], {
    apiVersion: `${group}/v1alpha1`,
    kind: 'Cluster',
    metadata: { name },
    spec: { syncMode: 'Push', apiEndpoint: `https://${name}.example:6443`, region: 'eu', zones: ['eu-a', 'eu-b'] },
  });
  const status = {
    status: {
      kubernetesVersion: 'v1.33.1',
      conditions: [
        {
          type: 'Ready',
          status: ready,
          reason: ready === 'True' ? 'ClusterReady' : 'ClusterNotReachable',
          message: 'from the test',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    },
  };
  await run(kubeconfig, [
    'patch',
    `clusters.${group}`,
    name,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify(status),
  ]);
}

void describe('kubectl on a hub with both API groups', () => {
  const env = useEnvironment({ members: 0 });
  const kc = () => env().hub.kubeconfigPath;

  before(async () => {
    const crds = [...customResourceDefinitions(), ...karmadaCustomResourceDefinitions()];
    await run(kc(), ['apply', '--server-side', '--field-manager=flotilla-test', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: crds,
    });
    await waitForCRDsEstablished(
      env().hub,
      crds.map((c) => c.metadata.name),
      60_000,
    );
    await cluster(kc(), 'cluster.karmada.io', 'k-ready', 'True');
    await cluster(kc(), 'cluster.karmada.io', 'k-down', 'False');
    await cluster(kc(), 'cluster.flotilla.io', 'f-ready', 'True');
    await cluster(kc(), 'cluster.flotilla.io', 'f-down', 'False');
  });

  for (const group of ['cluster.karmada.io', 'cluster.flotilla.io']) {
    const prefix = group === 'cluster.karmada.io' ? 'k' : 'f';
    void it(`kubectl get clusters.${group}: VERSION, MODE, READY (the Ready condition), AGE`, async () => {
      const out = await run(kc(), ['get', `clusters.${group}`]);
      assert.match(out, /^NAME\s+VERSION\s+MODE\s+READY\s+AGE$/m, out);
      assert.match(out, new RegExp(`^${prefix}-ready\\s+v1\\.33\\.1\\s+Push\\s+True\\s+\\S+$`, 'm'), out);
      assert.match(out, new RegExp(`^${prefix}-down\\s+v1\\.33\\.1\\s+Push\\s+False\\s+\\S+$`, 'm'), out);
      const wide = await run(kc(), ['get', `clusters.${group}`, '-o', 'wide']);
      assert.match(
        wide,
        /^NAME\s+VERSION\s+MODE\s+READY\s+AGE\s+ZONES\s+REGION\s+PROVIDER\s+API-ENDPOINT\s+PROXY-URL\s+MESSAGE$/m,
      );
      assert.match(
        wide,
        new RegExp(
          `^${prefix}-ready\\s+v1\\.33\\.1\\s+Push\\s+True\\s+\\S+\\s+\\["eu-a","eu-b"\\]\\s+eu\\s+https://${prefix}-ready\\.example:6443\\s+from the test$`,
          'm',
        ),
        wide,
      );
    });
  }
});
