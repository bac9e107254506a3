// `npm run bench:ui`: the ui page at 5,000 templates × 20 clusters (a synthetic fleet served by the real
// ui server) in headless Chromium: time to first contentful paint, time until the matrix shows its rows,
// JS heap and DOM size after load, and after scrolling to the bottom. Prints the figures (median of
// RUNS loads, each in a fresh browser context).

import { UiServer } from '../../pkg/ui/server.js';
import { launchChromium, waitInPage } from '../browser/chromium.js';
import { SyntheticFleet } from '../ui-synthetic.js';

const TEMPLATES = Number(process.env.TEMPLATES ?? 5000);
const CLUSTERS = Number(process.env.CLUSTERS ?? 20);
const RUNS = Number(process.env.RUNS ?? 5);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const mib = (b: number) => (b / 1024 / 1024).toFixed(1);

const fleet = new SyntheticFleet(TEMPLATES, CLUSTERS);
const stop = new AbortController();
const server = new UiServer({ view: fleet, host: '127.0.0.1', port: 0 });
const { port } = await server.start(stop.signal);
const url = `http://127.0.0.1:${port}/#/matrix`;
const snapshotBytes = JSON.stringify(fleet.snapshot()).length;
const browser = await launchChromium();
const fcp: number[] = [];
const rowsShown: number[] = [];
const heap: number[] = [];
const heapScrolled: number[] = [];
const nodes: number[] = [];
try {
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const t0 = Date.now();
    await page.goto(url);
    await page.waitForSelector('[data-row-id]', { timeout: 120_000 });
    rowsShown.push(Date.now() - t0);
    fcp.push(
      await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN),
    );
    const metrics = async () =>
      Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value])) as Record<
        string,
        number
      >;
    await cdp.send('HeapProfiler.collectGarbage');
    const m = await metrics();
    heap.push(m.JSHeapUsedSize ?? NaN);
    nodes.push(m.Nodes ?? NaN);
    // Page-side code as text: this file is compiled for Node, without the DOM's types.
    const first = await page.getAttribute('[data-row-id]', 'data-row-id');
    await page.evaluate("document.querySelector('[data-testid=matrix]').scrollTop = 1e9");
    await waitInPage(
      page,
      `document.querySelector('[data-row-id]')?.dataset.rowId !== ${JSON.stringify(first)}`,
      60_000,
    );
    await cdp.send('HeapProfiler.collectGarbage');
    heapScrolled.push((await metrics()).JSHeapUsedSize ?? NaN);
    await context.close();
  }
} finally {
  await browser.close();
  stop.abort();
}
console.log(
  `ui page, ${TEMPLATES} templates × ${CLUSTERS} clusters (snapshot ${mib(snapshotBytes)} MiB JSON), ${RUNS} loads, median:`,
);
console.log(`  first contentful paint      ${median(fcp).toFixed(0)} ms`);
console.log(
  `  matrix rows shown           ${median(rowsShown).toFixed(0)} ms (navigation start to first row in the DOM)`,
);
console.log(`  JS heap after load          ${mib(median(heap))} MiB`);
console.log(`  JS heap after scrolling     ${mib(median(heapScrolled))} MiB`);
console.log(`  DOM nodes after load        ${median(nodes).toFixed(0)}`);
