import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { clusterLister, type ClusterObjectsApi } from './cluster-list.js';

class StatusError extends Error {
  constructor(readonly code: number) {
    super(`HTTP ${code}`);
  }
}

const cluster = (name: string, region: string) => ({ metadata: { name }, spec: { region } });

function api(answers: Record<string, unknown>): ClusterObjectsApi & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    listClusterCustomObject: (p) => {
      asked.push(`${p.group}/${p.version}/${p.plural}`);
      const a = answers[p.group];
      return a instanceof Error ? Promise.reject(a) : Promise.resolve(a);
    },
  };
}

function logger() {
  const warnings: string[] = [];
  const log = { warn: (m: string) => warnings.push(m), info: () => {}, error: () => {}, debug: () => {} };
  return { log: log as never, warnings };
}

const options = (log?: never) => ({
  status: (e: unknown) => (e instanceof StatusError ? e.code : undefined),
  describe: (e: unknown) => (e instanceof Error ? e.message : String(e)),
  ...(log ? { logger: log } : {}),
});

describe('clusterLister', () => {
  it("lists both groups, Flotilla's first; a name in both is Flotilla's", async () => {
    const a = api({
      'cluster.flotilla.io': { items: [cluster('m1', 'flotilla')] },
      'cluster.karmada.io': { items: [cluster('m1', 'karmada'), cluster('m2', 'karmada')] },
    });
    assert.deepEqual(await clusterLister(a, options())(), [cluster('m1', 'flotilla'), cluster('m2', 'karmada')]);
    assert.deepEqual(a.asked, ['cluster.flotilla.io/v1alpha1/clusters', 'cluster.karmada.io/v1alpha1/clusters']);
  });

  it('a hub that does not serve cluster.karmada.io (404): the Flotilla group alone', async () => {
    const a = api({
      'cluster.flotilla.io': { items: [cluster('m1', 'f')] },
      'cluster.karmada.io': new StatusError(404),
    });
    assert.deepEqual(await clusterLister(a, options())(), [cluster('m1', 'f')]);
  });

  it('not allowed to list cluster.karmada.io (403): the Flotilla group alone, said once', async () => {
    const { log, warnings } = logger();
    const list = clusterLister(
      api({ 'cluster.flotilla.io': { items: [] }, 'cluster.karmada.io': new StatusError(403) }),
      options(log),
    );
    assert.deepEqual(await list(), []);
    assert.deepEqual(await list(), []);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /cluster\.karmada\.io/);
  });

  it('fails on any other failure, naming the group (the inventory keeps its last list)', async () => {
    await assert.rejects(
      clusterLister(
        api({ 'cluster.flotilla.io': { items: [] }, 'cluster.karmada.io': new StatusError(500) }),
        options(),
      )(),
      /^Error: cluster\.karmada\.io: HTTP 500$/,
    );
    await assert.rejects(
      clusterLister(
        api({ 'cluster.flotilla.io': new StatusError(403), 'cluster.karmada.io': { items: [] } }),
        options(),
      )(),
      /^Error: cluster\.flotilla\.io: HTTP 403$/,
    );
  });

  it("a Karmada user's hub without Flotilla's Cluster CRD (404): Karmada's Clusters alone", async () => {
    const a = api({
      'cluster.flotilla.io': new StatusError(404),
      'cluster.karmada.io': { items: [cluster('m1', 'k'), cluster('m2', 'k')] },
    });
    assert.deepEqual(await clusterLister(a, options())(), [cluster('m1', 'k'), cluster('m2', 'k')]);
  });

  it('a hub that serves neither group fails, naming both', async () => {
    await assert.rejects(
      clusterLister(
        api({ 'cluster.flotilla.io': new StatusError(404), 'cluster.karmada.io': new StatusError(404) }),
        options(),
      )(),
      /^Error: the hub serves no Clusters: cluster\.flotilla\.io: HTTP 404; cluster\.karmada\.io: HTTP 404$/,
    );
  });

  it('reads items leniently: not a list, or items that are not objects', async () => {
    const a = api({
      'cluster.flotilla.io': { items: [null, 'x', cluster('m1', 'f')] },
      'cluster.karmada.io': 'garbage',
    });
    assert.deepEqual(await clusterLister(a, options())(), [cluster('m1', 'f')]);
  });
});
