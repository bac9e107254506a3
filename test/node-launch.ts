// How tests and benches start `flotilla agent` and `flotilla controller`: with the node flags the chart runs
// them with (agent.nodeFlags and controller.nodeFlags in deploy/helm/flotilla/values.yaml), and the agent
// with the chart's agent.concurrency, so what they exercise and measure is the process as it is deployed.
// BENCH_AGENT_NODE_FLAGS and BENCH_CONTROLLER_NODE_FLAGS replace the flags (space-separated; empty: node's
// defaults), BENCH_AGENT_CONCURRENCY the concurrency.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { parse } from 'yaml';

const VALUES = fileURLToPath(new URL('../../deploy/helm/flotilla/values.yaml', import.meta.url));

type Values = Record<string, { nodeFlags?: unknown; concurrency?: unknown } | undefined>;

let values: Values | undefined;
/** values.yaml, read once per process (a bench starts an agent per member). */
const chartValues = (): Values => (values ??= parse(readFileSync(VALUES, 'utf8')) as Values);

/** The chart's `<kind>.nodeFlags` (none when the chart gives none), or `override` when set. */
function chartNodeFlags(kind: 'agent' | 'controller', override: string | undefined): string[] {
  if (override !== undefined) return override.split(/\s+/).filter(Boolean);
  const chart = chartValues();
  const flags = Object.hasOwn(chart, kind) ? (chart[kind]?.nodeFlags ?? []) : [];
  if (!Array.isArray(flags) || !flags.every((f) => typeof f === 'string'))
    throw new Error(`${VALUES}: ${kind}.nodeFlags is not a list of strings`);
  return flags;
}

/** The chart's agent.nodeFlags, or BENCH_AGENT_NODE_FLAGS when set. */
export function agentNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  return chartNodeFlags('agent', env.BENCH_AGENT_NODE_FLAGS);
}

/** The chart's controller.nodeFlags, or BENCH_CONTROLLER_NODE_FLAGS when set. */
export function controllerNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  return chartNodeFlags('controller', env.BENCH_CONTROLLER_NODE_FLAGS);
}

/** The chart's agent.concurrency (templates the agent applies at once), or BENCH_AGENT_CONCURRENCY when set. */
export function agentConcurrency(env: NodeJS.ProcessEnv = process.env): string {
  const n = env.BENCH_AGENT_CONCURRENCY ?? chartValues().agent?.concurrency;
  if (!Number.isInteger(Number(n)) || Number(n) < 1)
    throw new Error(
      `${VALUES}: agent.concurrency (or BENCH_AGENT_CONCURRENCY) is not a positive integer: ${String(n)}`,
    );
  return String(n);
}
