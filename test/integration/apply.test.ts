// `flotilla apply` and `flotilla diff` against two real member apiservers, from one kubeconfig whose
// contexts are named after the quickstart's Clusters (eu-west, us-east). The steps build on each other
// (apply, re-apply, edit, untarget, prune, conflicts, outage), as a user's sessions would.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { parse, parseAllDocuments, stringify } from 'yaml';

import { run } from '../../pkg/cli/index.js';
import { applySetId } from '../../pkg/kube/applyset.js';
import { captureIO } from '../cli-io.js';
import { getJson } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';

type Obj = Record<string, unknown>;
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const QUICKSTART = join(ROOT, 'examples', 'quickstart');
const PART_OF = 'applyset.kubernetes.io/part-of';
const HASH = 'flotilla.io/applied-hash';
/** The members, as contexts named after the quickstart's Clusters. */
const MEMBERS = { eu: 'eu-west', us: 'us-east' } as const;
const WAIT_MS = 30_000;

function readDocs(file: string): Obj[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Obj);
}

/** The quickstart as README's "Deploy to your clusters" uses it: its templates and policies, examples/fleet's Clusters. */
function quickstart() {
  return {
    templates: readDocs(join(QUICKSTART, 'templates.yaml')),
    propagation: readDocs(join(QUICKSTART, 'propagation.yaml')),
    overrides: readDocs(join(QUICKSTART, 'overrides.yaml')),
    clusters: readDocs(join(ROOT, 'examples', 'fleet', 'clusters.yaml')),
    extra: [] as Obj[],
  };
}
type Input = ReturnType<typeof quickstart>;

const byName = (docs: Obj[], name: string) => {
  const d = docs.find((x) => (x.metadata as Obj).name === name);
  assert.ok(d, `no document named ${name}`);
  return d;
};
const get = (o: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((cur, k) => (cur && typeof cur === 'object' ? (cur as Obj)[k] : undefined), o);

void describe('flotilla apply and diff on two member clusters', () => {
  const env = useEnvironment({ members: 2 });
  let dir: string;
  let fleet: string; // the input directory: its base name gives the default apply set name
  let kubeconfigPath: string;
  const applySet = { name: 'flotilla-fleet', namespace: 'flotilla-system' };
  const id = applySetId(applySet);

  /** member context → cluster handle name */
  const handle = (member: string) => (member === MEMBERS.eu ? 'member1' : 'member2');
  const kc = (member: string): KubeConfig => {
    const k = new KubeConfig();
    k.loadFromFile(kubeconfigPath);
    k.setCurrentContext(member);
    return k;
  };
  const read = async (member: string, path: string): Promise<Obj | undefined> => {
    const r = await getJson<Obj>(kc(member), path);
    if (r.status === 404) return undefined;
    assert.equal(r.status, 200, `GET ${path} on ${member}`);
    return r.body;
  };
  const deployment = (member: string, name = 'web', ns = 'shop') =>
    read(member, `/apis/apps/v1/namespaces/${ns}/deployments/${name}`);
  const configMap = (member: string, name: string, ns = 'shop') =>
    read(member, `/api/v1/namespaces/${ns}/configmaps/${name}`);
  const k = (member: string, args: string[], input?: unknown, extraEnv?: Record<string, string>) =>
    kubectl(kubeconfigPath, ['--context', member, ...args], input, extraEnv);

  function writeInput(input: Input, to = fleet): void {
    rmSync(to, { recursive: true, force: true });
    mkdirSync(to, { recursive: true });
    const write = (name: string, docs: Obj[]) =>
      writeFileSync(join(to, name), docs.map((d) => stringify(d)).join('---\n'));
    write('clusters.yaml', input.clusters);
    write('templates.yaml', input.templates);
    write('propagation.yaml', input.propagation);
    write('overrides.yaml', input.overrides);
    if (input.extra.length > 0) write('extra.yaml', input.extra);
  }

  async function flotilla(args: string[]) {
    const io = captureIO();
    const code = await run([...args, '--kubeconfig', kubeconfigPath], io);
    return { code, out: io.out(), err: io.err() };
  }
  const apply = (...more: string[]) => flotilla(['apply', '-f', fleet, ...more]);
  const diff = (...more: string[]) => flotilla(['diff', '-f', fleet, ...more]);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'flotilla-apply-it-'));
    fleet = join(dir, 'fleet');
    // One kubeconfig, one context per member, renamed after the quickstart's Clusters.
    const config = parse(readFileSync(env().membersKubeconfigPath, 'utf8')) as Obj;
    const rename = (s: string) => s.replace('member1', MEMBERS.eu).replace('member2', MEMBERS.us);
    const text = JSON.stringify(config).replace(/member[12]/g, (m) => rename(m));
    kubeconfigPath = join(dir, 'fleet.kubeconfig');
    writeFileSync(kubeconfigPath, text, { mode: 0o600 });
    writeInput(quickstart());
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('diff before the first apply shows every object and exits 1', async () => {
    const r = await diff();
    assert.equal(r.code, 1, r.err);
    for (const m of Object.values(MEMBERS)) {
      assert.match(r.out, new RegExp(`\\+\\+\\+ ${m}/apps/v1/Deployment/shop/web \\(after apply\\)`));
      assert.match(r.out, new RegExp(`\\+\\+\\+ ${m}/v1/ConfigMap/shop/web-config \\(after apply\\)`));
    }
    assert.match(r.err, /namespace shop does not exist yet/);
    assert.equal(await deployment(MEMBERS.eu), undefined, 'diff changed nothing');
  });

  it('applies the quickstart: each member holds exactly what render printed for it', async () => {
    const r = await apply();
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^eu-west {2}4 {8}0 {11}0 /m); // flotilla-system, shop, the Deployment and the ConfigMap
    assert.match(r.out, /apply set flotilla-system\/flotilla-fleet/);

    const rendered = captureIO();
    assert.equal(await run(['render', '-f', fleet, '-o', 'json'], rendered), 0, rendered.err());
    const placements = (JSON.parse(rendered.out()) as { placements: Array<{ cluster: string; object: Obj }> })
      .placements;
    assert.equal(placements.length, 4);
    for (const p of placements) {
      const meta = p.object.metadata as { name: string; namespace: string; labels?: Obj; annotations?: Obj };
      const live = await read(
        p.cluster,
        p.object.kind === 'Deployment'
          ? `/apis/apps/v1/namespaces/${meta.namespace}/deployments/${meta.name}`
          : `/api/v1/namespaces/${meta.namespace}/configmaps/${meta.name}`,
      );
      assert.ok(live, `${p.cluster} has ${String(p.object.kind)} ${meta.name}`);
      assert.deepEqual(
        mismatches(p.object, live),
        [],
        `${p.cluster}: ${String(p.object.kind)} ${meta.name} differs from the render`,
      );
      const liveMeta = live.metadata as { labels: Obj; annotations: Obj };
      assert.deepEqual(liveMeta.labels, { ...meta.labels, [PART_OF]: id });
      assert.deepEqual(Object.keys(liveMeta.annotations).sort(), [...Object.keys(meta.annotations ?? {}), HASH].sort());
    }
  });

  it('is seen by kubectl as the same apply set', async () => {
    for (const m of Object.values(MEMBERS)) {
      const listed = await k(m, ['get', 'deployments,configmaps', '-A', '-l', `${PART_OF}=${id}`, '-o', 'name']);
      assert.equal(listed.status, 0, listed.stderr);
      assert.deepEqual(listed.stdout.trim().split('\n').sort(), ['configmap/web-config', 'deployment.apps/web']);
      const parent = await read(m, '/api/v1/namespaces/flotilla-system/secrets/flotilla-fleet');
      assert.deepEqual(get(parent, 'metadata.labels'), { 'applyset.kubernetes.io/id': id });
      const annotations = get(parent, 'metadata.annotations') as Obj;
      assert.equal(annotations['applyset.kubernetes.io/contains-group-kinds'], 'ConfigMap,Deployment.apps');
      assert.equal(annotations['applyset.kubernetes.io/additional-namespaces'], 'shop');
      assert.match(String(annotations['applyset.kubernetes.io/tooling']), /^flotilla\/v\d/);
    }
    // kubectl computes the same id for its own parents, and refuses to operate on ours (another tool's).
    const probe = await k(
      MEMBERS.eu,
      ['apply', '--server-side', '--prune', '--applyset=kubectl-probe', '-n', 'default', '-f', '-'],
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'kubectl-probe', namespace: 'default' },
        data: { a: 'b' },
      },
      { KUBECTL_APPLYSET: 'true' },
    );
    assert.equal(probe.status, 0, probe.stderr);
    const probeParent = await read(MEMBERS.eu, '/api/v1/namespaces/default/secrets/kubectl-probe');
    assert.equal(
      (get(probeParent, 'metadata.labels') as Obj)['applyset.kubernetes.io/id'],
      applySetId({ name: 'kubectl-probe', namespace: 'default' }),
    );
    const refused = await k(
      MEMBERS.eu,
      ['apply', '--server-side', '--prune', '--applyset=flotilla-fleet', '-n', 'flotilla-system', '-f', '-'],
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web-config', namespace: 'shop' }, data: {} },
      { KUBECTL_APPLYSET: 'true' },
    );
    assert.notEqual(refused.status, 0);
    assert.match(
      refused.stderr,
      /ApplySet parent object "secrets.\/flotilla-fleet" already exists and is managed by tooling "flotilla" instead of "kubectl"/,
    );
    assert.ok(await configMap(MEMBERS.eu, 'web-config'), 'kubectl pruned nothing');
  });

  it('diff right after apply prints nothing and exits 0; a re-apply changes nothing', async () => {
    const d = await diff();
    assert.equal(d.code, 0, d.err);
    assert.equal(d.out, '');
    const before = String(get(await deployment(MEMBERS.eu), 'metadata.resourceVersion'));
    const r = await apply();
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^eu-west {2}0 {8}0 {11}2 /m);
    assert.match(r.out, /^us-east {2}0 {8}0 {11}2 /m);
    assert.equal(String(get(await deployment(MEMBERS.eu), 'metadata.resourceVersion')), before);
  });

  it('diff shows a manual edit on a member; apply puts it back', async () => {
    const edit = await k(MEMBERS.eu, [
      '-n',
      'shop',
      'patch',
      'deployment',
      'web',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/template/spec/containers/0/env"}]',
    ]);
    assert.equal(edit.status, 0, edit.stderr);
    const d = await diff();
    assert.equal(d.code, 1, d.err);
    assert.match(d.out, /^\+\+\+ eu-west\/apps\/v1\/Deployment\/shop\/web \(after apply\)$/m);
    assert.match(d.out, /^\+ {8}- name: CLUSTER_NAME$/m);
    assert.doesNotMatch(d.out, /us-east/);
    const r = await apply();
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /eu-west: Deployment\.apps shop\/web configured/);
    assert.deepEqual(get(await deployment(MEMBERS.eu), 'spec.template.spec.containers.0.env'), [
      { name: 'CLUSTER_NAME', value: 'eu-west' },
    ]);
  });

  it('follows a changed override on every member', async () => {
    const input = quickstart();
    const runtime = byName(input.overrides, 'web-runtime');
    ((((runtime.spec as Obj).overrideRules as Obj[])[0]?.overriders as Obj).argsOverrider as Obj[])[0]!.value = [
      '--log-level=error',
    ];
    writeInput(input);
    const r = await apply();
    assert.equal(r.code, 0, r.err);
    for (const m of Object.values(MEMBERS))
      assert.deepEqual(get(await deployment(m), 'spec.template.spec.containers.0.args'), [
        '--port=8080',
        '--log-level=error',
      ]);
  });

  it('--context delivers to one member only, with the replicas the whole fleet gives it', async () => {
    const input = quickstart();
    const runtime = byName(input.overrides, 'web-runtime');
    ((((runtime.spec as Obj).overrideRules as Obj[])[0]?.overriders as Obj).argsOverrider as Obj[])[0]!.value = [
      '--log-level=debug',
    ];
    writeInput(input);
    const r = await apply('--context', MEMBERS.eu);
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.out, /us-east/);
    const eu = await deployment(MEMBERS.eu);
    assert.deepEqual(get(eu, 'spec.template.spec.containers.0.args'), ['--port=8080', '--log-level=debug']);
    assert.equal(get(eu, 'spec.replicas'), 5, 'weights 2:1 over eu-west and us-east, as without --context');
    assert.deepEqual(
      get(await deployment(MEMBERS.us), 'spec.template.spec.containers.0.args'),
      ['--port=8080', '--log-level=error'],
      'us-east untouched',
    );
  });

  it('gives fields back when an override rule, then a whole OverridePolicy, is removed', async () => {
    const input = quickstart();
    const runtime = byName(input.overrides, 'web-runtime');
    (runtime.spec as Obj).overrideRules = ((runtime.spec as Obj).overrideRules as Obj[]).slice(0, 2); // drop labels, annotations, env
    writeInput(input);
    assert.equal((await apply()).code, 0);
    for (const m of Object.values(MEMBERS)) {
      const d = await deployment(m);
      assert.equal(
        (get(d, 'metadata.labels') as Obj)['flotilla.example.com/cluster'],
        undefined,
        `${m}: label removed`,
      );
      assert.deepEqual(Object.keys(get(d, 'metadata.annotations') as Obj), [HASH], `${m}: annotations removed`);
      assert.equal(get(d, 'spec.template.spec.containers.0.env'), undefined, `${m}: env removed`);
      assert.deepEqual(
        get(d, 'spec.template.spec.containers.0.args'),
        ['--port=8080', '--log-level=warn'],
        `${m}: the remaining rule still applies`,
      );
    }
    input.overrides = input.overrides.filter((o) => (o.metadata as Obj).name !== 'web-runtime');
    writeInput(input);
    assert.equal((await apply()).code, 0);
    for (const m of Object.values(MEMBERS))
      assert.deepEqual(
        get(await deployment(m), 'spec.template.spec.containers.0.args'),
        ['--port=8080'],
        `${m}: args back to the template`,
      );
  });

  it('--dry-run=server reports what would change and changes nothing', async () => {
    const input = quickstart();
    (byName(input.templates, 'web-config').data as Obj)['new-key'] = 'v';
    input.templates.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'dry', namespace: 'shop', labels: { 'platform.example.com/shared': 'true' } },
      data: { a: 'b' },
    });
    writeInput(input);
    const before = String(get(await configMap(MEMBERS.eu, 'web-config'), 'metadata.resourceVersion'));
    const r = await apply('--dry-run=server');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /eu-west: ConfigMap shop\/web-config configured \(server dry run\)/);
    assert.match(r.out, /eu-west: ConfigMap shop\/dry created \(server dry run\)/);
    assert.match(r.out, /server dry run: nothing was changed/);
    assert.equal(String(get(await configMap(MEMBERS.eu, 'web-config'), 'metadata.resourceVersion')), before);
    assert.equal(await configMap(MEMBERS.eu, 'dry'), undefined);
  });

  it("--prune removes an untargeted member's copy and keeps the others and unrelated objects", async () => {
    for (const m of Object.values(MEMBERS))
      assert.equal((await k(m, ['-n', 'shop', 'create', 'configmap', 'unrelated', '--from-literal=a=b'])).status, 0);
    const input = quickstart();
    ((byName(input.propagation, 'web').spec as Obj).placement as Obj).clusterAffinity = { clusterNames: [MEMBERS.eu] };
    writeInput(input);
    const d = await diff();
    assert.equal(d.code, 1);
    assert.match(d.out, /^\+\+\+ us-east\/apps\/v1\/Deployment\/shop\/web \(deleted by apply --prune\)$/m);
    const r = await apply('--prune');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /us-east: Deployment\.apps shop\/web pruned/);
    assert.equal(
      await eventually(
        () => deployment(MEMBERS.us),
        (x) => x === undefined,
        WAIT_MS,
      ),
      undefined,
    );
    assert.ok(await deployment(MEMBERS.eu), 'kept on eu-west');
    for (const m of Object.values(MEMBERS)) {
      assert.ok(await configMap(m, 'web-config'), `${m}: the ConfigMap of the other policy stays`);
      assert.ok(await configMap(m, 'unrelated'), `${m}: an object outside the set stays`);
    }
  });

  it('--prune deletes an object removed from the input, on every member, and nothing outside the set', async () => {
    const input = quickstart();
    ((byName(input.propagation, 'web').spec as Obj).placement as Obj).clusterAffinity = { clusterNames: [MEMBERS.eu] };
    input.templates = input.templates.filter((t) => t.kind !== 'ConfigMap');
    writeInput(input);
    const r = await apply('--prune');
    assert.equal(r.code, 0, r.err);
    for (const m of Object.values(MEMBERS)) {
      assert.equal(
        await eventually(
          () => configMap(m, 'web-config'),
          (x) => x === undefined,
          WAIT_MS,
        ),
        undefined,
        `${m}: pruned`,
      );
      assert.ok(await configMap(m, 'unrelated'), `${m}: unrelated ConfigMap in the same namespace survives`);
      assert.ok(await read(m, '/api/v1/namespaces/shop'), `${m}: the namespace stays`);
      const parent = await read(m, '/api/v1/namespaces/flotilla-system/secrets/flotilla-fleet');
      // After a complete prune the parent records exactly what the set now holds.
      assert.equal(
        (get(parent, 'metadata.annotations') as Obj)['applyset.kubernetes.io/contains-group-kinds'],
        m === MEMBERS.eu ? 'Deployment.apps' : '',
      );
    }
    const listed = await k(MEMBERS.eu, ['get', 'deployments,configmaps', '-A', '-l', `${PART_OF}=${id}`, '-o', 'name']);
    assert.deepEqual(listed.stdout.trim().split('\n'), ['deployment.apps/web']);
  });

  it('leaves a foreign object of the same name alone under Abort, and takes it under Overwrite', async () => {
    for (const m of Object.values(MEMBERS))
      assert.equal(
        (await k(m, ['-n', 'shop', 'create', 'configmap', 'foreign', '--from-literal=owner=someone-else'])).status,
        0,
      );
    const input = quickstart();
    input.templates = input.templates.filter((t) => t.kind !== 'ConfigMap');
    input.extra = [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'foreign', namespace: 'shop' },
        data: { owner: 'flotilla' },
      },
      {
        apiVersion: 'policy.flotilla.io/v1alpha1',
        kind: 'PropagationPolicy',
        metadata: { name: 'takeover', namespace: 'shop' },
        spec: { resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'foreign' }] },
      },
    ];
    writeInput(input);
    const abort = await apply();
    assert.equal(abort.code, 1);
    assert.match(
      abort.err,
      /conflict: eu-west: ConfigMap shop\/foreign: already exists on the member and is not part of this apply set/,
    );
    assert.match(abort.err, /conflict: us-east: ConfigMap shop\/foreign:/);
    const untouched = await configMap(MEMBERS.eu, 'foreign');
    assert.deepEqual(get(untouched, 'data'), { owner: 'someone-else' });
    assert.equal(get(untouched, 'metadata.labels'), undefined);

    ((input.extra[1] as Obj).spec as Obj).conflictResolution = 'Overwrite';
    writeInput(input);
    const overwrite = await apply();
    assert.equal(overwrite.code, 0, overwrite.err);
    for (const m of Object.values(MEMBERS)) {
      const taken = await configMap(m, 'foreign');
      assert.deepEqual(get(taken, 'data'), { owner: 'flotilla' });
      assert.equal((get(taken, 'metadata.labels') as Obj)[PART_OF], id);
    }
  });

  it('puts back what another writer changed on an object of its own set, and exits 0 (apply and apply --prune)', async () => {
    const before = await deployment(MEMBERS.eu);
    assert.equal((await k(MEMBERS.eu, ['-n', 'shop', 'set', 'image', 'deployment/web', 'web=drifted:1'])).status, 0);
    assert.equal((await k(MEMBERS.eu, ['-n', 'shop', 'scale', 'deployment', 'web', '--replicas=1'])).status, 0);
    assert.equal(get(await deployment(MEMBERS.eu), 'spec.template.spec.containers.0.image'), 'drifted:1');
    const again = await apply();
    assert.equal(again.code, 0, again.err);
    assert.doesNotMatch(again.err, /conflict/);
    const d = await deployment(MEMBERS.eu);
    assert.equal(get(d, 'spec.template.spec.containers.0.image'), get(before, 'spec.template.spec.containers.0.image'));
    assert.equal(get(d, 'spec.replicas'), get(before, 'spec.replicas'));
    assert.equal((await k(MEMBERS.eu, ['-n', 'shop', 'set', 'image', 'deployment/web', 'web=drifted:2'])).status, 0);
    const pruned = await apply('--prune');
    assert.equal(pruned.code, 0, pruned.err);
    assert.equal(
      get(await deployment(MEMBERS.eu), 'spec.template.spec.containers.0.image'),
      get(before, 'spec.template.spec.containers.0.image'),
    );
  });

  it('applies a CRD and a custom resource of its kind from the same input', async () => {
    const crdInput = join(dir, 'widgets');
    const docs: Obj[] = [
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
                },
              },
            },
          ],
        },
      },
      {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'w1', namespace: 'widgets' },
        spec: { size: 3 },
      },
      {
        apiVersion: 'policy.flotilla.io/v1alpha1',
        kind: 'ClusterPropagationPolicy',
        metadata: { name: 'widgets' },
        spec: {
          resourceSelectors: [
            { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'widgets.example.com' },
            { apiVersion: 'example.com/v1', kind: 'Widget' },
          ],
        },
      },
      {
        apiVersion: 'policy.flotilla.io/v1alpha1',
        kind: 'OverridePolicy',
        metadata: { name: 'size', namespace: 'widgets' },
        spec: {
          resourceSelectors: [{ apiVersion: 'example.com/v1', kind: 'Widget' }],
          overrideRules: [
            {
              targetCluster: { clusterNames: [MEMBERS.us] },
              overriders: { plaintext: [{ path: '/spec/size', operator: 'replace', value: 5 }] },
            },
          ],
        },
      },
    ];
    mkdirSync(crdInput);
    writeFileSync(join(crdInput, 'all.yaml'), docs.map((d) => stringify(d)).join('---\n'));
    const r = await flotilla(['apply', '-f', crdInput]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /eu-west: CustomResourceDefinition\.apiextensions\.k8s\.io widgets\.example\.com created/);
    assert.match(r.out, /eu-west: Widget\.example\.com widgets\/w1 created/);
    assert.equal(get(await read(MEMBERS.eu, '/apis/example.com/v1/namespaces/widgets/widgets/w1'), 'spec.size'), 3);
    assert.equal(get(await read(MEMBERS.us, '/apis/example.com/v1/namespaces/widgets/widgets/w1'), 'spec.size'), 5);
    const again = await flotilla(['diff', '-f', crdInput]);
    assert.equal(again.code, 0, again.err);

    // The namespace was created for the Widget; naming it in the input later takes it into the set.
    assert.match(r.out, /eu-west: Namespace widgets created/);
    docs.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'widgets', labels: { team: 'widgets' } } });
    ((docs[2]?.spec as Obj).resourceSelectors as Obj[]).push({ apiVersion: 'v1', kind: 'Namespace', name: 'widgets' });
    writeFileSync(join(crdInput, 'all.yaml'), docs.map((d) => stringify(d)).join('---\n'));
    const adopt = await flotilla(['apply', '-f', crdInput]);
    assert.equal(adopt.code, 0, adopt.err);
    assert.match(adopt.out, /eu-west: Namespace widgets configured/);
    assert.equal(get(await read(MEMBERS.us, '/api/v1/namespaces/widgets'), 'metadata.labels.team'), 'widgets');
  });

  it('fails an object of a kind one member does not serve on that member only', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.org' },
      spec: {
        group: 'example.org',
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
    assert.equal((await k(MEMBERS.eu, ['apply', '--server-side', '-f', '-'], crd)).status, 0);
    assert.equal(
      (await k(MEMBERS.eu, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/gadgets.example.org'])).status,
      0,
    );
    const gadgets = join(dir, 'gadgets');
    mkdirSync(gadgets);
    const docs: Obj[] = [
      {
        apiVersion: 'example.org/v1',
        kind: 'Gadget',
        metadata: { name: 'g1', namespace: 'gadgets' },
        spec: { on: true },
      },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'g-config', namespace: 'gadgets' }, data: { a: 'b' } },
      {
        apiVersion: 'policy.flotilla.io/v1alpha1',
        kind: 'PropagationPolicy',
        metadata: { name: 'gadgets', namespace: 'gadgets' },
        spec: {
          resourceSelectors: [
            { apiVersion: 'example.org/v1', kind: 'Gadget' },
            { apiVersion: 'v1', kind: 'ConfigMap' },
          ],
        },
      },
    ];
    writeFileSync(join(gadgets, 'all.yaml'), docs.map((d) => stringify(d)).join('---\n'));
    await eventually(
      async () => (await getJson(kc(MEMBERS.eu), '/apis/example.org/v1')).status,
      (s) => s === 200,
      WAIT_MS,
    );
    const r = await flotilla(['apply', '-f', gadgets]);
    assert.equal(r.code, 1);
    assert.match(r.out, /eu-west: Gadget\.example\.org gadgets\/g1 created/);
    assert.match(r.out, /us-east: ConfigMap gadgets\/g-config created/);
    assert.match(
      r.err,
      /^error: us-east: Gadget\.example\.org gadgets\/g1: unknown kind: the member does not serve example\.org\/v1$/m,
    );
    assert.ok(await read(MEMBERS.eu, '/apis/example.org/v1/namespaces/gadgets/gadgets/g1'));
  });

  it('applies to the member that answers when the other is down, names the other once, and converges once it is back', async () => {
    const input = quickstart();
    input.templates = input.templates.filter((t) => t.kind !== 'ConfigMap');
    (byName(input.templates, 'web').metadata as Obj).labels = { app: 'web', release: 'three' };
    writeInput(input);
    await env().stopCluster(handle(MEMBERS.us));
    const down = await apply();
    assert.equal(down.code, 1);
    assert.equal(get(await deployment(MEMBERS.eu), 'metadata.labels.release'), 'three', 'eu-west was applied');
    const mentions = down.err.split('\n').filter((l) => /^(error|conflict):/.test(l) && l.includes('us-east'));
    assert.equal(mentions.length, 1, down.err);
    assert.match(mentions[0] ?? '', /^error: us-east \(https:\/\/127\.0\.0\.1:\d+\): unreachable: .*ECONNREFUSED/);
    assert.match(down.out, /^us-east .*unreachable$/m);

    await env().startCluster(handle(MEMBERS.us));
    const back = await apply();
    assert.equal(back.code, 0, back.err);
    for (const m of Object.values(MEMBERS))
      assert.equal(get(await deployment(m), 'metadata.labels.release'), 'three', `${m} converged`);
  });
});

/** Paths where `want` (the render) is not what `got` (the live object) holds; server defaults are ignored. */
function mismatches(want: unknown, got: unknown, path = ''): string[] {
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length)
      return [`${path}: ${JSON.stringify(got)} is not a list of ${want.length}`];
    return want.flatMap((w, i) => mismatches(w, got[i], `${path}[${i}]`));
  }
  if (want && typeof want === 'object') {
    if (!got || typeof got !== 'object') return [`${path}: missing`];
    return Object.entries(want).flatMap(([k, v]) => mismatches(v, (got as Obj)[k], `${path}.${k}`));
  }
  return want === got ? [] : [`${path}: want ${JSON.stringify(want)}, got ${JSON.stringify(got)}`];
}
