// What `flotilla apply` prints. Not a TTY: one line per object and member as each finishes. A TTY: one
// progress line, redrawn. At the end: a table per member and every conflict and failure with member,
// object and the apiserver's message. `-o json`: the same, as one JSON document at the end.
// A member that is unreachable is reported once, not once per object.

import type { Action, MemberReport, ObjectResult } from '../kube/index.js';
import { describeObject } from '../kube/objects.js';

export const ACTIONS: readonly Action[] = ['created', 'configured', 'unchanged', 'pruned', 'conflict', 'failed'];

export type Counts = Record<Action, number>;

export function countResults(results: readonly ObjectResult[]): Counts {
  const c: Counts = { created: 0, configured: 0, unchanged: 0, pruned: 0, conflict: 0, failed: 0 };
  for (const r of results) c[r.action]++;
  return c;
}

export interface ApplySetInfo {
  name: string;
  namespace: string;
  id: string;
}

export interface OutputOptions {
  format: 'text' | 'json';
  /** stdout is a terminal: a redrawn progress line instead of a line per object. */
  tty: boolean;
  dryRun: boolean;
  /** For throttling the progress line; injected so tests need no clock. */
  now?: () => number;
}

export class ApplyOutput {
  private readonly out: NodeJS.WritableStream;
  private readonly err: NodeJS.WritableStream;
  private readonly o: OutputOptions;
  private readonly planned = new Map<string, number>();
  private readonly done = new Map<string, number>();
  private lastDraw = -Infinity;
  private drawn = false;

  constructor(out: NodeJS.WritableStream, err: NodeJS.WritableStream, options: OutputOptions) {
    this.out = out;
    this.err = err;
    this.o = options;
  }

  onPlan(member: string, objects: number): void {
    this.planned.set(member, objects);
    this.done.set(member, this.done.get(member) ?? 0);
    if (this.o.format === 'text' && this.o.tty) this.draw(true);
  }

  onResult(member: string, r: ObjectResult): void {
    this.done.set(member, (this.done.get(member) ?? 0) + 1);
    if (this.o.format !== 'text') return;
    if (this.o.tty) {
      this.draw(false);
      return;
    }
    if (r.unreachable) return;
    this.out.write(`${member}: ${describeObject(r)} ${r.action}${this.o.dryRun ? ' (server dry run)' : ''}\n`);
  }

  private draw(force: boolean): void {
    const now = (this.o.now ?? Date.now)();
    if (!force && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const parts = [...this.planned].map(([m, n]) => `${m} ${Math.min(this.done.get(m) ?? 0, n)}/${n}`);
    this.out.write(`\r\x1b[2K${this.o.dryRun ? 'checking' : 'applying'}: ${parts.join('  ')}`);
    this.drawn = true;
  }

  /** Writes the summary; returns the exit code (1 when anything failed or conflicted). */
  finish(reports: readonly MemberReport[], applySet: ApplySetInfo): number {
    const failed = reports.some(
      (r) => r.errors.length > 0 || r.results.some((x) => x.action === 'failed' || x.action === 'conflict'),
    );
    if (this.o.format === 'json') {
      this.out.write(`${JSON.stringify(toJson(reports, applySet, this.o.dryRun), null, 2)}\n`);
      return failed ? 1 : 0;
    }
    if (this.drawn) this.out.write('\r\x1b[2K');
    this.out.write(`${this.o.dryRun ? '\n(server dry run: nothing was changed)\n' : '\n'}${summaryTable(reports)}`);
    this.out.write(`apply set ${applySet.namespace}/${applySet.name} (${applySet.id})\n`);
    for (const line of noteLines(reports)) this.err.write(`${line}\n`);
    for (const line of problemLines(reports)) this.err.write(`${line}\n`);
    return failed ? 1 : 0;
  }
}

export function summaryTable(reports: readonly MemberReport[]): string {
  const header = ['MEMBER', ...ACTIONS.map((a) => a.toUpperCase())];
  const rows = reports.map((r) => {
    if (r.unreachable && r.results.length === 0) return [r.member, ...ACTIONS.map(() => '-'), 'unreachable'];
    const c = countResults(r.results);
    const row = [r.member, ...ACTIONS.map((a) => String(c[a]))];
    if (r.unreachable) row.push('unreachable');
    else if (r.errors.length > 0) row.push('errors');
    return row;
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

/** Notes on objects that went through (a namespace created for the set, an object a dry run could not check). */
export function noteLines(reports: readonly MemberReport[]): string[] {
  return reports.flatMap((r) =>
    r.results
      .filter((x) => x.message !== undefined && x.action !== 'failed' && x.action !== 'conflict')
      .map((x) => `note: ${r.member}: ${describeObject(x)}: ${x.message ?? ''}`),
  );
}

/** Member errors (once each), then conflicts and failures with the apiserver's message. */
export function problemLines(reports: readonly MemberReport[]): string[] {
  const lines: string[] = [];
  for (const r of reports) for (const e of r.errors) lines.push(`error: ${r.member} (${r.server}): ${e}`);
  for (const r of reports) {
    for (const x of r.results) {
      if (x.unreachable) continue;
      if (x.action === 'conflict') lines.push(`conflict: ${r.member}: ${describeObject(x)}: ${x.message ?? ''}`);
      else if (x.action === 'failed') lines.push(`error: ${r.member}: ${describeObject(x)}: ${x.message ?? ''}`);
    }
  }
  for (const r of reports)
    for (const x of r.results)
      for (const w of x.warnings ?? []) lines.push(`warning: ${r.member}: ${describeObject(x)}: ${w}`);
  return lines;
}

export function toJson(reports: readonly MemberReport[], applySet: ApplySetInfo, dryRun: boolean): unknown {
  return {
    applySet,
    dryRun,
    members: reports.map((r) => ({
      name: r.member,
      server: r.server,
      unreachable: r.unreachable,
      errors: r.errors,
      counts: countResults(r.results),
    })),
    objects: reports.flatMap((r) =>
      r.results.map((x) => ({
        member: r.member,
        apiVersion: x.apiVersion,
        kind: x.kind,
        ...(x.namespace ? { namespace: x.namespace } : {}),
        name: x.name,
        action: x.action,
        ...(x.message !== undefined ? { message: x.message } : {}),
        ...(x.warnings ? { warnings: x.warnings } : {}),
        ...(x.unreachable ? { unreachable: true } : {}),
      })),
    ),
    /** Problems about a member rather than one object (unreachable, ApplySet parent); input problems when nothing ran. */
    errors: reports.flatMap((r) => r.errors.map((e) => `${r.member}: ${e}`)),
  };
}
