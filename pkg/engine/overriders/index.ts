// One rule's overriders, in Karmada's fixed order: image → command → args → labels → annotations → field →
// plaintext. Each element is built against the object as the previous one left it.

import type {
  CommandArgsOverrider,
  FieldOverrider,
  ImageOverrider,
  LabelAnnotationOverrider,
  Overriders,
  PlaintextOverrider,
} from '../../../api/policy/v1alpha1/types.js';
import { arr, isObject } from '../json.js';
import { applyCommandArgsOverrider } from './commandargs.js';
import type { OverrideContext } from './context.js';
import { applyFieldOverrider } from './field.js';
import { applyImageOverrider } from './image.js';
import { applyMetadataOverrider } from './metadata.js';
import { applyPlaintextOverrider } from './plaintext.js';

export { OverrideError, type AdditionGuard, type OverrideContext } from './context.js';

function each<T>(list: unknown, fn: (o: T, i: number) => void): void {
  const items = arr(list);
  if (!items) return;
  for (let i = 0; i < items.length; i++) {
    const o = items[i];
    if (isObject(o)) fn(o as T, i);
  }
}

/** Applies every overrider of one rule to `doc` (mutated in place) and returns the root. */
export function applyOverriders(doc: unknown, overriders: Overriders, ctx: OverrideContext, kind: string): unknown {
  let out = doc;
  each<ImageOverrider>(
    overriders.imageOverrider,
    (o, i) => (out = applyImageOverrider(out, o, ctx, `imageOverrider[${i}]`, kind)),
  );
  each<CommandArgsOverrider>(
    overriders.commandOverrider,
    (o, i) => (out = applyCommandArgsOverrider(out, o, 'command', ctx, `commandOverrider[${i}]`, kind)),
  );
  each<CommandArgsOverrider>(
    overriders.argsOverrider,
    (o, i) => (out = applyCommandArgsOverrider(out, o, 'args', ctx, `argsOverrider[${i}]`, kind)),
  );
  each<LabelAnnotationOverrider>(
    overriders.labelsOverrider,
    (o, i) => (out = applyMetadataOverrider(out, o, 'labels', ctx, `labelsOverrider[${i}]`)),
  );
  each<LabelAnnotationOverrider>(
    overriders.annotationsOverrider,
    (o, i) => (out = applyMetadataOverrider(out, o, 'annotations', ctx, `annotationsOverrider[${i}]`)),
  );
  each<FieldOverrider>(
    overriders.fieldOverrider,
    (o, i) => (out = applyFieldOverrider(out, o, ctx, `fieldOverrider[${i}]`)),
  );
  each<PlaintextOverrider>(
    overriders.plaintext,
    (o, i) => (out = applyPlaintextOverrider(out, o, ctx, `plaintext[${i}]`)),
  );
  return out;
}
