// /override: admission-time overrides inside one cluster. The admitted object gets the override rules
// that select it and target this cluster (and act on the operation), then the matching Gatekeeper
// mutators, through the engine's OverrideSet: the same functions `flotilla render` uses. The answer is a
// JSON patch from diffing, so it can never disagree with what the engine computed.
//
// Safe to fail: whatever keeps the override from being computed or sent (the policies not loaded yet, an
// object over the size limits, a rule that fails on this object, an answer over the response limit or
// not fitting under the server's in-flight ceiling) admits the object unmodified, with a warning
// naming Flotilla and the reason, and counts it (flotilla_webhook_override_unmodified_total by reason).
// Requests the webhook never answers (it is down, or too slow) are the apiserver's to count:
// apiserver_admission_webhook_fail_open_count{name="override.flotilla.io"} with failurePolicy Ignore.
// `sideEffects: None`: a dry run gets the same patch and nothing else happens.

import jsonpatch from 'fast-json-patch';

import { AdmissionOverrideError, type OverrideSet } from '../engine/index.js';
import { errored, isObject, patched } from './admission.js';
import { boundMessage, objectTooBig } from './limits.js';
import type { AdmissionRequest, AdmissionResponse } from './types.js';

/** Groups whose objects are Flotilla's or Gatekeeper's configuration, never overridden. */
const OWN_GROUPS = new Set([
  'policy.flotilla.io',
  'policy.karmada.io',
  'cluster.flotilla.io',
  'cluster.karmada.io',
  'work.flotilla.io',
  'mutations.gatekeeper.sh',
]);

/**
 * Why an object was admitted unmodified: the policies are not loaded yet, the object is over the size
 * limits, a rule failed on it, the answer would pass the response limit (`too_large`), or the answer did
 * not fit under the in-flight ceiling when it was due (`overloaded`).
 */
export type UnmodifiedReason = 'not_ready' | 'too_big' | 'rule_failed' | 'too_large' | 'overloaded';

export interface OverrideSource {
  /** The policies and mutators of this cluster, kept current by watches. */
  readonly set: OverrideSet;
  /** True once every watch has listed. */
  ready(): boolean;
  /** Labels of a namespace (for mutators' namespaceSelector), when known. */
  namespaceLabels(namespace: string): Readonly<Record<string, string>> | undefined;
}

export interface OverridingOptions {
  source: OverrideSource;
  /** Told of every object admitted unmodified because the override could not be computed. */
  unmodified?: (reason: UnmodifiedReason) => void;
  /**
   * Told of each warning an admission answers with (a Gatekeeper mutator that selects the object but is
   * not applied, and why), with the object it concerns: for the log.
   */
  warn?: (message: string, object: string) => void;
}

/** At most this many warnings in one answer (each bounded in length); the log gets them all. */
const MAX_WARNINGS = 8;

/** The answer admitting the object of review `uid` as it is, with a warning saying why. */
export function unmodifiedOverride(uid: string, why: string): AdmissionResponse {
  return patched(uid, [], [boundMessage(`Flotilla admission override not applied: ${why}`)]);
}

function unmodified(
  request: AdmissionRequest,
  opts: OverridingOptions,
  reason: UnmodifiedReason,
  why: string,
): AdmissionResponse {
  opts.unmodified?.(reason);
  return unmodifiedOverride(request.uid, why);
}

export function overrideRequest(request: AdmissionRequest, opts: OverridingOptions): AdmissionResponse {
  const { uid, operation, object } = request;
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || !isObject(object)) return patched(uid, []);
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  if (OWN_GROUPS.has(apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '')) return patched(uid, []);
  if (!opts.source.ready())
    return unmodified(request, opts, 'not_ready', 'the webhook has not loaded the override policies yet');
  const tooBig = objectTooBig(object);
  if (tooBig !== undefined) return unmodified(request, opts, 'too_big', tooBig);

  // The object names its namespace on most requests; the request says it when the object does not.
  const input = object;
  let admitted = input;
  const meta = isObject(input.metadata) ? input.metadata : undefined;
  const namespace = (typeof meta?.namespace === 'string' && meta.namespace) || request.namespace || undefined;
  if (namespace && meta && meta.namespace === undefined) admitted = { ...input, metadata: { ...meta, namespace } };
  let result;
  try {
    result = opts.source.set.admit({
      object: admitted,
      operation,
      oldObject: operation === 'UPDATE' ? request.oldObject : undefined,
      namespaceLabels: namespace ? opts.source.namespaceLabels(namespace) : undefined,
    });
  } catch (e: unknown) {
    if (!(e instanceof AdmissionOverrideError)) throw e;
    return unmodified(request, opts, 'rule_failed', e.message);
  }
  const warnings = result.warnings.slice(0, MAX_WARNINGS).map((w) => boundMessage(`Flotilla: ${w}`));
  if (result.warnings.length > 0 && opts.warn) {
    const what = `${String(input.kind)} ${namespace ? `${namespace}/` : ''}${(typeof meta?.name === 'string' && meta.name) || (typeof meta?.generateName === 'string' ? meta.generateName : '')}`;
    for (const w of result.warnings) opts.warn(w, what);
  }
  if (!result.changed) return patched(uid, [], warnings);
  const out = result.object;
  if (admitted !== input && isObject(out.metadata) && out.metadata.namespace === namespace)
    delete out.metadata.namespace;
  return patched(uid, jsonpatch.compare(input, out), warnings);
}

/** For the HTTP handler, which must never throw: an unexpected failure becomes a 500 in the review. */
export function overrideRequestSafely(request: AdmissionRequest, opts: OverridingOptions): AdmissionResponse {
  try {
    return overrideRequest(request, opts);
  } catch (e: unknown) {
    return errored(
      request.uid,
      500,
      `Flotilla admission override failed: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}
