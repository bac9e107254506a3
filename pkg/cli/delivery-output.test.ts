import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';

import type { MemberReport, ObjectResult } from '../kube/index.js';
import { ApplyOutput, problemLines, summaryTable, toJson } from './delivery-output.js';

function streams() {
  const out = new PassThrough();
  const err = new PassThrough();
  let o = '';
  let e = '';
  out.on('data', (c: Buffer) => (o += c.toString()));
  err.on('data', (c: Buffer) => (e += c.toString()));
  return { out, err, o: () => o, e: () => e };
}

const obj = (
  kind: string,
  name: string,
  action: ObjectResult['action'],
  extra: Partial<ObjectResult> = {},
): ObjectResult => ({
  apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1',
  kind,
  namespace: 'shop',
  name,
  action,
  ...extra,
});

const reports: MemberReport[] = [
  {
    member: 'eu-west',
    server: 'https://10.0.0.1:6443',
    errors: [],
    unreachable: false,
    results: [
      obj('Deployment', 'web', 'configured'),
      obj('ConfigMap', 'web-config', 'unchanged'),
      obj('ConfigMap', 'old', 'pruned'),
      obj('ConfigMap', 'taken', 'conflict', {
        message: 'already exists on the member and is not part of this apply set',
      }),
      obj('Deployment', 'bad', 'failed', {
        message: 'Deployment.apps "bad" is invalid: spec.replicas: Invalid value: -1',
        warnings: ['unknown field "spec.foo"'],
      }),
    ],
  },
  {
    member: 'us-east',
    server: 'https://10.0.0.2:6443',
    errors: ['unreachable: https://10.0.0.2:6443: connect ECONNREFUSED 10.0.0.2:6443'],
    unreachable: true,
    results: [],
  },
];

void describe('apply output', () => {
  it('writes one line per object and member as results come, when not on a terminal', () => {
    const s = streams();
    const o = new ApplyOutput(s.out, s.err, { format: 'text', tty: false, dryRun: false });
    o.onPlan('eu-west', 2);
    o.onResult('eu-west', obj('Deployment', 'web', 'created'));
    o.onResult(
      'us-east',
      obj('Deployment', 'web', 'failed', { unreachable: true, message: 'not done: the member is unreachable' }),
    );
    o.onResult('eu-west', obj('ConfigMap', 'c', 'unchanged'));
    assert.equal(s.o(), 'eu-west: Deployment.apps shop/web created\neu-west: ConfigMap shop/c unchanged\n');
  });

  it('redraws one progress line on a terminal', () => {
    const s = streams();
    let t = 0;
    const o = new ApplyOutput(s.out, s.err, { format: 'text', tty: true, dryRun: false, now: () => t });
    o.onPlan('eu-west', 2);
    o.onPlan('us-east', 1);
    t = 1000;
    o.onResult('eu-west', obj('Deployment', 'web', 'created'));
    t = 1001; // within 100 ms: not redrawn
    o.onResult('us-east', obj('Deployment', 'web', 'created'));
    assert.equal(
      s.o(),
      '\r\x1b[2Kapplying: eu-west 0/2\r\x1b[2Kapplying: eu-west 0/2  us-east 0/1\r\x1b[2Kapplying: eu-west 1/2  us-east 0/1',
    );
    assert.ok(!s.o().includes('\n'));
  });

  it('ends with a table per member, and every problem with member, object and message on stderr', () => {
    const s = streams();
    const code = new ApplyOutput(s.out, s.err, { format: 'text', tty: false, dryRun: false }).finish(reports, {
      name: 'flotilla-qs',
      namespace: 'flotilla-system',
      id: 'applyset-x-v1',
    });
    assert.equal(code, 1);
    assert.equal(
      s.o(),
      [
        '',
        'MEMBER   CREATED  CONFIGURED  UNCHANGED  PRUNED  CONFLICT  FAILED',
        'eu-west  0        1           1          1       1         1',
        'us-east  -        -           -          -       -         -       unreachable',
        'apply set flotilla-system/flotilla-qs (applyset-x-v1)',
        '',
      ].join('\n'),
    );
    assert.deepEqual(s.e().trimEnd().split('\n'), [
      'error: us-east (https://10.0.0.2:6443): unreachable: https://10.0.0.2:6443: connect ECONNREFUSED 10.0.0.2:6443',
      'conflict: eu-west: ConfigMap shop/taken: already exists on the member and is not part of this apply set',
      'error: eu-west: Deployment.apps shop/bad: Deployment.apps "bad" is invalid: spec.replicas: Invalid value: -1',
      'warning: eu-west: Deployment.apps shop/bad: unknown field "spec.foo"',
    ]);
  });

  it('exits 0 when everything was applied', () => {
    const s = streams();
    const ok: MemberReport[] = [
      { member: 'a', server: 'https://a', errors: [], unreachable: false, results: [obj('ConfigMap', 'c', 'created')] },
    ];
    assert.equal(
      new ApplyOutput(s.out, s.err, { format: 'text', tty: false, dryRun: false }).finish(ok, {
        name: 'n',
        namespace: 'ns',
        id: 'i',
      }),
      0,
    );
    assert.equal(s.e(), '');
  });

  it('reports an object failed because its member went away only once, through the member', () => {
    const r: MemberReport[] = [
      {
        member: 'a',
        server: 'https://a',
        errors: ['unreachable: x'],
        unreachable: true,
        results: [
          obj('ConfigMap', 'c', 'created'),
          obj('ConfigMap', 'd', 'failed', { unreachable: true, message: 'not done: the member is unreachable' }),
        ],
      },
    ];
    assert.deepEqual(problemLines(r), ['error: a (https://a): unreachable: x']);
    assert.match(summaryTable(r), /^a {7}1 .* 1 +unreachable$/m);
  });

  it('gives the same as JSON', () => {
    const j = toJson(reports, { name: 'flotilla-qs', namespace: 'flotilla-system', id: 'applyset-x-v1' }, false) as {
      members: Array<{ name: string; counts: Record<string, number>; unreachable: boolean }>;
      objects: Array<{ member: string; action: string; message?: string }>;
    };
    assert.deepEqual(
      j.members.map((m) => [m.name, m.counts.configured, m.unreachable]),
      [
        ['eu-west', 1, false],
        ['us-east', 0, true],
      ],
    );
    assert.equal(j.objects.length, 5);
    assert.deepEqual((j as unknown as { errors: string[] }).errors, [
      'us-east: unreachable: https://10.0.0.2:6443: connect ECONNREFUSED 10.0.0.2:6443',
    ]);
    assert.deepEqual(
      j.objects.find((o) => o.action === 'failed'),
      {
        member: 'eu-west',
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        namespace: 'shop',
        name: 'bad',
        action: 'failed',
        message: 'Deployment.apps "bad" is invalid: spec.replicas: Invalid value: -1',
        warnings: ['unknown field "spec.foo"'],
      },
    );
  });
});
