import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';

import type { ClusterFact, PlacementMatrix, TemplateDetail } from '../fleet/types.js';
import { run } from './index.js';
import { age, cellNote, clustersTable, matrixTable, safe, table, templateText } from './status-tables.js';

const NOW = Date.parse('2026-11-26T12:00:00Z');

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await run(args, {
    stdout,
    stderr,
    stdin: new PassThrough(),
    env: {},
    signal: new AbortController().signal,
  });
  return { code, out, err };
}

void describe('flotilla status: usage', () => {
  const cases: Array<{ args: string[]; message: RegExp }> = [
    { args: ['status', 'template'], message: /NAME is required: the template's name, or KIND\/NAME/ },
    { args: ['status', 'template', 'a', 'b'], message: /unexpected argument "b"/ },
    {
      args: ['status', 'templates', '--state', 'Broken'],
      message: /--state must be one of Applied, .*RequiredBy; got "Broken"/,
    },
    { args: ['status', 'clusters', '-o', 'xml'], message: /--output must be one of table, wide, json, yaml/ },
    { args: ['status', 'clusters', 'extra'], message: /unexpected argument "extra"/ },
    { args: ['status'], message: /missing command: one of clusters, templates, template, policies/ },
  ];
  for (const c of cases)
    void it(`exits 2 for ${JSON.stringify(c.args.join(' '))}, saying what is wrong`, async () => {
      const r = await cli(c.args);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, c.message);
    });

  void it('names the kubeconfig it cannot read and exits 1 without a stack trace', async () => {
    const r = await cli(['status', 'templates', '--kubeconfig', '/nonexistent/hub.yaml']);
    assert.equal(r.code, 1);
    assert.match(r.err, /^flotilla status templates: .*\/nonexistent\/hub\.yaml/);
    assert.doesNotMatch(r.err, /\n\s+at /);
  });
});

void describe('status tables', () => {
  void it('prints ages as kubectl does', () => {
    assert.deepEqual([0, 45_000, 119_000, 120_000, 7_199_000, 7_200_000, 47 * 3_600_000, 49 * 3_600_000].map(age), [
      '0s',
      '45s',
      '119s',
      '2m',
      '119m',
      '2h',
      '47h',
      '2d',
    ]);
  });

  void it('shows control characters from the hub escaped, never raw', () => {
    assert.equal(safe('web\u001b[2J\nx\u0085'), 'web\\x1b[2J\\x0ax\\x85');
    assert.equal(table(['A', 'B'], [['x\u001b]0;t\u0007', 'y']]), 'A               B\nx\\x1b]0;t\\x07   y\n');
  });

  void it('pads columns to the widest cell, three spaces apart, the last one not padded', () => {
    assert.equal(
      table(
        ['NAME', 'X'],
        [
          ['a', 'long'],
          ['bbbbbb', 'c'],
        ],
      ),
      'NAME     X\na        long\nbbbbbb   c\n',
    );
  });

  const cluster: ClusterFact = {
    name: 'member2',
    apiVersion: 'cluster.flotilla.io/v1alpha1',
    syncMode: 'Pull',
    ready: 'True',
    lease: { lease: 'flotilla-cluster-lease/member2', holder: 'a', ageSeconds: 12, expired: false },
    taints: [{ key: 'dedicated', effect: 'NoSchedule', timeAdded: '2026-11-26T11:50:00Z' }],
    capacity: [
      {
        resource: 'cpu',
        allocatable: 8000,
        allocated: 2500,
        allocating: 0,
        text: { allocatable: '8', allocated: '2500m' },
      },
    ],
    kubernetesVersion: 'v1.33.0',
    apiGroups: 12,
    zones: [],
    labels: {},
    notActedUpon: [],
    createdAt: '2026-11-24T12:00:00Z',
  };

  void it('lists a cluster: Lease age, taints with their age, allocated/allocatable, API groups', () => {
    assert.equal(
      clustersTable([cluster], NOW, false),
      'NAME      VERSION   MODE   READY   LEASE   TAINTS                      CPU       MEMORY   PODS   APIS   AGE\n' +
        'member2   v1.33.0   Pull   True    12s     dedicated:NoSchedule(10m)   2500m/8   -        -      12     2d\n',
    );
  });

  const matrix: PlacementMatrix = {
    clusters: ['a', 'b', 'c'],
    total: 1,
    rows: [
      {
        template: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' },
        binding: 'shop/web-deployment',
        policy: { kind: 'PropagationPolicy', namespace: 'shop', name: 'web' },
        applied: '1/2',
        ready: '1/2',
        cells: [
          { cluster: 'a', state: 'Applied', replicas: 3, health: 'Healthy', reportedBy: 'binding' },
          { cluster: 'b', state: 'Conflict', conflictWith: 'kubectl-edit', reportedBy: 'work' },
          {
            cluster: 'c',
            state: 'Evicting',
            evicting: { purgeMode: 'Gracefully', reason: 'TaintUntolerated', deadline: '2026-11-26T12:10:00Z' },
            reportedBy: 'binding',
          },
        ],
      },
    ],
  };

  void it('prints the matrix with a column per cluster and notes naming the other writer and the eviction deadline', () => {
    const text = matrixTable(matrix, matrix.clusters, false);
    const [header, row] = text.trimEnd().split('\n');
    assert.match(header ?? '', /^NAMESPACE\s+KIND\s+NAME\s+POLICY\s+APPLIED\s+READY\s+A\s+B\s+C\s+NOTES$/);
    assert.match(row ?? '', /^shop\s+Deployment\s+web\s+web\s+1\/2\s+1\/2\s+Applied:3\s+Conflict\s+Evicting\s+/);
    assert.match(
      row ?? '',
      /b: Conflict with kubectl-edit; c: Evicting \(Gracefully, TaintUntolerated\) until 2026-11-26T12:10:00Z$/,
    );
  });

  void it('says RequiredBy for a dependency applied because a workload needs it', () => {
    const m: PlacementMatrix = {
      ...matrix,
      rows: [
        {
          ...(matrix.rows[0] as PlacementMatrix['rows'][number]),
          cells: [
            {
              cluster: 'a',
              state: 'Applied',
              requiredBy: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
              reportedBy: 'binding',
            },
          ],
        },
      ],
    };
    assert.match(matrixTable(m, ['a'], false), /\bRequiredBy\b/);
  });

  void it('says nothing more of a healthy Applied cell', () => {
    assert.equal(cellNote({ cluster: 'a', state: 'Applied', health: 'Healthy', reportedBy: 'binding' }), undefined);
  });

  void it('describes one template: policy, clusters, the diff with the rule behind each change, events', () => {
    const detail: TemplateDetail = {
      template: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' },
      policy: { kind: 'PropagationPolicy', namespace: 'shop', name: 'web' },
      overrides: [{ kind: 'OverridePolicy', namespace: 'shop', name: 'img' }],
      errors: [],
      clusters: [
        {
          cluster: 'a',
          chosen: true,
          changes: [
            {
              path: '/spec/replicas',
              op: 'replace',
              before: 3,
              after: 1,
              setBy: 'OverridePolicy shop/img spec.overrideRules[1].overriders.plaintext[0]',
            },
          ],
          explanation: '# Deployment shop/web -> cluster a\n',
        },
        { cluster: 'z', chosen: false, reason: 'not in spec.placement.clusterAffinity', changes: [] },
      ],
    };
    const text = templateText(
      detail,
      [
        {
          type: 'Warning',
          reason: 'Conflict',
          message: 'b: taken',
          count: 2,
          lastTime: '2026-11-26T11:59:00Z',
          involved: detail.template,
        },
      ],
      NOW,
    );
    assert.match(text, /^Policy: {6}PropagationPolicy shop\/web$/m);
    assert.match(
      text,
      /^ {2}\/spec\/replicas: 3 -> 1 {3}# OverridePolicy shop\/img spec\.overrideRules\[1\]\.overriders\.plaintext\[0\]$/m,
    );
    assert.match(text, /^ {2}z\s+no\s+-\s+-\s+-\s+not in spec\.placement\.clusterAffinity$/m);
    assert.match(text, /^ {2}# not on z: not in spec\.placement\.clusterAffinity$/m);
    assert.match(text, /^ {2}60s\s+Warning\s+Conflict\s+b: taken \(x2\)$/m);
  });
});
