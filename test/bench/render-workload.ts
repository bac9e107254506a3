// The render benchmark's input (P1 of `npm run bench`): 1,000 Deployments and one ConfigMap, 20 Clusters, one
// PropagationPolicy dividing replicas, and 10 OverridePolicies using every overrider: 20,020 renders.

import { cluster, configMap, deployment, overridePolicy, propagationPolicy, type Obj } from '../builders.js';

const REGIONS = ['eu-west-1', 'eu-central-1', 'us-east-1', 'us-west-2', 'ap-south-1'];

export function renderWorkload(): Obj[] {
  const objects: Obj[] = [];
  for (let i = 0; i < 1000; i++) {
    objects.push(
      deployment(`app-${i}`, 'bench', {
        replicas: 40,
        labels: { app: `app-${i}`, tier: i % 2 ? 'web' : 'api' },
        containers: [
          {
            name: 'main',
            image: `registry.example.com/team/app-${i}:1.${i % 10}.0`,
            command: ['/app'],
            args: ['--port=8080'],
            env: [{ name: 'MODE', value: 'x' }],
            resources: { limits: { memory: '512Mi' } },
          },
          { name: 'sidecar', image: 'registry.example.com/infra/proxy:2.1' },
        ],
      }),
    );
  }
  objects.push(
    configMap('settings', 'bench', { 'app.yaml': 'db:\n  host: x\n  pool: 5\n', 'flags.json': '{"a":true}' }),
  );
  for (let c = 0; c < 20; c++) {
    objects.push(
      cluster(`member-${String(c).padStart(2, '0')}`, {
        labels: { env: c % 4 === 0 ? 'dev' : 'prod', idx: String(c) },
        provider: c % 2 ? 'aws' : 'gcp',
        region: REGIONS[c % REGIONS.length] ?? 'x',
        zones: ['a'],
      }),
    );
  }
  objects.push(
    propagationPolicy(
      'all',
      'bench',
      [
        { apiVersion: 'apps/v1', kind: 'Deployment' },
        { apiVersion: 'v1', kind: 'ConfigMap' },
      ],
      {
        replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' },
      },
    ),
  );
  const dep = [{ apiVersion: 'apps/v1', kind: 'Deployment' }];
  const prod = { labelSelector: { matchLabels: { env: 'prod' } } };
  const ops: Obj[] = [
    overridePolicy(
      'op-00-image-registry',
      'bench',
      [
        {
          overriders: {
            imageOverrider: [
              { component: 'Registry', operator: 'replace', value: 'mirror.${cluster.region}.example.com' },
            ],
          },
        },
      ],
      dep,
    ),
    overridePolicy(
      'op-01-image-tag',
      'bench',
      [
        {
          targetCluster: prod,
          overriders: {
            imageOverrider: [
              {
                predicate: { path: '/spec/template/spec/containers[name=main]/image' },
                component: 'Tag',
                operator: 'add',
                value: '-hardened',
              },
            ],
          },
        },
      ],
      dep,
    ),
    overridePolicy(
      'op-02-command',
      'bench',
      [
        {
          overriders: {
            commandOverrider: [{ containerName: 'main', operator: 'add', value: ['--cluster=${cluster.name}'] }],
          },
        },
      ],
      dep,
    ),
    overridePolicy(
      'op-03-args',
      'bench',
      [
        {
          targetCluster: prod,
          overriders: {
            argsOverrider: [
              { containerName: 'main', operator: 'add', value: ['--log=warn'] },
              { containerName: 'main', operator: 'remove', value: ['--port=8080'] },
            ],
          },
        },
      ],
      dep,
    ),
    overridePolicy(
      'op-04-labels',
      'bench',
      [
        {
          overriders: {
            labelsOverrider: [
              { operator: 'add', value: { cluster: '${cluster.name}', env: "${cluster.labels['env']}" } },
            ],
          },
        },
      ],
      dep,
    ),
    overridePolicy(
      'op-05-annotations',
      'bench',
      [
        {
          overriders: {
            annotationsOverrider: [
              {
                operator: 'add',
                value: { 'example.com/region': '${cluster.region}', 'example.com/provider': '${cluster.provider}' },
              },
            ],
          },
        },
      ],
      dep,
    ),
    overridePolicy(
      'op-06-plaintext',
      'bench',
      [
        {
          overriders: {
            plaintext: [
              {
                path: '/spec/template/spec/containers[name=main]/resources/limits/memory',
                operator: 'replace',
                value: '1Gi',
              },
              {
                path: '/spec/template/spec/containers[name=main]/env/-',
                operator: 'add',
                value: { name: 'REGION', value: '${cluster.region}' },
              },
            ],
          },
        },
      ],
      dep,
    ),
    overridePolicy(
      'op-07-labels-by-selector',
      'bench',
      [{ overriders: { labelsOverrider: [{ operator: 'replace', value: { tier: 'frontend' } }] } }],
      [{ apiVersion: 'apps/v1', kind: 'Deployment', labelSelector: { matchLabels: { tier: 'web' } } }],
    ),
    overridePolicy(
      'op-08-field-yaml',
      'bench',
      [
        {
          overriders: {
            fieldOverrider: [
              {
                fieldPath: '/data/app.yaml',
                yaml: [{ subPath: '/db/host', operator: 'replace', value: 'db.${cluster.region}' }],
              },
            ],
          },
        },
      ],
      [{ apiVersion: 'v1', kind: 'ConfigMap' }],
    ),
    overridePolicy(
      'op-09-field-json',
      'bench',
      [
        {
          overriders: {
            fieldOverrider: [
              { fieldPath: '/data/flags.json', json: [{ subPath: '/b', operator: 'add', value: '${cluster.name}' }] },
            ],
          },
        },
      ],
      [{ apiVersion: 'v1', kind: 'ConfigMap' }],
    ),
  ];
  return [...objects, ...ops];
}
