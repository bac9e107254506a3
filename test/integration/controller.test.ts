// `flotilla controller` against real apiservers: a hub holding Flotilla's CRDs, templates and policies, and
// two members reached through one kubeconfig (contexts member1, member2). The controller runs in this
// process through the CLI entry, as `flotilla controller --kubeconfig HUB --members-kubeconfig MEMBERS`.
// The steps build on each other, as a platform team's day would: propagate, edit overrides, drift,
// untarget, conflicts, status, delete.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { customResourceDefinitions } from '../../api/crds/index.js';
import { render } from '../../pkg/engine/index.js';
import { run } from '../../pkg/cli/index.js';
import { KubeClient } from '../../pkg/kube/client.js';
import { applyManifests, type ClusterHandle } from '../envtest/index.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import { applyObject, capturingIO, getObject, installCRDs, type Obj, startController } from './controller-io.js';

const WAIT_MS = 30_000;
const POLICY = 'policy.flotilla.io/v1beta1';

const deployment = (replicas = 2, image = 'registry.example/shop/web:1.0'): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
  spec: {
    replicas,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image }] } },
  },
});
const configMap = (name: string, data: Record<string, string>): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'shop' },
  data,
});
const propagation = (clusters: string[], conflictResolution = 'Abort'): Obj => ({
  apiVersion: POLICY,
  kind: 'PropagationPolicy',
  metadata: { name: 'web', namespace: 'shop' },
  spec: {
    resourceSelectors: [
      { apiVersion: 'apps/v1', kind: 'Deployment' },
      { apiVersion: 'v1', kind: 'ConfigMap' },
    ],
    placement: { clusterAffinity: { clusterNames: clusters } },
    conflictResolution,
  },
});
const overrides = (tag: string, extraLabel?: string): Obj => ({
  apiVersion: POLICY,
  kind: 'OverridePolicy',
  metadata: { name: 'web', namespace: 'shop' },
  spec: {
    resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
    overrideRules: [
      {
        targetCluster: { clusterNames: ['member1'] },
        overriders: { imageOverrider: [{ component: 'Tag', operator: 'replace', value: tag }] },
      },
      ...(extraLabel
        ? [
            {
              targetCluster: { clusterNames: ['member2'] },
              overriders: { labelsOverrider: [{ operator: 'add', value: { tier: extraLabel } }] },
            },
          ]
        : []),
    ],
  },
});

/** An OverridePolicy in shop with one plaintext override on ConfigMaps (all, or the one named), for one cluster or all. */
const plaintextOverride = (name: string, plaintext: Obj, only: { configMap?: string; cluster?: string } = {}): Obj => ({
  apiVersion: POLICY,
  kind: 'OverridePolicy',
  metadata: { name, namespace: 'shop' },
  spec: {
    resourceSelectors: [{ apiVersion: 'v1', kind: 'ConfigMap', ...(only.configMap ? { name: only.configMap } : {}) }],
    overrideRules: [
      {
        ...(only.cluster ? { targetCluster: { clusterNames: [only.cluster] } } : {}),
        overriders: { plaintext: [plaintext] },
      },
    ],
  },
});
const OVERRIDE_POLICY = (name: string) => `/apis/policy.flotilla.io/v1beta1/namespaces/shop/overridepolicies/${name}`;

/** True when every field of `want` has the same value in `have` (lists compared item by item). */
function contains(have: unknown, want: unknown): boolean {
  if (Array.isArray(want))
    return Array.isArray(have) && want.length === have.length && want.every((w, i) => contains(have[i], w));
  if (want !== null && typeof want === 'object') {
    if (have === null || typeof have !== 'object') return false;
    return Object.entries(want).every(([k, v]) => contains((have as Obj)[k], v));
  }
  return have === want;
}

void describe('flotilla controller: hub to two members', () => {
  const env = useEnvironment({ members: 2 });
  const client = (c: ClusterHandle) => new KubeClient(c.kubeConfig(), { concurrency: 4 });
  let hub: KubeClient;
  let m1: KubeClient;
  let m2: KubeClient;
  const stop = new AbortController();
  let controller: Promise<number>;
  let out: ReturnType<typeof capturingIO>;

  const get = getObject;
  const apply = applyObject;
  const DEPLOY = '/apis/apps/v1/namespaces/shop/deployments/web';
  const CM = (name: string) => `/api/v1/namespaces/shop/configmaps/${name}`;
  const PP = '/apis/policy.flotilla.io/v1beta1/namespaces/shop/propagationpolicies/web';
  const OP = OVERRIDE_POLICY('web');
  const BINDING = (name: string) => `/apis/work.flotilla.io/v1alpha1/namespaces/shop/resourcebindings/${name}`;
  /** Waits until `probe` gives a value that `done` accepts; returns it for the assertion. */
  const until = <T>(probe: () => Promise<T>, done: (v: T) => boolean) => eventually(probe, done, WAIT_MS, 100);
  /** Events about the templates named `name` in namespace shop. */
  const events = async (name: string): Promise<Obj[]> => {
    const r = await hub.request<{ items: Obj[] }>({
      method: 'GET',
      path: '/api/v1/namespaces/shop/events',
      query: { fieldSelector: `involvedObject.name=${name}` },
    });
    return r.body?.items ?? [];
  };
  const image = (d: Obj | undefined) =>
    (
      (((d?.spec as Obj | undefined)?.template as Obj | undefined)?.spec as Obj | undefined)?.containers as
        Obj[] | undefined
    )?.[0]?.image;

  before(async () => {
    const e = env();
    hub = client(e.hub);
    m1 = client(e.members[0] as ClusterHandle);
    m2 = client(e.members[1] as ClusterHandle);
    const crds = customResourceDefinitions();
    await installCRDs(e.hub, crds);
    await applyManifests(e.hub, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }]);
    await apply(hub, DEPLOY, deployment());
    await apply(hub, CM('web-config'), configMap('web-config', { mode: 'hub' }));
    await apply(hub, PP, propagation(['member1', 'member2']));
    await apply(hub, OP, overrides('1.1'));
    out = capturingIO(stop.signal);
    controller = startController(e.hub, e.membersKubeconfigPath, out, ['--log-level', 'debug']);
  });

  after(async () => {
    if (process.env.FLOTILLA_CONTROLLER_LOG)
      (await import('node:fs')).writeFileSync(process.env.FLOTILLA_CONTROLLER_LOG, out.err());
    stop.abort();
    assert.equal(await controller, 0, out.err());
    assert.ok(
      !/BEGIN (RSA |EC )?PRIVATE KEY|client-key-data: [A-Za-z0-9]/.test(out.err()),
      'no credentials in the logs',
    );
  });

  void it('puts on each member exactly what render() predicts for the same objects, overrides included', async () => {
    const objects = [
      deployment(),
      configMap('web-config', { mode: 'hub' }),
      propagation(['member1', 'member2']),
      overrides('1.1'),
      ...['member1', 'member2'].map((name) => ({
        apiVersion: 'cluster.flotilla.io/v1alpha1',
        kind: 'Cluster',
        metadata: { name },
      })),
    ];
    const predicted = render({ objects });
    assert.deepEqual(predicted.errors, []);
    assert.equal(predicted.placements.length, 4);
    for (const p of predicted.placements) {
      const c = p.cluster === 'member1' ? m1 : m2;
      const path = p.object.kind === 'Deployment' ? DEPLOY : CM('web-config');
      const live = await until(
        () => get(c, path),
        (o) => o !== undefined && contains(o, p.object),
      );
      assert.ok(
        live && contains(live, p.object),
        `${p.cluster} ${path}: ${JSON.stringify(live)} does not hold ${JSON.stringify(p.object)}`,
      );
    }
    assert.equal(image(await get(m1, DEPLOY)), 'registry.example/shop/web:1.1');
    assert.equal(image(await get(m2, DEPLOY)), 'registry.example/shop/web:1.0');
    const template = await get(hub, DEPLOY);
    assert.ok(
      ((template?.metadata as Obj).finalizers as string[]).includes('flotilla.io/member-cleanup'),
      'the template carries the cleanup finalizer',
    );
  });

  void it('writes a ResourceBinding per template with the policy and the clusters Applied', async () => {
    const b = await until(
      () => get(hub, BINDING('web-deployment')),
      (o) =>
        ((o?.status as Obj | undefined)?.clusters as Obj[] | undefined)?.filter((c) => c.state === 'Applied').length ===
        2,
    );
    assert.deepEqual((b?.spec as Obj).policy, { kind: 'PropagationPolicy', namespace: 'shop', name: 'web' });
    assert.deepEqual(((b?.spec as Obj).clusters as Obj[]).map((c) => c.name).sort(), ['member1', 'member2']);
    // A delivery that went as planned writes no Event (the binding says it); only what needs a look does.
    const es = await events('web');
    assert.deepEqual(
      es.filter((e) => (e.involvedObject as Obj).kind === 'Deployment').map((e) => e.reason),
      [],
    );
    // Each member's object is the controller's, under its own field manager.
    const managers = (((await get(m1, DEPLOY))?.metadata as Obj).managedFields as Obj[]).map((m) => m.manager);
    assert.ok(managers.includes('flotilla-controller'), managers.join(', '));
    assert.ok(!managers.includes('flotilla'), managers.join(', '));
  });

  void it('meets flotilla apply on one object as a conflict naming the other writer, both ways round', async () => {
    const e = env();
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-side-'));
    const cliPolicy = {
      apiVersion: 'policy.flotilla.io/v1alpha1',
      kind: 'PropagationPolicy',
      metadata: { name: 'side', namespace: 'shop' },
      spec: {
        resourceSelectors: [
          { apiVersion: 'apps/v1', kind: 'Deployment' },
          { apiVersion: 'v1', kind: 'ConfigMap' },
        ],
        placement: { clusterAffinity: { clusterNames: ['member1'] } },
      },
    };
    const cli = async (objects: Obj[]) => {
      writeFileSync(join(dir, 'input.yaml'), objects.map((o) => JSON.stringify(o)).join('\n---\n'));
      const io = capturingIO(new AbortController().signal);
      const code = await run(
        [
          'apply',
          '-f',
          join(dir, 'input.yaml'),
          '--kubeconfig',
          e.membersKubeconfigPath,
          '--context',
          'member1',
          '--applyset',
          'side',
        ],
        io,
      );
      return { code, err: io.err() };
    };
    // The controller's object, applied by the command line: left alone, the controller named.
    const before = image(await get(m1, DEPLOY));
    const fromCli = await cli([deployment(2, 'registry.example/shop/web:cli'), cliPolicy]);
    assert.equal(fromCli.code, 1, fromCli.err);
    assert.match(
      fromCli.err,
      /conflict: member1: Deployment\.apps shop\/web: already exists on the member and is not part of this apply set \(it is the flotilla controller's copy of apps\/v1\/Deployment shop\/web\)/,
    );
    assert.equal(image(await get(m1, DEPLOY)), before, "the controller's copy is unchanged");

    // The command line's object, then a template of that name on the hub: a Conflict naming the apply set.
    const cliOnly = { ...configMap('side-cm', { from: 'cli' }) };
    const applied = await cli([cliOnly, cliPolicy]);
    assert.equal(applied.code, 0, applied.err);
    await apply(hub, CM('side-cm'), configMap('side-cm', { from: 'hub' }));
    const b = await until(
      () => get(hub, BINDING('side-cm-configmap')),
      (o) =>
        ((o?.status as Obj | undefined)?.clusters as Obj[] | undefined)?.some(
          (c) => c.name === 'member1' && c.state === 'Conflict',
        ) === true,
    );
    const line = ((b?.status as Obj).clusters as Obj[]).find((c) => c.name === 'member1');
    assert.match(
      String(line?.message),
      /not the controller's \(it belongs to apply set applyset-[^ ]+ \(flotilla apply\)\)/,
    );
    assert.equal(((await get(m1, CM('side-cm')))?.data as Obj).from, 'cli', "the command line's copy is unchanged");
    assert.equal(
      (
        (
          await until(
            () => get(m2, CM('side-cm')),
            (o) => o !== undefined,
          )
        )?.data as Obj
      ).from,
      'hub',
    );
    assert.ok((await hub.request({ method: 'DELETE', path: CM('side-cm') })).status < 300);
    await until(
      () => get(hub, CM('side-cm')),
      (o) => o === undefined,
    );
  });

  void it('follows an OverridePolicy edit, and gives a field back when its rule is removed', async () => {
    await apply(hub, OP, overrides('1.2', 'frontend'));
    assert.equal(
      image(
        await until(
          () => get(m1, DEPLOY),
          (o) => image(o) === 'registry.example/shop/web:1.2',
        ),
      ),
      'registry.example/shop/web:1.2',
    );
    const labelled = await until(
      () => get(m2, DEPLOY),
      (o) => ((o?.metadata as Obj | undefined)?.labels as Obj | undefined)?.tier === 'frontend',
    );
    assert.equal(((labelled?.metadata as Obj).labels as Obj).tier, 'frontend');
    await apply(hub, OP, overrides('1.2'));
    const back = await until(
      () => get(m2, DEPLOY),
      (o) => o !== undefined && ((o.metadata as Obj).labels as Obj).tier === undefined,
    );
    assert.equal(((back?.metadata as Obj).labels as Obj).tier, undefined, 'the label goes when its rule goes');
  });

  void it('follows a template edit', async () => {
    await apply(hub, CM('web-config'), configMap('web-config', { mode: 'edited' }));
    for (const c of [m1, m2]) {
      const cm = await until(
        () => get(c, CM('web-config')),
        (o) => (o?.data as Obj | undefined)?.mode === 'edited',
      );
      assert.equal((cm?.data as Obj).mode, 'edited');
    }
  });

  void it('puts back what someone changed or deleted on a member (drift)', async () => {
    const started = Date.now();
    const r = await m1.request({
      method: 'PATCH',
      path: CM('web-config'),
      contentType: 'application/merge-patch+json',
      body: { data: { mode: 'hand-edited' } },
    });
    assert.equal(r.status, 200);
    const fixed = await until(
      () => get(m1, CM('web-config')),
      (o) => (o?.data as Obj | undefined)?.mode === 'edited',
    );
    assert.equal((fixed?.data as Obj).mode, 'edited');
    await m2.request({ method: 'DELETE', path: CM('web-config') });
    const again = await until(
      () => get(m2, CM('web-config')),
      (o) => o !== undefined && (o.metadata as Obj).deletionTimestamp === undefined,
    );
    assert.ok(again, 'recreated on member2');
    assert.ok(Date.now() - started < 15_000, `drift corrected in ${Date.now() - started} ms`);
  });

  void it('reports READY from the member Deployment status', async () => {
    // No kube-controller-manager runs on the members: play its part, writing a ready status for whatever
    // generation each member Deployment is at, as often as it changes.
    const markReady = async () => {
      for (const c of [m1, m2]) {
        const d = await get(c, DEPLOY);
        const generation = (d?.metadata as Obj | undefined)?.generation;
        if (!d || (d.status as Obj | undefined)?.observedGeneration === generation) continue;
        const replicas = (d.spec as Obj).replicas as number;
        const r = await c.request({
          method: 'PATCH',
          path: `${DEPLOY}/status`,
          contentType: 'application/merge-patch+json',
          body: {
            status: {
              observedGeneration: generation,
              replicas,
              readyReplicas: replicas,
              availableReplicas: replicas,
              updatedReplicas: replicas,
            },
          },
        });
        assert.equal(r.status, 200);
      }
    };
    // A status change on a member is read at the template's next reconcile: the status events enqueue it.
    const b = await until(
      async () => {
        await markReady();
        return get(hub, BINDING('web-deployment'));
      },
      (o) => (o?.status as Obj | undefined)?.ready === '2/2',
    );
    assert.equal((b?.status as Obj).ready, '2/2', JSON.stringify((b?.status as Obj).clusters));
  });

  void it('says on each policy how many templates it claims, which fail to render, and when it is not used', async () => {
    const status = (o: Obj | undefined) => (o?.status as Obj | undefined) ?? {};
    const ready = (o: Obj | undefined) =>
      ((status(o).conditions as Obj[] | undefined) ?? []).find((c) => c.type === 'Ready');
    const pp = await until(
      () => get(hub, PP),
      (o) => status(o).templates === 2 && ready(o)?.status === 'True',
    );
    assert.deepEqual(
      { ...ready(pp), lastTransitionTime: undefined },
      {
        type: 'Ready',
        status: 'True',
        reason: 'Claimed',
        message: 'claims 2 templates; all render',
        observedGeneration: (pp?.metadata as Obj).generation,
        lastTransitionTime: undefined,
      },
    );
    const op = await until(
      () => get(hub, OP),
      (o) => status(o).templates === 1,
    );
    assert.equal(ready(op)?.reason, 'Overriding');
    // kubectl get shows the count and the condition (the CRD's printer columns).
    const listed = await kubectl(env().hub.kubeconfigPath, [
      'get',
      'propagationpolicies',
      '-n',
      'shop',
      '--no-headers',
    ]);
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(
      listed.stdout,
      /^web\s+Abort\s+\S+\s+2\s+True\s+\S+\s*$/,
      'NAME CONFLICT-RESOLUTION PRIORITY TEMPLATES READY AGE',
    );

    // A rule that cannot apply to the ConfigMap: a render error on both the override and the propagation policy.
    const BROKEN = OVERRIDE_POLICY('broken');
    await apply(
      hub,
      BROKEN,
      plaintextOverride(
        'broken',
        { path: '/data/absent/deeper', operator: 'replace', value: 'x' },
        { configMap: 'web-config', cluster: 'member1' },
      ),
    );
    const failing = await until(
      () => get(hub, PP),
      (o) => ready(o)?.reason === 'RenderErrors',
    );
    assert.equal(status(failing).failedTemplates, 1);
    assert.match(
      String(ready(failing)?.message),
      /^1 of 2 templates cannot be rendered: v1\/ConfigMap shop\/web-config on member1: OverridePolicy shop\/broken: spec\.overrideRules\[0\]\.overriders\.plaintext\[0\]/,
    );
    const broken = await until(
      () => get(hub, BROKEN),
      (o) => ready(o)?.reason === 'RenderErrors',
    );
    assert.deepEqual(
      [status(broken).templates, status(broken).failedTemplates, ready(broken)?.status],
      [1, 1, 'False'],
    );
    const failedBinding = await until(
      () => get(hub, BINDING('web-config-configmap')),
      (o) =>
        ((o?.status as Obj | undefined)?.clusters as Obj[] | undefined)?.some(
          (c) => c.name === 'member1' && c.state === 'Failed',
        ) === true,
    );
    assert.ok(failedBinding, 'the binding says the render failed on member1');
    assert.equal(
      ((await get(m1, CM('web-config')))?.data as Obj | undefined)?.mode,
      'edited',
      'a render that fails on a member leaves what the member has',
    );

    // A policy the engine refuses (what the webhook would have denied): said on the policy, not only in the log.
    const INVALID = OVERRIDE_POLICY('invalid');
    await apply(hub, INVALID, plaintextOverride('invalid', { path: 'data/mode', operator: 'replace', value: 'x' }));
    const invalid = await until(
      () => get(hub, INVALID),
      (o) => ready(o)?.reason === 'Invalid',
    );
    assert.equal(ready(invalid)?.status, 'False');
    assert.match(String(ready(invalid)?.message), /^not used: .*plaintext\[0\]\.path: Invalid value: "data\/mode"/);

    for (const path of [BROKEN, INVALID]) assert.ok((await hub.request({ method: 'DELETE', path })).status < 300);
    const fixed = await until(
      () => get(hub, PP),
      (o) => ready(o)?.reason === 'Claimed',
    );
    assert.deepEqual([status(fixed).templates, status(fixed).failedTemplates], [2, 0]);
  });

  void it('moves an object an override renames, and moves it back when the override goes', async () => {
    const RENAME = OVERRIDE_POLICY('rename');
    await apply(
      hub,
      RENAME,
      plaintextOverride(
        'rename',
        { path: '/metadata/name', operator: 'replace', value: 'web-config-east' },
        { configMap: 'web-config', cluster: 'member2' },
      ),
    );
    const moved = await until(
      () => get(m2, CM('web-config-east')),
      (o) => o !== undefined,
    );
    assert.equal((moved?.data as Obj).mode, 'edited');
    assert.equal(
      await until(
        () => get(m2, CM('web-config')),
        (o) => o === undefined,
      ),
      undefined,
      'the copy under the old name goes',
    );
    assert.ok(await get(m1, CM('web-config')), 'member1 keeps its name');
    const renamedEvent = (e: Obj) =>
      e.reason === 'Pruned' && String(e.message).startsWith('removed the previous copy from member2: ');
    const pruned = await until(
      () => events('web-config'),
      (es) => es.some(renamedEvent),
    );
    assert.ok(pruned.some(renamedEvent), JSON.stringify(pruned.map((e) => e.message)));

    assert.ok((await hub.request({ method: 'DELETE', path: RENAME })).status < 300);
    assert.ok(
      await until(
        () => get(m2, CM('web-config')),
        (o) => o !== undefined,
      ),
      'back under its own name',
    );
    assert.equal(
      await until(
        () => get(m2, CM('web-config-east')),
        (o) => o === undefined,
      ),
      undefined,
      'and the renamed copy goes',
    );
  });

  void it('removes the objects from a member the policy no longer targets, and keeps them on the other', async () => {
    await apply(hub, PP, propagation(['member1']));
    assert.equal(
      await until(
        () => get(m2, DEPLOY),
        (o) => o === undefined || (o.metadata as Obj).deletionTimestamp !== undefined,
      ).then((o) => o === undefined || (o.metadata as Obj).deletionTimestamp !== undefined),
      true,
    );
    assert.equal(
      await until(
        () => get(m2, CM('web-config')),
        (o) => o === undefined,
      ),
      undefined,
    );
    assert.ok(await get(m1, DEPLOY), 'still on member1');
  });

  void it('leaves a foreign object alone under Abort, reporting the conflict, and takes it under Overwrite', async () => {
    const foreign = configMap('settings', { owner: 'someone else' });
    const r = await m1.request({ method: 'POST', path: '/api/v1/namespaces/shop/configmaps', body: foreign });
    assert.equal(r.status, 201);
    await apply(hub, CM('settings'), configMap('settings', { owner: 'flotilla' }));
    const b = await until(
      () => get(hub, BINDING('settings-configmap')),
      (o) => ((o?.status as Obj | undefined)?.clusters as Obj[] | undefined)?.[0]?.state === 'Conflict',
    );
    assert.equal((((b?.status as Obj).clusters as Obj[])[0] as Obj).state, 'Conflict');
    assert.equal(((await get(m1, CM('settings')))?.data as Obj).owner, 'someone else', 'left alone');
    const warned = await until(
      () => events('settings'),
      (es) => es.some((e) => e.reason === 'Conflict'),
    );
    const conflict = warned.find((e) => e.reason === 'Conflict');
    assert.equal(conflict?.type, 'Warning');
    assert.match(
      String(conflict?.message),
      /^member1: ConfigMap shop\/settings already exists on the member and is not the controller's/,
    );
    await apply(hub, PP, propagation(['member1'], 'Overwrite'));
    const taken = await until(
      () => get(m1, CM('settings')),
      (o) => (o?.data as Obj | undefined)?.owner === 'flotilla',
    );
    assert.equal((taken?.data as Obj).owner, 'flotilla');
  });

  void it('keeps what a deleted policy propagated until a policy claims it again, and leaves templates no policy ever claimed alone', async () => {
    const claimed = (o: Obj | undefined) =>
      (((o?.status as Obj | undefined)?.conditions as Obj[] | undefined) ?? []).find((c) => c.type === 'Claimed');
    // A ConfigMap in a namespace no policy selects: the controller watches its kind but has nothing to say about it.
    await applyManifests(env().hub, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'elsewhere' } }]);
    await apply(hub, '/api/v1/namespaces/elsewhere/configmaps/loner', {
      ...configMap('loner', { a: 'b' }),
      metadata: { name: 'loner', namespace: 'elsewhere' },
    });

    assert.ok((await hub.request({ method: 'DELETE', path: PP })).status < 300);
    const unclaimed = await until(
      () => get(hub, BINDING('settings-configmap')),
      (o) => claimed(o)?.status === 'False',
    );
    assert.equal(claimed(unclaimed)?.reason, 'NoPolicy');
    assert.equal(
      ((await get(m1, CM('settings')))?.data as Obj | undefined)?.owner,
      'flotilla',
      'what was propagated stays',
    );
    assert.ok(await get(m1, DEPLOY), 'the Deployment stays on member1');

    const loner = await get(hub, '/api/v1/namespaces/elsewhere/configmaps/loner');
    assert.equal((loner?.metadata as Obj).finalizers, undefined, 'no finalizer on a template no policy claims');
    assert.equal(
      await get(hub, '/apis/work.flotilla.io/v1alpha1/namespaces/elsewhere/resourcebindings/loner-configmap'),
      undefined,
      'and no binding',
    );
    for (const c of [m1, m2]) assert.equal(await get(c, '/api/v1/namespaces/elsewhere/configmaps/loner'), undefined);

    await apply(hub, PP, propagation(['member1'], 'Overwrite'));
    const again = await until(
      () => get(hub, BINDING('settings-configmap')),
      (o) => claimed(o)?.status === 'True',
    );
    assert.equal(claimed(again)?.reason, 'Claimed');
  });

  void it('removes a deleted template from every member, then releases its finalizer', async () => {
    const r = await hub.request({ method: 'DELETE', path: DEPLOY });
    assert.ok(r.status < 300);
    assert.equal(
      await until(
        () => get(m1, DEPLOY),
        (o) => o === undefined || (o.metadata as Obj).deletionTimestamp !== undefined,
      ).then((o) => o === undefined || (o.metadata as Obj).deletionTimestamp !== undefined),
      true,
    );
    assert.equal(
      await until(
        () => get(hub, DEPLOY),
        (o) => o === undefined,
      ),
      undefined,
      'the template is gone: the finalizer was released',
    );
  });
});
