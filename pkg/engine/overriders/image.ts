// imageOverrider (Karmada imageoverride.go): with a predicate, the string at predicate.path; without one,
// every container's image of the known workload kinds (Pod, ReplicaSet, Deployment, DaemonSet,
// StatefulSet, Job) — initContainers only with Flotilla's `includeInitContainers: true`.

import type { ImageOverrider } from '../../../api/policy/v1alpha1/types.js';
import { overrideImage } from '../../image/index.js';
import { isObject, str } from '../json.js';
import { getValue } from '../patch.js';
import { containerListPaths, expand, OverrideError, record, write, type OverrideContext } from './context.js';

function rewrite(image: string, o: ImageOverrider, value: string | undefined, name: string): string {
  try {
    return overrideImage(image, String(o.component), String(o.operator), value);
  } catch (err: unknown) {
    throw new OverrideError(`${name}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

export function applyImageOverrider(
  doc: unknown,
  o: ImageOverrider,
  ctx: OverrideContext,
  name: string,
  kind: string,
): unknown {
  const value = o.value === undefined ? undefined : expand(String(o.value), ctx, name);
  const predicatePath = isObject(o.predicate) ? str(o.predicate.path) : undefined;
  if (predicatePath !== undefined) {
    if (!predicatePath.startsWith('/')) throw new OverrideError(`${name}: imagePath should be start with / character`);
    const got = getValue(doc, predicatePath);
    if (!got.found)
      throw new OverrideError(
        `${name}: failed to obtain imageValue with predicate path(${predicatePath}), error: the path does not exist`,
      );
    if (typeof got.value !== 'string')
      throw new OverrideError(
        `${name}: failed to obtain imageValue with predicate path(${predicatePath}), error: failed to convert path(${predicatePath}) to string`,
      );
    return write(doc, { op: 'replace', path: got.pointer, value: rewrite(got.value, o, value, name) }, ctx, name);
  }
  const out = doc;
  for (const listPath of containerListPaths(kind, o.includeInitContainers === true)) {
    const list = getValue(out, listPath);
    if (!list.found || !Array.isArray(list.value)) continue;
    list.value.forEach((c: unknown, i: number) => {
      if (!isObject(c)) throw new OverrideError(`${name}: ${list.pointer}/${i} is not a container object`);
      c.image = rewrite(typeof c.image === 'string' ? c.image : '', o, value, name);
      record(ctx, 'replace', () => `${list.pointer}/${i}/image`, name);
    });
  }
  return out;
}
