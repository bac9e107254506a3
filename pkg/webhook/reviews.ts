// Review requests as the apiserver sends them, for callers that play the apiserver's part: the benchmark,
// the tests, and anyone probing a running webhook.

import type { JsonObject } from '../../api/internal/objects.js';
import type { AdmissionAPIVersion, ConversionAPIVersion, Operation } from './types.js';

export interface AdmissionRequestInput {
  uid?: string;
  operation?: Operation;
  object?: unknown;
  oldObject?: unknown;
  namespace?: string;
  apiVersion?: AdmissionAPIVersion;
}

const plural = (kind: string): string => {
  const lower = kind.toLowerCase();
  return lower.endsWith('y') ? `${lower.slice(0, -1)}ies` : `${lower}s`;
};

/** An AdmissionReview with a request for `object` (kind, resource and name filled from it). */
export function admissionRequestReview(input: AdmissionRequestInput): JsonObject {
  const object = (input.object ?? {}) as JsonObject;
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : 'v1';
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const metadata = (object.metadata ?? {}) as JsonObject;
  const request: JsonObject = {
    uid: input.uid ?? '00000000-0000-4000-8000-000000000001',
    kind: { group, version, kind },
    resource: { group, version, resource: plural(kind) },
    operation: input.operation ?? 'CREATE',
    userInfo: { username: 'admin', groups: ['system:masters'] },
    object: input.object,
  };
  if (typeof metadata.name === 'string') request.name = metadata.name;
  const namespace = input.namespace ?? (typeof metadata.namespace === 'string' ? metadata.namespace : undefined);
  if (namespace !== undefined) request.namespace = namespace;
  if (input.oldObject !== undefined) request.oldObject = input.oldObject;
  return { apiVersion: input.apiVersion ?? 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
}

export function conversionRequestReview(
  objects: unknown[],
  desiredAPIVersion: string,
  opts: { uid?: string; apiVersion?: ConversionAPIVersion } = {},
): JsonObject {
  return {
    apiVersion: opts.apiVersion ?? 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: opts.uid ?? '00000000-0000-4000-8000-000000000002', desiredAPIVersion, objects },
  };
}
