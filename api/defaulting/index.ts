// The defaults Karmada's mutating webhooks apply to policies (reference §5), as one pure function. The
// webhook diffs its result against the object it received to build the JSON patch; the CLI can call it
// directly. Works on either version of policy.flotilla.io and on policy.karmada.io documents: every field
// it touches has the same place in all of them.
//
// No finalizer is added (Karmada adds one to PropagationPolicies so its detector can strip claim labels
// from resource templates before the policy goes). Flotilla's controller is level-triggered: each sync
// renders the desired state from the policies that exist, so a deleted policy's effects are undone by the
// next sync whether or not the controller saw the deletion, and nothing has to block the delete.

import { isObject, type JsonObject } from '../internal/objects.js';

import {
  FLOTILLA_PERMANENT_ID_LABEL as PERMANENT_ID_LABEL,
  KARMADA_CPP_PERMANENT_ID_LABEL,
  KARMADA_PP_PERMANENT_ID_LABEL,
} from '../validation/propagation.js';

export { PERMANENT_ID_LABEL };

/**
 * The label a new permanent id goes in: Karmada's key for a policy.karmada.io policy (as Karmada's webhook
 * writes it, so Karmada's tools find it), Flotilla's for the policy.flotilla.io ones.
 */
export function permanentIdLabelFor(apiVersion: unknown, kind: unknown): string {
  if (typeof apiVersion !== 'string' || !apiVersion.startsWith('policy.karmada.io/')) return PERMANENT_ID_LABEL;
  return kind === 'ClusterPropagationPolicy' ? KARMADA_CPP_PERMANENT_ID_LABEL : KARMADA_PP_PERMANENT_ID_LABEL;
}

/** Grace period Karmada gives a Gracefully purged application when none is set. */
export const DEFAULT_GRACE_PERIOD_SECONDS = 600;

export interface DefaultingOptions {
  /** Admission operation; the permanent id is assigned on CREATE only. */
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  /** Makes a new permanent id (a UUID in the webhook; anything deterministic in tests). */
  newId: () => string;
  /** The policy's namespace; default `metadata.namespace`. */
  namespace?: string;
  /** On UPDATE, the stored object: a permanent id missing from the new object is carried over from it. */
  oldObject?: unknown;
}

const isEmpty = (v: unknown): boolean => v === undefined || v === null || v === '' || v === 0;

/**
 * Returns a defaulted copy of a policy; the argument is never mutated. Objects that are not policies are
 * returned as an unchanged copy. Defaults by kind:
 * - PropagationPolicy: selector namespaces, spread constraints, propagateDeps for ServiceImport, Weighted
 *   division, failover grace period, permanent id;
 * - ClusterPropagationPolicy: the same without selector namespaces;
 * - OverridePolicy: selector namespaces;
 * - ClusterOverridePolicy: nothing.
 */
export function defaultObject<T>(object: T, opts: DefaultingOptions): T {
  const out = structuredClone(object);
  if (!isObject(out)) return out;
  const kind = out.kind;
  const spec = out.spec;
  const metadata = isObject(out.metadata) ? out.metadata : undefined;
  const namespace = opts.namespace ?? (typeof metadata?.namespace === 'string' ? metadata.namespace : undefined);

  if (kind === 'PropagationPolicy' || kind === 'OverridePolicy') {
    if (isObject(spec) && namespace) defaultSelectorNamespaces(spec, namespace);
  }
  if (kind === 'PropagationPolicy' || kind === 'ClusterPropagationPolicy') {
    if (isObject(spec)) defaultPropagationSpec(spec);
    assignPermanentId(out, opts);
  }
  return out;
}

function defaultSelectorNamespaces(spec: JsonObject, namespace: string): void {
  if (!Array.isArray(spec.resourceSelectors)) return;
  for (const selector of spec.resourceSelectors) {
    if (isObject(selector) && isEmpty(selector.namespace)) selector.namespace = namespace;
  }
}

function defaultPropagationSpec(spec: JsonObject): void {
  const placement = spec.placement;
  if (isObject(placement)) {
    if (Array.isArray(placement.spreadConstraints)) {
      for (const c of placement.spreadConstraints) {
        if (!isObject(c)) continue;
        if (isEmpty(c.spreadByField) && isEmpty(c.spreadByLabel)) c.spreadByField = 'cluster';
        if (isEmpty(c.minGroups)) c.minGroups = 1;
      }
    }
    const rs = placement.replicaScheduling;
    if (isObject(rs) && rs.replicaSchedulingType === 'Divided' && isEmpty(rs.replicaDivisionPreference)) {
      rs.replicaDivisionPreference = 'Weighted';
    }
  }
  if (Array.isArray(spec.resourceSelectors) && spec.resourceSelectors.some(isServiceImport)) {
    spec.propagateDeps = true;
  }
  const failover = spec.failover;
  if (isObject(failover) && isObject(failover.application)) {
    const app = failover.application;
    if (app.purgeMode === 'Gracefully' && (app.gracePeriodSeconds === undefined || app.gracePeriodSeconds === null)) {
      app.gracePeriodSeconds = DEFAULT_GRACE_PERIOD_SECONDS;
    }
  }
}

/** A ServiceImport depends on the Service it imports, so its policy must propagate dependencies. */
function isServiceImport(selector: unknown): boolean {
  return (
    isObject(selector) && selector.kind === 'ServiceImport' && selector.apiVersion === 'multicluster.x-k8s.io/v1alpha1'
  );
}

function assignPermanentId(obj: JsonObject, opts: DefaultingOptions): void {
  const label = permanentIdLabelFor(obj.apiVersion, obj.kind);
  const ids: Record<string, string> = {};
  if (opts.operation === 'CREATE') {
    // Always a fresh id on create, whatever the client sent: ids must not be chosen by users.
    ids[label] = opts.newId();
  } else if (opts.operation === 'UPDATE') {
    // A client that replaces the object from a manifest does not know the id: keep the stored one, under
    // whichever key it is stored (a Karmada-group policy created before it got Karmada's key keeps ours).
    const labels = labelsOf(obj);
    const stored = isObject(opts.oldObject) ? labelsOf(opts.oldObject) : undefined;
    for (const k of new Set([label, PERMANENT_ID_LABEL])) {
      const id = stored?.[k];
      if (labels?.[k] === undefined && typeof id === 'string') ids[k] = id;
    }
  }
  if (Object.keys(ids).length === 0) return;
  if (!isObject(obj.metadata)) obj.metadata = {};
  const metadata = obj.metadata as JsonObject;
  if (!isObject(metadata.labels)) metadata.labels = {};
  Object.assign(metadata.labels as JsonObject, ids);
}

function labelsOf(obj: JsonObject): JsonObject | undefined {
  const metadata = obj.metadata;
  return isObject(metadata) && isObject(metadata.labels) ? metadata.labels : undefined;
}
