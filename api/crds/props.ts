// What every CRD here is built from: the OpenAPI subset CRDs take, the CustomResourceDefinition shape,
// the top level of a schema, the common printer column, labels and field shapes.

/** OpenAPI v3 as CRDs take it (apiextensions.k8s.io/v1 JSONSchemaProps), the subset we emit. */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'boolean';
  description?: string;
  format?: string;
  enum?: string[];
  default?: unknown;
  minimum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  items?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  required?: string[];
  'x-kubernetes-preserve-unknown-fields'?: true;
  'x-kubernetes-list-type'?: 'atomic' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic';
  nullable?: true;
}

/** apiVersion, kind, metadata, and the spec and status given. */
export function topLevel(
  spec: JSONSchemaProps | undefined,
  opts: { specRequired: boolean; status?: boolean | JSONSchemaProps },
): JSONSchemaProps {
  const properties: Record<string, JSONSchemaProps> = {
    apiVersion: { type: 'string', description: 'Versioned schema of this representation of the object.' },
    kind: { type: 'string', description: 'REST resource this object represents.' },
    metadata: { type: 'object' },
  };
  if (spec) properties.spec = spec;
  if (opts.status === true) properties.status = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  else if (opts.status) properties.status = opts.status;
  return { type: 'object', properties, ...(opts.specRequired ? { required: ['spec'] } : {}) };
}

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'date';
  jsonPath: string;
  priority?: number;
  description?: string;
}

export const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories: string[];
    };
    scope: 'Namespaced' | 'Cluster';
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JSONSchemaProps };
      additionalPrinterColumns: PrinterColumn[];
      subresources?: { status: Record<string, never> };
    }>;
    conversion?: {
      strategy: 'Webhook';
      webhook: {
        conversionReviewVersions: string[];
        clientConfig: { service: { namespace: string; name: string; path: string; port: number } };
      };
    };
  };
}

export const LABELS = { 'app.kubernetes.io/part-of': 'flotilla' };

export const str = (description?: string): JSONSchemaProps =>
  description ? { type: 'string', description } : { type: 'string' };
export const int = (description?: string): JSONSchemaProps =>
  description ? { type: 'integer', format: 'int64', description } : { type: 'integer', format: 'int64' };
/** A point in time (RFC 3339), as metav1.Time is written. */
export const time = (description?: string): JSONSchemaProps =>
  description ? { type: 'string', format: 'date-time', description } : { type: 'string', format: 'date-time' };

/** An atomic list of objects with `required` among their `properties`. */
export function objectList(
  required: string[],
  properties: Record<string, JSONSchemaProps>,
  description?: string,
): JSONSchemaProps {
  return {
    type: 'array',
    ...(description ? { description } : {}),
    'x-kubernetes-list-type': 'atomic',
    items: { type: 'object', required, properties },
  };
}

/** metav1.Condition, as the controller writes it. */
export const CONDITIONS: JSONSchemaProps = objectList(['status', 'type'], {
  type: str(),
  status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
  reason: str(),
  message: str(),
  observedGeneration: int(),
  lastTransitionTime: time(),
});

/** A CRD of one version, stored, with a status subresource (the work kinds: Flotilla's and Karmada's). */
export function singleVersionCRD(o: {
  group: string;
  version: string;
  kind: string;
  plural: string;
  names: { singular: string; shortNames?: string[] };
  categories: string[];
  scope: 'Namespaced' | 'Cluster';
  schema: JSONSchemaProps;
  columns: PrinterColumn[];
}): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${o.plural}.${o.group}`, labels: LABELS },
    spec: {
      group: o.group,
      names: { kind: o.kind, listKind: `${o.kind}List`, plural: o.plural, ...o.names, categories: o.categories },
      scope: o.scope,
      versions: [
        {
          name: o.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: o.schema },
          subresources: { status: {} },
          additionalPrinterColumns: o.columns,
        },
      ],
    },
  };
}

/** An object reference (apiVersion, kind, namespace, name) with `extra` fields after the name. */
export function objectReference(
  description: string | undefined,
  extra: Record<string, JSONSchemaProps>,
): JSONSchemaProps {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    required: ['apiVersion', 'kind', 'name'],
    properties: { apiVersion: str(), kind: str(), namespace: str(), name: str(), ...extra },
  };
}
