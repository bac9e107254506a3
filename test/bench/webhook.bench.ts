// Webhook benchmark (`npm run bench:webhook`), over loopback HTTPS like the apiserver calls it. The server
// runs in a child process (its own core on a 2-core machine); this process is the client.
//
//   1. /validate, closed loop: 100 connections each sending its next request as soon as the last answer
//      arrives. Gives the most requests/s the server sustains; latency here includes queueing.
//   2. /validate, open loop at 2,000 requests/s spread over the same 100 connections. Requests are issued
//      on a 1 ms tick whatever the answers do, so a server stall shows up in the latencies instead of
//      lowering the load. Latency counts from the tick that issued the request; the figure counted from
//      each request's exact due time (adding up to 1 ms of tick granularity) is printed below the table.
//   3. One ConversionReview of 500 OverridePolicies (v1alpha1 → v1beta1), end to end, repeated.
//   4. /override (admission-time overrides) of a Deployment, closed and open loop as above, with 1,000
//      override policies held (990 of them not selecting it) and two Gatekeeper mutators. The server's
//      resident memory is printed idle (policies loaded, before any request) and after the run.
//   5. The limits (webhook-load.ts): 20 s of mixed load (ordinary reviews on every route, heavy /override
//      requests, 40 never-reading clients, oversized bodies, a liveness probe every 250 ms on a new
//      connection) with the server's peak resident set and the probes' latency; then 40 never-reading
//      clients per route, the server's open connections and resident set over 30 s.
// The server runs with the chart's heap flags (webhook.nodeOptions; WEBHOOK_NODE_OPTIONS replaces them).
// WEBHOOK_BENCH=limits runs phase 5 only.
// Targets on this machine: /validate and /override p99 < 5 ms at >= 2,000 requests/s; a 500-object
// conversion < 50 ms; under phase 5, peak resident set < 80% of the chart's 256 MiB limit and /healthz
// well inside kubelet's 1 s probe timeout.

import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import { createCA, createServingCert } from '../../pkg/certs/index.js';
import { clusterInfo, OverrideSet } from '../../pkg/engine/index.js';
import {
  startHealthServer,
  WebhookHandler,
  WebhookServer,
  admissionRequestReview,
  conversionRequestReview,
} from '../../pkg/webhook/index.js';
import { clusterOverridePolicy, deployment, overridePolicy, type Obj } from '../builders.js';
import { mixedLoad, neverReadingPerRoute, type ServerWindow } from './webhook-load.js';

const CONNECTIONS = 100;
const OPEN_LOOP_RATE = 2000;
const PHASE_MS = 10_000;
const CONVERSION_OBJECTS = 500;
const CONVERSION_RUNS = 30;
const OVERRIDE_POLICIES = 1000;
/** The chart's webhook.nodeOptions (deploy/helm/flotilla/values.yaml); WEBHOOK_NODE_OPTIONS replaces them. */
const CHART_NODE_OPTIONS = '--max-old-space-size=96 --max-semi-space-size=8';
/** WEBHOOK_BENCH=limits: only the limits phases (mixed load, never-reading clients per route). */
const limitsOnly = process.env.WEBHOOK_BENCH === 'limits';

/** A typical OverridePolicy: a few rules, the overriders people use most. */
function typicalOverridePolicy(i: number): Obj {
  return overridePolicy(
    `web-overrides-${i}`,
    'shop',
    [
      {
        overriders: {
          imageOverrider: [
            { component: 'Registry', operator: 'replace', value: 'mirror.${cluster.region}.example.com' },
          ],
        },
      },
      {
        targetCluster: { labelSelector: { matchLabels: { env: 'prod' } } },
        overriders: {
          plaintext: [{ path: '/spec/replicas', operator: 'replace', value: 6 }],
          labelsOverrider: [{ operator: 'add', value: { tier: 'frontend', 'example.com/owner': 'team-web' } }],
        },
      },
      {
        targetCluster: { clusterNames: ['eu-1', 'eu-2'], exclude: ['eu-3'] },
        overriders: {
          argsOverrider: [{ containerName: 'web', operator: 'add', value: ['--region=${cluster.region}'] }],
          annotationsOverrider: [{ operator: 'add', value: { 'example.com/gdpr': 'true' } }],
          fieldOverrider: [
            {
              fieldPath: '/data/app.yaml',
              yaml: [{ subPath: '/db/host', operator: 'replace', value: 'db.eu.example.com' }],
            },
          ],
        },
      },
    ],
    [
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      { apiVersion: 'v1', kind: 'ConfigMap', labelSelector: { matchLabels: { app: 'web' } } },
    ],
  );
}

/**
 * What /override holds: 1,000 policies, of which 10 select the benchmark's Deployment shop/web (its
 * namespace's OverridePolicies by name, and ClusterOverridePolicies by kind); the other 990 are spread
 * over 100 namespaces or select other kinds and names. Plus two Gatekeeper mutators that match it.
 */
function overrideFleet(): OverrideSet {
  const set = new OverrideSet(
    clusterInfo({ metadata: { name: 'us-1', labels: { env: 'prod' } }, spec: { region: 'us-east-1' } }),
  );
  const add = (o: Obj) => {
    const problem = set.upsert(o);
    if (problem) throw new Error(problem);
  };
  for (let i = 0; i < OVERRIDE_POLICIES; i++) {
    if (i < 5) add(typicalOverridePolicy(i));
    else if (i < 10)
      add(
        clusterOverridePolicy(
          `all-deployments-${i}`,
          [
            {
              targetOperations: ['CREATE', 'UPDATE'],
              overriders: { labelsOverrider: [{ operator: 'add', value: { [`rule-${i}`]: 'x' }, onlyIfAbsent: true }] },
            },
          ],
          [{ apiVersion: 'apps/v1', kind: 'Deployment' }],
        ),
      );
    else if (i < 50)
      add(clusterOverridePolicy(`statefulsets-${i}`, typicalRules(), [{ apiVersion: 'apps/v1', kind: 'StatefulSet' }]));
    else if (i < 100)
      add(
        overridePolicy(`other-${i}`, 'shop', typicalRules(), [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: `api-${i}` },
        ]),
      );
    else add(typicalOverridePolicyIn(i, `team-${i % 100}`));
  }
  add({
    apiVersion: 'mutations.gatekeeper.sh/v1',
    kind: 'Assign',
    metadata: { name: 'pull-policy' },
    spec: {
      applyTo: [{ groups: ['apps'], versions: ['v1'], kinds: ['Deployment'] }],
      location: 'spec.template.spec.containers[name:*].imagePullPolicy',
      parameters: {
        pathTests: [{ subPath: 'spec.template.spec.containers[name:*].imagePullPolicy', condition: 'MustNotExist' }],
        assign: { value: 'IfNotPresent' },
      },
    },
  });
  add({
    apiVersion: 'mutations.gatekeeper.sh/v1',
    kind: 'AssignMetadata',
    metadata: { name: 'owner' },
    spec: {
      match: { scope: 'Namespaced' },
      location: 'metadata.labels.owner',
      parameters: { assign: { value: 'platform' } },
    },
  });
  return set;
}

function typicalRules(): Obj[] {
  return (typicalOverridePolicy(0).spec as { overrideRules: Obj[] }).overrideRules;
}

function typicalOverridePolicyIn(i: number, namespace: string): Obj {
  const p = typicalOverridePolicy(i);
  (p.metadata as Obj).namespace = namespace;
  return p;
}

// ---- server side (child process) ----------------------------------------------------------------------

async function serve(dir: string): Promise<void> {
  const set = overrideFleet();
  const handler = new WebhookHandler({ overrides: { set, ready: () => true, namespaceLabels: () => ({}) } });
  const server = new WebhookServer({
    handler,
    certFile: join(dir, 'tls.crt'),
    keyFile: join(dir, 'tls.key'),
    port: 0,
    host: '127.0.0.1',
  });
  const abort = new AbortController();
  // What the load does to the server, measured here and sent when asked (webhook-load.ts's ServerWindow).
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let longest = { ms: 0, path: '' };
  const handle = handler.handle.bind(handler);
  handler.handle = (req) => {
    const started = performance.now();
    const answer = handle(req);
    const ms = performance.now() - started;
    if (ms > longest.ms) longest = { ms, path: req.url };
    return answer;
  };
  let peak = process.memoryUsage();
  setInterval(() => {
    const now = process.memoryUsage();
    if (now.rss > peak.rss) peak = now;
  }, 50).unref();
  process.on('message', (m) => {
    if (m === 'stop') abort.abort();
    if (m === 'window') {
      process.send?.({
        loopMax: delay.max / 1e6,
        loopP99: delay.percentile(99) / 1e6,
        longestJudgeMs: longest.ms,
        longestJudgePath: longest.path,
        peak,
      });
      delay.reset();
      longest = { ms: 0, path: '' };
      peak = process.memoryUsage();
    }
    if (m === 'rss') {
      globalThis.gc?.();
      process.send?.({ rss: process.memoryUsage().rss, policies: set.size.policies });
    }
  });
  const { address, stopped } = await server.start(abort.signal);
  const health = await startHealthServer({ port: 0, host: '127.0.0.1', handler }, abort.signal);
  process.send?.({ port: address.port, healthPort: health.address.port });
  await stopped;
  process.exit(0);
}

// ---- client side --------------------------------------------------------------------------------------

interface Target {
  port: number;
  ca: string;
  agent: Agent;
}

/** One request; its answer's body. Rejects on any status but 200. */
function post(t: Target, path: string, body: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: t.port,
        path,
        method: 'POST',
        ca: t.ca,
        agent: t.agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`HTTP ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

interface Result {
  scenario: string;
  requests: number;
  seconds: number;
  latencies: number[];
  /** Open loop only: latencies counted from each request's due time. */
  fromDue?: number[];
}

async function closedLoop(t: Target, body: Buffer, ms: number, path = '/validate'): Promise<Result> {
  const latencies: number[] = [];
  const end = performance.now() + ms;
  const started = performance.now();
  const worker = async () => {
    while (performance.now() < end) {
      const s = performance.now();
      await post(t, path, body);
      latencies.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return {
    scenario: `${path} closed loop, ${CONNECTIONS} connections`,
    requests: latencies.length,
    seconds: (performance.now() - started) / 1000,
    latencies,
  };
}

async function openLoop(t: Target, body: Buffer, rate: number, ms: number, path = '/validate'): Promise<Result> {
  const latencies: number[] = [];
  const fromDue: number[] = [];
  const pending: Promise<void>[] = [];
  const started = performance.now();
  const total = Math.round((rate * ms) / 1000);
  let issued = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      // Issue every request that is due, without waiting for earlier answers.
      while (issued < total && started + (issued * 1000) / rate <= now) {
        const due = started + (issued * 1000) / rate;
        pending.push(
          post(t, path, body).then(() => {
            const done = performance.now();
            latencies.push(done - now);
            fromDue.push(done - due);
          }),
        );
        issued++;
      }
      if (issued < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  await Promise.all(pending);
  return {
    scenario: `${path} open loop, ${rate} req/s offered, ${CONNECTIONS} connections`,
    requests: latencies.length,
    seconds: (performance.now() - started) / 1000,
    latencies,
    fromDue,
  };
}

async function conversion(t: Target): Promise<Result> {
  const objects = Array.from({ length: CONVERSION_OBJECTS }, (_, i) => {
    const p = typicalOverridePolicy(i);
    // The deprecated form, so every object is really rewritten (folded into a rule, annotation added).
    const spec = p.spec as { overrideRules: Array<{ overriders: unknown }> };
    return {
      ...p,
      spec: { resourceSelectors: (p.spec as Obj).resourceSelectors, overriders: spec.overrideRules[1]?.overriders },
    };
  });
  const body = Buffer.from(JSON.stringify(conversionRequestReview(objects, 'policy.flotilla.io/v1beta1')));
  for (let i = 0; i < 5; i++) await post(t, '/convert', body);
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < CONVERSION_RUNS; i++) {
    const s = performance.now();
    await post(t, '/convert', body);
    latencies.push(performance.now() - s);
  }
  return {
    scenario: `one ConversionReview of ${CONVERSION_OBJECTS} objects (${(body.length / 1024).toFixed(0)} KiB), ${CONVERSION_RUNS} runs`,
    requests: CONVERSION_RUNS,
    seconds: (performance.now() - started) / 1000,
    latencies,
  };
}

function row(r: Result): string {
  const sorted = [...r.latencies].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(2).padStart(8);
  return `| ${r.scenario.padEnd(68)} | ${String(r.requests).padStart(8)} | ${(r.requests / r.seconds).toFixed(0).padStart(7)} | ${f(percentile(sorted, 50))} | ${f(percentile(sorted, 99))} | ${f(sorted[sorted.length - 1] ?? NaN)} |`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-bench-'));
  const ca = createCA('bench-ca');
  const serving = createServingCert(ca, { commonName: 'bench', ipAddresses: ['127.0.0.1'] });
  writeFileSync(join(dir, 'tls.crt'), serving.certPem);
  writeFileSync(join(dir, 'tls.key'), serving.keyPem);

  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--serve', dir], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // The deployment's heap flags (the chart's webhook.nodeOptions), so memory is measured as deployed.
    execArgv: ['--expose-gc', ...(process.env.WEBHOOK_NODE_OPTIONS ?? CHART_NODE_OPTIONS).split(/\s+/).filter(Boolean)],
  });
  const rss = () => ask<{ rss: number; policies: number }>('rss');
  const ask = <T>(what: string) =>
    new Promise<T>((resolve) => {
      child.once('message', (m) => resolve(m as T));
      child.send(what);
    });
  const { port, healthPort } = await new Promise<{ port: number; healthPort: number }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { port: number; healthPort: number }));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const target: Target = { port, ca: ca.certPem, agent };
  try {
    const review = admissionRequestReview({ operation: 'CREATE', object: typicalOverridePolicy(0) });
    const body = Buffer.from(JSON.stringify(review));
    process.stdout.write(
      `Node ${process.version}, ${availableParallelism()} cores, load average ${loadavg()[0]?.toFixed(2) ?? '?'} at start; /validate body ${body.length} bytes (a typical OverridePolicy)\n`,
    );
    const idle = await rss();
    const admitted = Buffer.from(
      JSON.stringify(
        admissionRequestReview({ operation: 'CREATE', object: deployment('web', 'shop', { replicas: 3 }) }),
      ),
    );
    // The override path measured is the one that patches, not a refusal or a fallback.
    const answer = JSON.parse(await post(target, '/override', admitted)) as {
      response: { patch?: string; warnings?: string[] };
    };
    if (!answer.response.patch || answer.response.warnings)
      throw new Error(`/override did not patch the benchmark's Deployment: ${JSON.stringify(answer.response)}`);
    const ops = (JSON.parse(Buffer.from(answer.response.patch, 'base64').toString()) as unknown[]).length;
    process.stdout.write(`/override answers a patch of ${ops} operations\n`);
    await closedLoop(target, body, 2000); // warm-up: JIT, TLS sessions, connection pool
    await closedLoop(target, admitted, 2000, '/override');
    const results = limitsOnly
      ? []
      : [
          await closedLoop(target, body, PHASE_MS),
          await openLoop(target, body, OPEN_LOOP_RATE, PHASE_MS),
          await conversion(target),
          await closedLoop(target, admitted, PHASE_MS, '/override'),
          await openLoop(target, admitted, OPEN_LOOP_RATE, PHASE_MS, '/override'),
        ];
    const busy = await rss();
    // The limits under the load beside the apiserver's: never-reading and oversized clients, heavy
    // /override requests, liveness probes (webhook-load.ts).
    const conversionBody = JSON.stringify(
      conversionRequestReview(
        Array.from({ length: 50 }, (_, i) => typicalOverridePolicy(i)),
        'policy.flotilla.io/v1beta1',
      ),
    );
    const server = {
      port,
      healthPort,
      pid: child.pid ?? 0,
      window: () => ask<ServerWindow>('window'),
    };
    const mixed = await mixedLoad(server, {
      validate: body.toString(),
      override: admitted.toString(),
      convert: conversionBody,
    });
    const perRoute = await neverReadingPerRoute(server, [0, 2, 5, 10, 15, 20, 30]);
    process.stdout.write(`\n${mixed.join('\n')}\n`);
    process.stdout.write(`\n${NEVER_READING_TITLE}\n${perRoute.join('\n')}\n`);
    process.stdout.write(
      `\nserver resident memory with ${idle.policies} override policies and 2 mutators held: ${(idle.rss / 2 ** 20).toFixed(0)} MiB idle (after GC, before any request), ${(busy.rss / 2 ** 20).toFixed(0)} MiB after the runs; /override body ${admitted.length} bytes (a Deployment)\n`,
    );
    process.stdout.write(
      `\n| ${'scenario'.padEnd(68)} | requests |   req/s |   p50 ms |   p99 ms |   max ms |\n|${'-'.repeat(70)}|----------|---------|----------|----------|----------|\n`,
    );
    for (const r of results) process.stdout.write(`${row(r)}\n`);
    for (const r of results) {
      if (!r.fromDue) continue;
      const sorted = [...r.fromDue].sort((a, b) => a - b);
      process.stdout.write(
        `\n${r.scenario.split(' ')[0] ?? ''} open loop counted from each request's due time: p50 ${percentile(sorted, 50).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms\n`,
      );
    }
  } finally {
    agent.destroy();
    child.send('stop');
    rmSync(dir, { recursive: true, force: true });
  }
}

const NEVER_READING_TITLE =
  'never-reading clients per route: 40 clients each send one ~2.5 MB review and never read; connections open to the server (its side) / server VmRSS, seconds after they connect';

if (process.argv[2] === '--serve' && process.argv[3]) await serve(process.argv[3]);
else await main();
