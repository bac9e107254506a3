// The structural checks the CRD schemas make the API server apply before any webhook sees an object:
// types, required fields, enums, minItems, minimum, minLength/maxLength (deploy/crds carries the same
// constraints; karmada-api.md Appendix A lists Karmada's). Messages follow the API server's wording for
// custom resources, e.g. `spec.resourceSelectors: Invalid value: 0: spec.resourceSelectors in body should
// have at least 1 items`.
//
// `null` reads as absent, as the API server prunes nulls from non-nullable fields. Fields the schema does
// not know are not errors (the API server prunes them); they are returned so the caller can warn, since an
// unknown field is most often a misspelt one.

import { invalid, required, unsupported, type FieldError } from './errors.js';
import { child, index, isObject, key } from './shape.js';

export type Schema =
  | {
      readonly type: 'string';
      readonly enum?: readonly string[];
      readonly minLength?: number;
      readonly maxLength?: number;
    }
  | { readonly type: 'integer'; readonly minimum?: number; readonly format?: 'int32' | 'int64' }
  | { readonly type: 'boolean' }
  /** Any JSON (x-kubernetes-preserve-unknown-fields). */
  | { readonly type: 'any' }
  | { readonly type: 'array'; readonly items: Schema; readonly minItems?: number }
  /** An object with free keys (additionalProperties). */
  | { readonly type: 'map'; readonly values: Schema }
  | {
      readonly type: 'object';
      readonly properties: Readonly<Record<string, Schema>>;
      readonly required?: readonly string[];
    };

export interface SchemaReport {
  errors: FieldError[];
  /** Paths of fields the schema does not declare, in document order. */
  unknownFields: string[];
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** The JSON type name the API server reports for a value that has the wrong type. */
function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeError(path: string, value: unknown, want: string): FieldError {
  return invalid(path, value, `${path} in body must be of type ${want}: ${JSON.stringify(jsonType(value))}`);
}

/** Checks `value` (present, not null) against `schema`, appending to `report`. */
export function checkSchema(value: unknown, schema: Schema, path: string, report: SchemaReport): void {
  switch (schema.type) {
    case 'any':
      return;
    case 'string': {
      if (typeof value !== 'string') {
        report.errors.push(typeError(path, value, 'string'));
        return;
      }
      if (schema.enum && !schema.enum.includes(value)) report.errors.push(unsupported(path, value, schema.enum));
      const length = [...value].length;
      if (schema.minLength !== undefined && length < schema.minLength) {
        report.errors.push(invalid(path, value, `${path} in body should be at least ${schema.minLength} chars long`));
      }
      if (schema.maxLength !== undefined && length > schema.maxLength) {
        report.errors.push({
          type: 'Too long',
          field: path,
          value,
          detail: `may not be more than ${schema.maxLength} bytes`,
        });
      }
      return;
    }
    case 'integer': {
      if (typeof value !== 'number' || !Number.isInteger(value)) {
        report.errors.push(typeError(path, value, 'integer'));
        return;
      }
      if (schema.minimum !== undefined && value < schema.minimum) {
        report.errors.push(
          invalid(path, value, `${path} in body should be greater than or equal to ${schema.minimum}`),
        );
      }
      if (schema.format === 'int32' && (value < INT32_MIN || value > INT32_MAX)) {
        report.errors.push(
          invalid(path, value, `${path} in body must be a 32-bit integer (${INT32_MIN} to ${INT32_MAX})`),
        );
      }
      return;
    }
    case 'boolean':
      if (typeof value !== 'boolean') report.errors.push(typeError(path, value, 'boolean'));
      return;
    case 'array': {
      if (!Array.isArray(value)) {
        report.errors.push(typeError(path, value, 'array'));
        return;
      }
      if (schema.minItems !== undefined && value.length < schema.minItems) {
        report.errors.push(
          invalid(path, value.length, `${path} in body should have at least ${schema.minItems} items`),
        );
      }
      value.forEach((item: unknown, i) => checkSchema(item, schema.items, index(path, i), report));
      return;
    }
    case 'map': {
      if (!isObject(value)) {
        report.errors.push(typeError(path, value, 'object'));
        return;
      }
      for (const [k, v] of Object.entries(value)) {
        if (v !== null) checkSchema(v, schema.values, key(path, k), report);
      }
      return;
    }
    case 'object': {
      if (!isObject(value)) {
        report.errors.push(typeError(path, value, 'object'));
        return;
      }
      for (const [name, sub] of Object.entries(schema.properties)) {
        const v = Object.hasOwn(value, name) ? value[name] : undefined;
        if (v === undefined || v === null) {
          if (schema.required?.includes(name)) report.errors.push(required(child(path, name), ''));
          continue;
        }
        checkSchema(v, sub, child(path, name), report);
      }
      for (const name of Object.keys(value)) {
        if (!Object.hasOwn(schema.properties, name)) report.unknownFields.push(child(path, name));
      }
      return;
    }
  }
}

// ---- building blocks ---------------------------------------------------------------------------------

const string: Schema = { type: 'string' };
const boolean: Schema = { type: 'boolean' };
const anyJSON: Schema = { type: 'any' };
const int32: Schema = { type: 'integer', format: 'int32' };
const int64: Schema = { type: 'integer', format: 'int64' };
const strings: Schema = { type: 'array', items: string };
const stringMap: Schema = { type: 'map', values: string };
const enumOf = (...values: string[]): Schema => ({ type: 'string', enum: values });
const arrayOf = (items: Schema, minItems?: number): Schema =>
  minItems === undefined ? { type: 'array', items } : { type: 'array', items, minItems };
const object = (properties: Record<string, Schema>, ...requiredFields: string[]): Schema => ({
  type: 'object',
  properties,
  required: requiredFields,
});

export const OVERRIDER_OPERATORS = ['add', 'remove', 'replace'] as const;
export const COMMAND_ARGS_OPERATORS = ['add', 'remove'] as const;
export const IMAGE_COMPONENTS = ['Registry', 'Repository', 'Tag'] as const;

const requirement = object({ key: string, operator: string, values: strings }, 'key', 'operator');
const labelSelector = object({ matchLabels: stringMap, matchExpressions: arrayOf(requirement) });
const fieldSelector = object({ matchExpressions: arrayOf(requirement) });
const affinityFields = { labelSelector, fieldSelector, clusterNames: strings, exclude: strings };
const clusterAffinity = object(affinityFields);
const affinityName: Schema = { type: 'string', minLength: 1, maxLength: 32 };

const resourceSelector = object(
  { apiVersion: string, kind: string, namespace: string, name: string, labelSelector },
  'apiVersion',
  'kind',
);

const statePreservation = object(
  { rules: arrayOf(object({ aliasLabelName: string, jsonPath: string }, 'aliasLabelName', 'jsonPath')) },
  'rules',
);

const placement = object({
  clusterAffinity,
  clusterAffinities: arrayOf(
    object(
      {
        affinityName,
        ...affinityFields,
        overflowAffinities: arrayOf(object({ affinityName, ...affinityFields }, 'affinityName')),
      },
      'affinityName',
    ),
  ),
  clusterTolerations: arrayOf(
    object({ key: string, operator: string, value: string, effect: string, tolerationSeconds: int64 }),
  ),
  spreadConstraints: arrayOf(
    object({
      spreadByField: enumOf('cluster', 'region', 'zone', 'provider'),
      spreadByLabel: string,
      maxGroups: int64,
      minGroups: int64,
    }),
  ),
  replicaScheduling: object({
    replicaSchedulingType: enumOf('Duplicated', 'Divided'),
    replicaDivisionPreference: enumOf('Aggregated', 'Weighted'),
    weightPreference: object({
      staticWeightList: arrayOf(
        object(
          { targetCluster: clusterAffinity, weight: { type: 'integer', format: 'int64', minimum: 1 } },
          'targetCluster',
          'weight',
        ),
      ),
      dynamicWeight: enumOf('AvailableReplicas'),
    }),
  }),
  workloadAffinity: object({
    affinity: object({ groupByLabelKey: string }, 'groupByLabelKey'),
    antiAffinity: object({ groupByLabelKey: string }, 'groupByLabelKey'),
  }),
});

/** PropagationPolicy / ClusterPropagationPolicy `spec` (the two CRDs share it byte for byte). */
export const PROPAGATION_SPEC: Schema = object(
  {
    resourceSelectors: arrayOf(resourceSelector, 1),
    association: boolean,
    propagateDeps: boolean,
    placement,
    priority: int32,
    preemption: enumOf('Always', 'Never'),
    dependentOverrides: strings,
    schedulerName: string,
    failover: object({
      application: object(
        {
          decisionConditions: object({ tolerationSeconds: int32 }),
          purgeMode: enumOf('Directly', 'Gracefully', 'Never'),
          gracePeriodSeconds: int32,
          statePreservation,
        },
        'decisionConditions',
      ),
      cluster: object({ purgeMode: enumOf('Directly', 'Gracefully'), statePreservation }),
    }),
    conflictResolution: enumOf('Abort', 'Overwrite'),
    activationPreference: enumOf('Lazy'),
    suspension: object({ dispatching: boolean, dispatchingOnClusters: object({ clusterNames: strings }) }),
    preserveResourcesOnDeletion: boolean,
    schedulePriority: object(
      { priorityClassSource: enumOf('KubePriorityClass'), priorityClassName: string },
      'priorityClassSource',
      'priorityClassName',
    ),
  },
  'resourceSelectors',
);

const patchOperation = object(
  { subPath: string, operator: enumOf(...OVERRIDER_OPERATORS), value: anyJSON },
  'subPath',
  'operator',
);
const commandArgs = object(
  { containerName: string, operator: enumOf(...COMMAND_ARGS_OPERATORS), value: strings },
  'containerName',
  'operator',
);
const labelAnnotation = object(
  { operator: enumOf(...OVERRIDER_OPERATORS), value: stringMap, onlyIfAbsent: boolean },
  'operator',
  'value',
);
const pathTest = object({ subPath: string, condition: enumOf('MustExist', 'MustNotExist') }, 'subPath', 'condition');

const overriders = object({
  plaintext: arrayOf(
    object(
      { path: string, operator: enumOf(...OVERRIDER_OPERATORS), value: anyJSON, pathTests: arrayOf(pathTest) },
      'path',
      'operator',
    ),
  ),
  imageOverrider: arrayOf(
    object(
      {
        predicate: object({ path: string }, 'path'),
        component: enumOf(...IMAGE_COMPONENTS),
        operator: enumOf(...OVERRIDER_OPERATORS),
        value: string,
        includeInitContainers: boolean,
      },
      'component',
      'operator',
    ),
  ),
  commandOverrider: arrayOf(commandArgs),
  argsOverrider: arrayOf(commandArgs),
  labelsOverrider: arrayOf(labelAnnotation),
  annotationsOverrider: arrayOf(labelAnnotation),
  fieldOverrider: arrayOf(
    object({ fieldPath: string, json: arrayOf(patchOperation), yaml: arrayOf(patchOperation) }, 'fieldPath'),
  ),
});

/** OverridePolicy / ClusterOverridePolicy `spec`. */
export const OVERRIDE_SPEC: Schema = object({
  resourceSelectors: arrayOf(resourceSelector),
  overrideRules: arrayOf(
    object(
      { targetCluster: clusterAffinity, overriders, targetOperations: arrayOf(enumOf('CREATE', 'UPDATE')) },
      'overriders',
    ),
  ),
  targetCluster: clusterAffinity,
  overriders,
});

const secretRef = object({ namespace: string, name: string }, 'namespace', 'name');

/** Cluster `spec`: the fields Flotilla reads, plus Karmada's others so migrated documents check clean. */
export const CLUSTER_SPEC: Schema = object({
  id: { type: 'string', maxLength: 128000 },
  syncMode: enumOf('Push', 'Pull'),
  apiEndpoint: string,
  secretRef,
  impersonatorSecretRef: secretRef,
  insecureSkipTLSVerification: boolean,
  proxyURL: string,
  proxyHeader: stringMap,
  provider: string,
  region: string,
  zone: string,
  zones: strings,
  taints: arrayOf(object({ key: string, value: string, effect: string, timeAdded: string }, 'key', 'effect')),
  resourceModels: anyJSON,
});

/** ObjectMeta as a client may send it; server-populated fields are accepted as they come. */
export const OBJECT_META: Schema = object({
  name: string,
  generateName: string,
  namespace: string,
  labels: stringMap,
  annotations: stringMap,
  finalizers: strings,
  uid: anyJSON,
  resourceVersion: anyJSON,
  generation: anyJSON,
  creationTimestamp: anyJSON,
  deletionTimestamp: anyJSON,
  deletionGracePeriodSeconds: anyJSON,
  ownerReferences: anyJSON,
  managedFields: anyJSON,
  selfLink: anyJSON,
});
