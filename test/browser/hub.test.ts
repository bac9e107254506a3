// `flotilla ui` against a real hub with two members (eu-west, us-east: the quickstart deployed as
// README's "Deploy to your clusters" does, by the controller), in headless Chromium: the matrix shows the
// quickstart's placement as the bindings say it; an edit on the hub appears without a reload; a Conflict
// cell names the other writer; the template view shows the override from the quickstart's
// OverridePolicy; hostile text (a field manager named like a script tag, an annotation value) renders as
// text. Writes a screenshot of each view to docs/images/.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

import type { Browser, Page } from 'playwright-core';
import { parseAllDocuments } from 'yaml';

import { convertObject, V1BETA1 } from '../../api/conversion/index.js';
import { run } from '../../pkg/cli/index.js';
import type { KubeClient } from '../../pkg/kube/client.js';
import { templateId } from '../../pkg/ui/shared/model.js';
import { kubectl } from '../envtest/kubectl.js';
import { useEnvironment } from '../envtest/suite.js';
import { eventually } from '../eventually.js';
import {
  applyObject,
  capturingIO,
  getObject,
  prepareHub,
  startController,
  type Obj,
} from '../integration/controller-io.js';
import { launchChromium, waitInPage } from './chromium.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SHOTS = join(ROOT, 'docs', 'images');
const WAIT_MS = 90_000;
/** A field manager and an annotation value a hostile writer could choose; both reach the page. */
const HOSTILE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">';
const WEB = templateId({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' });

const docs = (file: string): Obj[] =>
  parseAllDocuments(readFileSync(join(ROOT, file), 'utf8')).map((d) => d.toJS() as Obj);
const css = (s: string) => JSON.stringify(s);

void describe('flotilla ui in Chromium, on a hub with two members', () => {
  const env = useEnvironment({ members: 2 });
  const stop = new AbortController();
  let hub: KubeClient;
  let members: KubeClient[];
  let controller: Promise<number>;
  let ui: Promise<number>;
  let controllerIO: ReturnType<typeof capturingIO>;
  let uiErr = '';
  let browser: Browser;
  let page: Page;
  let base = '';
  const pageErrors: string[] = [];

  const cell = (id: string, cluster: string) => page.locator(`[data-row-id=${css(id)}] [data-cluster=${css(cluster)}]`);
  /** Waits until the cell says `state` (page-side code as text: this file has Node's types, not the DOM's). */
  const waitState = (id: string, cluster: string, state: string) =>
    waitInPage(
      page,
      `document.querySelector(${JSON.stringify(`[data-row-id=${css(id)}] [data-cluster=${css(cluster)}]`)})?.dataset.state === ${JSON.stringify(state)}`,
      WAIT_MS,
    );
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `ui-${name}.png`) });

  before(async () => {
    const e = env();
    ({ hub, members } = await prepareHub(e, 'shop'));
    // The members as contexts named after the quickstart's Clusters.
    const kubeconfig = join(e.dir, 'fleet.kubeconfig');
    writeFileSync(
      kubeconfig,
      readFileSync(e.membersKubeconfigPath, 'utf8')
        .replace(/member1/g, 'eu-west')
        .replace(/member2/g, 'us-east'),
      { mode: 0o600 },
    );
    // us-east already holds shop/web, written by someone else: the controller must leave it (Conflict).
    const usEast = members[1] as KubeClient;
    const r = await usEast.request({
      method: 'PATCH',
      path: '/apis/apps/v1/namespaces/shop/deployments/web',
      query: { fieldManager: HOSTILE },
      contentType: 'application/apply-patch+yaml',
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'shop' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
        },
      },
    });
    assert.ok(r.status < 300, `pre-create on us-east: HTTP ${r.status}`);
    const policies = [...docs('examples/quickstart/propagation.yaml'), ...docs('examples/quickstart/overrides.yaml')];
    const templates = docs('examples/quickstart/templates.yaml');
    const web = templates.find((t) => t.kind === 'Deployment') as Obj;
    ((web.metadata as Obj).annotations as Obj | undefined) ??= {};
    ((web.metadata as Obj).annotations as Obj)['example.com/note'] = HOSTILE;
    const applied = await kubectl(e.hub.kubeconfigPath, ['apply', '--server-side', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [...docs('examples/fleet/clusters.yaml'), ...templates, ...policies.map((p) => convertObject(p, V1BETA1))],
    });
    assert.equal(applied.status, 0, applied.stderr);

    controllerIO = capturingIO(stop.signal);
    controller = startController(e.hub, kubeconfig, controllerIO);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    stderr.on('data', (c: Buffer) => (uiErr += c.toString()));
    const serving = new Promise<string>((resolve) => {
      let out = '';
      stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /Serving the fleet on (http:\/\/\S+?)\//.exec(out);
        if (m?.[1]) resolve(m[1]);
      });
    });
    ui = run(['ui', '--kubeconfig', e.hub.kubeconfigPath, '--address', '127.0.0.1:0'], {
      stdout,
      stderr,
      stdin: new PassThrough(),
      env: {},
      signal: stop.signal,
    });
    base = await Promise.race([
      serving,
      ui.then((code) => Promise.reject(new Error(`flotilla ui exited ${code}: ${uiErr}`))),
    ]);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(m.text());
    });
    mkdirSync(SHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    stop.abort();
    assert.equal(await controller, 0, controllerIO.err());
    assert.equal(await ui, 0, uiErr);
  });

  void it("shows the quickstart's placement as the bindings say it", async () => {
    await page.goto(`${base}/#/matrix`);
    const binding = (name: string) =>
      eventually(
        () => getObject(hub, `/apis/work.flotilla.io/v1alpha1/namespaces/shop/resourcebindings/${name}`),
        (b) => ((b?.status as Obj | undefined)?.clusters as Obj[] | undefined)?.length === 2,
        WAIT_MS,
        500,
      );
    const b = await binding('web-deployment');
    for (const c of (b?.status as Obj).clusters as Obj[]) {
      const shown = cell(WEB, String(c.name));
      await shown.waitFor({ timeout: WAIT_MS });
      await waitState(WEB, String(c.name), String(c.state));
      if (c.replicas !== undefined)
        assert.match((await shown.textContent()) ?? '', new RegExp(`×${Number(c.replicas)}`));
    }
    assert.equal(await cell(WEB, 'eu-west').getAttribute('data-state'), 'Applied');
    await shot('matrix');
  });

  void it('names the other writer in a Conflict cell, as text', async () => {
    const conflict = cell(WEB, 'us-east');
    await waitState(WEB, 'us-east', 'Conflict');
    assert.ok(((await conflict.textContent()) ?? '').includes(HOSTILE), (await conflict.textContent()) ?? '');
    assert.equal(await page.evaluate('window.pwned'), undefined);
    assert.equal(await page.locator('main script, main img').count(), 0);
  });

  void it('follows an edit on the hub without a reload', async () => {
    await page.evaluate('window.marker = 1');
    await applyObject(hub, '/api/v1/namespaces/shop/configmaps/live-edit', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'live-edit', namespace: 'shop', labels: { 'platform.example.com/shared': 'true' } },
      data: { a: 'b' },
    });
    const id = templateId({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'live-edit' });
    await cell(id, 'eu-west').waitFor({ timeout: WAIT_MS });
    assert.equal(await page.evaluate('window.marker'), 1, 'the page was not reloaded');
  });

  void it("shows each cluster's copy as a diff, with the quickstart's OverridePolicy behind the image", async () => {
    await page.goto(`${base}/#/template?id=${encodeURIComponent(WEB)}`);
    await page.locator('[data-copy="eu-west"]').waitFor({ timeout: WAIT_MS });
    const rows = await page.locator('[data-copy="eu-west"] tr[data-path]').allTextContents();
    const imageRow = rows.find((t) => t.includes('mirror.eu-west-1.example.com'));
    assert.ok(imageRow, `a changed field names the region mirror: ${rows.join('\n')}`);
    assert.match(imageRow, /OverridePolicy shop\/web-images/);
    assert.ok(
      ((await page.locator('details pre').textContent()) ?? '').includes(HOSTILE),
      'the annotation shows as text',
    );
    assert.equal(await page.evaluate('window.pwned'), undefined);
    await shot('template');
  });

  void it('shows the clusters and policies', async () => {
    await page.goto(`${base}/#/clusters`);
    await page.locator('[data-testid=clusters] tr[data-cluster="us-east"]').waitFor({ timeout: WAIT_MS });
    assert.match((await page.locator('tr[data-cluster="eu-west"]').textContent()) ?? '', /env=prod/);
    await shot('clusters');
    await page.goto(`${base}/#/policies`);
    await page.locator('[data-testid=policies] tr[data-policy="web-images"]').waitFor({ timeout: WAIT_MS });
    await shot('policies');
  });

  void it('ran without script errors or CSP violations', () => {
    assert.deepEqual(pageErrors, []);
  });
});
