// AdmissionReview decoding and AdmissionResponse constructors (controller-runtime's vocabulary: Allowed,
// Denied, Errored, Patched). Decoding has two failure levels:
// - the body is not an AdmissionReview at all → BadRequestError, answered with HTTP 400;
// - it is one, but its request is missing or malformed → an error response inside the review, carrying
//   whatever uid could be read, so the apiserver reports it against the right request.

import { isObject, type JsonObject } from '../../api/internal/objects.js';
import { describeField } from '../../api/internal/quote.js';
import { boundMessage, boundWarnings, objectTooBig } from './limits.js';
import {
  ADMISSION_API_VERSIONS,
  OPERATIONS,
  type AdmissionAPIVersion,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionReview,
  type GroupVersionKind,
  type Operation,
} from './types.js';
import { errorClass } from '../../api/internal/errors.js';

/** The body cannot be answered with a review: the HTTP layer turns it into a 400 with this message. */
export class BadRequestError extends errorClass('BadRequestError', 'BAD_REQUEST') {}

export { isObject };

/** The policies /validate and /mutate judge: these kinds, of either project's group. */
export const POLICY_GROUPS: ReadonlySet<string> = new Set(['policy.flotilla.io', 'policy.karmada.io']);
export const POLICY_KINDS: ReadonlySet<string> = new Set([
  'PropagationPolicy',
  'ClusterPropagationPolicy',
  'OverridePolicy',
  'ClusterOverridePolicy',
]);

/** Checks `kind` and `apiVersion` of a parsed body; returns the apiVersion to echo. */
export function reviewVersion<V extends string>(body: unknown, kind: string, versions: readonly V[]): V {
  if (!isObject(body))
    throw new BadRequestError(
      `expected a ${kind} object, got ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}`,
    );
  const apiVersion = body.apiVersion;
  if (body.kind !== kind || typeof apiVersion !== 'string' || !(versions as readonly string[]).includes(apiVersion)) {
    throw new BadRequestError(
      `expected kind ${kind} with apiVersion ${versions.join(' or ')}, got ${describeField('kind', body.kind)}, ${describeField('apiVersion', apiVersion)}`,
    );
  }
  return apiVersion as V;
}

export type DecodedAdmission =
  | { apiVersion: AdmissionAPIVersion; request: AdmissionRequest; error?: undefined }
  | { apiVersion: AdmissionAPIVersion; request?: undefined; error: AdmissionResponse };

/** Reads an AdmissionReview; throws BadRequestError only when the body is not an AdmissionReview. */
export function decodeAdmissionReview(body: unknown): DecodedAdmission {
  const apiVersion = reviewVersion(body, 'AdmissionReview', ADMISSION_API_VERSIONS);
  const raw = (body as JsonObject).request;
  if (!isObject(raw)) return { apiVersion, error: errored('', 400, 'AdmissionReview has no request') };
  const uid = typeof raw.uid === 'string' ? raw.uid : '';
  if (typeof raw.uid !== 'string' || raw.uid === '')
    return { apiVersion, error: errored(uid, 400, 'request.uid must be a non-empty string') };
  const operation = raw.operation;
  if (typeof operation !== 'string' || !(OPERATIONS as readonly string[]).includes(operation)) {
    return { apiVersion, error: errored(uid, 400, `request.operation must be one of ${OPERATIONS.join(', ')}`) };
  }
  const request: AdmissionRequest = { uid, operation: operation as Operation };
  if (isGVK(raw.kind)) request.kind = { group: raw.kind.group, version: raw.kind.version, kind: raw.kind.kind };
  if (typeof raw.name === 'string') request.name = raw.name;
  if (typeof raw.namespace === 'string') request.namespace = raw.namespace;
  if (raw.object !== undefined && raw.object !== null) request.object = raw.object;
  if (raw.oldObject !== undefined && raw.oldObject !== null) request.oldObject = raw.oldObject;
  if (typeof raw.dryRun === 'boolean') request.dryRun = raw.dryRun;
  if ((operation === 'CREATE' || operation === 'UPDATE') && !isObject(request.object)) {
    return { apiVersion, error: errored(uid, 400, `request.object must be an object for ${operation}`) };
  }
  return { apiVersion, request };
}

function isGVK(v: unknown): v is GroupVersionKind {
  return isObject(v) && typeof v.group === 'string' && typeof v.version === 'string' && typeof v.kind === 'string';
}

// Messages and warnings are bounded here, where every answer is built (limits.ts).
const withWarnings = (r: AdmissionResponse, warnings: readonly string[] | undefined): AdmissionResponse => {
  if (warnings && warnings.length > 0) r.warnings = boundWarnings(warnings);
  return r;
};

export function allowed(uid: string, warnings?: readonly string[]): AdmissionResponse {
  return withWarnings({ uid, allowed: true }, warnings);
}

/** A policy decision: 403 Forbidden with the reason, as kubectl shows it after "denied the request: ". */
export function denied(uid: string, message: string, warnings?: readonly string[]): AdmissionResponse {
  return withWarnings(
    {
      uid,
      allowed: false,
      status: { status: 'Failure', code: 403, reason: 'Forbidden', message: boundMessage(message) },
    },
    warnings,
  );
}

/** The request could not be judged (bad input or an internal failure). */
export function errored(uid: string, code: number, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { status: 'Failure', code, message: boundMessage(message) } };
}

/** Allowed with a JSON patch; no patch fields when there is nothing to change. */
export function patched(uid: string, ops: readonly unknown[], warnings?: readonly string[]): AdmissionResponse {
  const r = allowed(uid, warnings);
  if (ops.length > 0) {
    r.patchType = 'JSONPatch';
    r.patch = Buffer.from(JSON.stringify(ops)).toString('base64');
  }
  return r;
}

/**
 * A denial when the request's object or oldObject is nested deeper or holds more values than the webhook
 * walks (limits.ts); undefined when both are within the limits. Call before any recursive work on them.
 */
export function deniedIfTooBig(request: AdmissionRequest): AdmissionResponse | undefined {
  const problem = objectTooBig(request.object) ?? objectTooBig(request.oldObject, 'oldObject');
  return problem === undefined ? undefined : denied(request.uid, problem);
}

export function admissionReview(apiVersion: AdmissionAPIVersion, response: AdmissionResponse): AdmissionReview {
  return { apiVersion, kind: 'AdmissionReview', response };
}
