// The Gatekeeper part of an admission (admit.ts): the mutation system over the object the override rules
// produced, and the warnings that keep a mutator the route cannot apply from being silent: one Flotilla
// holds but cannot use (refused when read), one skipped for a conflicting schema, and fields Gatekeeper
// ignores (assignIf) — each named in the admission response of an object it would have acted on.

import { MutationError, type Mutator } from './gatekeeper.js';
import { appliesTo, matches, MatchError, readApplyTo, type Mutable } from './gatekeeper/match.js';
import { mutatorMatches } from './gatekeeper/mutator.js';
import { obj, str, type JsonObject } from './json.js';
import type { AdmissionOperation } from './overrides.js';
import { mutationSystem } from './copy.js';
import type { Change } from './types.js';

/** A mutator held by the route that Flotilla cannot apply, and why. */
export interface UnusableMutator {
  object: JsonObject;
  problem: string;
}

function describe(o: JsonObject): string {
  return `${str(o.kind) ?? '?'}/${str(obj(o.metadata)?.name) ?? '?'}`;
}

/** Whether an unusable mutator's applyTo and match (as far as they can be read) select the object. */
function wouldAct(o: JsonObject, m: Mutable): boolean {
  const spec = obj(o.spec) ?? {};
  try {
    if (Array.isArray(spec.applyTo) && !appliesTo(readApplyTo(spec.applyTo), m)) return false;
    return matches(obj(spec.match) ?? {}, m);
  } catch (err: unknown) {
    if (err instanceof MatchError) return true;
    throw err;
  }
}

export function admitMutators(
  doc: JsonObject,
  mutators: readonly Mutator[],
  unusable: Iterable<UnusableMutator>,
  namespace: { name: string; labels: Readonly<Record<string, string>> | undefined } | undefined,
  operation: AdmissionOperation,
  changes: Change[] | undefined,
): { applied: string[]; warnings: string[] } {
  const warnings: string[] = [];
  const before: Mutable = { object: doc, operation, namespace };
  for (const u of unusable)
    if (wouldAct(u.object, before)) warnings.push(`Gatekeeper ${describe(u.object)} is not applied: ${u.problem}`);
  const system = mutationSystem(mutators);
  for (const m of mutators) {
    if (m.ignored.length === 0) continue;
    let hit = false;
    try {
      hit = mutatorMatches(m, before);
    } catch {
      hit = false;
    }
    if (hit)
      warnings.push(`Gatekeeper ${m.id}: ${m.ignored.join(', ')} is ignored (Gatekeeper's CRDs prune it since v3.7)`);
  }
  if (mutators.length === 0) return { applied: [], warnings };
  const out = system.mutate(doc, operation, namespace, changes);
  for (const id of out.skipped)
    warnings.push(`Gatekeeper ${id} is not applied: its location conflicts with another mutator's schema`);
  return { applied: out.applied, warnings };
}

export { MutationError };
