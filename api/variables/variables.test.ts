import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkVariables, expandString, expandValue, sampleVariables, VariableError, type ClusterFacts } from './index.js';

const facts: ClusterFacts = { name: 'member1', labels: { env: 'prod', 'example.com/team': 'a' }, region: 'eu-west-1', provider: 'aws', zone: 'eu-west-1a' };

describe('expandString', () => {
  const cases: Array<[string, string, string]> = [
    ['text without variables is returned as is', 'plain $ text', 'plain $ text'],
    ['every simple variable expands', '${cluster.name}/${cluster.region}/${cluster.provider}/${cluster.zone}', 'member1/eu-west-1/aws/eu-west-1a'],
    ['labels are read with single or double quotes', `\${cluster.labels['env']}-\${cluster.labels["example.com/team"]}`, 'prod-a'],
    ['spaces inside the braces are allowed', '${ cluster.name }', 'member1'],
    ['$${ writes a literal ${', 'cost: $${cluster.name}', 'cost: ${cluster.name}'],
  ];
  for (const [name, text, want] of cases) it(name, () => assert.equal(expandString(text, facts), want));

  it('fails for a label the cluster does not have', () => {
    assert.throws(() => expandString("${cluster.labels['tier']}", facts), (e: unknown) => e instanceof VariableError && /cluster member1 has no label "tier"/.test(e.message));
  });
  it('fails for a region the cluster does not have', () => {
    assert.throws(() => expandString('${cluster.region}', { name: 'bare', labels: {} }), /cluster bare has no region/);
  });
});

describe('checkVariables', () => {
  it('accepts known variables', () => assert.equal(checkVariables("a-${cluster.name}-${cluster.labels['x']}"), undefined));
  it('names an unknown variable and lists the known ones', () => assert.match(checkVariables('${cluster.nickname}') ?? '', /unknown variable "\$\{cluster\.nickname\}"; known variables: \$\{cluster\.name\}/));
  it('finds an unterminated variable', () => assert.match(checkVariables('${cluster.name') ?? '', /unterminated variable/));
});

describe('sampleVariables and expandValue', () => {
  it('replaces variables with a sample so shapes can be checked', () => assert.equal(sampleVariables('v-${cluster.name}', 'x'), 'v-x'));
  it('expands strings nested in objects and lists, leaving keys alone', () => {
    const value = { '${cluster.name}': ['${cluster.region}', 3, { deep: '${cluster.provider}' }], n: null };
    assert.deepEqual(expandValue(value, facts), { '${cluster.name}': ['eu-west-1', 3, { deep: 'aws' }], n: null });
  });
  it('returns the same value when nothing changes', () => {
    const value = { a: ['x'] };
    assert.equal(expandValue(value, facts), value);
  });
});
