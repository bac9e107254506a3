// Gatekeeper's mutation system (pkg/mutation/system.go): the mutators in their order (kind, then name),
// skipping those whose schemas conflict, applied to the object again and again until one pass leaves it
// unchanged, at most one pass more than there are mutators; a mutation that does not settle by then
// fails, as any mutator's failure does, and then nothing of it is applied.

import {
  cloneJson,
  compareStrings,
  isObject,
  jsonEqual,
  obj,
  setOwn,
  str,
  stringMap,
  type JsonObject,
} from '../json.js';
import { MutationError, mutatePath } from './core.js';
import { MatchError, type Mutable } from './match.js';
import { mutatorMatches, type Mutator } from './mutator.js';
import { schemaConflicts } from './schema.js';
import type { Change } from '../types.js';

/** Gatekeeper's order of mutators: by kind, then by name (they are cluster-scoped, of one group). */
export function sortMutators(list: Mutator[]): Mutator[] {
  return list.sort((a, b) => compareStrings(a.kind, b.kind) || compareStrings(a.name, b.name));
}

/** A set of mutators as one system: their order and which conflict, computed once. */
export class MutationSystem {
  readonly mutators: readonly Mutator[];
  /** Ids of the mutators skipped for conflicting schemas. */
  readonly conflicts: ReadonlySet<string>;
  constructor(mutators: readonly Mutator[]) {
    this.mutators = sortMutators([...mutators]);
    this.conflicts = schemaConflicts(this.mutators);
  }

  /**
   * Mutates `doc` in place. `namespace`: the Namespace the object is admitted in (its labels undefined
   * when not known), absent for a cluster-scoped object. Returns the ids of the mutators that changed
   * something, and the conflicting mutators that would have been tried. Throws MutationError; `doc` may
   * then be partly mutated (callers work on a copy).
   */
  mutate(
    doc: JsonObject,
    operation: string,
    namespace: { name: string; labels: Readonly<Record<string, string>> | undefined } | undefined,
    changes?: Change[],
  ): { applied: string[]; skipped: string[] } {
    const applied = new Set<string>();
    const skipped = new Set<string>();
    if (this.mutators.length === 0) return { applied: [], skipped: [] };
    const meta = obj(doc.metadata);
    const isNs = doc.apiVersion === 'v1' && doc.kind === 'Namespace';
    // As Gatekeeper's webhook: the object carries its namespace while it is mutated.
    const restoreNamespace = !isNs && namespace !== undefined && meta !== undefined && meta.namespace === undefined;
    if (restoreNamespace) setOwn(meta, 'namespace', namespace.name);
    const mutable: Mutable = {
      object: doc,
      operation,
      namespace: isNs ? { name: str(meta?.name) ?? '', labels: stringMap(meta?.labels) } : namespace,
    };
    const max = this.mutators.length + 1;
    let settled = false;
    for (let iteration = 1; iteration <= max && !settled; iteration++) {
      const old = cloneJson(doc);
      let any = false;
      for (const m of this.mutators) {
        if (this.conflicts.has(m.id)) {
          skipped.add(m.id);
          continue;
        }
        let hit: boolean;
        try {
          hit = mutatorMatches(m, mutable);
        } catch (err: unknown) {
          if (!(err instanceof MatchError)) throw err;
          throw new MutationError(`matching for mutator ${m.id} failed: ${err.message}`, 'match');
        }
        if (!hit) continue;
        let changedHere = false;
        const note = (path: string, op: 'add' | 'replace') => {
          changedHere = true;
          changes?.push({ path, op, source: { policy: { kind: m.kind, name: m.name }, overrider: 'location' } });
        };
        let mutated: boolean;
        try {
          mutated = mutatePath(m.path, m.tester, m.setter(mutable), doc, note);
        } catch (err: unknown) {
          if (!(err instanceof MutationError)) throw err;
          throw new MutationError(`mutator ${m.id} failed: ${err.message}`, err.reason);
        }
        if (mutated) any = true;
        if (changedHere) applied.add(m.id);
      }
      settled = !any || jsonEqual(old, doc);
    }
    if (!settled)
      throw new MutationError(
        `mutation not converging: the mutators still change the object after ${max} passes`,
        'not-converging',
      );
    if (restoreNamespace && isObject(doc.metadata)) delete doc.metadata.namespace;
    return { applied: [...applied], skipped: [...skipped] };
  }
}
