// /convert: ConversionReview (apiextensions.k8s.io/v1 or v1beta1) → convertObject per object, in order.
// All or nothing: one object that cannot be converted fails the whole review with a Failure result naming
// it (HTTP 200, as the apiserver expects), and no object is returned.

import { convertObject } from '../../api/conversion/index.js';
import { isObject, reviewVersion } from './admission.js';
import { boundMessage, objectTooBig } from './limits.js';
import {
  CONVERSION_API_VERSIONS,
  type ConversionAPIVersion,
  type ConversionResponse,
  type ConversionReview,
} from './types.js';

function failure(uid: string, message: string): ConversionResponse {
  return { uid, convertedObjects: [], result: { status: 'Failure', message: boundMessage(message) } };
}

function describe(object: unknown): string {
  if (!isObject(object)) return 'a non-object';
  const m = isObject(object.metadata) ? object.metadata : {};
  const name = [m.namespace, m.name].filter((x) => typeof x === 'string' && x !== '').join('/');
  return `${typeof object.kind === 'string' ? object.kind : 'object'}${name ? ` ${name}` : ''}`;
}

/** Answers a parsed ConversionReview; throws BadRequestError only when the body is not a ConversionReview. */
export function reviewConversion(body: unknown): ConversionReview {
  const apiVersion: ConversionAPIVersion = reviewVersion(body, 'ConversionReview', CONVERSION_API_VERSIONS);
  const review = (r: ConversionResponse): ConversionReview => ({ apiVersion, kind: 'ConversionReview', response: r });
  const request = (body as Record<string, unknown>).request;
  if (!isObject(request)) return review(failure('', 'ConversionReview has no request'));
  const uid = typeof request.uid === 'string' ? request.uid : '';
  if (uid === '') return review(failure('', 'request.uid must be a non-empty string'));
  const desired = request.desiredAPIVersion;
  if (typeof desired !== 'string' || desired === '')
    return review(failure(uid, 'request.desiredAPIVersion must be a non-empty string'));
  if (!Array.isArray(request.objects)) return review(failure(uid, 'request.objects must be a list'));

  const converted: Record<string, unknown>[] = [];
  for (const [i, object] of request.objects.entries()) {
    try {
      if (!isObject(object)) throw new Error('object must be a JSON object');
      // Conversion copies objects recursively: one nested beyond the limit is refused before it starts.
      const tooBig = objectTooBig(object);
      if (tooBig !== undefined) return review(failure(uid, `objects[${i}] (${describe(object)}): ${tooBig}`));
      converted.push(convertObject(object, desired));
    } catch (e: unknown) {
      return review(failure(uid, `objects[${i}] (${describe(object)}): ${e instanceof Error ? e.message : String(e)}`));
    }
  }
  return review({ uid, convertedObjects: converted, result: { status: 'Success' } });
}
