// pkg/yaml against sigs.k8s.io/yaml, the reader kubectl and the apiserver use. The expected readings in
// test/fixtures/yaml-oracle.json come from the real Go library (hack/update-yaml-oracle); these tests
// need no Go.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { readYaml, readYamlStream, writeYaml, type WriteOptions } from './index.js';

interface Reading {
  json?: string;
  error?: string;
  strictError?: string;
}

interface Fixture {
  read: Array<{ yaml: string; refuse?: { why: string; message: string }; sigs: Reading }>;
  write: Array<{ style: string; options: WriteOptions; value: unknown; yaml: string; sigs: Reading }>;
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/yaml-oracle.json'), 'utf8')) as Fixture;

function ours(yaml: string): { value?: unknown; error?: string } {
  const r = readYamlStream(yaml);
  if (r.errors.length > 0) return { error: r.errors.map((e) => `${e.line}:${e.col}: ${e.message}`).join('; ') };
  return { value: r.documents[0]?.value ?? null };
}

void describe('reading YAML as sigs.k8s.io/yaml does', () => {
  it('covers the scalars YAML 1.1 and 1.2 disagree on', () => {
    const inputs = new Set(fixture.read.map((c) => c.yaml));
    for (const s of [
      'yes',
      'no',
      'on',
      'off',
      'y',
      'n',
      'Y',
      'N',
      'true',
      'True',
      'TRUE',
      '~',
      'null',
      '0644',
      '0o644',
      '0x1F',
      '1_000',
      '0b101',
      '1e3',
      '.inf',
      '-.Inf',
      '.nan',
      '12:30:45',
      '2024-01-01',
      '+12',
    ]) {
      assert.ok(inputs.has(`v: ${s}`) && inputs.has(`${s}: v`), s);
    }
    assert.ok(inputs.has('v: "012"') && inputs.has("v: ''"));
  });

  for (const c of fixture.read) {
    const name = JSON.stringify(c.yaml);
    if (c.refuse) {
      it(`refuses ${name}: ${c.refuse.why}`, () => {
        const r = ours(c.yaml);
        assert.ok(r.error, `read as ${JSON.stringify(r.value)}`);
        assert.match(r.error, new RegExp(c.refuse?.message ?? ''));
      });
    } else if (c.sigs.json === undefined) {
      it(`refuses ${name} as kubectl does (${c.sigs.error ?? ''})`, () => {
        const r = ours(c.yaml);
        assert.ok(r.error, `read as ${JSON.stringify(r.value)}; sigs.k8s.io/yaml: ${c.sigs.error ?? ''}`);
      });
    } else {
      const expected: unknown = JSON.parse(c.sigs.json);
      it(`reads ${name} as ${c.sigs.json}`, () => {
        const r = ours(c.yaml);
        assert.equal(r.error, undefined);
        assert.deepStrictEqual(r.value, expected);
      });
    }
  }
});

void describe('writing YAML that sigs.k8s.io/yaml reads back unchanged', () => {
  for (const c of fixture.write) {
    it(`${c.style}: ${JSON.stringify(c.value).slice(0, 100)}`, () => {
      assert.equal(
        writeYaml(c.value, c.options),
        c.yaml,
        'the writer changed: run hack/update-yaml-oracle to check the new output with sigs.k8s.io/yaml',
      );
      assert.ok(c.sigs.json !== undefined, c.sigs.error);
      assert.deepStrictEqual(JSON.parse(c.sigs.json), c.value);
      assert.deepStrictEqual(readYaml(c.yaml), c.value);
    });
  }
});
