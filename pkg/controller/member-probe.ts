// A member's readiness: GET /readyz within the probe timeout (not behind the member's request queue), the
// verdict and its sentence (probeMessage: the same words in the log, the Cluster's Ready condition and the
// ClusterNotReady Event), and the loop that probes every interval while ready, with backoff while not.

import type { KubeClient } from '../kube/client.js';
import { sleep } from '../runtime/clock.js';
import { formatDuration } from '../runtime/duration.js';
import type { Member } from './member.js';

export interface Readiness {
  /** undefined until the first probe. */
  ready: boolean | undefined;
  message?: string;
  /** The last failed probe got no HTTP answer (connection refused, timeout): unreachable, not merely not ready. */
  unreachable?: boolean;
  /** Consecutive failed probes. */
  failures: number;
  /** When `ready` last changed (ms since the epoch). */
  since: number;
}

/**
 * What a failed /readyz probe of `server` says, in the member's log line, its Cluster's Ready condition
 * and the ClusterNotReady Event alike: the answer's HTTP status, how long was waited for none, or the
 * transport's error (which names the server).
 */
export function probeMessage(
  server: string,
  outcome: { status: number } | { timeoutMs: number } | { error: string },
): string {
  if ('status' in outcome) return `${server}/readyz answered HTTP ${outcome.status}`;
  if ('timeoutMs' in outcome)
    return `${server}/readyz: no answer within ${formatDuration(outcome.timeoutMs)} (probe timeout)`;
  return outcome.error.startsWith(server) ? outcome.error : `${server}: ${outcome.error}`;
}

/** GET /readyz on `client` within `timeoutMs`; updates `readiness` and returns true when `ready` changed. */
export async function probeReadyz(
  client: KubeClient,
  readiness: Readiness,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  const before = readiness.ready;
  let message: string | undefined;
  let unreachable = false;
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    const res = await client.request({
      method: 'GET',
      path: '/readyz',
      accept: 'text/plain',
      // Not behind the member's queue: requests hanging on a dying member would hold the verdict back.
      unqueued: true,
      signal: AbortSignal.any([signal, deadline]),
    });
    if (res.status !== 200) message = probeMessage(client.server, { status: res.status });
  } catch (err: unknown) {
    if (signal.aborted) return false;
    unreachable = true;
    message = probeMessage(
      client.server,
      deadline.aborted ? { timeoutMs } : { error: err instanceof Error ? err.message : String(err) },
    );
  }
  if (message === undefined) {
    readiness.ready = true;
    readiness.failures = 0;
    delete readiness.message;
    delete readiness.unreachable;
  } else {
    readiness.ready = false;
    readiness.failures++;
    readiness.message = message;
    readiness.unreachable = unreachable;
  }
  if (before === readiness.ready) return false;
  readiness.since = Date.now();
  return true;
}

/** Probes `member` until `signal` aborts: every `intervalMs` while ready, with backoff (1 s doubling to `intervalMs`, ±20%) while not. */
export async function probeLoop(
  member: Member,
  o: { intervalMs: number; timeoutMs: number; onChange(member: Member): void; random?: () => number },
  signal: AbortSignal,
): Promise<void> {
  const random = o.random ?? Math.random;
  while (!signal.aborted) {
    if (await member.probe(o.timeoutMs)) o.onChange(member);
    const failing = member.readiness.ready === false;
    const base = failing
      ? Math.min(o.intervalMs, 1_000 * 2 ** Math.min(member.readiness.failures - 1, 10))
      : o.intervalMs;
    await sleep(Math.round(base * (0.8 + 0.4 * random())), signal);
  }
}
