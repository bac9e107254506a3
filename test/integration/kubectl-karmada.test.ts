// What a Karmada user types and sees on a hub that serves both Flotilla's groups and Karmada's
// (karmadaAPI.enabled), on a real apiserver with kubectl: Clusters of either group show Karmada's columns
// (VERSION, MODE, READY from the Ready condition, AGE; -o wide: ZONES, REGION, PROVIDER, API-ENDPOINT,
// PROXY-URL). A CRD column prints a list as JSON and an absent field as an empty cell (Karmada's table: <none>).
// Karmada's short names and category reach Karmada's group (pp, op, cpp, cop, karmada-io); Flotilla's
// policies answer to fpp, fop, fcpp, fcop; the plain plurals resolve to the group kubectl lists first.

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

const NS = 'team';

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
    await run(kc(), ['create', 'namespace', NS]);
    const policies = [];
    for (const [group, version, prefix] of [
      ['policy.karmada.io', 'v1alpha1', 'k'],
      ['policy.flotilla.io', 'v1beta1', 'f'],
    ] as const) {
      const selectors = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' }];
      const meta = (name: string, namespaced: boolean) => ({ name, ...(namespaced ? { namespace: NS } : {}) });
      const apiVersion = `${group}/${version}`;
      policies.push(
        {
          apiVersion,
          kind: 'PropagationPolicy',
          metadata: meta(`${prefix}-pp`, true),
          spec: { resourceSelectors: selectors },
        },
        {
          apiVersion,
          kind: 'ClusterPropagationPolicy',
          metadata: meta(`${prefix}-cpp`, false),
          spec: { resourceSelectors: selectors },
        },
        {
          apiVersion,
          kind: 'OverridePolicy',
          metadata: meta(`${prefix}-op`, true),
          spec: { resourceSelectors: selectors },
        },
        {
          apiVersion,
          kind: 'ClusterOverridePolicy',
          metadata: meta(`${prefix}-cop`, false),
          spec: { resourceSelectors: selectors },
        },
      );
    }
    await run(kc(), ['apply', '--server-side', '--field-manager=flotilla-test', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: policies,
    });
  });

  /** The NAME column of `kubectl get ARGS -o name` (kind.group/name lines). */
  const names = async (args: string[]): Promise<string[]> =>
    (await run(kc(), ['get', ...args, '-o', 'name']))
      .split('\n')
      .filter((l) => l !== '')
      .sort();

  void it("Karmada's short names reach Karmada's group; fpp, fcpp, fop, fcop reach Flotilla's", async () => {
    assert.deepStrictEqual(await names(['pp,cpp,op,cop', '-A']), [
      'clusteroverridepolicy.policy.karmada.io/k-cop',
      'clusterpropagationpolicy.policy.karmada.io/k-cpp',
      'overridepolicy.policy.karmada.io/k-op',
      'propagationpolicy.policy.karmada.io/k-pp',
    ]);
    assert.deepStrictEqual(await names(['fpp,fcpp,fop,fcop', '-A']), [
      'clusteroverridepolicy.policy.flotilla.io/f-cop',
      'clusterpropagationpolicy.policy.flotilla.io/f-cpp',
      'overridepolicy.policy.flotilla.io/f-op',
      'propagationpolicy.policy.flotilla.io/f-pp',
    ]);
    // Karmada's category lists every Karmada-group object the hub serves; Flotilla's its own.
    const karmada = await names(['karmada-io', '-A']);
    assert.ok(karmada.includes('cluster.cluster.karmada.io/k-ready'), karmada.join(' '));
    assert.ok(karmada.includes('propagationpolicy.policy.karmada.io/k-pp'), karmada.join(' '));
    assert.ok(
      karmada.every((n) => /\.karmada\.io\//.test(n)),
      karmada.join(' '),
    );
    const flotilla = await names(['flotilla', '-A']);
    assert.ok(flotilla.includes('propagationpolicy.policy.flotilla.io/f-pp'), flotilla.join(' '));
    assert.ok(
      flotilla.every((n) => /\.flotilla\.io\//.test(n)),
      flotilla.join(' '),
    );
  });

  void it('kubectl delete pp deletes the Karmada policy and leaves the Flotilla one of the same name', async () => {
    await run(kc(), ['apply', '--server-side', '--field-manager=flotilla-test', '-f', '-'], {
      apiVersion: 'policy.flotilla.io/v1beta1',
      kind: 'PropagationPolicy',
      metadata: { name: 'same', namespace: NS },
      spec: { resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x' }] },
    });
    await run(kc(), ['apply', '--server-side', '--field-manager=flotilla-test', '-f', '-'], {
      apiVersion: 'policy.karmada.io/v1alpha1',
      kind: 'PropagationPolicy',
      metadata: { name: 'same', namespace: NS },
      spec: { resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x' }] },
    });
    const out = await run(kc(), ['delete', 'pp', 'same', '-n', NS]);
    assert.match(out, /propagationpolicy\.policy\.karmada\.io "same" deleted/);
    assert.deepStrictEqual(await names(['fpp', 'same', '-n', NS]), ['propagationpolicy.policy.flotilla.io/same']);
    const gone = await kubectl(kc(), ['get', 'propagationpolicies.policy.karmada.io', 'same', '-n', NS]);
    assert.notEqual(gone.status, 0);
    assert.match(gone.stderr, /NotFound|not found/);
  });

  void it("the plain plurals (propagationpolicies, clusters) resolve to the group kubectl lists first: Flotilla's", async () => {
    // Measured, documented in the README: CRD groups share one discovery priority, so kubectl's RESTMapper
    // orders them by name; policy.flotilla.io and cluster.flotilla.io come before the karmada.io groups.
    assert.deepStrictEqual(await names(['propagationpolicies', '-n', NS]), [
      'propagationpolicy.policy.flotilla.io/f-pp',
      'propagationpolicy.policy.flotilla.io/same',
    ]);
    assert.deepStrictEqual(await names(['clusters']), [
      'cluster.cluster.flotilla.io/f-down',
      'cluster.cluster.flotilla.io/f-ready',
    ]);
    assert.deepStrictEqual(await names(['clusters.cluster.karmada.io']), [
      'cluster.cluster.karmada.io/k-down',
      'cluster.cluster.karmada.io/k-ready',
    ]);
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
