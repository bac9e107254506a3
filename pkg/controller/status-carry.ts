// What a Cluster status apply must carry so that it changes only what this process measured. A
// server-side apply removes every field its field manager owned and left out of the body; a process that
// has not read a member yet (just started, or the member does not answer) knows its Ready condition but
// not its resourceSummary, apiEnablements or kubernetesVersion. Those it carries as the hub has them,
// when its field manager owns them there: the apply then leaves them as they were (placement keeps the
// capacity it had) until this process has read them itself. Pure.

import { isObject, type JsonObject } from '../kube/objects.js';

/** The Cluster status fields a controller or an agent writes from what it read of the member. */
export const FACT_FIELDS = ['kubernetesVersion', 'resourceSummary', 'apiEnablements'] as const;

/** The status fields (`f:` keys under `f:status`) that `manager` owns on `o`, from its managedFields. */
function ownedStatusKeys(o: JsonObject, manager: string): JsonObject {
  const meta = isObject(o.metadata) ? o.metadata : {};
  const entries = Array.isArray(meta.managedFields) ? meta.managedFields.filter(isObject) : [];
  const out: JsonObject = {};
  for (const e of entries) {
    if (e.manager !== manager || e.operation !== 'Apply') continue;
    const f = isObject(e.fieldsV1) ? e.fieldsV1 : {};
    const status = Object.hasOwn(f, 'f:status') && isObject(f['f:status']) ? f['f:status'] : {};
    Object.assign(out, status);
  }
  return out;
}

/**
 * The status fields `manager` owns on the hub's Cluster `o` that are not in `known`: the facts it has
 * not measured this run, and its Ready condition while it has none to write. Own properties only.
 */
export function carriedStatus(
  o: JsonObject,
  manager: string,
  known: { facts: readonly string[]; condition: boolean },
): JsonObject {
  const status = isObject(o.status) ? o.status : {};
  const owned = ownedStatusKeys(o, manager);
  const out: JsonObject = {};
  for (const field of FACT_FIELDS) {
    if (known.facts.includes(field) || !Object.hasOwn(owned, `f:${field}`) || !Object.hasOwn(status, field)) continue;
    out[field] = status[field];
  }
  if (!known.condition && Object.hasOwn(owned, 'f:conditions') && Array.isArray(status.conditions)) {
    const ready = status.conditions.filter(isObject).find((c) => c.type === 'Ready');
    if (ready) out.conditions = [ready];
  }
  return out;
}
