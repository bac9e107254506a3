// Flotilla's library surface: `render` and `validate` as docs/architecture.md gives them. Everything else is internal.

import { validateObject, aggregate } from '../api/validation/index.js';
import { render, type RenderResult, type RenderInput } from './engine/index.js';

export { render };
export type { RenderInput, RenderResult };

export interface ValidateResult {
  allowed: boolean;
  message?: string;
  warnings: string[];
}

/**
 * The admission rules, offline: `allowed` with no message, or denied with every field error in one
 * message (`field.path: Type: value: detail`, several as `[e1, e2]`). Never throws.
 */
export function validate(object: unknown): ValidateResult {
  try {
    const { errors, warnings } = validateObject(object);
    return errors.length === 0 ? { allowed: true, warnings } : { allowed: false, message: aggregate(errors), warnings };
  } catch (err: unknown) {
    return {
      allowed: false,
      message: `internal error: ${err instanceof Error ? err.message : String(err)}`,
      warnings: [],
    };
  }
}
