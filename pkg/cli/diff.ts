// `flotilla diff`: per member, what `apply --prune` would change, as unified diffs of the live object and
// the apiserver's server-side dry run of the apply. Exit 0 nothing would change, 1 something would,
// 2 an error (as `kubectl diff`).

import { UsageError, type CommandIO } from './command.js';
import type { DiffFlags } from './commands.js';
import { prepareDelivery } from './apply.js';
import type { MemberReport, ObjectResult } from '../kube/index.js';
import { unifiedDiff } from '../kube/diff.js';
import { APPLIED_HASH_ANNOTATION } from '../kube/ownership.js';
import { noteLines, problemLines } from './delivery-output.js';
import { writeYaml } from '../yaml/index.js';

/** YAML for the diff, without the applied-hash bookkeeping annotation (it changes whenever anything does). */
function yamlOf(o: Record<string, unknown> | null | undefined): string {
  if (!o) return '';
  const meta = o.metadata as { annotations?: Record<string, unknown> } | undefined;
  if (meta?.annotations && Object.prototype.hasOwnProperty.call(meta.annotations, APPLIED_HASH_ANNOTATION)) {
    const { [APPLIED_HASH_ANNOTATION]: _hash, ...annotations } = meta.annotations;
    const metadata: Record<string, unknown> = { ...meta };
    if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
    else delete metadata.annotations;
    o = { ...o, metadata };
  }
  return writeYaml(o, { sortKeys: true, lineWidth: 0 });
}

function label(member: string, r: ObjectResult): string {
  return `${member}/${r.apiVersion}/${r.kind}/${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
}

/** The diff text of one object, or '' when it would not change. */
export function objectDiff(member: string, r: ObjectResult): string {
  if (
    r.action !== 'created' &&
    r.action !== 'configured' &&
    r.action !== 'pruned' &&
    !(r.action === 'conflict' && r.after)
  )
    return '';
  const where = label(member, r);
  const from = r.live ? `${where} (live)` : `${where} (absent)`;
  const to =
    r.action === 'pruned'
      ? `${where} (deleted by apply --prune)`
      : r.action === 'conflict'
        ? `${where} (after apply with conflictResolution: Overwrite)`
        : `${where} (after apply)`;
  return unifiedDiff(yamlOf(r.live), yamlOf(r.after), { fromLabel: from, toLabel: to });
}

/** Prints the diffs and problems; returns the exit code. */
export function writeDiff(reports: readonly MemberReport[], io: Pick<CommandIO, 'stdout' | 'stderr'>): number {
  let changed = false;
  for (const report of reports) {
    const sorted = [...report.results].sort((a, b) =>
      label('', a) < label('', b) ? -1 : label('', a) > label('', b) ? 1 : 0,
    );
    for (const r of sorted) {
      const text = objectDiff(report.member, r);
      if (text) {
        changed = true;
        io.stdout.write(text);
      }
      if (r.action === 'conflict') changed = true;
    }
  }
  for (const line of [...noteLines(reports), ...problemLines(reports)]) io.stderr.write(`${line}\n`);
  const failed = reports.some((r) => r.errors.length > 0 || r.results.some((x) => x.action === 'failed'));
  return failed ? 2 : changed ? 1 : 0;
}

/** Like every command, but an unexpected failure exits 2 here (1 means "differences found"). */
export async function run(values: DiffFlags, io: CommandIO): Promise<number> {
  try {
    return await runDiff(values, io);
  } catch (err: unknown) {
    if (err instanceof UsageError) throw err;
    io.stderr.write(`flotilla diff: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
}

async function runDiff(values: DiffFlags, io: CommandIO): Promise<number> {
  const p = await prepareDelivery('diff', values, io);
  if ('code' in p) return p.code;
  if ('problems' in p) return 2;
  const { reports } = await p.deliver(p.plan, {
    mode: 'diff',
    prune: true,
    applySet: p.applySet,
    tooling: p.tooling,
    concurrency: p.flags.concurrency,
    signal: io.signal,
  });
  return writeDiff(reports, io);
}
