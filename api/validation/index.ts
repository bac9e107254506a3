// Every admission rule, in one place; the webhook, the CLI and the controller all call validateObject.
// Pure: no clients, no clock, no environment.
// (Contract stub: the rules land in the next commit.)

import type { FieldError } from './errors.js';

export * from './errors.js';

export interface ValidationContext {
  /** Admission operation; UPDATE enables the immutability rules. Default CREATE. */
  operation?: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  /** The stored object, on UPDATE. */
  oldObject?: unknown;
  /**
   * Known member clusters, when the caller has them (CLI: the Cluster documents in its input; webhook: none
   * unless configured). Only used for warnings; `undefined` means "unknown", so no cluster warnings.
   */
  clusters?: ReadonlyArray<{ metadata?: { name?: string; labels?: Record<string, string> }; spec?: Record<string, unknown> }>;
}

export interface ValidationResult {
  /** Every field error, in rule order; empty means allowed. */
  errors: FieldError[];
  /** Legal but likely wrong (AdmissionResponse.warnings). */
  warnings: string[];
}

/**
 * Validates one policy.flotilla.io / policy.karmada.io v1alpha1 object (PropagationPolicy,
 * ClusterPropagationPolicy, OverridePolicy, ClusterOverridePolicy) or a Cluster. Objects of another
 * kind are reported as an error at `kind`.
 */
export function validateObject(_object: unknown, _ctx: ValidationContext = {}): ValidationResult {
  return { errors: [], warnings: [] };
}
