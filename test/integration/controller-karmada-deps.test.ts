// A dependency two workloads take with them (propagateDeps) under Karmada policies that disagree on
// conflictResolution and preserveResourcesOnDeletion: Karmada's binding of the dependency resolves them as
// Karmada's dependencies distributor does (any Overwrite, any true) and carries a Warning Event
// DependencyPolicyConflict naming each setting in dispute. Real apiservers, a hub serving Karmada's API
// and one member; the controller runs in this process through the CLI entry.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { customResourceDefinitions, karmadaCustomResourceDefinitions } from '../../api/crds/index.js';
import type { ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { capturingIO, installCRDs, type Obj, startController } from './controller-io.js';

const WAIT_MS = 30_000;
const NS = 'deps';

/** A Deployment that mounts ConfigMap `shared`. */
const deployment = (name: string): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: NS },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        containers: [{ name: 'web', image: 'nginx' }],
        volumes: [{ name: 'cfg', configMap: { name: 'shared' } }],
      },
    },
  },
});

const policy = (name: string, conflictResolution: string, preserveResourcesOnDeletion: boolean): Obj => ({
  apiVersion: 'policy.karmada.io/v1alpha1',
  kind: 'PropagationPolicy',
  metadata: { name, namespace: NS },
  spec: {
    resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name }],
    placement: { clusterAffinity: { clusterNames: ['member1'] } },
    propagateDeps: true,
    conflictResolution,
    preserveResourcesOnDeletion,
  },
});

const BOTH =
  'Dependency policy conflict detected: ConflictResolution conflicted (Overwrite vs Abort); PreserveResourcesOnDeletion conflicted (true vs false).';
const PRESERVE_ONLY = 'Dependency policy conflict detected: PreserveResourcesOnDeletion conflicted (true vs false).';

void describe("flotilla controller: Karmada's DependencyPolicyConflict on a shared dependency's binding", () => {
  const env = useEnvironment({ members: 1 });
  const stop = new AbortController();
  let controller: Promise<number>;
  let out: ReturnType<typeof capturingIO>;
  const k = (args: string[], stdin?: unknown) => kubectl(env().hub.kubeconfigPath, args, stdin);

  before(async () => {
    const e = env();
    await installCRDs(e.hub, [...customResourceDefinitions(), ...karmadaCustomResourceDefinitions()]);
    const r = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flotilla-system' } },
        {
          apiVersion: 'cluster.karmada.io/v1alpha1',
          kind: 'Cluster',
          metadata: { name: 'member1' },
          spec: { syncMode: 'Push' },
        },
      ],
    });
    assert.equal(r.status, 0, r.stderr);
    out = capturingIO(stop.signal);
    controller = startController(e.hub, (e.members[0] as ClusterHandle).kubeconfigPath, out);
  });

  after(async () => {
    stop.abort();
    assert.equal(await controller, 0, out.err());
  });

  const binding = () => k(['get', 'rb', 'shared-configmap', '-n', NS, '-o', 'json']);
  const spec = (r: { status: number | null; stdout: string }) =>
    r.status === 0 ? ((JSON.parse(r.stdout) as Obj).spec as Obj) : undefined;
  const conflicts = async () => {
    const r = await k([
      'get',
      'events',
      '-n',
      NS,
      '--field-selector',
      'involvedObject.name=shared-configmap',
      '-o',
      'json',
    ]);
    return ((JSON.parse(r.stdout) as Obj).items as Obj[])
      .filter((e) => e.reason === 'DependencyPolicyConflict')
      .map((e) => ({ type: e.type, kind: (e.involvedObject as Obj).kind, message: e.message }));
  };

  void it('resolves to Overwrite and preserve (whichever workload is first) and says both settings conflict', async () => {
    // "a" sorts first and its policy says Abort and false: the first workload's settings would be those.
    const r = await k(['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared', namespace: NS }, data: { k: 'v' } },
        deployment('a'),
        deployment('b'),
        policy('a', 'Abort', false),
        policy('b', 'Overwrite', true),
      ],
    });
    assert.equal(r.status, 0, r.stderr);
    const rb = await eventually(binding, (b) => (spec(b)?.requiredBy as Obj[] | undefined)?.length === 2, WAIT_MS, 200);
    const s = spec(rb);
    assert.ok(s, `${rb.stderr}\n${out.err()}`);
    const resolved = await eventually(
      binding,
      (b) => spec(b)?.conflictResolution === 'Overwrite' && spec(b)?.preserveResourcesOnDeletion === true,
      WAIT_MS,
      200,
    );
    assert.equal(spec(resolved)?.conflictResolution, 'Overwrite');
    assert.equal(spec(resolved)?.preserveResourcesOnDeletion, true);
    const events = await eventually(conflicts, (es) => es.some((e) => e.message === BOTH), WAIT_MS, 200);
    assert.deepEqual(
      events.find((e) => e.message === BOTH),
      { type: 'Warning', kind: 'ResourceBinding', message: BOTH },
      JSON.stringify(events),
    );
  });

  void it('a policy brought in line leaves only the other setting in conflict', async () => {
    const r = await k(['apply', '-f', '-'], policy('a', 'Overwrite', false));
    assert.equal(r.status, 0, r.stderr);
    const events = await eventually(conflicts, (es) => es.some((e) => e.message === PRESERVE_ONLY), WAIT_MS, 200);
    assert.ok(
      events.some((e) => e.message === PRESERVE_ONLY),
      JSON.stringify(events),
    );
    const rb = await binding();
    assert.equal(spec(rb)?.conflictResolution, 'Overwrite');
    assert.equal(spec(rb)?.preserveResourcesOnDeletion, true);
  });
});
