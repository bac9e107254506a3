import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { captureIO } from '../../test/cli-io.js';
import { readYaml, readYamlStream } from '../yaml/index.js';
import type { CommandSpec } from './command.js';
import { ROOT, run } from './index.js';
import { readVersion } from './version.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = (p: string) => join(root, 'test/fixtures', p);
const quickstart = join(root, 'examples/quickstart');

async function flotilla(args: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  const io = captureIO({ stdin });
  const code = await run(args, io);
  return { code, out: io.out(), err: io.err() };
}

/** Every runnable command in the table, with its words after `flotilla`. */
function leaves(spec: CommandSpec = ROOT, path: string[] = []): Array<{ path: string[]; spec: CommandSpec }> {
  if (!spec.subcommands) return [{ path, spec }];
  return spec.subcommands.flatMap((c) => leaves(c, [...path, c.name]));
}

describe('flotilla (dispatch)', () => {
  it('prints help listing the commands', async () => {
    const r = await flotilla(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.out, /render +Render/);
    assert.match(r.out, /validate +Check/);
    assert.match(r.out, /version +Print the version/);
    assert.match(r.out, /completion +Print a shell completion script/);
  });
  it('prints the usage on stderr and exits 2 when no command is given', async () => {
    const r = await flotilla([]);
    assert.equal(r.code, 2);
    assert.equal(r.out, '');
    assert.match(r.err, /Commands:\n {2}render/);
  });
  const typos: Array<{ args: string[]; message: RegExp }> = [
    { args: ['rendr'], message: /^flotilla: unknown command "rendr"; did you mean render\?$/m },
    { args: ['valdiate', '-f', 'x'], message: /^flotilla: unknown command "valdiate"; did you mean validate\?$/m },
    { args: ['completions', 'bash'], message: /did you mean completion\?/ },
    { args: ['help', 'rendr'], message: /unknown command "rendr"; did you mean render\?/ },
    { args: ['certs', 'creat'], message: /^flotilla certs: unknown command "creat"; did you mean create\?$/m },
    { args: ['deploy'], message: /^flotilla: unknown command "deploy"\nSee 'flotilla --help' for the commands\.$/m },
  ];
  for (const t of typos) {
    it(`exits 2 for the unknown command in ${JSON.stringify(t.args.join(' '))} and suggests the closest`, async () => {
      const r = await flotilla(t.args);
      assert.equal(r.code, 2);
      assert.match(r.err, t.message);
    });
  }
  it('exits 2 for an unknown flag, suggests the closest and points to the help', async () => {
    const r = await flotilla(['render', '--frobnicate']);
    assert.equal(r.code, 2);
    assert.match(r.err, /^flotilla render: unknown flag --frobnicate\nSee 'flotilla render --help' for usage\.$/m);
    assert.match(
      (await flotilla(['render', '-f', quickstart, '--clustr', 'dev'])).err,
      /unknown flag --clustr; did you mean --cluster\?/,
    );
  });
  it('exits 2 when render is given no files', async () => {
    const r = await flotilla(['render']);
    assert.equal(r.code, 2);
    assert.match(r.err, /-f\/--filename is required/);
  });
  const flagErrors: Array<{ args: string[]; message: RegExp }> = [
    { args: ['render', '-f'], message: /^flotilla render: -f\/--filename needs a value$/m },
    { args: ['render', '-f', quickstart, '--explain=yes'], message: /^flotilla render: --explain takes no value$/m },
    { args: ['render', '-f', quickstart, 'extra'], message: /^flotilla render: unexpected argument "extra"$/m },
  ];
  for (const t of flagErrors) {
    it(`exits 2 and says what is wrong with ${JSON.stringify(t.args.slice(1).join(' ').replace(quickstart, 'DIR'))}`, async () => {
      const r = await flotilla(t.args);
      assert.equal(r.code, 2);
      assert.match(r.err, t.message);
    });
  }
  it('rejects an -o it does not know, naming the choices', async () => {
    const r = await flotilla(['render', '-f', quickstart, '-o', 'wide']);
    assert.equal(r.code, 2);
    assert.match(r.err, /--output must be one of yaml, json, name; got "wide"/);
  });

  for (const { path, spec } of leaves()) {
    it(`'flotilla ${path.join(' ')} --help' lists its own options with their defaults`, async () => {
      const r = await flotilla([...path, '--help']);
      assert.equal(r.code, 0, r.err);
      assert.ok(r.out.startsWith(`${spec.summary}\n\nUsage:\n  flotilla ${path.join(' ')}`), r.out);
      for (const [name, flag] of Object.entries(spec.flags)) {
        const row = r.out
          .split('\n')
          .findIndex((l) => new RegExp(`^ {2}(-${flag.short ?? '.'}, |    )--${name}\\b`).test(l));
        assert.ok(row >= 0, `--${name} is listed:\n${r.out}`);
        if (flag.default !== undefined)
          assert.match(
            r.out
              .split('\n')
              .slice(row, row + 4)
              .join(' '),
            new RegExp(`default ${flag.default.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`),
            `--${name} shows its default`,
          );
      }
      assert.match(r.out, /-h, --help/);
      assert.deepEqual(await flotilla(['help', ...path]), r, "'flotilla help …' prints the same");
    });
  }
  it("prints certs create's options, not the group's text, for 'certs create --help'", async () => {
    const create = await flotilla(['certs', 'create', '--help']);
    const patch = await flotilla(['certs', 'patch', '--help']);
    assert.match(create.out, /--valid-days DAYS +validity of the CA and the certificate \(1-36500\) \(default 3650\)/);
    assert.doesNotMatch(create.out, /--validating/);
    assert.match(patch.out, /--validating NAME/);
    assert.doesNotMatch(patch.out, /--valid-days/);
  });
});

describe('flotilla version', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  for (const args of [['version'], ['--version']]) {
    it(`'flotilla ${args.join(' ')}' prints the version in package.json`, async () => {
      assert.deepEqual(await flotilla(args), { code: 0, out: `flotilla ${pkg.version}\n`, err: '' });
    });
  }

  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flotilla-version-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  it('reads the version from the package.json it is given, at run time', async () => {
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'flotilla', version: '7.8.9-rc.1' }));
    assert.equal(await readVersion(pathToFileURL(join(dir, 'package.json'))), '7.8.9-rc.1');
  });
  it("names the file when it is missing or is not flotilla's", async () => {
    await assert.rejects(
      readVersion(pathToFileURL(join(dir, 'nope.json'))),
      /cannot read the version from .*nope\.json: ENOENT/,
    );
    await writeFile(join(dir, 'other.json'), JSON.stringify({ name: 'other', version: '1.0.0' }));
    await assert.rejects(
      readVersion(pathToFileURL(join(dir, 'other.json'))),
      /other\.json is not flotilla's package\.json \(name "other"/,
    );
  });
});

describe('flotilla render', () => {
  it('renders the quickstart: one document per (template, cluster)', async () => {
    const r = await flotilla(['render', '-f', quickstart]);
    assert.equal(r.code, 0, r.err);
    const docs = readYamlStream(r.out).documents.map((d) => d.value as { kind: string; metadata: { name: string } });
    assert.ok(docs.length >= 4);
    assert.match(r.out, /# cluster: eu-west/);
    assert.doesNotMatch(r.err, /error:/);
  });

  it('filters by --cluster and prints JSON with -o json', async () => {
    const r = await flotilla(['render', '-f', quickstart, '--cluster', 'dev', '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    const out = JSON.parse(r.out) as { placements: Array<{ cluster: string }> };
    assert.ok(out.placements.length > 0);
    assert.ok(out.placements.every((p) => p.cluster === 'dev'));
  });

  it('prints CLUSTER/KIND/NAMESPACE/NAME lines with -o name', async () => {
    const r = await flotilla(['render', '-f', quickstart, '-o', 'name']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.out.trim().split('\n').sort(), [
      'dev/Deployment/shop/web',
      'eu-west/ConfigMap/shop/web-config',
      'eu-west/Deployment/shop/web',
      'us-east/ConfigMap/shop/web-config',
      'us-east/Deployment/shop/web',
    ]);
    const dev = await flotilla(['render', '-f', quickstart, '-o', 'name', '--cluster', 'dev']);
    assert.equal(dev.out, 'dev/Deployment/shop/web\n');
  });

  it('leaves the namespace out of -o name for objects without one', async () => {
    const input = [
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\nrules: []',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: team}',
      'apiVersion: policy.flotilla.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {name: all}\nspec:\n  resourceSelectors: [{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole}, {apiVersion: v1, kind: ConfigMap}]',
      'apiVersion: cluster.flotilla.io/v1alpha1\nkind: Cluster\nmetadata: {name: one}',
    ].join('\n---\n');
    const r = await flotilla(['render', '-f', '-', '-o', 'name'], input);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.out.trim().split('\n').sort(), ['one/ClusterRole/reader', 'one/ConfigMap/team/c']);
  });

  it('refuses --explain with -o name', async () => {
    const r = await flotilla(['render', '-f', quickstart, '-o', 'name', '--explain']);
    assert.equal(r.code, 2);
    assert.match(r.err, /--explain does not apply to -o name/);
  });

  it('says how to give member clusters when the input has none', async () => {
    const r = await flotilla([
      'render',
      '-f',
      join(quickstart, 'templates.yaml'),
      '-f',
      join(quickstart, 'propagation.yaml'),
    ]);
    assert.equal(r.code, 1);
    assert.match(r.err, /no cluster matches its placement/);
    assert.match(
      r.err,
      /^note: the input has no Cluster objects, so no template can be placed\. Give the member clusters as Cluster\n {2}documents in the input \(apiVersion: cluster\.flotilla\.io\/v1alpha1, kind: Cluster/m,
    );
    assert.match(
      r.err,
      /'flotilla apply --kubeconfig FILE', which deploys to each\n {2}kubeconfig context as a member cluster/,
    );
    assert.doesNotMatch((await flotilla(['render', '-f', quickstart])).err, /no Cluster objects/);
  });

  it("says in --help that -o json is a report kubectl cannot apply, and shows kubectl's way", async () => {
    const r = await flotilla(['render', '--help']);
    assert.match(r.out, /-o json is a report .*\n.*not a list of objects: kubectl cannot apply it/);
    assert.match(r.out, /flotilla render -f PATH --cluster NAME \| kubectl --context NAME apply -f -/);
  });

  it('explains which rule set each field', async () => {
    const r = await flotilla(['render', '-f', quickstart, '--cluster', 'dev', '--explain']);
    assert.equal(r.code, 0, r.err);
    assert.match(
      r.out,
      /set by OverridePolicy shop\/web-images spec\.overrideRules\[1\]\.overriders\.imageOverrider\[0\]/,
    );
  });

  it('reads documents from stdin', async () => {
    const input = [
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {a: b}',
      'apiVersion: policy.flotilla.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p, namespace: default}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]',
      'apiVersion: cluster.flotilla.io/v1alpha1\nkind: Cluster\nmetadata: {name: only}',
    ].join('\n---\n');
    const r = await flotilla(['render', '-f', '-'], input);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(
      readYaml(
        r.out
          .split('\n')
          .filter((l) => !l.startsWith('#'))
          .join('\n'),
      ),
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { a: 'b' } },
    );
  });

  const bad: Array<{ name: string; file: string; message: RegExp }> = [
    {
      name: 'malformed YAML names the file, line and column',
      file: 'bad/malformed.yaml',
      message: /error: .*malformed\.yaml:\d+:\d+: invalid YAML/,
    },
    {
      name: 'an invalid policy names the file, object and field',
      file: 'bad/invalid-policy.yaml',
      message:
        /error: .*invalid-policy\.yaml: OverridePolicy\/default\/bad-paths: spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]\.path: Invalid value: "spec\/replicas"/,
    },
    {
      name: 'an unknown policy kind is reported',
      file: 'bad/unknown-kind.yaml',
      message: /unknown-kind\.yaml: PlacementPolicy\/default\/typo: kind: Unsupported value: "PlacementPolicy"/,
    },
    {
      name: 'a path missing on one cluster fails that cluster only',
      file: 'bad/missing-path.yaml',
      message:
        /missing-path\.yaml \(document 1\): Deployment\/default\/web on cluster member2: OverridePolicy default\/pause: spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]: replace operation does not apply/,
    },
    { name: 'a file that does not exist', file: 'bad/nope.yaml', message: /nope\.yaml: no such file or directory/ },
  ];
  for (const c of bad) {
    it(`${c.name}, exits 1 and prints no stack trace`, async () => {
      const r = await flotilla(['render', '-f', fixture(c.file)]);
      assert.equal(r.code, 1);
      assert.match(r.err, c.message);
      assert.doesNotMatch(r.err + r.out, /\n\s+at .+:\d+:\d+/);
    });
  }

  it('still renders the cluster whose copy is fine when another fails', async () => {
    const r = await flotilla(['render', '-f', fixture('bad/missing-path.yaml')]);
    assert.match(r.out, /# cluster: member1/);
    assert.doesNotMatch(r.out, /# cluster: member2/);
  });
});

describe('flotilla validate', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flotilla-cli-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('allows the quickstart', async () => {
    const r = await flotilla(['validate', '-f', quickstart]);
    assert.equal(r.code, 0, r.out);
  });

  it('prints every field error as FILE: KIND/NS/NAME: field.path: message and exits 1', async () => {
    const r = await flotilla(['validate', '-f', fixture('bad/invalid-policy.yaml')]);
    assert.equal(r.code, 1);
    const lines = r.out.trim().split('\n');
    assert.ok(
      lines.some((l) =>
        /invalid-policy\.yaml: OverridePolicy\/default\/bad-paths: spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]\.path: /.test(
          l,
        ),
      ),
      r.out,
    );
    assert.ok(
      lines.some((l) => /labelsOverrider\[0\]\.value.*unknown variable/.test(l)),
      r.out,
    );
  });

  it('exits 1 for unreadable YAML', async () => {
    const f = join(dir, 'x.yaml');
    await writeFile(f, 'a: [\n');
    const r = await flotilla(['validate', '-f', f]);
    assert.equal(r.code, 1);
    assert.match(r.out, /x\.yaml:\d+:\d+: invalid YAML/);
  });
});

describe('flotilla render with propagateDeps', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flotilla-deps-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('renders the ConfigMap the workload mounts on its clusters and warns, naming file, object and field, about a missing Secret', async () => {
    const f = join(dir, 'app.yaml');
    await writeFile(
      f,
      `apiVersion: cluster.flotilla.io/v1alpha1
kind: Cluster
metadata: {name: member1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: shop}
data: {level: info}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.25
          envFrom: [{secretRef: {name: creds}}]
      volumes: [{name: c, configMap: {name: cfg}}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
`,
    );
    const r = await flotilla(['render', '-f', f, '-o', 'name']);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /^member1\/ConfigMap\/shop\/cfg$/m);
    assert.match(r.out, /^member1\/Deployment\/shop\/web$/m);
    assert.match(
      r.err,
      /warning: .*app\.yaml \(document 3\): Deployment\/shop\/web: spec\.template\.spec\.containers\[0\]\.envFrom\[0\]\.secretRef names Secret shop\/creds, which is not found/,
    );
    assert.doesNotMatch(r.err, /propagateDeps is accepted but not acted upon/);
  });
});

describe('flotilla render --explain: clusters not chosen', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flotilla-explain-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('says, on the template, why each cluster it does not go to was left out', async () => {
    const f = join(dir, 'fleet.yaml');
    await writeFile(
      f,
      `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: member1}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: member2}
spec:
  taints: [{key: maintenance, effect: NoSchedule}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: shop}
data: {a: b}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: cfg, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: cfg}]
`,
    );
    const r = await flotilla(['render', '-f', f, '--explain']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^# {3}not on member2: untolerated taint maintenance:NoSchedule$/m);
  });
});
