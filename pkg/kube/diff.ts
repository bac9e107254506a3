// A unified line diff (as `diff -u`), Myers' O(ND) algorithm after trimming the common prefix and
// suffix. Used by `flotilla diff` on YAML renderings of objects, which are small; past MAX_LINES changed
// lines the whole changed region is shown as removed and added instead of searching for the shortest
// edit script.

export interface UnifiedDiffOptions {
  fromLabel: string;
  toLabel: string;
  /** Unchanged lines around each change. Default 3. */
  context?: number;
}

type Op = { kind: ' ' | '-' | '+'; line: string };

const MAX_LINES = 20_000;

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Shortest edit script between a and b (Myers 1986), as a sequence of kept, removed and added lines. */
function editScript(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  if (n === 0) return b.map((line) => ({ kind: '+', line }));
  if (m === 0) return a.map((line) => ({ kind: '-', line }));
  if (n + m > MAX_LINES)
    return [...a.map((line): Op => ({ kind: '-', line })), ...b.map((line): Op => ({ kind: '+', line }))];
  const max = n + m;
  const offset = max;
  let v = new Int32Array(2 * max + 2);
  const trace: Int32Array[] = [];
  let found = false;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice());
    const next = v.slice();
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0))) x = v[offset + k + 1] ?? 0;
      else x = (v[offset + k - 1] ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      next[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
    v = next;
  }
  trace.push(v);
  // Walk back from (n, m) through the saved frontiers.
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 2; d >= 0 && (x > 0 || y > 0); d--) {
    const prev = trace[d] as Int32Array;
    const k = x - y;
    const down = k === -d || (k !== d && (prev[offset + k - 1] ?? 0) < (prev[offset + k + 1] ?? 0));
    const prevK = down ? k + 1 : k - 1;
    const prevX = prev[offset + prevK] ?? 0;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: ' ', line: a[x - 1] ?? '' });
      x--;
      y--;
    }
    if (d === 0) break;
    if (down) ops.push({ kind: '+', line: b[y - 1] ?? '' });
    else ops.push({ kind: '-', line: a[x - 1] ?? '' });
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    ops.push({ kind: ' ', line: a[x - 1] ?? '' });
    x--;
    y--;
  }
  return ops.reverse();
}

/** The unified diff of two texts, or '' when they are equal. */
export function unifiedDiff(from: string, to: string, options: UnifiedDiffOptions): string {
  if (from === to) return '';
  const a = splitLines(from);
  const b = splitLines(to);
  const context = options.context ?? 3;
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const ops: Op[] = [
    ...a.slice(0, pre).map((line): Op => ({ kind: ' ', line })),
    ...editScript(a.slice(pre, a.length - suf), b.slice(pre, b.length - suf)),
    ...a.slice(a.length - suf).map((line): Op => ({ kind: ' ', line })),
  ];
  if (!ops.some((o) => o.kind !== ' ')) return ''; // only a trailing newline differed

  // Group changes into hunks with `context` lines around them; hunks closer than 2*context merge.
  const out: string[] = [`--- ${options.fromLabel}`, `+++ ${options.toLabel}`];
  let i = 0;
  let aLine = 0;
  let bLine = 0;
  const positions: Array<{ a: number; b: number }> = [];
  for (const o of ops) {
    positions.push({ a: aLine, b: bLine });
    if (o.kind !== '+') aLine++;
    if (o.kind !== '-') bLine++;
  }
  while (i < ops.length) {
    while (i < ops.length && ops[i]?.kind === ' ') i++;
    if (i >= ops.length) break;
    const start = Math.max(0, i - context);
    let end = i;
    for (;;) {
      while (end < ops.length && ops[end]?.kind !== ' ') end++;
      let j = end;
      while (j < ops.length && ops[j]?.kind === ' ') j++;
      if (j < ops.length && j - end <= 2 * context) end = j;
      else break;
    }
    const stop = Math.min(ops.length, end + context);
    const slice = ops.slice(start, stop);
    const first = positions[start] ?? { a: 0, b: 0 };
    const aCount = slice.filter((o) => o.kind !== '+').length;
    const bCount = slice.filter((o) => o.kind !== '-').length;
    const range = (startLine: number, count: number) =>
      count === 0 ? `${startLine},0` : count === 1 ? `${startLine + 1}` : `${startLine + 1},${count}`;
    out.push(`@@ -${range(first.a, aCount)} +${range(first.b, bCount)} @@`);
    for (const o of slice) out.push(`${o.kind}${o.line}`);
    i = stop;
  }
  return `${out.join('\n')}\n`;
}
