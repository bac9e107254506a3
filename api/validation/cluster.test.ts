import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cluster, type Obj } from '../../test/builders.js';
import { formatFieldError } from './errors.js';
import { validateObject } from './index.js';

const withSpec = (spec: Obj): Obj => ({ ...cluster('member1'), spec });
const errorsOf = (o: unknown): string[] => validateObject(o).errors.map(formatFieldError);

describe('Cluster rules', () => {
  it('accepts a cluster with provider, region, zones and taints', () => {
    assert.deepEqual(
      validateObject(
        cluster('member1', {
          provider: 'aws',
          region: 'eu',
          zones: ['eu-a'],
          taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }],
        }),
      ),
      { errors: [], warnings: [] },
    );
  });

  it('accepts a Karmada Cluster unchanged', () => {
    const c = {
      ...cluster('member1'),
      apiVersion: 'cluster.karmada.io/v1alpha1',
      spec: {
        syncMode: 'Push',
        apiEndpoint: 'https://10.0.0.1:6443',
        secretRef: { namespace: 'karmada-cluster', name: 'member1' },
      },
    };
    assert.deepEqual(errorsOf(c), []);
  });

  const cases: Array<[string, Obj, string[]]> = [
    [
      'denies a taint key that is not a qualified name',
      { taints: [{ key: 'a b', effect: 'NoSchedule' }] },
      [
        `spec.taints[0].key: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      ],
    ],
    [
      'denies an unknown taint effect',
      { taints: [{ key: 'a', effect: 'NoEntry' }] },
      [
        'spec.taints[0].effect: Unsupported value: "NoEntry": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      ],
    ],
    ['denies an empty taint effect', { taints: [{ key: 'a', effect: '' }] }, ['spec.taints[0].effect: Required value']],
    [
      'denies a taint value longer than a label value',
      { taints: [{ key: 'a', value: 'v'.repeat(64), effect: 'NoExecute' }] },
      [`spec.taints[0].value: Invalid value: "${'v'.repeat(64)}": must be no more than 63 bytes`],
    ],
    [
      'denies two taints with one key and effect',
      {
        taints: [
          { key: 'a', effect: 'NoSchedule' },
          { key: 'a', value: 'x', effect: 'NoSchedule' },
          { key: 'a', effect: 'NoExecute' },
        ],
      },
      [
        'spec.taints[1]: Duplicate value: {"key":"a","value":"x","effect":"NoSchedule"}: taints must be unique by key and effect pair',
      ],
    ],
    [
      'denies a proxy URL with another scheme',
      { proxyURL: 'ftp://proxy:21' },
      ['spec.proxyURL: Invalid value: "ftp://proxy:21": unsupported scheme "ftp", must be http, https, or socks5'],
    ],
    ['accepts a socks5 proxy', { proxyURL: 'socks5://proxy:1080' }, []],
    [
      'denies zones that are not strings',
      { zones: ['a', 1] },
      ['spec.zones[1]: Invalid value: 1: spec.zones[1] in body must be of type string: "integer"'],
    ],
    [
      'denies an unknown sync mode',
      { syncMode: 'Poll' },
      ['spec.syncMode: Unsupported value: "Poll": supported values: "Push", "Pull"'],
    ],
  ];
  for (const [name, spec, want] of cases) it(name, () => assert.deepEqual(errorsOf(withSpec(spec)), want));

  it('denies a name that is not a DNS subdomain', () => {
    assert.match(
      errorsOf(cluster('Member_1'))[0] ?? '',
      /^metadata\.name: Invalid value: "Member_1": a lowercase RFC 1123 subdomain/,
    );
  });

  it('warns that the singular zone is never used', () => {
    assert.deepEqual(validateObject(withSpec({ zone: 'eu-a' })).warnings, [
      'spec.zone is deprecated and never used for matching: use spec.zones',
    ]);
  });
});
