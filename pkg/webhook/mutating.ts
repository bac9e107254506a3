// /mutate: decode → defaultObject (api/defaulting) on a copy → JSON patch from diffing the copy against the
// object as received. The diff is the only source of the patch, so the patch can never disagree with the
// defaults.

import jsonpatch from 'fast-json-patch';

import { defaultObject } from '../../api/defaulting/index.js';
import { deniedIfTooBig, errored, isObject, patched, POLICY_GROUPS, POLICY_KINDS } from './admission.js';
import type { AdmissionRequest, AdmissionResponse } from './types.js';

export interface MutatingOptions {
  /** A new permanent id per CREATE (crypto.randomUUID in the server). */
  newId: () => string;
}

function isPolicy(object: unknown): object is Record<string, unknown> {
  if (!isObject(object) || typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') return false;
  return POLICY_GROUPS.has(object.apiVersion.split('/')[0] ?? '') && POLICY_KINDS.has(object.kind);
}

export function mutateRequest(request: AdmissionRequest, opts: MutatingOptions): AdmissionResponse {
  const { uid, operation, object } = request;
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || !isPolicy(object)) return patched(uid, []);
  const tooBig = deniedIfTooBig(request);
  if (tooBig) return tooBig;
  const defaulted = defaultObject(object, {
    operation,
    newId: opts.newId,
    ...(request.namespace ? { namespace: request.namespace } : {}),
    ...(request.oldObject !== undefined ? { oldObject: request.oldObject } : {}),
  });
  return patched(uid, jsonpatch.compare(object, defaulted));
}

/** For callers that must never throw (the HTTP handler): unexpected failures become a 500 in the review. */
export function mutateRequestSafely(request: AdmissionRequest, opts: MutatingOptions): AdmissionResponse {
  try {
    return mutateRequest(request, opts);
  } catch (e: unknown) {
    return errored(request.uid, 500, `defaulting failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}
