import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { JsonObject } from './json.js';
import { pruneGeneratedFields, PRUNED_KINDS } from './prune.js';
import { pruneServerFields } from './copy.js';

interface Case {
  name: string;
  in: JsonObject;
  out: JsonObject;
}

const UID = '0f6b2a4e-1c1d-4a53-9d35-5b3c2f0e7a10';

function table(kind: string, cases: Case[]): void {
  describe(kind, () => {
    for (const c of cases)
      it(c.name, () => {
        const o = structuredClone(c.in);
        assert.equal(pruneGeneratedFields(o), o, 'pruned in place');
        assert.deepEqual(o, c.out);
      });
  });
}

const job = (spec: JsonObject): JsonObject => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'pi' }, spec });
const podTemplate = (labels?: Record<string, string>): JsonObject => ({
  metadata: labels ? { labels } : {},
  spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'perl' }] },
});
const generatedJobLabels = {
  'controller-uid': UID,
  'batch.kubernetes.io/controller-uid': UID,
  'job-name': 'pi',
  'batch.kubernetes.io/job-name': 'pi',
};

table('Job (batch)', [
  {
    name: 'the hub-generated selector and pod template labels go; the user’s labels stay',
    in: job({
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': UID } },
      template: podTemplate({ ...generatedJobLabels, app: 'pi' }),
    }),
    out: job({ template: podTemplate({ app: 'pi' }) }),
  },
  {
    name: 'the old spelling (controller-uid) too; a template left without labels has none',
    in: job({ selector: { matchLabels: { 'controller-uid': UID } }, template: podTemplate(generatedJobLabels) }),
    out: job({ template: { metadata: {}, spec: podTemplate().spec } }),
  },
  {
    name: 'a selector with other terms keeps them',
    in: job({
      selector: { matchLabels: { 'controller-uid': UID, tier: 'batch' }, matchExpressions: [] },
      template: podTemplate(),
    }),
    out: job({ selector: { matchLabels: { tier: 'batch' }, matchExpressions: [] }, template: podTemplate() }),
  },
  {
    name: 'manualSelector: true keeps selector and labels (they are the user’s)',
    in: job({
      manualSelector: true,
      selector: { matchLabels: { 'controller-uid': 'mine' } },
      template: podTemplate({ 'controller-uid': 'mine', 'job-name': 'pi' }),
    }),
    out: job({
      manualSelector: true,
      selector: { matchLabels: { 'controller-uid': 'mine' } },
      template: podTemplate({ 'controller-uid': 'mine', 'job-name': 'pi' }),
    }),
  },
  {
    name: 'ttlSecondsAfterFinished goes (a member deleting a finished copy would see it re-created)',
    in: job({ ttlSecondsAfterFinished: 100, manualSelector: true }),
    out: job({ manualSelector: true }),
  },
  {
    name: 'a Job without a spec is left alone',
    in: { apiVersion: 'batch/v1', kind: 'Job' },
    out: { apiVersion: 'batch/v1', kind: 'Job' },
  },
]);

const service = (spec: JsonObject): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web' },
  spec,
});
table('Service (core)', [
  {
    name: 'the allocated clusterIP and clusterIPs go',
    in: service({ clusterIP: '10.0.0.12', clusterIPs: ['10.0.0.12'], ports: [{ port: 80 }] }),
    out: service({ ports: [{ port: 80 }] }),
  },
  {
    name: 'a headless Service keeps clusterIP None',
    in: service({ clusterIP: 'None', clusterIPs: ['None'] }),
    out: service({ clusterIP: 'None', clusterIPs: ['None'] }),
  },
  {
    name: 'no clusterIP: clusterIPs stay (nothing says they were allocated)',
    in: service({ clusterIPs: ['10.0.0.12'] }),
    out: service({ clusterIPs: ['10.0.0.12'] }),
  },
]);

const sa = (extra: JsonObject): JsonObject => ({
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name: 'builder' },
  ...extra,
});
table('ServiceAccount (core)', [
  {
    name: 'generated token Secrets go, every one of them; others stay',
    in: sa({ secrets: [{ name: 'builder-token-abcde' }, { name: 'builder-token-fghij' }, { name: 'registry' }] }),
    out: sa({ secrets: [{ name: 'registry' }] }),
  },
  {
    name: 'a list left empty goes',
    in: sa({ secrets: [{ name: 'builder-token-abcde' }] }),
    out: sa({}),
  },
  {
    name: 'another account’s token Secret stays',
    in: sa({ secrets: [{ name: 'other-token-abcde' }] }),
    out: sa({ secrets: [{ name: 'other-token-abcde' }] }),
  },
]);

const secret = (type: string | undefined, annotations?: Record<string, string>): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's', ...(annotations ? { annotations } : {}) },
  ...(type ? { type } : {}),
  data: { token: 'dG9rZW4=' },
});
table('Secret (core)', [
  {
    name: 'a service-account token Secret loses its data and the account uid; the account name stays',
    in: secret('kubernetes.io/service-account-token', {
      'kubernetes.io/service-account.name': 'builder',
      'kubernetes.io/service-account.uid': UID,
    }),
    out: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', annotations: { 'kubernetes.io/service-account.name': 'builder' } },
      type: 'kubernetes.io/service-account-token',
    },
  },
  {
    name: 'an Opaque Secret is left alone',
    in: secret('Opaque', { 'kubernetes.io/service-account.uid': UID }),
    out: secret('Opaque', { 'kubernetes.io/service-account.uid': UID }),
  },
  { name: 'no type: left alone', in: secret(undefined), out: secret(undefined) },
]);

const pvc = (annotations?: Record<string, string>): JsonObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', ...(annotations ? { annotations } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
});
table('PersistentVolumeClaim (core)', [
  {
    name: 'the hub node the scheduler picked goes; other annotations stay',
    in: pvc({ 'volume.kubernetes.io/selected-node': 'hub-node-1', team: 'a' }),
    out: pvc({ team: 'a' }),
  },
  {
    name: 'the annotations map left empty goes',
    in: pvc({ 'volume.kubernetes.io/selected-node': 'hub-node-1' }),
    out: pvc(),
  },
  {
    name: 'an empty value is left as it is',
    in: pvc({ 'volume.kubernetes.io/selected-node': '' }),
    out: pvc({ 'volume.kubernetes.io/selected-node': '' }),
  },
]);

const deployment = (annotations?: Record<string, string>): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', ...(annotations ? { annotations } : {}) },
  spec: { replicas: 2 },
});
table('Deployment (apps)', [
  {
    name: 'the hub’s revision annotations go; the user’s stay',
    in: deployment({
      'deployment.kubernetes.io/revision': '3',
      'deployment.kubernetes.io/revision-history': '1,2',
      owner: 'team-a',
    }),
    out: deployment({ owner: 'team-a' }),
  },
  {
    name: 'only revision: no annotations left',
    in: deployment({ 'deployment.kubernetes.io/revision': '1' }),
    out: deployment(),
  },
]);

table('other kinds and groups', [
  {
    name: 'a custom resource called Job keeps its selector',
    in: { apiVersion: 'example.com/v1', kind: 'Job', spec: { selector: { matchLabels: { 'controller-uid': UID } } } },
    out: { apiVersion: 'example.com/v1', kind: 'Job', spec: { selector: { matchLabels: { 'controller-uid': UID } } } },
  },
  {
    name: 'a custom resource called Service keeps its clusterIP',
    in: { apiVersion: 'example.com/v1', kind: 'Service', spec: { clusterIP: '10.0.0.1' } },
    out: { apiVersion: 'example.com/v1', kind: 'Service', spec: { clusterIP: '10.0.0.1' } },
  },
  {
    name: 'a ConfigMap is not touched',
    in: { apiVersion: 'v1', kind: 'ConfigMap', data: { clusterIP: '10.0.0.1' } },
    out: { apiVersion: 'v1', kind: 'ConfigMap', data: { clusterIP: '10.0.0.1' } },
  },
  {
    name: 'malformed: no apiVersion, a spec that is not an object',
    in: { kind: 'Job', spec: 'x' },
    out: { kind: 'Job', spec: 'x' },
  },
]);

describe('pruneServerFields', () => {
  it('prunes the generated fields of every listed kind on the way to a member', () => {
    const o = service({ clusterIP: '10.0.0.12', clusterIPs: ['10.0.0.12'] });
    (o.metadata as JsonObject).uid = UID;
    assert.deepEqual(pruneServerFields(o), service({}));
  });

  it('names six kinds, each with its group', () => {
    assert.deepEqual([...PRUNED_KINDS].sort(), [
      '/PersistentVolumeClaim',
      '/Secret',
      '/Service',
      '/ServiceAccount',
      'apps/Deployment',
      'batch/Job',
    ]);
  });
});
