// plaintext (Karmada parseJSONPatchesByPlaintext): RFC 6902 add/remove/replace on the whole object, with
// Flotilla's keyed list segments. An omitted value is null, as in Karmada.
//
// Flotilla extensions (policy.flotilla.io v1beta1): a `[field=*]` segment applies the operation to every
// list item that has the field (none: nothing happens), and `pathTests` (Gatekeeper's) must all hold,
// per item, before the operation applies. Under a glob, removals run from the last item back so indices
// stay right.

import type { PlaintextOverrider } from '../../../api/policy/v1alpha1/types.js';
import { arr, isObject, str } from '../json.js';
import { insertionTarget, stableSite } from '../additions.js';
import { expandGlobs, PatchError, pathTestsHold } from '../patch.js';
import { expand, OverrideError, write, type OverrideContext } from './context.js';

export function applyPlaintextOverrider(
  doc: unknown,
  o: PlaintextOverrider,
  ctx: OverrideContext,
  name: string,
): unknown {
  try {
    const path = String(o.path ?? '');
    const tests = (arr(o.pathTests) ?? [])
      .filter(isObject)
      .map((t) => ({ subPath: str(t.subPath) ?? '', condition: str(t.condition) ?? '' }));
    const paths = expandGlobs(doc, path);
    if (o.operator === 'remove') paths.reverse();
    const value = expand(o.value, ctx, name);
    let out = doc;
    for (const p of paths) {
      if (!pathTestsHold(out, p, tests)) continue;
      if (o.operator === 'add' && ctx.additions) {
        const target = insertionTarget(out, p);
        if (target && !ctx.additions.shouldAdd(ctx, name, stableSite(out, target.pointer), [value], target.list))
          continue;
      }
      out = write(out, { op: String(o.operator), path: p, value }, ctx, name);
    }
    return out;
  } catch (err: unknown) {
    if (err instanceof PatchError) throw new OverrideError(`${name}: ${err.message}`, { cause: err });
    throw err;
  }
}
