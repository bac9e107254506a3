// Reading `-f PATH… [-R]` for every command that takes manifests, as kubectl reads them: files, directories
// (their *.yaml, *.yml and *.json files in name order; subdirectories only with -R) and `-` for stdin;
// multi-document YAML with YAML 1.1 scalars (pkg/yaml); `kind: List` expanded. Every document remembers
// where it came from, so messages name the file, the document and the line of what they are about.
//
// Bad input never stops the other inputs: each problem becomes one message and the rest is read.
// Reading stops promptly, with an Interrupted error, when the command's signal aborts (SIGINT/SIGTERM).

import { constants } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isObject } from '../../api/internal/objects.js';
import { isClusterScoped, refOf, type ObjectRef } from '../engine/index.js';
import { decodeYamlBytes, readYamlStream, YamlError } from '../yaml/index.js';
import { UsageError } from './command.js';
import { interruption } from './interrupt.js';
import { errorClass } from '../../api/internal/errors.js';

export interface SourcedDocument {
  object: unknown;
  /** `file.yaml`, `file.yaml (document 3)` or `file.yaml (document 3) items[0]`; `<stdin>` for `-`. */
  source: string;
}

export interface InputResult {
  /** The objects read, in input order. */
  documents: SourcedDocument[];
  /** One line per problem, naming the file (and document, line and column where there are some). */
  errors: string[];
  /** Things worth knowing that are not problems (a subdirectory left out without -R). */
  notes: string[];
}

/** The options of a command that reads manifests, from its flags (INPUT_FLAGS). */
export interface InputOptions {
  filenames: readonly string[];
  /** Descend into the subdirectories of directories named with -f. */
  recursive: boolean;
  /** Accept objects named by metadata.generateName only (as the apiserver admits them: `flotilla admit`). */
  generateName?: boolean;
}

/** The flags of INPUT_USAGE, for a command's parseFlags table. */
export const INPUT_FLAGS = {
  filename: { type: 'string', short: 'f', multiple: true },
  recursive: { type: 'boolean', short: 'R', default: false },
} as const;

export const INPUT_USAGE = `  -f, --filename PATH   file, directory (its *.yaml, *.yml and *.json files) or '-' (stdin); repeatable
  -R, --recursive       also read the subdirectories of directories given with -f`;

/** InputOptions from parsed INPUT_FLAGS; a UsageError when there is no -f. */
export function inputOptions(values: {
  filename?: string[] | undefined;
  recursive?: boolean | undefined;
}): InputOptions {
  const filenames = values.filename ?? [];
  if (filenames.length === 0) throw new UsageError('at least one -f PATH is required');
  return { filenames, recursive: values.recursive ?? false };
}

/**
 * The most one file (or stdin) may hold. Far above any set of manifests an apiserver takes (3 MiB per
 * request), low enough that a mistaken `-f /var/log/huge.log` is refused instead of exhausting memory.
 */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

export class InputError extends errorClass('InputError', 'INPUT') {}

const MANIFEST = /\.(ya?ml|json)$/i;

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function message(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES') return 'permission denied';
  return err instanceof Error ? err.message : String(err);
}

function kindOfFile(info: {
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

function notRegular(path: string, what: string): InputError {
  return new InputError(
    `${path}: not a regular file (${what}); to read a pipe or a device, use -f - and redirect it to stdin`,
  );
}

/** The files a path stands for: itself, or the manifests in a directory (and its subdirectories with -R). */
async function listFiles(path: string, recursive: boolean, errors: string[], notes: string[]): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch (err: unknown) {
    errors.push(`${path}: ${message(err)}`);
    return [];
  }
  if (!info.isDirectory()) return [path];
  const out: string[] = [];
  const visited = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    let names: string[];
    try {
      const real = await realpath(dir);
      if (visited.has(real)) return; // a symlink back to a directory being read: its files are read once
      visited.add(real);
      names = (await readdir(dir)).sort(byName);
    } catch (err: unknown) {
      errors.push(`${dir}: ${message(err)}`);
      return;
    }
    const skipped: string[] = [];
    for (const name of names) {
      const p = join(dir, name);
      let entry;
      try {
        entry = await stat(p);
      } catch (err: unknown) {
        if (MANIFEST.test(name)) errors.push(`${p}: ${message(err)}`);
        continue;
      }
      if (entry.isDirectory()) {
        if (recursive) await walk(p);
        else if (!name.startsWith('.')) skipped.push(name);
      } else if (MANIFEST.test(name)) {
        out.push(p);
      }
    }
    if (skipped.length === 1) notes.push(`${dir}: subdirectory ${skipped.join('')} not read; -R reads it`);
    else if (skipped.length > 1) notes.push(`${dir}: subdirectories ${skipped.join(', ')} not read; -R reads them`);
  };
  await walk(path);
  return out;
}

/** Reads a regular file; FIFOs and devices are refused without blocking on them. */
async function readRegularFile(path: string, signal: AbortSignal | undefined): Promise<Uint8Array> {
  // O_NONBLOCK: opening a FIFO that has no writer would otherwise wait forever.
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw new InputError(`${path}: is a directory`);
    if (!info.isFile()) throw notRegular(path, kindOfFile(info));
    if (info.size > MAX_INPUT_BYTES)
      throw new InputError(
        `${path}: ${info.size} bytes is more than the ${MAX_INPUT_BYTES / 1024 / 1024} MiB one input may hold`,
      );
    return await handle.readFile(signal ? { signal } : {});
  } finally {
    await handle.close();
  }
}

/** Reads a stream to its end, or until the signal aborts (then the stream is destroyed so it cannot hold the process). */
function readStream(stream: NodeJS.ReadableStream, name: string, signal: AbortSignal | undefined): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onError);
      signal?.removeEventListener('abort', onAbort);
    };
    const stop = (err: Error): void => {
      cleanup();
      (stream as { destroy?: () => void }).destroy?.();
      reject(err);
    };
    const onData = (chunk: Buffer | string): void => {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += b.length;
      if (size > MAX_INPUT_BYTES)
        return stop(new InputError(`${name}: more than the ${MAX_INPUT_BYTES / 1024 / 1024} MiB one input may hold`));
      chunks.push(b);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(new InputError(`${name}: ${err.message}`, { cause: err }));
    };
    const onAbort = (): void => stop(interruption(signal));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
  });
}

function isList(o: unknown): o is { items: unknown[] } {
  if (!isObject(o)) return false;
  const { kind, items, metadata } = o;
  // The rule pkg/engine applies: `kind: List`, or a `…List` kind with items and no metadata of its own.
  return (
    typeof kind === 'string' &&
    Array.isArray(items) &&
    (kind === 'List' || (kind.endsWith('List') && metadata === undefined))
  );
}

function typeName(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'number') return 'a number';
  if (typeof v === 'boolean') return 'a boolean';
  return typeof v;
}

/** The identity fields a Kubernetes object must have; problems are worded as the engine and webhook word them. */
function identityProblem(o: unknown, generateName: boolean): string | undefined {
  if (!isObject(o)) return `${typeName(o)}, not a Kubernetes object (apiVersion, kind, metadata)`;
  const r = refOf(o);
  if (!r.apiVersion) return 'apiVersion: Required value';
  if (!r.kind) return 'kind: Required value';
  if (!r.name && generateName) {
    const g = isObject(o.metadata) ? o.metadata.generateName : undefined;
    if (typeof g === 'string' && g !== '') return undefined;
    return 'metadata.name: Required value: name or generateName is required';
  }
  if (!r.name) return 'metadata.name: Required value';
  return undefined;
}

/** Turns one input's bytes into sourced objects and problems. */
export function parseDocuments(
  bytes: Uint8Array | string,
  name: string,
  generateName = false,
): { documents: SourcedDocument[]; errors: string[] } {
  const documents: SourcedDocument[] = [];
  const errors: string[] = [];
  let text: string;
  try {
    text = typeof bytes === 'string' ? bytes : decodeYamlBytes(bytes);
  } catch (err: unknown) {
    if (!(err instanceof YamlError)) throw err;
    return { documents, errors: [`${name}:${err.problem.line}:${err.problem.col}: ${err.problem.message}`] };
  }
  const r = readYamlStream(text);
  for (const e of r.errors) errors.push(`${name}:${e.line}:${e.col}: ${e.message}`);
  for (const d of r.documents) {
    if (d.value === null) continue;
    const where = r.count > 1 ? `${name} (document ${d.index})` : name;
    const items = isList(d.value)
      ? d.value.items.map((object, i) => ({ object, source: `${where} items[${i}]` }))
      : [{ object: d.value, source: where }];
    for (const item of items) {
      const problem = identityProblem(item.object, generateName);
      if (!problem) documents.push(item);
      else if (isObject(item.object)) errors.push(`${item.source}: ${describeRef(refOf(item.object))}: ${problem}`);
      else errors.push(`${item.source}: ${problem}`);
    }
  }
  return { documents, errors };
}

/**
 * Reads every input. Never throws for bad content (each problem is a line in `errors`); throws
 * Interrupted when `signal` aborts before reading is done.
 */
export async function readInputs(
  options: InputOptions,
  io: { stdin: NodeJS.ReadableStream; signal?: AbortSignal },
): Promise<InputResult> {
  const result: InputResult = { documents: [], errors: [], notes: [] };
  const add = (r: { documents: SourcedDocument[]; errors: string[] }): void => {
    result.documents.push(...r.documents);
    result.errors.push(...r.errors);
  };
  const checkSignal = (): void => {
    if (io.signal?.aborted) throw interruption(io.signal);
  };
  let stdinUsed = false;
  for (const path of options.filenames) {
    checkSignal();
    if (path === '-') {
      if (stdinUsed) continue;
      stdinUsed = true;
      try {
        add(parseDocuments(await readStream(io.stdin, '<stdin>', io.signal), '<stdin>', options.generateName));
      } catch (err: unknown) {
        if (!(err instanceof InputError)) throw err;
        result.errors.push(err.message);
      }
      continue;
    }
    for (const file of await listFiles(path, options.recursive, result.errors, result.notes)) {
      checkSignal();
      let bytes: Uint8Array;
      try {
        bytes = await readRegularFile(file, io.signal);
      } catch (err: unknown) {
        checkSignal();
        result.errors.push(err instanceof InputError ? err.message : `${file}: ${message(err)}`);
        continue;
      }
      add(parseDocuments(bytes, file, options.generateName));
    }
  }
  checkSignal();
  return result;
}

/** `Kind/namespace/name` (or `Kind/name`), the one way every command names an object. */
export function describeRef(r: { kind: string; namespace?: string | undefined; name: string }): string {
  return `${r.kind || '<no kind>'}/${r.namespace ? `${r.namespace}/` : ''}${r.name || '<no name>'}`;
}

export function refKey(r: ObjectRef): string {
  return `${r.apiVersion}\n${r.kind}\n${r.namespace ?? ''}\n${r.name}`;
}

/** The object an apiserver would store: API group (not version), kind, namespace (default filled in) and name. */
let nextUnnamed = 0;

function identity(o: unknown): string {
  const r = refOf(o);
  const group = r.apiVersion.includes('/') ? r.apiVersion.slice(0, r.apiVersion.indexOf('/')) : '';
  const namespace = isClusterScoped(r.kind) ? '' : (r.namespace ?? 'default');
  // Objects named by generateName only are each a new object (the apiserver names them).
  if (!r.name) return `${group}\n${r.kind}\n${namespace}\n\u0000${nextUnnamed++}`;
  return `${group}\n${r.kind}\n${namespace}\n${r.name}`;
}

/**
 * The same object given more than once. `kubectl apply` applies every copy in order, so the last one
 * is what the cluster keeps: `kept` holds the last copy of each object (in input order), and one warning
 * per earlier copy says which copy won.
 */
export function dropDuplicates(documents: readonly SourcedDocument[]): { kept: SourcedDocument[]; warnings: string[] } {
  const last = new Map<string, SourcedDocument>();
  const ids = documents.map((d) => identity(d.object));
  documents.forEach((d, i) => last.set(ids[i] as string, d));
  const warnings: string[] = [];
  const kept: SourcedDocument[] = [];
  for (const [i, d] of documents.entries()) {
    const winner = last.get(ids[i] as string);
    if (winner === d) kept.push(d);
    else if (winner)
      warnings.push(
        `${d.source}: ${describeRef(refOf(d.object))}: also in ${winner.source}; the later copy is used, as kubectl apply would leave it`,
      );
  }
  return { kept, warnings };
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
    return (
      this.byKey.get(refKey(r)) ??
      this.byName.get(`${r.kind}\n${r.namespace ?? ''}\n${r.name}`) ??
      this.byName.get(`${r.kind}\n\n${r.name}`)
    );
  }
}
