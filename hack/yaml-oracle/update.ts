// Regenerates test/fixtures/yaml-oracle.json: every case in cases.ts as sigs.k8s.io/yaml reads it (the
// Go program next to this file), and for the write cases, what pkg/yaml writes and how sigs.k8s.io/yaml
// reads that back. Run through hack/update-yaml-oracle (needs Go and the Go module proxy).

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { writeYaml } from '../../pkg/yaml/index.js';
import { READ_CASES, WRITE_STYLES, writeCases } from './cases.js';

interface Reading {
  json?: string;
  error?: string;
  strictError?: string;
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const ORACLE = join(ROOT, 'hack/yaml-oracle');
const FIXTURE = join(ROOT, 'test/fixtures/yaml-oracle.json');

function oracle(documents: string[]): Reading[] {
  const r = spawnSync('go', ['run', '.'], {
    cwd: ORACLE,
    input: JSON.stringify(documents),
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`go run ./hack/yaml-oracle failed:\n${r.stderr}`);
  return JSON.parse(r.stdout) as Reading[];
}

const writes = writeCases().map((c) => ({
  ...c,
  options: WRITE_STYLES[c.style],
  yaml: writeYaml(c.value, WRITE_STYLES[c.style]),
}));
const readings = oracle([...READ_CASES.map((c) => c.yaml), ...writes.map((w) => w.yaml)]);
const version = spawnSync('go', ['list', '-m', '-f', '{{.Version}}', 'sigs.k8s.io/yaml'], {
  cwd: ORACLE,
  encoding: 'utf8',
}).stdout.trim();

const reading = (i: number): Reading => {
  const r = readings[i];
  if (!r) throw new Error(`no reading for input ${i}`);
  return r;
};
const read = READ_CASES.map((c, i) => ({ ...c, sigs: reading(i) }));
const write = writes.map((w, i) => {
  const r = reading(READ_CASES.length + i);
  if (r.json === undefined)
    throw new Error(
      `sigs.k8s.io/yaml cannot read what pkg/yaml wrote for ${JSON.stringify(w.value)}:\n${w.yaml}\n${r.error}`,
    );
  return { style: w.style, options: w.options, value: w.value, yaml: w.yaml, sigs: r };
});

// One case per line keeps the file's diffs readable.
const lines = (items: unknown[]): string => items.map((x) => `    ${JSON.stringify(x)}`).join(',\n');
writeFileSync(
  FIXTURE,
  `{\n  "generatedBy": "hack/update-yaml-oracle",\n  "oracle": "sigs.k8s.io/yaml ${version} YAMLToJSON (YAMLToJSONStrict for strictError)",\n  "read": [\n${lines(read)}\n  ],\n  "write": [\n${lines(write)}\n  ]\n}\n`,
);
process.stdout.write(`${FIXTURE}: ${read.length} read cases, ${write.length} write cases\n`);
