// The ui page in headless Chromium against the real ui server, fed by a synthetic fleet: the matrix stays
// virtualised at 5,000 templates × 20 clusters, follows changes without a reload, filters, and shows
// hostile names as text.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import { templateId, type UiTemplateRow } from '../../pkg/ui/shared/model.js';
import { UiServer } from '../../pkg/ui/server.js';
import { SyntheticFleet } from '../ui-synthetic.js';
import { launchChromium, waitInPage } from './chromium.js';

const HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';

void describe('ui page in Chromium (synthetic fleet, 5,000 × 20)', () => {
  const fleet = new SyntheticFleet(5000, 20);
  const stop = new AbortController();
  let browser: Browser;
  let page: Page;
  let base = '';
  const errors: string[] = [];

  before(async () => {
    const { port } = await new UiServer({ view: fleet, host: '127.0.0.1', port: 0 }).start(stop.signal);
    base = `http://127.0.0.1:${port}`;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${base}/#/matrix`);
    await page.waitForSelector('[data-row-id]', { timeout: 60_000 });
  });
  after(async () => {
    await browser?.close();
    stop.abort();
  });

  void it('draws only the rows in view, and others when scrolled to', async () => {
    assert.match((await page.textContent('.count')) ?? '', /^5000 of 5000 templates$/);
    const drawn = await page.locator('[data-row-id]').count();
    assert.ok(drawn > 10 && drawn < 100, `${drawn} rows in the DOM`);
    const first = await page.getAttribute('[data-row-id]', 'data-row-id');
    await page.evaluate("document.querySelector('[data-testid=matrix]').scrollTop = 1e9");
    await waitInPage(
      page,
      `document.querySelector('[data-row-id]')?.dataset.rowId !== ${JSON.stringify(first)}`,
      30_000,
    );
    assert.ok((await page.locator('[data-row-id]').count()) < 100);
  });

  void it('follows a change without a reload, and shows hostile names as text', async () => {
    await page.evaluate("document.querySelector('[data-testid=matrix]').scrollTop = 0");
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a-first', name: HOSTILE };
    const row: UiTemplateRow = {
      id: templateId(ref),
      ...ref,
      cells: { 'member-00': { state: 'Conflict', writer: HOSTILE } },
    };
    await page.evaluate('window.marker = 1');
    fleet.put(row);
    const cell = page.locator(`[data-row-id="${row.id.replace(/["\\]/g, '\\$&')}"] [data-cluster="member-00"]`);
    await cell.waitFor({ timeout: 30_000 });
    assert.equal(await cell.textContent(), `Conflict · ${HOSTILE}`);
    assert.equal(await page.evaluate('window.marker'), 1, 'the page was not reloaded');
    assert.equal(await page.evaluate('window.pwned'), undefined);
    assert.equal(await page.locator('[data-testid=matrix] img, [data-testid=matrix] script').count(), 0);
  });

  void it('filters by state and cluster', async () => {
    await page.selectOption('[data-filter=cluster]', 'member-03');
    await page.selectOption('[data-filter=state]', 'Conflict');
    // The cluster filter alone draws member-03's cells in every state: wait until the state filter has
    // redrawn the rows (a cell of another state left means it has not yet, or did not filter).
    await waitInPage(
      page,
      "(() => { const c = [...document.querySelectorAll('[data-row-id] [data-cluster]')]; return c.length > 0 && c.every((e) => e.dataset.state === 'Conflict'); })()",
      30_000,
    );
    const states: string[] = await page.evaluate(
      "[...document.querySelectorAll('[data-row-id] [data-cluster]')].map((e) => e.dataset.cluster + '=' + e.dataset.state)",
    );
    assert.ok(states.length > 0);
    assert.deepEqual([...new Set(states)], ['member-03=Conflict']);
    assert.match(page.url(), /cluster=member-03/);
  });

  void it('loads without script errors or CSP violations', () => {
    assert.deepEqual(errors, []);
  });

  // Last: the refusals below are reported on the console, which the test above checks is clean.
  void it('runs under its Content-Security-Policy: no inline script, no inline event handler', async () => {
    const tried = await page.evaluate(`new Promise((resolve) => {
      const s = document.createElement('script');
      s.textContent = 'window.inlineRan = true';
      document.body.appendChild(s);
      const img = document.createElement('img');
      img.setAttribute('onerror', 'window.handlerRan = true');
      img.addEventListener('error', () => setTimeout(() => resolve([!!window.inlineRan, !!window.handlerRan]), 50));
      img.src = '/nope.png';
      document.body.appendChild(img);
    })`);
    assert.deepEqual(tried, [false, false]);
  });
});
