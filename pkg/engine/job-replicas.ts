// A Job's replicas, as Karmada's native resource interpreter reads and revises them: its replicas are
// `spec.parallelism` (at most `spec.completions`, as the Job controller never runs more pods than it has
// completions left), a divided Job gets its share as `spec.parallelism`, and its `spec.completions` (when
// the template sets it) is divided among the clusters by their parallelism, with the same Webster method.

import { obj } from './json.js';
import { MAX_REPLICAS, websterSeats } from './webster.js';

/** A count Kubernetes accepts in a Job's spec (an int32 that is not negative), else undefined. */
function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_REPLICAS ? v : undefined;
}

/**
 * A Job's replicas: `spec.parallelism` (1, the apiserver's default, when absent), capped by
 * `spec.completions` when that is set. Undefined when parallelism is not a count.
 */
export function jobReplicas(spec: Record<string, unknown> | undefined): number | undefined {
  const p = spec?.parallelism;
  const parallelism = p === undefined || p === null ? 1 : count(p);
  if (parallelism === undefined) return undefined;
  const completions = count(spec?.completions);
  return completions !== undefined && completions < parallelism ? completions : parallelism;
}

/**
 * A divided Job's completions per cluster: the template's `spec.completions` shared out with each cluster's
 * parallelism as its weight. Undefined when the template sets no completions (a work-queue Job keeps it
 * unset) or when nothing was divided.
 */
export function divideCompletions(
  kind: string,
  object: Record<string, unknown>,
  division: ReadonlyMap<string, number> | undefined,
): Map<string, number> | undefined {
  if (kind !== 'Job' || !division) return undefined;
  const completions = count(obj(object.spec)?.completions);
  if (completions === undefined) return undefined;
  let total = 0;
  for (const n of division.values()) total += n;
  if (total === 0) return undefined;
  return websterSeats(
    completions,
    [...division].map(([name, weight]) => ({ name, weight })),
  );
}
