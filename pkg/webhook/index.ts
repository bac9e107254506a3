// The webhook package: one HTTPS server answering /validate, /mutate, /convert, /healthz, /readyz and
// /metrics, and a plain-HTTP probe listener for /healthz and /readyz. Everything but server.ts and
// health.ts is free of I/O.

export * from './types.js';
export { BadRequestError, allowed, denied, errored, patched, decodeAdmissionReview } from './admission.js';
export { toValidationShape } from '../../api/conversion/index.js';
export {
  validateRequest,
  EMPTY_INVENTORY,
  type ValidatingOptions,
  type Inventory,
  type ClusterInfo,
} from './validating.js';
export { mutateRequest, type MutatingOptions } from './mutating.js';
export { reviewConversion } from './conversion.js';
export { WebhookHandler, MAX_BODY_BYTES, type HandlerOptions, type HttpRequest, type HttpResponse } from './handler.js';
export { WebhookServer, WebhookServerError, type WebhookServerOptions, type Logger } from './server.js';
export { startHealthServer, type HealthServerOptions } from './health.js';
export { admissionRequestReview, conversionRequestReview, type AdmissionRequestInput } from './reviews.js';
export { PollingInventory, type PollingInventoryOptions } from './inventory.js';
export { CLUSTER_GROUPS, clusterLister, type ClusterListOptions, type ClusterObjectsApi } from './cluster-list.js';
export { overrideRequest, type OverrideSource, type UnmodifiedReason } from './overriding.js';
export { WatchedOverrides, clusterFromFlags, type ClusterIdentity } from './override-source.js';
