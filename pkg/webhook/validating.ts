// /validate: decode → validateObject (api/validation) → AdmissionResponse. Policies of either
// policy.flotilla.io version (and policy.karmada.io documents) and Clusters are judged; v1beta1 objects are
// validated in their v1alpha1 form, whose field paths under spec are the same. Every rule and every
// warning (unknown clusters, rules overwriting each other, selectors that match nothing) lives in
// api/validation; this file only adapts the review to it.

import { ConversionError, toValidationShape } from '../../api/conversion/index.js';
import { aggregate, validateObject, type FieldError, type ValidationContext } from '../../api/validation/index.js';
import { allowed, denied, deniedIfTooBig, errored, isObject, POLICY_GROUPS, POLICY_KINDS } from './admission.js';
import { MAX_ERRORS_SHOWN } from './limits.js';
import type { AdmissionRequest, AdmissionResponse } from './types.js';

/** A registered member cluster, as far as validation looks at it. */
export interface ClusterInfo {
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
}

/** What the webhook knows about the hub; `undefined` means "not known", so no cluster warnings. */
export interface Inventory {
  clusters(): ReadonlyArray<ClusterInfo> | undefined;
}

export const EMPTY_INVENTORY: Inventory = { clusters: () => undefined };

const CLUSTER_GROUPS = new Set(['cluster.flotilla.io', 'cluster.karmada.io']);

export interface ValidatingOptions {
  inventory?: Inventory;
}

type Target = 'policy' | 'cluster' | undefined;

function targetOf(object: unknown): Target {
  if (!isObject(object) || typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') return undefined;
  const group = object.apiVersion.includes('/') ? object.apiVersion.slice(0, object.apiVersion.indexOf('/')) : '';
  if (POLICY_GROUPS.has(group) && POLICY_KINDS.has(object.kind)) return 'policy';
  if (CLUSTER_GROUPS.has(group) && object.kind === 'Cluster') return 'cluster';
  return undefined;
}

const dedupe = (xs: readonly string[]): string[] => [...new Set(xs)];

/** Every error as aggregate() words them, up to MAX_ERRORS_SHOWN; then how many more there are. */
function denialMessage(errors: readonly FieldError[]): string {
  if (errors.length <= MAX_ERRORS_SHOWN) return aggregate(errors);
  return `${aggregate(errors.slice(0, MAX_ERRORS_SHOWN))} and ${errors.length - MAX_ERRORS_SHOWN} more errors`;
}

export function validateRequest(request: AdmissionRequest, opts: ValidatingOptions = {}): AdmissionResponse {
  const { uid, operation } = request;
  if (operation !== 'CREATE' && operation !== 'UPDATE') return allowed(uid);
  const target = targetOf(request.object);
  if (target === undefined || !isObject(request.object)) return allowed(uid);
  const tooBig = deniedIfTooBig(request);
  if (tooBig) return tooBig;
  const inventory = opts.inventory ?? EMPTY_INVENTORY;

  let object: Record<string, unknown>;
  let oldObject: unknown;
  try {
    object = target === 'policy' ? toValidationShape(request.object) : request.object;
    oldObject =
      isObject(request.oldObject) && targetOf(request.oldObject) === target
        ? target === 'policy'
          ? toValidationShape(request.oldObject)
          : request.oldObject
        : undefined;
  } catch (e: unknown) {
    if (e instanceof ConversionError) return denied(uid, e.message);
    throw e;
  }

  const ctx: ValidationContext = { operation, requirePermanentId: true };
  if (oldObject !== undefined) ctx.oldObject = oldObject;
  const clusters = inventory.clusters();
  if (clusters) ctx.clusters = clusters;
  const result = validateObject(object, ctx);
  const warnings = dedupe(result.warnings);
  if (result.errors.length > 0) return denied(uid, denialMessage(result.errors), warnings);
  return allowed(uid, warnings);
}

/** For callers that must never throw (the HTTP handler): unexpected failures become a 500 in the review. */
export function validateRequestSafely(request: AdmissionRequest, opts: ValidatingOptions = {}): AdmissionResponse {
  try {
    return validateRequest(request, opts);
  } catch (e: unknown) {
    return errored(request.uid, 500, `validation failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}
