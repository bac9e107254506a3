// The admission rules as the engine state applies them: a policy or Cluster the webhook would deny is not
// used, as it would not exist on an API server guarded by the webhook (and as `flotilla render` leaves it
// out). Pure: api/validation has no clients, clock or environment. Templates are never judged here.

import { toValidationShape } from '../../api/conversion/index.js';
import { formatFieldError, invalid, validateObject } from '../../api/validation/index.js';
import { refOf } from './inputs.js';

/** The API groups the webhook guards (policies and Clusters, either project's group). */
const ADMITTED_GROUPS = new Set([
  'policy.flotilla.io',
  'policy.karmada.io',
  'cluster.flotilla.io',
  'cluster.karmada.io',
]);

function groupOf(o: unknown): string {
  const v = refOf(o).apiVersion;
  return v.includes('/') ? v.slice(0, v.indexOf('/')) : '';
}

/** True for objects the admission webhook judges (policies and Clusters); templates are anything else. */
export function isAdmitted(o: unknown): boolean {
  return ADMITTED_GROUPS.has(groupOf(o));
}

/**
 * Why the webhook would deny `o`, one formatted field error per entry (`field.path: Type: value: detail`);
 * empty when it would allow it or does not judge it. Judged offline (no permanent-id requirement, no
 * UPDATE immutability, no known clusters: those only add warnings), v1beta1 policies in their v1alpha1
 * form as the webhook judges them. Never throws.
 */
export function admissionErrors(o: unknown): string[] {
  if (!isAdmitted(o)) return [];
  let object: unknown = o;
  if (refOf(o).apiVersion === 'policy.flotilla.io/v1beta1') {
    try {
      object = toValidationShape(o as Record<string, unknown>);
    } catch (err: unknown) {
      return [
        formatFieldError(
          invalid('apiVersion', 'policy.flotilla.io/v1beta1', err instanceof Error ? err.message : String(err)),
        ),
      ];
    }
  }
  try {
    return validateObject(object).errors.map(formatFieldError);
  } catch (err: unknown) {
    return [`internal error: ${err instanceof Error ? err.message : String(err)}`];
  }
}
