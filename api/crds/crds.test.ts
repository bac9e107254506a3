import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  CONVERTIBLE_CRD_NAMES,
  customResourceDefinitions,
  INJECT_CA_FROM_ANNOTATION,
  karmadaCustomResourceDefinitions,
  unusedExtras,
  type CustomResourceDefinition,
  type JSONSchemaProps,
} from './index.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const crd = (name: string): CustomResourceDefinition => {
  const found = customResourceDefinitions().find((c) => c.metadata.name === name);
  assert.ok(found, name);
  return found;
};
const schemaOf = (name: string, version: string): JSONSchemaProps => {
  const v = crd(name).spec.versions.find((x) => x.name === version);
  assert.ok(v, `${name} ${version}`);
  return v.schema.openAPIV3Schema;
};
/** The schema node at a dotted path with [] for list items, from the root of the object. */
function nodeAt(schema: JSONSchemaProps, path: string): JSONSchemaProps | undefined {
  let cur: JSONSchemaProps | undefined = schema;
  for (const part of path.split('.')) {
    const list = part.endsWith('[]');
    cur = cur?.properties?.[list ? part.slice(0, -2) : part];
    if (list) cur = cur?.items;
  }
  return cur;
}

void describe('hack/verify-crds', () => {
  void it("passes on the checked-in chart's crds/", () => {
    const r = spawnSync(join(ROOT, 'hack/verify-crds'), ['--no-build'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });

  void it('fails with a diff naming the file when a CRD was edited by hand', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crds-'));
    try {
      cpSync(join(ROOT, 'deploy/helm/flotilla/crds'), dir, { recursive: true });
      const file = join(dir, 'policy.flotilla.io_overridepolicies.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace('storage: true', 'storage: false'));
      const r = spawnSync(join(ROOT, 'hack/verify-crds'), ['--no-build', dir], { encoding: 'utf8' });
      assert.equal(r.status, 1);
      assert.match(r.stderr, /out of date/);
      assert.match(r.stderr, /policy\.flotilla\.io_overridepolicies\.yaml/);
      assert.match(r.stderr, /^-\s+storage: false$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

void describe('customResourceDefinitions', () => {
  void it('names only schema paths in its defaults and markers', () => {
    assert.deepStrictEqual(unusedExtras(), []);
  });

  void it('serves both policy versions, stores v1beta1 and converts through the webhook', () => {
    for (const plural of [
      'propagationpolicies',
      'clusterpropagationpolicies',
      'overridepolicies',
      'clusteroverridepolicies',
    ]) {
      const spec = crd(`${plural}.policy.flotilla.io`).spec;
      assert.deepStrictEqual(
        spec.versions.map((v) => [v.name, v.served, v.storage]),
        [
          ['v1alpha1', true, false],
          ['v1beta1', true, true],
        ],
      );
      assert.equal(spec.conversion?.strategy, 'Webhook');
      assert.deepStrictEqual(spec.conversion?.webhook.conversionReviewVersions, ['v1', 'v1beta1']);
      assert.equal(spec.conversion?.webhook.clientConfig.service.path, '/convert');
    }
  });

  void it("gives every policy version a status subresource with the controller's counts and Ready condition", () => {
    for (const plural of [
      'propagationpolicies',
      'clusterpropagationpolicies',
      'overridepolicies',
      'clusteroverridepolicies',
    ]) {
      for (const v of crd(`${plural}.policy.flotilla.io`).spec.versions) {
        assert.deepStrictEqual(v.subresources, { status: {} }, `${plural} ${v.name}`);
        const schema = v.schema.openAPIV3Schema;
        for (const path of ['status.templates', 'status.failedTemplates', 'status.observedGeneration'])
          assert.equal(nodeAt(schema, path)?.type, 'integer', `${plural} ${v.name} ${path}`);
        assert.deepStrictEqual(nodeAt(schema, 'status.conditions[].status')?.enum, ['True', 'False', 'Unknown']);
        assert.deepStrictEqual(
          v.additionalPrinterColumns.filter((c) => c.name === 'Templates' || c.name === 'Ready').map((c) => c.jsonPath),
          ['.status.templates', '.status.conditions[?(@.type=="Ready")].status'],
        );
      }
    }
  });

  void it('defines a cluster-scoped Cluster with one version, a status subresource and no conversion', () => {
    const spec = crd('clusters.cluster.flotilla.io').spec;
    assert.equal(spec.scope, 'Cluster');
    assert.deepStrictEqual(
      spec.versions.map((v) => v.name),
      ['v1alpha1'],
    );
    assert.deepStrictEqual(spec.versions[0]?.subresources, { status: {} });
    assert.equal(spec.conversion, undefined);
    assert.deepStrictEqual(
      spec.versions[0]?.additionalPrinterColumns?.map((c) => [c.name, c.priority ?? 0]),
      [
        ['Version', 0],
        ['Mode', 0],
        ['Ready', 0],
        ['Age', 0],
        ['Zones', 1],
        ['Region', 1],
        ['Provider', 1],
        ['API-Endpoint', 1],
        ['Proxy-URL', 1],
        ['Message', 1],
      ],
    );
  });

  void it('defines a namespaced work.flotilla.io ResourceBinding with a status subresource, status.clusters keyed by name, APPLIED and READY columns', () => {
    const spec = crd('resourcebindings.work.flotilla.io').spec;
    assert.equal(spec.scope, 'Namespaced');
    assert.deepStrictEqual(
      spec.versions.map((v) => [v.name, v.served, v.storage]),
      [['v1alpha1', true, true]],
    );
    // Pull agents write their own entries of status.clusters, and may write nothing but status.
    assert.deepStrictEqual(spec.versions[0]?.subresources, { status: {} });
    const status = spec.versions[0]?.schema?.openAPIV3Schema?.properties?.status?.properties?.clusters;
    assert.equal(status?.['x-kubernetes-list-type'], 'map');
    assert.deepStrictEqual(status?.['x-kubernetes-list-map-keys'], ['name']);
    assert.equal(spec.conversion, undefined);
    assert.deepStrictEqual(
      spec.versions[0]?.additionalPrinterColumns?.map((c) => [c.name, c.jsonPath]),
      [
        ['Kind', '.spec.resource.kind'],
        ['Policy', '.spec.policy.name'],
        ['Applied', '.status.applied'],
        ['Ready', '.status.ready'],
        ['Message', '.status.conditions[?(@.type=="Applied")].message'],
        ['Age', '.metadata.creationTimestamp'],
      ],
    );
    const schema = schemaOf('resourcebindings.work.flotilla.io', 'v1alpha1');
    assert.deepStrictEqual(nodeAt(schema, 'spec.resource')?.required, ['apiVersion', 'kind', 'name']);
    assert.deepStrictEqual(nodeAt(schema, 'status.clusters[].state')?.enum, [
      'Applied',
      'Failed',
      'Conflict',
      'Pending',
      'Unreachable',
      'Removing',
      'Suspended',
      'Evicting',
    ]);
  });

  void it("gives the Work columns for its template, its state on the cluster and the copy's health", () => {
    const spec = crd('works.work.flotilla.io').spec;
    assert.deepStrictEqual(
      spec.versions[0]?.additionalPrinterColumns?.map((c) => [c.name, c.jsonPath, c.priority ?? 0]),
      [
        ['Kind', '.spec.resource.kind', 0],
        ['Template-Namespace', '.spec.resource.namespace', 0],
        ['Template', '.spec.resource.name', 0],
        ['State', '.status.state', 0],
        ['Health', '.status.health.state', 0],
        ['Message', '.status.message', 1],
        ['Age', '.metadata.creationTimestamp', 0],
      ],
    );
  });

  void it("names the chart's cert-manager Certificate for CA injection on exactly the CRDs that convert", () => {
    for (const c of customResourceDefinitions()) {
      const annotation = c.metadata.annotations?.[INJECT_CA_FROM_ANNOTATION];
      if (CONVERTIBLE_CRD_NAMES.includes(c.metadata.name))
        assert.equal(annotation, 'flotilla-system/flotilla-webhook', c.metadata.name);
      else assert.equal(annotation, undefined, c.metadata.name);
      assert.equal(c.spec.conversion !== undefined, CONVERTIBLE_CRD_NAMES.includes(c.metadata.name), c.metadata.name);
    }
  });

  void it('gives every node a type unless it keeps unknown fields, as structural schemas must', () => {
    const walk = (s: JSONSchemaProps, at: string): void => {
      assert.ok(s.type !== undefined || s['x-kubernetes-preserve-unknown-fields'] === true, `${at} has no type`);
      assert.ok(!(s.properties && s.additionalProperties), `${at} has both properties and additionalProperties`);
      if (s.default !== undefined && s.enum)
        assert.ok(s.enum.includes(s.default as string), `${at} default is not in its enum`);
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${at}.${k}`);
      if (s.items) walk(s.items, `${at}[]`);
      if (s.additionalProperties) walk(s.additionalProperties, `${at}{}`);
    };
    for (const c of customResourceDefinitions())
      for (const v of c.spec.versions) walk(v.schema.openAPIV3Schema, `${c.metadata.name}/${v.name}`);
  });

  const constraints: Array<{ crd: string; path: string; expect: Partial<JSONSchemaProps> }> = [
    { crd: 'propagationpolicies', path: 'spec.resourceSelectors', expect: { type: 'array', minItems: 1 } },
    { crd: 'propagationpolicies', path: 'spec.resourceSelectors[]', expect: { required: ['apiVersion', 'kind'] } },
    { crd: 'propagationpolicies', path: 'spec.preemption', expect: { enum: ['Always', 'Never'], default: 'Never' } },
    {
      crd: 'propagationpolicies',
      path: 'spec.conflictResolution',
      expect: { enum: ['Abort', 'Overwrite'], default: 'Abort' },
    },
    { crd: 'propagationpolicies', path: 'spec.priority', expect: { type: 'integer', format: 'int32', default: 0 } },
    { crd: 'propagationpolicies', path: 'spec.schedulerName', expect: { default: 'default-scheduler' } },
    {
      crd: 'propagationpolicies',
      path: 'spec.placement.replicaScheduling.replicaSchedulingType',
      expect: { enum: ['Duplicated', 'Divided'], default: 'Divided' },
    },
    {
      crd: 'propagationpolicies',
      path: 'spec.placement.clusterAffinities[].affinityName',
      expect: { minLength: 1, maxLength: 32 },
    },
    {
      crd: 'propagationpolicies',
      path: 'spec.placement.replicaScheduling.weightPreference.staticWeightList[].weight',
      expect: { minimum: 1 },
    },
    {
      crd: 'propagationpolicies',
      path: 'spec.failover.application.decisionConditions.tolerationSeconds',
      expect: { default: 300 },
    },
    {
      crd: 'propagationpolicies',
      path: 'spec.failover.application.purgeMode',
      expect: { enum: ['Directly', 'Gracefully', 'Never'], default: 'Gracefully' },
    },
    {
      crd: 'propagationpolicies',
      path: 'spec.resourceSelectors[].labelSelector',
      expect: { 'x-kubernetes-map-type': 'atomic' },
    },
    { crd: 'overridepolicies', path: 'spec.overrideRules[]', expect: { required: ['overriders'] } },
    {
      crd: 'overridepolicies',
      path: 'spec.overrideRules[].overriders.plaintext[].value',
      expect: { 'x-kubernetes-preserve-unknown-fields': true },
    },
    {
      crd: 'overridepolicies',
      path: 'spec.overrideRules[].overriders.fieldOverrider[].json[].value',
      expect: { 'x-kubernetes-preserve-unknown-fields': true },
    },
    {
      crd: 'overridepolicies',
      path: 'spec.overrideRules[].overriders.imageOverrider[].includeInitContainers',
      expect: { type: 'boolean' },
    },
    {
      crd: 'overridepolicies',
      path: 'spec.overrideRules[].overriders.imageOverrider[].component',
      expect: { enum: ['Registry', 'Repository', 'Tag'] },
    },
    {
      crd: 'overridepolicies',
      path: 'spec.overrideRules[].overriders.commandOverrider[].operator',
      expect: { enum: ['add', 'remove'] },
    },
    {
      crd: 'overridepolicies',
      path: 'spec.overrideRules[].overriders.labelsOverrider[]',
      expect: { required: ['operator', 'value'] },
    },
  ];
  for (const c of constraints) {
    void it(`carries ${JSON.stringify(c.expect)} at ${c.crd} ${c.path} in both versions`, () => {
      for (const version of ['v1alpha1', 'v1beta1']) {
        const node = nodeAt(schemaOf(`${c.crd}.policy.flotilla.io`, version), c.path);
        assert.ok(node, `${version}: no ${c.path}`);
        for (const [k, v] of Object.entries(c.expect))
          assert.deepStrictEqual(node[k as keyof JSONSchemaProps], v, `${version} ${c.path}.${k}`);
      }
    });
  }

  void it('keeps the deprecated fields in v1alpha1 only', () => {
    for (const [plural, fields] of [
      ['overridepolicies', ['targetCluster', 'overriders']],
      ['clusterpropagationpolicies', ['association']],
    ] as const) {
      for (const f of fields) {
        assert.ok(nodeAt(schemaOf(`${plural}.policy.flotilla.io`, 'v1alpha1'), `spec.${f}`), `v1alpha1 ${plural} ${f}`);
        assert.equal(
          nodeAt(schemaOf(`${plural}.policy.flotilla.io`, 'v1beta1'), `spec.${f}`),
          undefined,
          `v1beta1 ${plural} ${f}`,
        );
      }
    }
  });

  void it("gives Karmada's short names and category to Karmada's groups only; Flotilla's policies answer to fpp, fcpp, fop, fcop and its binding to frb", () => {
    const names = (crds: CustomResourceDefinition[]) =>
      Object.fromEntries(crds.map((c) => [c.metadata.name, [c.spec.names.shortNames ?? [], c.spec.names.categories]]));
    assert.deepStrictEqual(names(karmadaCustomResourceDefinitions()), {
      'propagationpolicies.policy.karmada.io': [['pp'], ['karmada-io']],
      'clusterpropagationpolicies.policy.karmada.io': [['cpp'], ['karmada-io']],
      'overridepolicies.policy.karmada.io': [['op'], ['karmada-io']],
      'clusteroverridepolicies.policy.karmada.io': [['cop'], ['karmada-io']],
      'clusters.cluster.karmada.io': [[], ['karmada-io']],
      'resourcebindings.work.karmada.io': [['rb'], ['karmada-io']],
      'clusterresourcebindings.work.karmada.io': [['crb'], ['karmada-io']],
      'works.work.karmada.io': [['wk'], ['karmada-io']],
    });
    assert.deepStrictEqual(names(customResourceDefinitions()), {
      'propagationpolicies.policy.flotilla.io': [['fpp'], ['flotilla']],
      'clusterpropagationpolicies.policy.flotilla.io': [['fcpp'], ['flotilla']],
      'overridepolicies.policy.flotilla.io': [['fop'], ['flotilla']],
      'clusteroverridepolicies.policy.flotilla.io': [['fcop'], ['flotilla']],
      'clusters.cluster.flotilla.io': [[], ['flotilla']],
      'resourcebindings.work.flotilla.io': [['frb'], ['flotilla']],
      'works.work.flotilla.io': [[], ['flotilla']],
    });
  });
});
