// Reads ginkgo's JSON report (--ginkgo.json-report) into one line per spec: its file, its full name,
// its state and, for a failure, the first line of the failure message.

export interface SpecLine {
  file: string;
  name: string;
  /** ginkgo's state: passed, failed, skipped, pending, panicked, timedout, interrupted, aborted. */
  state: string;
  reason?: string;
  /** Run a second time after failing the first (a spec that then passes is printed as flaky). */
  retried?: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const own = (o: Obj, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Suite set-up nodes (BeforeSuite …) are listed too when they did not pass: then nothing else ran. */
export function summarise(report: unknown): SpecLine[] {
  if (!Array.isArray(report)) throw new Error('ginkgo JSON report: expected an array of suite reports');
  const lines: SpecLine[] = [];
  for (const suite of report) {
    if (!isObj(suite)) continue;
    const specs = own(suite, 'SpecReports');
    for (const s of Array.isArray(specs) ? specs : []) {
      if (!isObj(s)) continue;
      const type = str(own(s, 'LeafNodeType'));
      const state = str(own(s, 'State'));
      if (type !== 'It' && state === 'passed') continue;
      const hierarchy = own(s, 'ContainerHierarchyTexts');
      const name = [...(Array.isArray(hierarchy) ? hierarchy.map(str) : []), str(own(s, 'LeafNodeText')) || type]
        .filter((x) => x !== '')
        .join(' / ');
      const location = own(s, 'LeafNodeLocation');
      const file = isObj(location) ? (str(own(location, 'FileName')).split('/').pop() ?? '') : '';
      const failure = own(s, 'Failure');
      const line: SpecLine = { file, name, state };
      const reason = isObj(failure) ? failureReason(failure) : '';
      if (state !== 'passed' && state !== 'skipped' && reason) line.reason = reason;
      lines.push(line);
    }
  }
  return lines;
}

/** Where a failure was raised (`events.go:38`) and the first line of its message, bounded. */
function failureReason(failure: Obj): string {
  const location = own(failure, 'Location');
  const at = isObj(location)
    ? `${str(own(location, 'FileName')).split('/').pop() ?? ''}:${String(own(location, 'LineNumber'))}`
    : '';
  const message = str(own(failure, 'Message')).split('\n')[0] ?? '';
  return [at === ':undefined' ? '' : at, message]
    .filter((x) => x !== '')
    .join(': ')
    .slice(0, 300);
}

/** A spec's key in the list of specs expected to pass: `file: name`. */
export const specKey = (l: Pick<SpecLine, 'file' | 'name'>): string => `${l.file}: ${l.name}`;

/** The list of specs expected to pass: one `file: name` a line; blank lines and `#` comments skipped. */
export function readExpected(text: string): Set<string> {
  const keys = new Set<string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line !== '' && !line.startsWith('#')) keys.add(line);
  }
  return keys;
}

export interface Comparison {
  /** Expected to pass and did not (failed, or did not run): CI fails on these. */
  regressions: Array<{ key: string; state: string; reason?: string }>;
  /** Passed and not in the list yet: add them to it. */
  newlyPassing: string[];
}

/**
 * The run against the list: what regressed and what passes now that did not. `focused`: the run selected
 * some specs only (--files, --focus), so a listed spec it skipped is not a regression.
 */
export function compare(lines: readonly SpecLine[], expected: ReadonlySet<string>, focused = false): Comparison {
  const byKey = new Map(lines.map((l) => [specKey(l), l]));
  const regressions: Comparison['regressions'] = [];
  for (const key of [...expected].sort()) {
    const l = byKey.get(key);
    if (focused && (!l || l.state === 'skipped')) continue;
    if (!l) regressions.push({ key, state: 'not run' });
    else if (l.state !== 'passed') regressions.push({ key, state: l.state, ...(l.reason ? { reason: l.reason } : {}) });
  }
  const newlyPassing = lines
    .filter((l) => l.state === 'passed' && !expected.has(specKey(l)))
    .map(specKey)
    .sort();
  return { regressions, newlyPassing };
}

/**
 * A ginkgo --focus that selects exactly these specs (by their full text: the container texts and the leaf,
 * space-separated, as ginkgo matches), for a second attempt at the ones that did not pass.
 */
export function focusOn(lines: readonly Pick<SpecLine, 'name'>[]): string {
  const quote = (t: string) => t.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
  return lines.map((l) => quote(l.name.split(' / ').join(' '))).join('|');
}

/** The first run's lines with those of a second attempt put in their place (marked as retried). */
export function retried(first: readonly SpecLine[], second: readonly SpecLine[]): SpecLine[] {
  return merged(first, second, true);
}

/**
 * The first run's lines with those that ran in a later run put in their place: a later run of the specs
 * the first skipped (`asRetried` false), or a second attempt (true).
 */
export function merged(first: readonly SpecLine[], later: readonly SpecLine[], asRetried = false): SpecLine[] {
  const ran = new Map(later.filter((l) => l.state !== 'skipped').map((l) => [specKey(l), l]));
  return first.map((l) => {
    const r = ran.get(specKey(l));
    return r ? { ...r, ...(asRetried ? { retried: true } : {}) } : l;
  });
}
