// Admission rules applied to the policies and Clusters among the input documents, as the webhook would
// apply them before they could exist on a control plane. Shared by `render` (which leaves denied objects
// out, as the API server would) and `validate`.

import { formatFieldError, type FieldError } from '../../api/validation/index.js';
import { admissionCheck, groupOf, isAdmitted } from '../engine/admission.js';
import { refOf } from '../engine/index.js';
import type { SourcedDocument } from './inputs.js';

export { groupOf, isAdmitted };

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
    const { errors, warnings } = admissionCheck(d.object, { clusters });
    if (errors.length > 0) result.denials.push({ document: d, errors });
    for (const w of warnings) result.warnings.push({ document: d, message: w });
  }
  return result;
}

export { formatFieldError };
