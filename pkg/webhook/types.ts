// Wire types of the reviews the apiserver sends, named and shaped as upstream:
// k8s.io/api/admission/v1 (and v1beta1, the same fields) and k8s.io/apiextensions-apiserver/pkg/apis/
// apiextensions/v1 (and v1beta1). Incoming reviews are read as `unknown` and checked field by field in
// admission.ts / conversion.ts; these types describe what we send back and what a checked request holds.

export const ADMISSION_API_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const;
export const CONVERSION_API_VERSIONS = ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'] as const;

export type AdmissionAPIVersion = (typeof ADMISSION_API_VERSIONS)[number];
export type ConversionAPIVersion = (typeof CONVERSION_API_VERSIONS)[number];

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
export const OPERATIONS: readonly Operation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** metav1.Status, as carried in AdmissionResponse.status and ConversionResponse.result. */
export interface Status {
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  code?: number;
}

export interface AdmissionRequest {
  uid: string;
  kind?: GroupVersionKind;
  name?: string;
  namespace?: string;
  operation: Operation;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: Status;
  /** Base64 of a JSON patch (RFC 6902); only with patchType. */
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: AdmissionAPIVersion;
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

export interface ConversionRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: unknown[];
}

export interface ConversionResponse {
  uid: string;
  convertedObjects: Record<string, unknown>[];
  result: Status;
}

export interface ConversionReview {
  apiVersion: ConversionAPIVersion;
  kind: 'ConversionReview';
  request?: ConversionRequest;
  response?: ConversionResponse;
}
