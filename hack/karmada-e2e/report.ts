// Reads ginkgo's JSON report (--ginkgo.json-report) into one line per spec: its file, its full name,
// its state and, for a failure, the first line of the failure message.

export interface SpecLine {
  file: string;
  name: string;
  /** ginkgo's state: passed, failed, skipped, pending, panicked, timedout, interrupted, aborted. */
  state: string;
  reason?: string;
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
      const message = isObj(failure) ? str(own(failure, 'Message')) : '';
      const line: SpecLine = { file, name, state };
      if (state !== 'passed' && state !== 'skipped' && message) line.reason = message.split('\n')[0]?.slice(0, 300);
      lines.push(line);
    }
  }
  return lines;
}
