// Every admission rule, in one place; the webhook, the CLI and the controller all call validateObject.
// Pure: no clients, no clock, no environment. README.md in this directory lists every rule with its message.
//
// Order: what the API server checks before any webhook (apiVersion and kind, metadata, then the CRD
// schema), then the webhook rules of the kind — Karmada's in Karmada's order, with Flotilla's additions.
// Every error is collected: a schema error does not stop the webhook rules, which read the object through
// typed accessors and skip whatever has the wrong shape (the schema error already reports it).

import {
  API_VERSION as CLUSTER_API_VERSION,
  KARMADA_API_VERSION as KARMADA_CLUSTER_API_VERSION,
  KIND as CLUSTER_KIND,
} from '../cluster/v1alpha1/types.js';
import {
  API_VERSION as POLICY_API_VERSION,
  CLUSTER_OVERRIDE_POLICY,
  CLUSTER_PROPAGATION_POLICY,
  KARMADA_API_VERSION as KARMADA_POLICY_API_VERSION,
  OVERRIDE_POLICY,
  PROPAGATION_POLICY,
} from '../policy/v1alpha1/types.js';
import { MAX_DEPTH, tooDeepUnder } from '../internal/objects.js';
import { validateCluster } from './cluster.js';
import { forbidden, invalid, required, unsupported, type FieldError } from './errors.js';
import { isDNS1123Label, isDNS1123Subdomain, validateAnnotations, validateLabels } from './names.js';
import { validateOverridePolicy } from './override.js';
import { validatePropagationPolicy } from './propagation.js';
import {
  CLUSTER_SPEC,
  OBJECT_META,
  OVERRIDE_SPEC,
  PROPAGATION_SPEC,
  checkSchema,
  type Schema,
  type SchemaReport,
} from './schema.js';
import { isObject, obj, str, stringMap, type Obj } from './shape.js';

export * from './errors.js';
export {
  FLOTILLA_PERMANENT_ID_LABEL,
  KARMADA_CPP_PERMANENT_ID_LABEL,
  KARMADA_PP_PERMANENT_ID_LABEL,
  permanentIdLabels,
} from './propagation.js';

export interface ValidationContext {
  /**
   * Admission operation. UPDATE (with oldObject) enables the immutability rules; DELETE and CONNECT are
   * always allowed (nothing is validated). Undefined: offline validation (CLI files, library), judged like a
   * CREATE except that the webhook-set permanent-id label is not required.
   */
  operation?: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  /** The stored object, on UPDATE. */
  oldObject?: unknown;
  /**
   * Require the permanent-id label on PropagationPolicy/ClusterPropagationPolicy (set by Flotilla's mutating
   * webhook on create), as Karmada does. Only honoured when `operation` is CREATE or UPDATE, so callers with
   * no mutating webhook in front of them (offline validation) never trip over it. Default false.
   */
  requirePermanentId?: boolean;
  /**
   * Known member clusters, when the caller has them (CLI: the Cluster documents in its input; webhook: none
   * unless configured). Only used for warnings; `undefined` means "unknown", so no cluster warnings.
   */
  clusters?: ReadonlyArray<{
    metadata?: { name?: string; labels?: Record<string, string> };
    spec?: Record<string, unknown>;
  }>;
}

export interface ValidationResult {
  /** Every field error, in rule order; empty means allowed. */
  errors: FieldError[];
  /** Legal but likely wrong (AdmissionResponse.warnings). */
  warnings: string[];
}

const POLICY_API_VERSIONS = [POLICY_API_VERSION, KARMADA_POLICY_API_VERSION];
const CLUSTER_API_VERSIONS = [CLUSTER_API_VERSION, KARMADA_CLUSTER_API_VERSION];

interface KindInfo {
  apiVersions: readonly string[];
  namespaced: boolean;
  spec: Schema;
  specRequired: boolean;
  topLevel: readonly string[];
}

const KINDS: Readonly<Record<string, KindInfo>> = {
  [PROPAGATION_POLICY]: {
    apiVersions: POLICY_API_VERSIONS,
    namespaced: true,
    spec: PROPAGATION_SPEC,
    specRequired: true,
    topLevel: ['apiVersion', 'kind', 'metadata', 'spec', 'status'],
  },
  [CLUSTER_PROPAGATION_POLICY]: {
    apiVersions: POLICY_API_VERSIONS,
    namespaced: false,
    spec: PROPAGATION_SPEC,
    specRequired: true,
    topLevel: ['apiVersion', 'kind', 'metadata', 'spec', 'status'],
  },
  [OVERRIDE_POLICY]: {
    apiVersions: POLICY_API_VERSIONS,
    namespaced: true,
    spec: OVERRIDE_SPEC,
    specRequired: true,
    topLevel: ['apiVersion', 'kind', 'metadata', 'spec', 'status'],
  },
  [CLUSTER_OVERRIDE_POLICY]: {
    apiVersions: POLICY_API_VERSIONS,
    namespaced: false,
    spec: OVERRIDE_SPEC,
    specRequired: true,
    topLevel: ['apiVersion', 'kind', 'metadata', 'spec', 'status'],
  },
  [CLUSTER_KIND]: {
    apiVersions: CLUSTER_API_VERSIONS,
    namespaced: false,
    spec: CLUSTER_SPEC,
    specRequired: false,
    topLevel: ['apiVersion', 'kind', 'metadata', 'spec', 'status'],
  },
};

const SUPPORTED_KINDS = Object.keys(KINDS);

/** apiVersion and kind: the kind must be one of ours and the apiVersion one its group serves. */
function checkType(o: Obj): { errors: FieldError[]; kind?: string; info?: KindInfo } {
  const kind = o.kind;
  const apiVersion = o.apiVersion;
  if (kind === undefined || kind === null || kind === '')
    return { errors: [required('kind', `one of ${SUPPORTED_KINDS.join(', ')}`)] };
  if (typeof kind !== 'string' || !Object.hasOwn(KINDS, kind))
    return { errors: [unsupported('kind', kind, SUPPORTED_KINDS)] };
  const info = KINDS[kind];
  if (!info) return { errors: [unsupported('kind', kind, SUPPORTED_KINDS)] };
  if (apiVersion === undefined || apiVersion === null || apiVersion === '') {
    return { errors: [required('apiVersion', `one of ${info.apiVersions.join(', ')}`)] };
  }
  if (typeof apiVersion !== 'string' || !info.apiVersions.includes(apiVersion))
    return { errors: [unsupported('apiVersion', apiVersion, info.apiVersions)] };
  return { errors: [], kind, info };
}

/** What the API server checks in ObjectMeta of a custom resource. */
function checkMetadata(o: Obj, kind: string, info: KindInfo, report: SchemaReport, warnings: string[]): void {
  const metadata = o.metadata;
  if (metadata === undefined || metadata === null) {
    report.errors.push(required('metadata.name', 'name or generateName is required'));
    return;
  }
  checkSchema(metadata, OBJECT_META, 'metadata', report);
  if (!isObject(metadata)) return;
  const name = str(metadata, 'name');
  if (!name && !str(metadata, 'generateName'))
    report.errors.push(required('metadata.name', 'name or generateName is required'));
  if (name) for (const m of isDNS1123Subdomain(name)) report.errors.push(invalid('metadata.name', name, m));
  const namespace = str(metadata, 'namespace');
  if (namespace && info.namespaced)
    for (const m of isDNS1123Label(namespace)) report.errors.push(invalid('metadata.namespace', namespace, m));
  if (namespace && !info.namespaced) warnings.push(`metadata.namespace is ignored: ${kind} is cluster-scoped`);
  const labels = stringMap(metadata, 'labels');
  if (labels) report.errors.push(...validateLabels(labels, 'metadata.labels'));
  const annotations = stringMap(metadata, 'annotations');
  if (annotations) report.errors.push(...validateAnnotations(annotations, 'metadata.annotations'));
}

function knownClusterNames(ctx: ValidationContext): ReadonlySet<string> | undefined {
  if (!ctx.clusters) return undefined;
  const names = new Set<string>();
  for (const c of ctx.clusters) {
    const name = c.metadata?.name;
    if (typeof name === 'string' && name) names.add(name);
  }
  return names;
}

/**
 * Validates one policy.flotilla.io / policy.karmada.io v1alpha1 object (PropagationPolicy,
 * ClusterPropagationPolicy, OverridePolicy, ClusterOverridePolicy) or a cluster.flotilla.io /
 * cluster.karmada.io v1alpha1 Cluster. Anything else is reported as an error at `kind` or `apiVersion`
 * (`<root>` when the input is not an object). Never throws.
 */
export function validateObject(object: unknown, ctx: ValidationContext = {}): ValidationResult {
  if (ctx.operation === 'DELETE' || ctx.operation === 'CONNECT') return { errors: [], warnings: [] };
  if (!isObject(object)) {
    return {
      errors: [invalid('<root>', object, 'must be an object with apiVersion, kind, metadata and spec')],
      warnings: [],
    };
  }
  const type = checkType(object);
  if (!type.kind || !type.info) return { errors: type.errors, warnings: [] };
  const { kind, info } = type;
  // The rules below walk values recursively; a document nested deeper is denied before any of them runs.
  const deep = tooDeepUnder(object);
  if (deep !== undefined)
    return { errors: [forbidden(deep, `must not be nested more than ${MAX_DEPTH} levels deep`)], warnings: [] };

  const warnings: string[] = [];
  const report: SchemaReport = { errors: [], unknownFields: [] };
  checkMetadata(object, kind, info, report, warnings);
  const spec = object.spec;
  if (spec === undefined || spec === null) {
    if (info.specRequired) report.errors.push(required('spec', ''));
  } else {
    checkSchema(spec, info.spec, 'spec', report);
  }
  for (const k of Object.keys(object)) if (!info.topLevel.includes(k)) report.unknownFields.push(k);

  const errors = [...report.errors];
  const namespace = info.namespaced ? str(obj(object, 'metadata'), 'namespace') || undefined : undefined;
  const knownClusters = knownClusterNames(ctx);
  const operation = ctx.operation;
  const findings =
    kind === PROPAGATION_POLICY || kind === CLUSTER_PROPAGATION_POLICY
      ? validatePropagationPolicy(object, {
          kind,
          namespace,
          operation,
          oldObject: ctx.oldObject,
          requirePermanentId: ctx.requirePermanentId === true,
          knownClusters,
        })
      : kind === OVERRIDE_POLICY || kind === CLUSTER_OVERRIDE_POLICY
        ? validateOverridePolicy(object, {
            namespace,
            knownClusters,
            group: typeof object.apiVersion === 'string' ? object.apiVersion.split('/')[0] : undefined,
          })
        : validateCluster(object);
  errors.push(...findings.errors);
  warnings.push(...report.unknownFields.map((f) => `unknown field ${JSON.stringify(f)}`), ...findings.warnings);
  return { errors, warnings };
}
