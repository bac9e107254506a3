// How tests and benches start `flotilla agent`: with the node flags the chart runs it with (agent.nodeFlags
// in deploy/helm/flotilla/values.yaml), so what they exercise and measure is the agent as it is deployed.
// BENCH_AGENT_NODE_FLAGS replaces them (space-separated; empty: node's defaults).

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { parse } from 'yaml';

const VALUES = fileURLToPath(new URL('../../deploy/helm/flotilla/values.yaml', import.meta.url));

/** The chart's agent.nodeFlags, or BENCH_AGENT_NODE_FLAGS when set. */
export function agentNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  const given = env.BENCH_AGENT_NODE_FLAGS;
  if (given !== undefined) return given.split(/\s+/).filter(Boolean);
  const values = parse(readFileSync(VALUES, 'utf8')) as { agent?: { nodeFlags?: unknown } };
  const flags = values.agent?.nodeFlags;
  if (!Array.isArray(flags) || !flags.every((f) => typeof f === 'string'))
    throw new Error(`${VALUES}: agent.nodeFlags is not a list of strings`);
  return flags;
}
