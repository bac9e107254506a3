// The chart's ui.enabled: `flotilla ui` beside the controller, on the pod's loopback, with read-only RBAC;
// off by default.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';

import { CHART, helmSync } from '../helm-binary.js';

type Obj = Record<string, unknown>;
const NS = 'flotilla-system';

function render(...flags: string[]): Obj[] {
  const r = helmSync(['template', 'flotilla', CHART, '--namespace', NS, ...flags]);
  assert.equal(r.status, 0, r.stderr);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj)
    .filter((o) => o !== null);
}
const meta = (o: Obj) => o.metadata as Obj;
const uiObjects = (objects: Obj[]) => objects.filter((o) => String(meta(o).name).startsWith('flotilla-ui'));

void describe('the chart: ui', () => {
  void it('renders nothing of the ui with default values', () => {
    assert.deepEqual(uiObjects(render()), []);
  });

  void it('passes helm lint --strict with ui.enabled', () => {
    const r = helmSync(['lint', CHART, '--strict', '--set', 'ui.enabled=true']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /\[(WARNING|ERROR)\]/);
  });

  void it('runs flotilla ui on the loopback, with no Service, and may only read', () => {
    const objects = uiObjects(render('--set', 'ui.enabled=true', '--set', 'ui.port=9090'));
    assert.deepEqual(objects.map((o) => `${String(o.kind)}/${String(meta(o).name)}`).sort(), [
      'ClusterRole/flotilla-ui',
      'ClusterRoleBinding/flotilla-ui',
      'Deployment/flotilla-ui',
      'ServiceAccount/flotilla-ui',
    ]);
    const deployment = objects.find((o) => o.kind === 'Deployment') as Obj;
    const pod = ((deployment.spec as Obj).template as Obj).spec as Obj;
    const container = (pod.containers as Obj[])[0] as Obj;
    assert.deepEqual(container.args, ['ui', '--address=127.0.0.1:9090', '--lease-namespace=flotilla-cluster-lease']);
    assert.equal(container.ports, undefined, 'nothing listens on the pod network');
    assert.equal(pod.serviceAccountName, 'flotilla-ui');
    const role = objects.find((o) => o.kind === 'ClusterRole') as Obj;
    const verbs = new Set((role.rules as Obj[]).flatMap((r) => r.verbs as string[]));
    assert.deepEqual([...verbs].sort(), ['get', 'list', 'watch']);
    assert.ok(
      !(role.rules as Obj[]).some((r) => (r.resources as string[]).includes('secrets')),
      'no Secrets (member credentials)',
    );
  });

  void it("reads the pull agents' Leases where they renew them", () => {
    const objects = uiObjects(render('--set', 'ui.enabled=true', '--set', 'controller.pullAgents={member2}'));
    const role = objects.find((o) => o.kind === 'Role') as Obj;
    assert.equal(meta(role).namespace, 'flotilla-cluster-lease');
    assert.deepEqual(role.rules, [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch'] },
    ]);
  });

  void it('refuses a misspelt ui key', () => {
    const r = helmSync(['template', 'flotilla', CHART, '--namespace', NS, '--set', 'ui.enable=true']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /at '\/ui': additional properties 'enable' not allowed/);
  });
});
