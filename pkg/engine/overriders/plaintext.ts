// plaintext (Karmada parseJSONPatchesByPlaintext): RFC 6902 add/remove/replace on the whole object, with
// Flotilla's keyed list segments. An omitted value is null, as in Karmada.

import type { PlaintextOverrider } from '../../../api/policy/v1alpha1/types.js';
import { PatchError } from '../patch.js';
import { expand, OverrideError, write, type OverrideContext } from './context.js';

export function applyPlaintextOverrider(
  doc: unknown,
  o: PlaintextOverrider,
  ctx: OverrideContext,
  name: string,
): unknown {
  try {
    return write(
      doc,
      { op: String(o.operator), path: String(o.path ?? ''), value: expand(o.value, ctx, name) },
      ctx,
      name,
    );
  } catch (err: unknown) {
    if (err instanceof PatchError) throw new OverrideError(`${name}: ${err.message}`, { cause: err });
    throw err;
  }
}
