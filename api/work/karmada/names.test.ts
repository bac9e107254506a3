import assert from 'node:assert/strict';
import { test } from 'node:test';

import { karmadaBindingName, karmadaExecutionSpace, karmadaWorkName } from './names.js';

// Expected values printed by Karmada v1.18.2's own pkg/util/names (GenerateWorkName, GenerateBindingName).
test("Karmada's names: Work names hash as Karmada's GenerateWorkName does", () => {
  assert.equal(karmadaWorkName('Deployment', 'nginx', 'default'), 'nginx-687f7fb96f');
  assert.equal(karmadaWorkName('ClusterRole', 'system:Foo', undefined), 'system.foo-5f7d88f69');
  assert.equal(karmadaWorkName('ConfigMap', 'Web-Config', 'karmadatest-abc12'), 'web-config-859458b4c5');
  assert.equal(karmadaBindingName('ClusterRole', 'system:Foo'), 'system.foo-clusterrole');
  assert.equal(karmadaBindingName('Deployment', 'web'), 'web-deployment');
  assert.equal(karmadaExecutionSpace('member1'), 'karmada-es-member1');
});
