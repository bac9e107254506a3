// propagateDeps bookkeeping for EngineState: for each held workload, the keys of the objects it names
// (dependencies.ts), held or not, and the reverse, so that a change on either side finds the other.

import { dependenciesOf, hasDependencies } from './dependencies.js';
import type { Template } from './inputs.js';
import { templateKey } from './state-index.js';

export class DependencyIndex {
  /** Workload key → the keys of the objects it names (dependencies.ts), whether held or not. */
  private readonly named = new Map<string, string[]>();
  /** Dependency key → the keys of the held workloads that name it. */
  private readonly requirers = new Map<string, Set<string>>();

  /** The keys the workload `key` names (none when it names nothing or is not held). */
  namedBy(key: string): readonly string[] {
    return this.named.get(key) ?? [];
  }

  /** The keys of the held workloads that name `key`. */
  requirersOf(key: string): Iterable<string> {
    return this.requirers.get(key) ?? [];
  }

  /** Whether a held workload names `key`. */
  isRequired(key: string): boolean {
    return this.requirers.has(key);
  }

  /**
   * Files what the workload `key` names now (`t`; undefined: it is gone), in both directions, in place of
   * what it named before. Returns what it named before.
   */
  file(key: string, t: Template | undefined): readonly string[] {
    const before = this.named.get(key) ?? [];
    for (const d of before) {
      const set = this.requirers.get(d);
      set?.delete(key);
      if (set?.size === 0) this.requirers.delete(d);
    }
    this.named.delete(key);
    if (!t || !hasDependencies(t.ref.apiVersion, t.ref.kind)) return before;
    const deps = dependenciesOf(t.ref, t.object).map((d) => templateKey(d.ref));
    if (deps.length === 0) return before;
    this.named.set(key, deps);
    for (const d of deps) {
      let set = this.requirers.get(d);
      if (!set) this.requirers.set(d, (set = new Set()));
      set.add(key);
    }
    return before;
  }
}
