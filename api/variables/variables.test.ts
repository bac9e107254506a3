import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { heapAfterGC } from '../../test/heap.js';
import {
  checkVariables,
  expandString,
  expandValue,
  MAX_EXPANDED_LENGTH,
  sampleVariables,
  VariableError,
  type ClusterFacts,
} from './index.js';

const facts: ClusterFacts = {
  name: 'member1',
  labels: { env: 'prod', 'example.com/team': 'a' },
  region: 'eu-west-1',
  provider: 'aws',
  zone: 'eu-west-1a',
};

describe('expandString', () => {
  const cases: Array<[string, string, string]> = [
    ['text without variables is returned as is', 'plain $ text', 'plain $ text'],
    [
      'every simple variable expands',
      '${cluster.name}/${cluster.region}/${cluster.provider}/${cluster.zone}',
      'member1/eu-west-1/aws/eu-west-1a',
    ],
    [
      'labels are read with single or double quotes',
      `\${cluster.labels['env']}-\${cluster.labels["example.com/team"]}`,
      'prod-a',
    ],
    ['spaces inside the braces are allowed', '${ cluster.name }', 'member1'],
    ['$${ writes a literal ${', 'cost: $${cluster.name}', 'cost: ${cluster.name}'],
  ];
  for (const [name, text, want] of cases) it(name, () => assert.equal(expandString(text, facts), want));

  it('fails for a label the cluster does not have', () => {
    assert.throws(
      () => expandString("${cluster.labels['tier']}", facts),
      (e: unknown) => e instanceof VariableError && /cluster member1 has no label "tier"/.test(e.message),
    );
  });
  it('fails for a region the cluster does not have', () => {
    assert.throws(() => expandString('${cluster.region}', { name: 'bare', labels: {} }), /cluster bare has no region/);
  });
});

describe('checkVariables', () => {
  it('accepts known variables', () =>
    assert.equal(checkVariables("a-${cluster.name}-${cluster.labels['x']}"), undefined));
  it('names an unknown variable and lists the known ones', () =>
    assert.match(
      checkVariables('${cluster.nickname}') ?? '',
      /unknown variable "\$\{cluster\.nickname\}"; known variables: \$\{cluster\.name\}/,
    ));
  it('finds an unterminated variable', () =>
    assert.match(checkVariables('${cluster.name') ?? '', /unterminated variable/));
});

describe('sampleVariables and expandValue', () => {
  it('replaces variables with a sample so shapes can be checked', () =>
    assert.equal(sampleVariables('v-${cluster.name}', 'x'), 'v-x'));
  it('expands strings nested in objects and lists, leaving keys alone', () => {
    const value = { '${cluster.name}': ['${cluster.region}', 3, { deep: '${cluster.provider}' }], n: null };
    assert.deepEqual(expandValue(value, facts), { '${cluster.name}': ['eu-west-1', 3, { deep: 'aws' }], n: null });
  });
  it('returns the same value when nothing changes', () => {
    const value = { a: ['x'] };
    assert.equal(expandValue(value, facts), value);
  });
});

describe('variables and prototype keys', () => {
  const parsed = JSON.parse('{"__proto__": "p", "env": "prod"}') as Record<string, string>;
  const withProto: ClusterFacts = { name: 'member1', labels: parsed };
  for (const key of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
    it(`reads a missing label ${key} as missing, not from Object.prototype`, () => {
      assert.throws(
        () => expandString(`\${cluster.labels['${key}']}`, facts),
        (e: unknown) => e instanceof VariableError && e.message.includes(`has no label ${JSON.stringify(key)}`),
      );
    });
  }
  it('reads a label named __proto__ that the cluster has', () =>
    assert.equal(expandString("${cluster.labels['__proto__']}-${cluster.labels['env']}", withProto), 'p-prod'));
  for (const name of ['constructor', '__proto__', 'toString']) {
    it(`treats \${${name}} as an unknown variable`, () =>
      assert.match(checkVariables(`\${${name}}`) ?? '', /unknown variable/));
  }
  it('keeps a __proto__ key of an expanded value as own data and pollutes nothing', () => {
    const value = JSON.parse('{"__proto__": {"x": "${cluster.name}"}, "a": "${cluster.region}"}') as unknown;
    const out = expandValue(value, facts) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.keys(out), ['__proto__', 'a']);
    assert.equal(JSON.stringify(out), '{"__proto__":{"x":"member1"},"a":"eu-west-1"}');
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });
});

describe('variable bounds', () => {
  it('refuses an expansion longer than MAX_EXPANDED_LENGTH', () => {
    const big: ClusterFacts = { name: 'm', labels: { v: 'x'.repeat(1024 * 1024) } };
    const text = "${cluster.labels['v']}".repeat(5);
    assert.throws(
      () => expandString(text, big),
      (e: unknown) => e instanceof VariableError && e.message.includes(`more than ${MAX_EXPANDED_LENGTH} characters`),
    );
  });
  it('expands a value up to MAX_EXPANDED_LENGTH', () => {
    const big: ClusterFacts = { name: 'm', labels: { v: 'x'.repeat(1024 * 1024) } };
    assert.equal(expandString("${cluster.labels['v']}".repeat(4), big).length, MAX_EXPANDED_LENGTH);
  });
  it('does not keep large templated strings alive after checking them', () => {
    // Each string is new and 1 MiB long; a parse cache that keeps them grows by that much per call.
    const before = heapAfterGC();
    for (let i = 0; i < 64; i++) {
      const text = `${'x'.repeat(1024 * 1024)}\${cluster.name}${i}`;
      assert.equal(checkVariables(text), undefined);
      assert.equal(sampleVariables(text).length, 1024 * 1024 + 1 + String(i).length);
    }
    const grown = heapAfterGC() - before;
    assert.ok(grown < 16 * 1024 * 1024, `heap grew by ${(grown / 1024 / 1024).toFixed(1)} MiB`);
  });
});
