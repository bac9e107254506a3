// The dispatch settings of a dependency no policy claims, from the policies of the workloads that require
// it (propagateDeps), as Karmada's dependencies distributor resolves them for an attached binding: any
// Overwrite gives Overwrite (else Abort), any preserveResourcesOnDeletion true gives true (else false), and
// a setting the workloads' policies disagree on is a conflict (Karmada's DependencyPolicyConflict). Suspension and
// failover are the first workload's policy's. Pure.

import { dispatchOf, type Dispatch, type DispatchConflict } from './dispatch.js';
import type { JsonObject } from './json.js';

/**
 * The dispatch of a dependency required by workloads whose claiming policies' specs are `specs` (in the
 * requirements' order; at least one). `conflicts` is absent when they agree.
 */
export function requiredDispatch(specs: readonly JsonObject[]): Dispatch {
  const each = specs.map(dispatchOf);
  const first = each[0] ?? dispatchOf({});
  const overwrite = each.some((d) => d.conflictResolution === 'Overwrite');
  const abort = each.some((d) => d.conflictResolution === 'Abort');
  const preserve = each.some((d) => d.preserveResourcesOnDeletion);
  const release = each.some((d) => !d.preserveResourcesOnDeletion);
  const conflicts: DispatchConflict[] = [];
  if (overwrite && abort) conflicts.push('ConflictResolution');
  if (preserve && release) conflicts.push('PreserveResourcesOnDeletion');
  return {
    ...first,
    conflictResolution: overwrite ? 'Overwrite' : 'Abort',
    preserveResourcesOnDeletion: preserve,
    ...(conflicts.length > 0 ? { conflicts } : {}),
  };
}
