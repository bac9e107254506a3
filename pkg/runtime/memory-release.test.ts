import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

import { createLogger } from './log.js';
import { MemoryReleaser, releaseMemoryWhenQuiet, type MemoryProbe } from './memory-release.js';
import { Registry } from './metrics.js';

const MiB = 1024 * 1024;

function logged() {
  const stream = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  stream.on('data', (b: Buffer) => {
    for (const l of b.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
  });
  return { logger: createLogger({ level: 'debug', stream }), lines };
}

/** A process whose RSS, heap pages in use and event loop the test sets; a collection takes RSS to `after`. */
function fakeProbe(start: { rss: number; busy: number }) {
  const s = { ...start, heap: 0, after: start.rss, collections: 0, fail: undefined as Error | undefined };
  const probe: MemoryProbe = {
    rss: () => s.rss,
    outsideHeap: () => s.rss - s.heap,
    utilization: () => s.busy,
    collect: () => {
      s.collections++;
      if (s.fail) return Promise.reject(s.fail);
      s.rss = s.after;
      return Promise.resolve();
    },
  };
  return { s, probe };
}

void describe('MemoryReleaser', () => {
  void it('collects once the process is quiet and RSS outside the heap has grown by the threshold, then measures growth from what is left', async () => {
    const { logger, lines } = logged();
    const registry = new Registry();
    const releases = registry.counter('flotilla_memory_releases_total', 'releases');
    const { s, probe } = fakeProbe({ rss: 100 * MiB, busy: 0.01 });
    const r = new MemoryReleaser({ logger, releases, growthBytes: 16 * MiB, quietUtilization: 0.1 }, probe);
    assert.equal(await r.tick(), false, 'the first look sets the mark');
    s.rss = 115 * MiB;
    assert.equal(await r.tick(), false, 'grown by less than the threshold');
    s.rss = 176 * MiB;
    s.after = 120 * MiB;
    assert.equal(await r.tick(), true);
    assert.equal(s.collections, 1);
    assert.equal(releases.get(), 1);
    s.rss = 130 * MiB; // grown from 120, not from 100
    assert.equal(await r.tick(), false);
    s.rss = 137 * MiB;
    s.after = 121 * MiB;
    assert.equal(await r.tick(), true);
    assert.equal(s.collections, 2);
    const entries = lines.filter((l) => l.msg === 'gave memory back to the system');
    assert.deepEqual(
      entries.map((l) => [l.rssBeforeMiB, l.rssAfterMiB]),
      [
        [176, 120],
        [137, 121],
      ],
    );
  });

  void it('does not collect while the event loop is busy, however much RSS grew', async () => {
    const { logger } = logged();
    const { s, probe } = fakeProbe({ rss: 100 * MiB, busy: 0.5 });
    const r = new MemoryReleaser({ logger, quietUtilization: 0.1 }, probe);
    await r.tick();
    s.rss = 400 * MiB;
    assert.equal(await r.tick(), false);
    s.busy = 0.1;
    assert.equal(await r.tick(), false, 'at the threshold is busy');
    s.busy = 0.09;
    assert.equal(await r.tick(), true);
    assert.equal(s.collections, 1);
  });

  void it('follows RSS down: growth counts from the lowest RSS seen since the last release', async () => {
    const { logger } = logged();
    const { s, probe } = fakeProbe({ rss: 150 * MiB, busy: 0 });
    const r = new MemoryReleaser({ logger, growthBytes: 16 * MiB }, probe);
    await r.tick();
    s.rss = 110 * MiB;
    await r.tick();
    s.rss = 130 * MiB; // 20 above the lowest, 20 below the first
    assert.equal(await r.tick(), true);
  });

  void it('does not collect for heap pages in use: a young generation grown back is not given back', async () => {
    const { logger } = logged();
    const { s, probe } = fakeProbe({ rss: 100 * MiB, busy: 0 });
    s.heap = 20 * MiB;
    const r = new MemoryReleaser({ logger, growthBytes: 16 * MiB }, probe);
    await r.tick();
    s.rss = 150 * MiB;
    s.heap = 68 * MiB; // RSS outside the heap: 80 -> 82
    assert.equal(await r.tick(), false);
    s.heap = 50 * MiB; // the heap shrank, its pages kept: 100 outside
    assert.equal(await r.tick(), true);
  });

  void it('runs one collection at a time', async () => {
    const { logger } = logged();
    let finish: () => void = () => {};
    let collections = 0;
    let rss = 100 * MiB;
    const probe: MemoryProbe = {
      rss: () => rss,
      outsideHeap: () => rss,
      utilization: () => 0,
      collect: () => {
        collections++;
        return new Promise<void>((resolve) => (finish = resolve));
      },
    };
    const r = new MemoryReleaser({ logger }, probe);
    await r.tick();
    rss = 200 * MiB;
    const first = r.tick();
    assert.equal(await r.tick(), false, 'a look during the collection does nothing');
    finish();
    assert.equal(await first, true);
    assert.equal(collections, 1);
  });

  void it('a collection that fails is said once, and no other is tried', async () => {
    const { logger, lines } = logged();
    const { s, probe } = fakeProbe({ rss: 100 * MiB, busy: 0 });
    const r = new MemoryReleaser({ logger }, probe);
    await r.tick();
    s.rss = 300 * MiB;
    s.fail = new Error('no gc here');
    assert.equal(await r.tick(), false);
    assert.equal(await r.tick(), false);
    assert.equal(s.collections, 1);
    const warned = lines.filter((l) => l.level === 'warn');
    assert.equal(warned.length, 1);
    assert.equal(warned[0]?.error, 'no gc here');
  });
});

void describe('releaseMemoryWhenQuiet', () => {
  void it('looks every interval until its signal aborts', async () => {
    const { logger } = logged();
    let looks = 0;
    const probe: MemoryProbe = {
      rss: () => 100 * MiB,
      outsideHeap: () => 60 * MiB,
      utilization: () => (looks++, 0),
      collect: () => Promise.resolve(),
    };
    const stop = new AbortController();
    releaseMemoryWhenQuiet({ logger, intervalMs: 10 }, stop.signal, probe);
    await sleep(100);
    assert.ok(looks >= 3, `${looks} looks in 100 ms`);
    stop.abort();
    const at = looks;
    await sleep(60);
    assert.equal(looks, at);
  });

  void it("in a real process, gives a burst's freed pages back to the system without exposing gc globally", () => {
    // A child node (the same binary) allocates a burst that survives several scavenges, drops it, and asks
    // the process probe for one collection: RSS before and after, and whether `gc` became a global.
    const script = `
      const { processProbe } = await import(${JSON.stringify(new URL('./memory-release.js', import.meta.url).href)});
      let keep = [];
      for (let round = 0; round < 40; round++) {
        for (let i = 0; i < 50000; i++) keep.push({ s: 'x'.repeat(40) + i, n: [i, i + 1] });
        if (keep.length > 400000) keep = keep.slice(200000);
      }
      keep = [];
      const probe = processProbe();
      const before = probe.rss();
      const outside = probe.outsideHeap();
      await probe.collect();
      console.log(JSON.stringify({ before, after: probe.rss(), outside, outsideAfter: probe.outsideHeap(), globalGc: typeof globalThis.gc }));
    `;
    const out = execFileSync(process.execPath, ['--max-semi-space-size=16', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    const r = JSON.parse(out) as {
      before: number;
      after: number;
      outside: number;
      outsideAfter: number;
      globalGc: string;
    };
    const mib = (n: number) => Math.round(n / MiB);
    assert.ok(r.before > 150 * MiB, `the burst reached ${mib(r.before)} MiB`);
    assert.ok(r.after < r.before / 2, `RSS ${mib(r.before)} -> ${mib(r.after)} MiB`);
    // What the releaser watches saw the freed pages, and saw them go.
    assert.ok(
      r.outside - r.outsideAfter > 100 * MiB,
      `outside the heap ${mib(r.outside)} -> ${mib(r.outsideAfter)} MiB`,
    );
    const { globalGc } = r;
    assert.equal(globalGc, 'undefined');
  });
});
