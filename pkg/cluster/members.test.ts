import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';

import { fleetFromKubeconfig } from './members.js';

function loaded(contexts: string[]) {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: contexts.map((c) => ({
      name: `${c}-cluster`,
      server: `https://${c}.example.com:6443`,
      skipTLSVerify: false,
    })),
    users: contexts.map((c) => ({ name: `${c}-user`, token: `secret-${c}` })),
    contexts: contexts.map((c) => ({ name: c, cluster: `${c}-cluster`, user: `${c}-user` })),
    currentContext: contexts[0] ?? '',
  });
  return { config, description: 'kubeconfig fleet.yaml' };
}

const clusterDoc = (name: string, labels: Record<string, string> = {}) => ({
  object: {
    apiVersion: 'cluster.flotilla.io/v1alpha1',
    kind: 'Cluster',
    metadata: { name, labels },
    spec: { region: `${name}-1` },
  },
  source: 'clusters.yaml',
});

void describe('fleetFromKubeconfig', () => {
  it('makes every context a member, with its Cluster object or an empty one', () => {
    const f = fleetFromKubeconfig(loaded(['eu-west', 'us-east']), [clusterDoc('eu-west', { env: 'prod' })]);
    assert.deepEqual(f.errors, []);
    assert.deepEqual(
      f.members.map((m) => [m.name, m.server]),
      [
        ['eu-west', 'https://eu-west.example.com:6443'],
        ['us-east', 'https://us-east.example.com:6443'],
      ],
    );
    assert.deepEqual(f.clusters, [
      clusterDoc('eu-west', { env: 'prod' }).object,
      { apiVersion: 'cluster.flotilla.io/v1alpha1', kind: 'Cluster', metadata: { name: 'us-east' }, spec: {} },
    ]);
    // Each member's KubeConfig holds its own context only, so no request can mix clusters and credentials.
    assert.deepEqual(
      f.members.map((m) => m.kubeConfig.getContexts().map((c) => c.name)),
      [['eu-west'], ['us-east']],
    );
  });

  it('delivers to the --context members only, while placement still sees every context', () => {
    const f = fleetFromKubeconfig(loaded(['a', 'b', 'c']), [clusterDoc('c')], ['c', 'a', 'c']);
    assert.deepEqual(f.errors, []);
    assert.deepEqual(
      f.members.map((m) => m.name),
      ['a', 'c'],
    );
    assert.deepEqual(
      f.clusters.map((c) => (c.metadata as { name: string }).name),
      ['a', 'b', 'c'],
    );
  });

  it('names an unknown --context and the contexts there are', () => {
    const f = fleetFromKubeconfig(loaded(['a', 'b']), [], ['z']);
    assert.deepEqual(f.errors, ['--context z: no such context in kubeconfig fleet.yaml (contexts: a, b)']);
  });

  it('names both a Cluster object without a context and the kubeconfig', () => {
    const f = fleetFromKubeconfig(loaded(['eu-west']), [clusterDoc('dev')]);
    assert.equal(f.errors.length, 1);
    assert.match(
      f.errors[0] ?? '',
      /^clusters\.yaml: Cluster "dev" has no context of that name in kubeconfig fleet\.yaml \(contexts: eu-west\)/,
    );
  });

  it('reports a kubeconfig without contexts', () => {
    assert.deepEqual(fleetFromKubeconfig(loaded([]), []).errors, ['kubeconfig fleet.yaml has no contexts']);
  });
});
