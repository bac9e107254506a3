// Retain, for replicas (Karmada's retain interpreter): a member copy scaled there (a
// HorizontalPodAutoscaler, `kubectl scale`, through the scale subresource) or whose template asks for it
// keeps the member's own spec.replicas, so the controller never fights the scaler.

import { isObject, type JsonObject } from '../kube/objects.js';

/** Karmada's label asking that the members keep their own spec.replicas. */
export const RETAIN_REPLICAS_LABEL = 'resourcetemplate.karmada.io/retain-replicas';

/** Whether a managedFields entry written through the scale subresource owns spec.replicas. */
function scaledThroughSubresource(live: JsonObject): boolean {
  const entries =
    isObject(live.metadata) && Array.isArray(live.metadata.managedFields) ? live.metadata.managedFields : [];
  return entries.some((e) => {
    if (!isObject(e) || e.subresource !== 'scale') return false;
    const spec = isObject(e.fieldsV1) ? e.fieldsV1['f:spec'] : undefined;
    return isObject(spec) && Object.hasOwn(spec, 'f:replicas');
  });
}

/**
 * Retain (Karmada's retain interpreter, for replicas): when the template asks for it with
 * RETAIN_REPLICAS_LABEL, or when something on the member scales the object through its scale subresource
 * (a HorizontalPodAutoscaler, `kubectl scale`), the member's spec.replicas is applied as it is, so the
 * controller does not force it back on every reconcile. Changes `body` in place; returns what was kept.
 */
export function retainReplicas(body: JsonObject, live: JsonObject): { replicas: number; why: string } | undefined {
  const spec = isObject(body.spec) ? body.spec : undefined;
  const liveSpec = isObject(live.spec) ? live.spec : undefined;
  if (!spec || typeof spec.replicas !== 'number' || !liveSpec || typeof liveSpec.replicas !== 'number')
    return undefined;
  const labels = isObject(body.metadata) && isObject(body.metadata.labels) ? body.metadata.labels : {};
  const why =
    labels[RETAIN_REPLICAS_LABEL] === 'true'
      ? `the template's ${RETAIN_REPLICAS_LABEL} label`
      : scaledThroughSubresource(live)
        ? 'the member scales it through its scale subresource (an autoscaler or kubectl scale)'
        : undefined;
  if (why === undefined) return undefined;
  spec.replicas = liveSpec.replicas;
  return { replicas: liveSpec.replicas, why };
}
