// Fails when the project's TypeScript sources import each other in a cycle (`npm run lint` runs it).
// Only imports that load a module at run time count: `import type` and `export type … from` are erased
// by the compiler, so a cycle through them alone is harmless. Every cycle found is printed as a chain of
// files. Run from the repository root: `node dist/hack/import-cycles.js [DIR…]` (default: api pkg cmd).

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Runtime imports and re-exports of one file: the specifiers of `import … from`, `import '…'`, `export … from`. */
export function runtimeImports(source: string): string[] {
  const out: string[] = [];
  const statement = /^\s*(import|export)\s+(type\s+)?([^'";]*?)\s*(?:from\s*)?['"]([^'"]+)['"]/gm;
  for (const m of source.matchAll(statement)) {
    const [, keyword, typeOnly, clause = '', specifier] = m;
    if (!specifier || typeOnly) continue;
    if (keyword === 'export' && !/^(\*|\{)/.test(clause)) continue;
    // `import { type A, type B } from` loads the module only when some name is not a type.
    const names = /^\{([^}]*)\}$/.exec(clause.trim())?.[1];
    if (names !== undefined && names.split(',').every((n) => n.trim() === '' || n.trim().startsWith('type '))) continue;
    out.push(specifier);
  }
  return out;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(resolve(path));
  }
  return out;
}

/** The import graph of `files`: file → the files it loads at run time (relative specifiers only). */
export function importGraph(files: readonly string[], read: (file: string) => string): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = runtimeImports(read(file))
      .filter((s) => s.startsWith('.'))
      .map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')))
      .filter((t) => known.has(t));
    graph.set(file, targets);
  }
  return graph;
}

/** Every cycle, as one chain per strongly connected component of more than one file (or a file importing itself). */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  // Tarjan's algorithm, with an explicit stack so deep graphs cannot overflow the call stack.
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1] as { node: string; next: number };
      const edges = graph.get(top.node) ?? [];
      if (top.next < edges.length) {
        const to = edges[top.next++] as string;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(top.node, Math.min(low.get(top.node) ?? 0, index.get(to) ?? 0));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) ?? 0, low.get(top.node) ?? 0));
      if (low.get(top.node) !== index.get(top.node)) continue;
      const component: string[] = [];
      for (;;) {
        const n = stack.pop() as string;
        onStack.delete(n);
        component.push(n);
        if (n === top.node) break;
      }
      if (component.length > 1 || (graph.get(top.node) ?? []).includes(top.node)) found.push(component.reverse());
    }
  }
  return found;
}

function main(): number {
  const dirs = process.argv.slice(2);
  const files = (dirs.length > 0 ? dirs : ['api', 'pkg', 'cmd']).flatMap((d) => sourceFiles(d));
  const found = cycles(importGraph(files, (f) => readFileSync(f, 'utf8')));
  for (const c of found)
    process.stderr.write(`import cycle: ${[...c, c[0]].map((f) => relative(process.cwd(), f ?? '')).join(' -> ')}\n`);
  if (found.length > 0) return 1;
  process.stdout.write(`import-cycles: ${files.length} files, no cycle\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname))
  process.exitCode = main();
