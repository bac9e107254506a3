// Each package README names every source file of its package: `npm run lint` runs this. A file is named
// when the README holds its path from the README's folder (`gatekeeper/assign.ts`), or its file name alone
// when no other file under that README has the same name. Test files (*.test.ts) and test fleets
// (core-tests/) need no row. A folder with its own README.md answers for the files below it.
//
// Usage: node hack/check-readmes.ts [ROOT]   (exit 1 and one line per unnamed file when any is missing)

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';

/** The folders whose README must name their files: api/ and each pkg/<name>/ (and any README below them). */
const TOPS = ['api', 'pkg'];

const isTest = (path: string): boolean => path.endsWith('.test.ts') || path.split('/').includes('core-tests');

/** The source files a README at `dir` answers for: below `dir`, not below a folder with its own README. */
function sources(dir: string, top = true): string[] {
  if (!top && existsSync(join(dir, 'README.md'))) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(path, false));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') && !isTest(path)) out.push(path);
  }
  return out;
}

function readmes(dir: string): string[] {
  const out = existsSync(join(dir, 'README.md')) ? [dir] : [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory() && e.name !== 'node_modules') out.push(...readmes(join(dir, e.name)));
  }
  return out;
}

export function unnamed(root: string): string[] {
  const missing: string[] = [];
  for (const top of TOPS) {
    if (!existsSync(join(root, top))) continue;
    for (const dir of readmes(join(root, top))) {
      if (dir === join(root, 'pkg')) continue;
      const text = readFileSync(join(dir, 'README.md'), 'utf8');
      const files = sources(dir);
      const count = new Map<string, number>();
      for (const f of files) count.set(basename(f), (count.get(basename(f)) ?? 0) + 1);
      for (const f of files) {
        const rel = relative(dir, f);
        const named =
          text.includes(rel) ||
          (count.get(basename(f)) === 1 && new RegExp(`\\b${basename(f).replace(/\./g, '\\.')}`).test(text));
        if (!named) missing.push(`${relative(root, f)}: not named in ${relative(root, join(dir, 'README.md'))}`);
      }
    }
  }
  return missing;
}

function main(): number {
  const root = process.argv[2] ?? process.cwd();
  const missing = unnamed(root);
  for (const m of missing) process.stderr.write(`${m}\n`);
  if (missing.length > 0) {
    process.stderr.write(
      `check-readmes: ${missing.length} source file(s) not named in their package README; give each a row (file and what it is for) in that README\n`,
    );
    return 1;
  }
  process.stdout.write('check-readmes: every source file is named in its package README\n');
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname))
  process.exitCode = main();
