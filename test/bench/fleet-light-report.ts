// The light part's runs (fleet-light.ts) in order, its table, and the straight-line fit of the push
// figures over the member counts, extrapolated to 500 and 2,000 clusters.

import { loadavg } from 'node:os';

import { MEASURED_COLUMNS, MEASURED_COUNT, MiB, measuredCells, mib } from './fleet-common.js';
import { measureLight, type LightRow, type LightRun } from './fleet-light.js';
import { fit } from './fleet-memory.js';

const numbers = (v: string | undefined, fallback: string) =>
  (v ?? fallback)
    .split(',')
    .filter((s) => s !== '')
    .map(Number);

/** Runs the light part as the environment asks; returns its table and whether any request went unserved. */
export async function lightPart(templates: number, edits: number, timeoutMs: number, grow: number): Promise<string[]> {
  const slope = numbers(process.env.BENCH_FLEET_LIGHT_SLOPE, '50,100,200');
  const members = Number(process.env.BENCH_FLEET_LIGHT_MEMBERS ?? Math.max(...slope));
  const replicas = Number(process.env.BENCH_FLEET_LIGHT_REPLICAS ?? 4);
  const agents = Number(process.env.BENCH_FLEET_LIGHT_AGENTS ?? 50);
  const modes = (process.env.BENCH_FLEET_LIGHT_MODES ?? 'push,sharded,pull').split(',');
  const runs: LightRun[] = [];
  const base = { templates, edits, timeoutMs, grow };
  if (modes.includes('push')) for (const n of slope) runs.push({ ...base, mode: 'push', members: n, replicas: 1 });
  if (modes.includes('sharded')) runs.push({ ...base, mode: 'sharded', members, replicas });
  if (modes.includes('pull')) runs.push({ ...base, mode: 'pull', members: agents, replicas: 1 });
  const rows: LightRow[] = [];
  const loads: string[] = [];
  for (const run of runs) {
    rows.push(await measureLight(run));
    loads.push(`${run.mode} ${run.members} ${loadavg()[0]?.toFixed(1) ?? '?'}`);
  }
  const lines = [
    `Light members: in-memory apiservers over HTTPS, 50 to a host process; the hub one kube-apiserver; load average (1 min) at the end of each run: ${loads.join(', ')}`,
    '',
    `| run | ${MEASURED_COLUMNS} | light-member hosts: CPU sum, peak RSS max |`,
    `|${'---|'.repeat(MEASURED_COUNT + 2)}`,
    ...rows.map(tableRow),
    '',
    ...extrapolation(rows.filter((r) => r.mode === 'push' && r.propagateMs !== undefined)),
  ];
  const exited = rows.flatMap((r) => r.exited.map((e) => `${r.mode} ${r.members}: ${e}`));
  if (exited.length > 0) {
    // Not a clean run: a replica or agent that stopped (its log file is printed where it exited).
    lines.push('', `FAILED: ${exited.length} processes exited during their run:`, ...exited.map((e) => `  ${e}`));
    process.exitCode = 1;
  }
  const unserved = rows.flatMap((r) => r.unserved.map((u) => `${r.mode} ${r.members}: ${u}`));
  if (unserved.length > 0) {
    lines.push(
      '',
      `FAILED: ${unserved.length} requests the light members could not serve (the in-memory apiserver lacks them):`,
      ...unserved.slice(0, 50).map((u) => `  ${u}`),
    );
    process.exitCode = 1;
  }
  return lines;
}

function tableRow(r: LightRow): string {
  const hosts = `${r.hosts.reduce((a, h) => a + h.cpuSeconds, 0).toFixed(1)} s, ${mib(Math.max(...r.hosts.map((h) => h.peakBytes)))} MiB`;
  const run = `${r.mode}${r.replicas > 1 ? ` (${r.replicas} replicas)` : ''}, ${r.templates} x ${r.members}`;
  return `| ${[run, ...measuredCells(r), hosts].join(' | ')} |`;
}

function extrapolation(push: LightRow[]): string[] {
  if (new Set(push.map((r) => r.members)).size < 2) return [];
  const c = (r: LightRow) => r.controllers[0] ?? { cpuSeconds: NaN, rssBytes: NaN, peakBytes: NaN };
  const figures: Array<[string, string, (r: LightRow) => number]> = [
    ['propagation', 's', (r) => (r.propagateMs ?? NaN) / 1000],
    ['controller CPU', 's', (r) => c(r).cpuSeconds],
    ['controller RSS at the end', 'MiB', (r) => c(r).rssBytes / MiB],
    ['controller peak RSS', 'MiB', (r) => c(r).peakBytes / MiB],
    ['controller retained heap (after gc)', 'MiB', (r) => (r.growth?.at[0]?.[0].heap ?? NaN) / MiB],
    ['controller RSS once settled', 'MiB', (r) => (r.growth?.at[0]?.[0].rss ?? NaN) / MiB],
    ['hub requests', '', (r) => r.hubRequests],
    ['edit p99', 'ms', (r) => r.edit?.p99 ?? NaN],
  ];
  const counts = push.map((r) => r.members).join(', ');
  const lines = [
    `Push, one controller, ${push[0]?.templates ?? 0} templates: a straight line through the runs at ${counts} members, extrapolated`,
    '',
    '| figure | measured | per member (slope) | at 500 members | at 2,000 members |',
    '|---|---|---|---|---|',
  ];
  for (const [name, unit, get] of figures) {
    const line = fit(push.map((r) => [r.members, get(r)]));
    const show = (v: number, digits = 0) => `${v.toFixed(digits)}${unit ? ` ${unit}` : ''}`;
    const measured = push.map((r) => `${r.members}: ${show(get(r))}`).join(', ');
    const at = (n: number) => show(line.intercept + line.slope * n);
    lines.push(`| ${name} | ${measured} | ${show(line.slope, 2)} | ${at(500)} | ${at(2000)} |`);
  }
  return lines;
}
