// labelsOverrider / annotationsOverrider (Karmada labelannotationoverrider.go): `add` creates or
// overwrites keys (creating the map when absent), `replace` only touches keys already present, `remove`
// deletes present keys whatever the value says. Removing the last key leaves `{}`.
// Flotilla extension `onlyIfAbsent` (with `add`): a key already present keeps its value, as Gatekeeper's
// AssignMetadata never changes one.

import type { LabelAnnotationOverrider } from '../../../api/policy/v1alpha1/types.js';
import { isObject, setOwn, stringMap } from '../json.js';
import { escapeKey } from '../patch.js';
import { expand, record, type OverrideContext } from './context.js';

export function applyMetadataOverrider(
  doc: unknown,
  o: LabelAnnotationOverrider,
  field: 'labels' | 'annotations',
  ctx: OverrideContext,
  name: string,
): unknown {
  if (!isObject(doc)) return doc;
  const entries = Object.entries(stringMap(o.value));
  if (entries.length === 0) return doc;
  let meta = doc.metadata;
  if (!isObject(meta)) {
    if (o.operator !== 'add') return doc;
    meta = {};
    doc.metadata = meta;
  }
  const m = meta as Record<string, unknown>;
  if (!isObject(m[field])) {
    if (o.operator !== 'add') return doc;
    m[field] = {};
  }
  const current = m[field] as Record<string, unknown>;
  for (const [key, raw] of entries) {
    const pointer = () => `/metadata/${field}/${escapeKey(key)}`;
    const present = Object.prototype.hasOwnProperty.call(current, key);
    if (o.operator === 'add' && o.onlyIfAbsent === true && present) continue;
    if (o.operator === 'add') {
      setOwn(current, key, expand(raw, ctx, name));
      record(ctx, 'add', pointer, name);
    } else if (o.operator === 'replace' && present) {
      setOwn(current, key, expand(raw, ctx, name));
      record(ctx, 'replace', pointer, name);
    } else if (o.operator === 'remove' && present) {
      delete current[key];
      record(ctx, 'remove', pointer, name);
    }
  }
  return doc;
}
