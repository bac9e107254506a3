// The admission rules as the engine state applies them: a policy or Cluster the webhook would deny is not
// used, as it would not exist on an API server guarded by the webhook (and as `flotilla render` leaves it
// out). Pure: api/validation has no clients, clock or environment. Templates are never judged here.

import { toValidationShape } from '../../api/conversion/index.js';
import { formatFieldError, invalid, validateObject, type FieldError } from '../../api/validation/index.js';
import { refOf } from './inputs.js';

/** The API groups the webhook guards (policies and Clusters, either project's group). */
const ADMITTED_GROUPS = new Set([
  'policy.flotilla.io',
  'policy.karmada.io',
  'cluster.flotilla.io',
  'cluster.karmada.io',
]);

/** The API group of an object's apiVersion ('' for the core group). */
export function groupOf(o: unknown): string {
  const v = refOf(o).apiVersion;
  return v.includes('/') ? v.slice(0, v.indexOf('/')) : '';
}

/** True for objects the admission webhook judges (policies and Clusters); templates are anything else. */
export function isAdmitted(o: unknown): boolean {
  return ADMITTED_GROUPS.has(groupOf(o));
}

export interface AdmissionCheck {
  /** Every field error the webhook would deny `o` for; empty when it would allow it or does not judge it. */
  errors: FieldError[];
  warnings: string[];
}

/**
 * The webhook's rules for one object, offline (no permanent-id requirement, no UPDATE immutability),
 * v1beta1 policies judged in their v1alpha1 form as the webhook judges them. `clusters` are the Cluster
 * objects known, for the warnings about cluster names no Cluster has. Never throws.
 */
export function admissionCheck(
  o: unknown,
  options: { clusters?: ReadonlyArray<{ metadata?: { name?: string } }> } = {},
): AdmissionCheck {
  if (!isAdmitted(o)) return { errors: [], warnings: [] };
  let object: unknown = o;
  if (refOf(o).apiVersion === 'policy.flotilla.io/v1beta1') {
    try {
      object = toValidationShape(o as Record<string, unknown>);
    } catch (err: unknown) {
      return {
        errors: [invalid('apiVersion', 'policy.flotilla.io/v1beta1', err instanceof Error ? err.message : String(err))],
        warnings: [],
      };
    }
  }
  try {
    const { errors, warnings } = validateObject(object, options.clusters ? { clusters: [...options.clusters] } : {});
    return { errors, warnings };
  } catch (err: unknown) {
    return {
      errors: [invalid('', '', `internal error: ${err instanceof Error ? err.message : String(err)}`)],
      warnings: [],
    };
  }
}

/** Why the webhook would deny `o`, one formatted field error per entry (`field.path: Type: value: detail`). */
export function admissionErrors(o: unknown): string[] {
  return admissionCheck(o).errors.map(formatFieldError);
}
