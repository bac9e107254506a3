// `flotilla admit` on files: the bundled admission example, the operation flag, what is printed and what
// is reported, and agreement with `flotilla render --cluster` for the same template.

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { captureIO } from '../../test/cli-io.js';
import { readYamlStream } from '../yaml/index.js';
import { run } from './index.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const example = join(root, 'examples/admission');

async function flotilla(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIO();
  const code = await run(args, io);
  return { code, out: io.out(), err: io.err() };
}

type Obj = Record<string, unknown>;
const objects = (text: string) => readYamlStream(text).documents.map((d) => d.value as Obj);
const containers = (o: unknown) =>
  ((o as Obj).spec as { template: { spec: { containers: Obj[] } } }).template.spec.containers;

describe('flotilla admit', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flotilla-admit-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('prints only the objects, admitted as the cluster: overrides first, then Gatekeeper mutators', async () => {
    const r = await flotilla(['admit', '-f', example, '--cluster', 'eu-1']);
    assert.equal(r.code, 0, r.err);
    const docs = objects(r.out);
    assert.deepEqual(
      docs.map((d) => d.kind),
      ['Deployment'],
    );
    const d = docs[0] as Obj;
    assert.deepEqual(
      containers(d).map((c) => [c.image, c.imagePullPolicy]),
      [
        ['mirror.eu-west-1.example.com/library/nginx:1.27', 'IfNotPresent'],
        ['mirror.eu-west-1.example.com/prom/statsd-exporter:v0.26.0', 'Always'],
      ],
    );
    assert.deepEqual((d.metadata as Obj).labels, { app: 'web', team: 'platform' });
    assert.deepEqual((d.metadata as Obj).annotations, { 'example.com/admitted-by': 'eu-1' });
  });

  it('--operation UPDATE applies only the rules that name UPDATE', async () => {
    const r = await flotilla(['admit', '-f', example, '--cluster', 'eu-1', '--operation', 'UPDATE']);
    assert.equal(r.code, 0, r.err);
    const d = objects(r.out)[0];
    assert.deepEqual(
      containers(d).map((c) => c.imagePullPolicy),
      [undefined, 'Always'],
    );
    assert.equal(containers(d)[0]?.image, 'mirror.eu-west-1.example.com/library/nginx:1.27');
  });

  it('another cluster gets what its Cluster object says (here: no registry rule), and a note when the Cluster is missing', async () => {
    const r = await flotilla(['admit', '-f', example, '--cluster', 'us-1']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /note: no Cluster named "us-1" in the input/);
    assert.equal(containers(objects(r.out)[0])[0]?.image, 'docker.io/library/nginx:1.27');
  });

  it('gives what render --cluster gives for the same template', async () => {
    const pp = join(dir, 'pp.yaml');
    await writeFile(
      pp,
      'apiVersion: policy.flotilla.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {name: all}\nspec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]\n',
    );
    const admitted = await flotilla(['admit', '-f', example, '--cluster', 'eu-1']);
    const rendered = await flotilla(['render', '-f', example, '-f', pp, '--cluster', 'eu-1']);
    assert.equal(rendered.code, 0, rendered.err);
    assert.deepEqual(objects(rendered.out), objects(admitted.out));
  });

  it('a failing rule and an unusable mutator are errors naming file, object and field', async () => {
    const f = join(dir, 'bad.yaml');
    await writeFile(
      f,
      [
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {a: b}',
        'apiVersion: policy.flotilla.io/v1beta1\nkind: ClusterOverridePolicy\nmetadata: {name: bad}\nspec:\n  overrideRules:\n  - overriders:\n      plaintext: [{operator: replace, path: /data/missing, value: x}]',
        'apiVersion: mutations.gatekeeper.sh/v1\nkind: Assign\nmetadata: {name: ext}\nspec:\n  applyTo: [{groups: [""], versions: [v1], kinds: [ConfigMap]}]\n  location: data.a\n  parameters: {assign: {externalData: {provider: p}}}',
      ].join('\n---\n'),
    );
    const r = await flotilla(['admit', '-f', f, '--cluster', 'x']);
    assert.equal(r.code, 1);
    assert.match(
      r.err,
      /error: .*bad\.yaml \(document 3\): Assign\/ext: spec\.parameters\.assign\.externalData: Unsupported/,
    );
    assert.match(
      r.err,
      /error: .*bad\.yaml \(document 1\): ConfigMap\/default\/c in cluster x: ClusterOverridePolicy bad: spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]/,
    );
    assert.equal(r.out, '');
  });
  it('admits objects named by generateName only, and warns of a mutator it cannot apply', async () => {
    const f = join(dir, 'generated.yaml');
    await writeFile(
      f,
      [
        'apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-7d9f-, namespace: apps}\nspec: {containers: [{name: app, image: app}]}',
        'apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-7d9f-, namespace: apps}\nspec: {containers: [{name: app, image: app}]}',
        'apiVersion: mutations.gatekeeper.sh/v1\nkind: AssignMetadata\nmetadata: {name: web}\nspec:\n  match: {name: "web-*"}\n  location: metadata.labels.app\n  parameters: {assign: {value: web}}',
        'apiVersion: mutations.gatekeeper.sh/v1\nkind: Assign\nmetadata: {name: dns}\nspec:\n  applyTo: [{groups: [""], versions: [v1], kinds: [Pod]}]\n  location: spec.dnsPolicy\n  parameters: {assign: {value: None}, assignIf: {in: [Default]}}',
      ].join('\n---\n'),
    );
    const r = await flotilla(['admit', '-f', f, '--cluster', 'x']);
    assert.equal(r.code, 0, r.err);
    const pods = objects(r.out);
    assert.equal(pods.length, 2);
    for (const p of pods) {
      assert.deepEqual((p.metadata as Obj).labels, { app: 'web' });
      assert.equal((p.spec as Obj).dnsPolicy, 'None');
    }
    assert.match(
      r.err,
      /warning: .*generated\.yaml \(document 1\): Pod\/apps\/<no name>: Gatekeeper Assign\/dns: spec\.parameters\.assignIf is ignored/,
    );
  });
});
