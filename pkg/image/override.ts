// The string half of the imageOverrider: one element (component, operator, value) applied to one image
// string, with Karmada's results to the character. Finding the image fields in an object and turning
// the result into a patch is the engine's part.

import { formatImage, isDigest, isTag, parseImage, type ImageReference } from './parse.js';

/** A component other than Registry, Repository or Tag. Admission denies these; this guards the engine. */
export class UnsupportedImageComponentError extends Error {
  readonly code = 'IMAGE_COMPONENT';
  readonly component: string;

  constructor(component: string, options?: { cause?: unknown }) {
    super(`unsupported image component(${component})`, options);
    this.name = 'UnsupportedImageComponentError';
    this.component = component;
  }
}

/**
 * Karmada's SetTagOrDigest: a value shaped like a tag becomes the tag (and clears the digest), one
 * shaped like a digest becomes the digest (and clears the tag); anything else leaves the reference as
 * it was, silently. The digest shape is the grammar's only: go-digest's algorithm and length checks do
 * not apply here, as in Karmada.
 */
function setTagOrDigest(ref: ImageReference, value: string): void {
  if (isTag(value)) {
    ref.tag = value;
    ref.digest = '';
  } else if (isDigest(value)) {
    ref.digest = value;
    ref.tag = '';
  }
}

/**
 * Applies one imageOverrider element to an image string and returns the new string.
 *
 * - Registry: add appends `value` to the hostname as plain text (no '/' is inserted: `a.example` +
 *   `.test` gives `a.example.test`); replace sets it (an empty value removes it); remove clears it.
 * - Repository: add appends, replace sets, remove clears (giving `host/:tag`, as Karmada does).
 * - Tag: add appends `value` to the tag (or to the digest when there is no tag) and replace sets it,
 *   both through SetTagOrDigest, so a result that is neither a tag nor a digest changes nothing;
 *   remove clears the tag, or the digest when there is no tag.
 *
 * An unknown operator changes nothing, but the image is still re-serialised (a digest next to a tag is
 * dropped). `value` undefined reads as "". Throws {@link ImageParseError} when `image` does not parse
 * and {@link UnsupportedImageComponentError} for an unknown component (the image is parsed first).
 */
export function overrideImage(image: string, component: string, operator: string, value: string | undefined): string {
  const ref = parseImage(image);
  const v = value ?? '';
  switch (component) {
    case 'Registry':
      if (operator === 'add') ref.hostname += v;
      else if (operator === 'replace') ref.hostname = v;
      else if (operator === 'remove') ref.hostname = '';
      break;
    case 'Repository':
      if (operator === 'add') ref.repository += v;
      else if (operator === 'replace') ref.repository = v;
      else if (operator === 'remove') ref.repository = '';
      break;
    case 'Tag':
      if (operator === 'add') setTagOrDigest(ref, (ref.tag !== '' ? ref.tag : ref.digest) + v);
      else if (operator === 'replace') setTagOrDigest(ref, v);
      else if (operator === 'remove') {
        if (ref.tag !== '') ref.tag = '';
        else ref.digest = '';
      }
      break;
    default:
      throw new UnsupportedImageComponentError(component);
  }
  return formatImage(ref);
}
