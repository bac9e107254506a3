// Admission rules applied to the policies and Clusters among the input documents, as the webhook would
// apply them before they could exist on a control plane. Shared by `render` (which leaves denied objects
// out, as the API server would) and `validate`.

import { toValidationShape } from '../../api/conversion/index.js';
import { formatFieldError, validateObject, type FieldError } from '../../api/validation/index.js';
import { refOf } from '../engine/index.js';
import type { SourcedDocument } from './inputs.js';

const ADMITTED_GROUPS = new Set([
  'policy.flotilla.io',
  'policy.karmada.io',
  'cluster.flotilla.io',
  'cluster.karmada.io',
]);

export function groupOf(o: unknown): string {
  const v = refOf(o).apiVersion;
  return v.includes('/') ? v.slice(0, v.indexOf('/')) : '';
}

/** True for the objects the webhook guards (policies and Clusters); templates are anything else. */
export function isAdmitted(o: unknown): boolean {
  return ADMITTED_GROUPS.has(groupOf(o));
}

export interface Denial {
  document: SourcedDocument;
  errors: FieldError[];
}

export interface CheckResult {
  /** Denied documents, with every field error. */
  denials: Denial[];
  warnings: Array<{ document: SourcedDocument; message: string }>;
  /** Number of documents the rules applied to. */
  checked: number;
}

function toV1alpha1(o: unknown): { object: unknown; error?: FieldError } {
  const ref = refOf(o);
  if (ref.apiVersion !== 'policy.flotilla.io/v1beta1') return { object: o };
  try {
    return { object: toValidationShape(o as Record<string, unknown>) };
  } catch (err: unknown) {
    return {
      object: o,
      error: {
        type: 'Invalid value',
        field: 'apiVersion',
        value: ref.apiVersion,
        detail: err instanceof Error ? err.message : String(err),
      },
    };
  }
}

export function checkDocuments(documents: readonly SourcedDocument[]): CheckResult {
  const clusters = documents
    .map((d) => d.object)
    .filter((o) => groupOf(o).startsWith('cluster.') && refOf(o).kind === 'Cluster') as Array<{
    metadata?: { name?: string };
  }>;
  const result: CheckResult = { denials: [], warnings: [], checked: 0 };
  for (const d of documents) {
    if (!isAdmitted(d.object)) continue;
    result.checked++;
    const { object, error } = toV1alpha1(d.object);
    if (error) {
      result.denials.push({ document: d, errors: [error] });
      continue;
    }
    const { errors, warnings } = validateObject(object, { clusters });
    if (errors.length > 0) result.denials.push({ document: d, errors });
    for (const w of warnings) result.warnings.push({ document: d, message: w });
  }
  return result;
}

export { formatFieldError };
