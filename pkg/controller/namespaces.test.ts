// The namespaces reconciler (namespaces.ts) on in-memory apiservers: which hub namespaces reach the
// members, their ClusterOverridePolicies, a member namespace that is not the controller's, deletion.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { until, withFleet, type Fleet, type Obj } from './core-tests/fleet.js';
import { NAMESPACE_UID_LABEL, skippedNamespaces } from './namespaces.js';

const ns = (name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels, annotations },
});

/** A ClusterOverridePolicy (storage version) adding `labels` to Namespace `name` on `clusters`. */
const labelOverride = (policy: string, name: string, clusters: string[], labels: Record<string, string>): Obj => ({
  apiVersion: 'policy.flotilla.io/v1beta1',
  kind: 'ClusterOverridePolicy',
  metadata: { name: policy },
  spec: {
    resourceSelectors: [{ apiVersion: 'v1', kind: 'Namespace', name }],
    overrideRules: [
      {
        targetCluster: { clusterNames: clusters },
        overriders: { labelsOverrider: [{ operator: 'add', value: labels }] },
      },
    ],
  },
});

const names = (f: Fleet, member: string): string[] =>
  f
    .member(member)
    .objects('v1', 'Namespace')
    .map((o) => (o.metadata as { name: string }).name)
    .sort();
const labels = (f: Fleet, member: string, name: string): Record<string, string> | undefined =>
  (
    f.member(member).get('v1', 'Namespace', undefined, name)?.metadata as
      { labels?: Record<string, string> } | undefined
  )?.labels;
const uid = (f: Fleet, name: string): string =>
  (f.hub.get('v1', 'Namespace', undefined, name)?.metadata as { uid: string }).uid;

const RESERVED = ['default', 'kube-system', 'kube-public', 'karmada-system', 'karmada-cluster', 'karmada-es-m1'];
const OWN = ['flotilla-system', 'flotilla-cluster-lease', 'flotilla-es-m1'];

void describe('namespaces: Karmada namespace controller', () => {
  void it('creates each hub namespace on every member, except the reserved, own, skipped and labelled ones', () =>
    withFleet(
      {
        members: ['m1', 'm2'],
        hub: [
          ...[...RESERVED, ...OWN, 'team-a', 'monitoring'].map((n) => ns(n, { env: 'prod' })),
          ns('opted-out', { 'namespace.karmada.io/skip-auto-propagation': 'TRUE' }),
        ],
        options: { propagateNamespaces: 'on', skippedPropagatingNamespaces: ['kube-.*', 'monitor.*'] },
      },
      async (f) => {
        for (const m of ['m1', 'm2']) {
          await until(
            `team-a on ${m}`,
            () => names(f, m),
            (n) => n.includes('team-a'),
          );
          assert.deepEqual(labels(f, m, 'team-a'), { env: 'prod', [NAMESPACE_UID_LABEL]: uid(f, 'team-a') });
        }
        await f.quiet();
        for (const m of ['m1', 'm2']) assert.deepEqual(names(f, m), ['team-a']);

        // A namespace created later follows; one deleted from the hub is deleted from the members.
        f.hub.put(ns('team-b'), 'kubectl');
        await until(
          'team-b on m2',
          () => names(f, 'm2'),
          (n) => n.includes('team-b'),
        );
        f.hub.delete('v1', 'Namespace', undefined, 'team-a');
        for (const m of ['m1', 'm2'])
          await until(
            `team-a gone from ${m}`,
            () => names(f, m),
            (n) => !n.includes('team-a'),
          );
        assert.deepEqual(names(f, 'm1'), ['team-b']);
      },
    ));

  void it('applies the ClusterOverridePolicies that select a namespace and target the cluster, and follows them', () =>
    withFleet(
      {
        members: ['m1', 'm2'],
        hub: [ns('team-a'), labelOverride('on-m1', 'team-a', ['m1'], { tier: 'gold' })],
        options: { propagateNamespaces: 'on' },
      },
      async (f) => {
        await until(
          'team-a overridden on m1',
          () => labels(f, 'm1', 'team-a')?.tier,
          (t) => t === 'gold',
        );
        await until(
          'team-a on m2',
          () => names(f, 'm2'),
          (n) => n.includes('team-a'),
        );
        assert.equal(labels(f, 'm2', 'team-a')?.tier, undefined);

        // A policy written after the namespace reached the members (Karmada's e2e clusteroverridepolicy spec).
        f.hub.put(labelOverride('on-m2', 'team-a', ['m2'], { zone: 'z2' }), 'kubectl');
        await until(
          'team-a overridden on m2',
          () => labels(f, 'm2', 'team-a')?.zone,
          (z) => z === 'z2',
        );
        f.hub.delete('policy.flotilla.io/v1beta1', 'ClusterOverridePolicy', undefined, 'on-m2');
        await until(
          'the override gone from m2',
          () => labels(f, 'm2', 'team-a')?.zone,
          (z) => z === undefined,
        );
        assert.equal(labels(f, 'm1', 'team-a')?.tier, 'gold');
      },
    ));

  void it("leaves a member namespace that is not the controller's, unless the hub's says overwrite", () =>
    withFleet(
      {
        members: ['m1'],
        hub: [
          ns('theirs', { from: 'hub' }),
          ns('taken', { from: 'hub' }, { 'work.karmada.io/conflict-resolution': 'overwrite' }),
        ],
        onMembers: { m1: [ns('theirs', { from: 'member' }), ns('taken', { from: 'member' })] },
        options: { propagateNamespaces: 'on' },
      },
      async (f) => {
        await until(
          'taken taken over',
          () => labels(f, 'm1', 'taken')?.from,
          (v) => v === 'hub',
        );
        await f.quiet();
        assert.deepEqual(labels(f, 'm1', 'theirs'), { from: 'member' });
        // Deleted from the hub: the one that is not the controller's stays.
        f.hub.delete('v1', 'Namespace', undefined, 'theirs');
        f.hub.delete('v1', 'Namespace', undefined, 'taken');
        await until(
          'taken gone from m1',
          () => names(f, 'm1'),
          (n) => !n.includes('taken'),
        );
        assert.deepEqual(names(f, 'm1'), ['theirs']);
      },
    ));

  void it('auto: off on a hub that does not serve policy.karmada.io', () =>
    withFleet({ members: ['m1'], hub: [ns('team-a')], options: { propagateNamespaces: 'auto' } }, async (f) => {
      await until(
        'the decision logged',
        () => f.logged('not propagating namespaces').length,
        (n) => n === 1,
      );
      await f.quiet();
      assert.deepEqual(names(f, 'm1'), []);
    }));

  void it('the skip list: anchored regular expressions; a bad one is named', () => {
    const [r] = skippedNamespaces(['kube-.*']);
    assert.ok(r?.test('kube-system'));
    assert.ok(!r?.test('my-kube-system'));
    assert.throws(
      () => skippedNamespaces(['ok', '(']),
      /--skipped-propagating-namespaces: "\(" is not a regular expression/,
    );
  });
});
