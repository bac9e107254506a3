// What Karmada's namespace controller (pkg/controllers/namespace) puts on each cluster for one hub
// Namespace: the Namespace with the ClusterOverridePolicies that select it and target the cluster applied
// (a Namespace is cluster-scoped: no OverridePolicy applies, and no propagation policy is involved), its
// server fields pruned. Which namespaces are propagated at all is the controller's concern (Karmada's
// reserved ones, the skip label, --skipped-propagating-namespaces).

import { OverrideCatalog } from './overrides.js';
import { renderScheduled, type DetailedPlacement, type DetailedRenderError } from './render.js';
import { sortInputs } from './inputs.js';
import type { ClusterInfo, PolicyRef } from './types.js';

/** The placements' `policy`: no policy claims a propagated namespace; Karmada's Work names its controller. */
export const NAMESPACE_PROPAGATION: PolicyRef = { kind: 'NamespacePropagation', name: 'namespace-sync' };

export interface NamespaceCopies {
  /** One per cluster whose copy rendered, in the order of `clusters`. */
  placements: DetailedPlacement[];
  /** A cluster whose overrides failed (the rule named), or the Namespace or a policy that could not be read. */
  errors: DetailedRenderError[];
}

/**
 * The copy of `namespace` (a v1 Namespace as the hub has it) for each of `clusters`, with the rules of
 * `overridePolicies` (ClusterOverridePolicies of either group; other kinds are ignored) applied as Karmada's
 * override manager applies them. Never throws for bad input.
 */
export function namespaceCopies(
  namespace: unknown,
  clusters: readonly ClusterInfo[],
  overridePolicies: readonly unknown[],
): NamespaceCopies {
  const inputs = sortInputs([namespace, ...overridePolicies]);
  const out: NamespaceCopies = { placements: [], errors: [] };
  const t = inputs.templates[0];
  for (const e of inputs.errors) out.errors.push({ object: e.object, message: e.message });
  if (!t || t.ref.apiVersion !== 'v1' || t.ref.kind !== 'Namespace' || inputs.templates.length !== 1) {
    if (out.errors.length === 0)
      out.errors.push({ object: t?.ref ?? { apiVersion: '', kind: '', name: '' }, message: 'not a v1 Namespace' });
    return out;
  }
  const catalog = new OverrideCatalog(inputs.overrides.filter((p) => p.kind === 'ClusterOverridePolicy'));
  const schedule = { targets: [...clusters], division: undefined, evicted: [], skipped: [] };
  const ctx = { clusters, rulesFor: () => catalog.rulesFor(t), explain: false };
  renderScheduled(t, { ref: NAMESPACE_PROPAGATION }, schedule, ctx, out);
  return out;
}
