// Karmada's claim metadata on a member copy. Karmada's detector records the claiming policy on the template
// (propagationpolicy.karmada.io/name and /namespace annotations and the /permanent-id label, or the
// clusterpropagationpolicy.karmada.io/ ones) and the template, labels and annotations included, is what its
// Works carry to the members; so each member copy of a template claimed by a policy.karmada.io policy names
// that policy the same way. A policy.flotilla.io claim adds nothing: its copies carry Flotilla's own labels.

import type { PolicyEntry } from './inputs.js';
import { isObject, obj, type JsonObject } from './json.js';
import {
  CLAIM_CPP_ID_LABEL,
  CLAIM_CPP_NAME_ANNOTATION,
  CLAIM_PP_ID_LABEL,
  CLAIM_PP_NAME_ANNOTATION,
  CLAIM_PP_NAMESPACE_ANNOTATION,
  permanentIdOf,
} from './match.js';

export const KARMADA_POLICY_API_PREFIX = 'policy.karmada.io/';

export interface ClaimMetadata {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** The claim metadata a copy of a template claimed by `policy` carries; undefined for other groups. */
export function karmadaClaimMetadata(
  policy: Pick<PolicyEntry, 'kind' | 'namespace' | 'name' | 'object'>,
): ClaimMetadata | undefined {
  const apiVersion = policy.object.apiVersion;
  if (typeof apiVersion !== 'string' || !apiVersion.startsWith(KARMADA_POLICY_API_PREFIX)) return undefined;
  return claimMetadata(policy.kind, policy.namespace, policy.name, permanentIdOf(policy.object));
}

/**
 * Karmada's record of a claim by the propagation policy `kind` `namespace`/`name` with permanent id `id`
 * (what its detector writes on templates and bindings); undefined for other kinds.
 */
export function claimMetadata(
  kind: string,
  namespace: string,
  name: string,
  id: string | undefined,
): ClaimMetadata | undefined {
  if (kind === 'PropagationPolicy')
    return {
      labels: id ? { [CLAIM_PP_ID_LABEL]: id } : {},
      annotations: { [CLAIM_PP_NAMESPACE_ANNOTATION]: namespace, [CLAIM_PP_NAME_ANNOTATION]: name },
    };
  if (kind === 'ClusterPropagationPolicy')
    return { labels: id ? { [CLAIM_CPP_ID_LABEL]: id } : {}, annotations: { [CLAIM_CPP_NAME_ANNOTATION]: name } };
  return undefined;
}

/** Writes `claim` into a rendered copy's labels and annotations (in place). */
export function stampClaimMetadata(doc: JsonObject, claim: ClaimMetadata | undefined): void {
  if (!claim) return;
  const meta = obj(doc.metadata) ?? (doc.metadata = {});
  for (const field of ['labels', 'annotations'] as const) {
    const entries = Object.entries(claim[field]);
    if (entries.length === 0) continue;
    const map = isObject(meta[field]) ? meta[field] : (meta[field] = {});
    for (const [k, v] of entries) map[k] = v;
  }
}
