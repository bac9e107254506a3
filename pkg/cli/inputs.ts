// Reading `-f PATH…` for the offline commands: files, directories (recursively, *.yaml|*.yml|*.json, in
// name order) and `-` for stdin; multi-document YAML. Every document remembers where it came from so
// messages can name the file (and document) of the object they are about.

import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { refOf, type ObjectRef } from '../engine/index.js';

export interface SourcedDocument {
  object: unknown;
  /** `file.yaml` or `file.yaml (document 3)`; `<stdin>` for `-`. */
  source: string;
}

export class InputError extends Error {
  readonly code = 'INPUT';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'InputError';
  }
}

const MANIFEST = /\.(ya?ml|json)$/i;

async function listFiles(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch (err: unknown) {
    const code = (err as { code?: string }).code;
    throw new InputError(`${path}: ${code === 'ENOENT' ? 'no such file or directory' : err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (!info.isDirectory()) return [path];
  const entries = await readdir(path, { withFileTypes: true });
  const out: string[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const p = join(path, e.name);
    if (e.isDirectory()) out.push(...(await listFiles(p)));
    else if (MANIFEST.test(e.name)) out.push(p);
  }
  return out;
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses one file's text into documents; YAML errors name the file, line and column. */
export function parseDocuments(text: string, name: string): { documents: SourcedDocument[]; errors: string[] } {
  const documents: SourcedDocument[] = [];
  const errors: string[] = [];
  const docs = parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [docs];
  const many = list.length > 1;
  list.forEach((doc, i) => {
    const where = many ? `${name} (document ${i + 1})` : name;
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        const pos = e.linePos?.[0];
        errors.push(`${name}${pos ? `:${pos.line}:${pos.col}` : ''}: invalid YAML: ${(e.message.split('\n')[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, '')}`);
      }
      return;
    }
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) return;
    documents.push({ object: value, source: where });
  });
  return { documents, errors };
}

/** Reads every path; returns the documents and the problems found (never throws for bad content). */
export async function readInputs(paths: readonly string[], stdin: NodeJS.ReadableStream): Promise<{ documents: SourcedDocument[]; errors: string[] }> {
  const documents: SourcedDocument[] = [];
  const errors: string[] = [];
  let stdinUsed = false;
  for (const path of paths) {
    if (path === '-') {
      if (stdinUsed) continue;
      stdinUsed = true;
      const r = parseDocuments(await readStream(stdin), '<stdin>');
      documents.push(...r.documents);
      errors.push(...r.errors);
      continue;
    }
    let files: string[];
    try {
      files = await listFiles(path);
    } catch (err: unknown) {
      errors.push(err instanceof Error ? err.message : String(err));
      continue;
    }
    for (const file of files) {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (err: unknown) {
        errors.push(`${file}: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      const r = parseDocuments(text, file);
      documents.push(...r.documents);
      errors.push(...r.errors);
    }
  }
  return { documents, errors };
}

export function refKey(r: ObjectRef): string {
  return `${r.apiVersion}\n${r.kind}\n${r.namespace ?? ''}\n${r.name}`;
}

/** `Kind ns/name` (or `Kind name`). */
export function describeRef(r: { kind: string; namespace?: string | undefined; name: string }): string {
  return `${r.kind || '<no kind>'} ${r.namespace ? `${r.namespace}/` : ''}${r.name || '<no name>'}`;
}

/** Finds where an object came from: by identity first, then by kind/namespace/name. */
export class SourceIndex {
  private readonly byKey = new Map<string, string>();
  private readonly byName = new Map<string, string>();

  constructor(documents: readonly SourcedDocument[]) {
    for (const d of documents) {
      const r = refOf(d.object);
      if (!this.byKey.has(refKey(r))) this.byKey.set(refKey(r), d.source);
      const short = `${r.kind}\n${r.namespace ?? ''}\n${r.name}`;
      if (!this.byName.has(short)) this.byName.set(short, d.source);
    }
  }

  sourceOf(r: ObjectRef): string | undefined {
    return this.byKey.get(refKey(r)) ?? this.byName.get(`${r.kind}\n${r.namespace ?? ''}\n${r.name}`) ?? this.byName.get(`${r.kind}\n\n${r.name}`);
  }
}
