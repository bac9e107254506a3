// Liveness probes for the webhook benchmark, from a process of their own as kubelet sends them: the
// load generator's own event loop is busy, and a probe timed there would count its stalls as the
// server's. Forked by webhook-load.ts with the server's ports; sends back every probe's status and time.
//
//   node webhook-prober.js PORT HEALTH_PORT MS    (HEALTH_PORT 0: the HTTPS port only)

import { performance } from 'node:perf_hooks';

import { plainGet, post, PROBE_EVERY_MS, type Answer } from './webhook-load.js';

async function probeFor(ms: number, probe: () => Promise<Answer>): Promise<Answer[]> {
  const until = performance.now() + ms;
  const answers: Answer[] = [];
  while (performance.now() < until) {
    answers.push(await probe());
    await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
  }
  return answers;
}

const [port, healthPort, ms] = process.argv.slice(2).map(Number);
if (port && ms !== undefined) {
  const [https, plain] = await Promise.all([
    probeFor(ms, () => post(port, false, '/healthz', '', 'GET')),
    healthPort ? probeFor(ms, () => plainGet(healthPort, '/healthz')) : Promise.resolve([]),
  ]);
  process.send?.({ https, plain }, () => process.exit(0));
}
