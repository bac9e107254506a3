// Selectors: label selectors (k8s rules), cluster field selectors (Karmada's rule plus values), cluster
// affinities, and resource selectors (Karmada's namespace rule plus warnings for selectors that can match
// nothing current).

import { forbidden, invalid, required, type FieldError } from './errors.js';
import { isValidLabelValue, validateLabelName, validateLabels } from './names.js';
import { arr, child, index, isSet, obj, objectsOf, str, stringMap, stringsOf, type Obj } from './shape.js';

/**
 * metav1validation.ValidateLabelSelector. Karmada does not check label selectors at admission (a broken one
 * silently never matches); Flotilla denies them, since the mistake is visible without any cluster.
 */
export function validateLabelSelector(selector: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const matchLabels = stringMap(selector, 'matchLabels');
  if (matchLabels) errs.push(...validateLabels(matchLabels, child(path, 'matchLabels')));
  for (const [i, req] of objectsOf(arr(selector, 'matchExpressions'))) {
    const at = index(child(path, 'matchExpressions'), i);
    const operator = str(req, 'operator');
    const values = stringsOf(arr(req, 'values'));
    const valueCount = arr(req, 'values')?.length ?? 0;
    switch (operator) {
      case 'In':
      case 'NotIn':
        if (valueCount === 0)
          errs.push(required(child(at, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (valueCount > 0)
          errs.push(
            forbidden(child(at, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
          );
        break;
      case undefined:
        break; // missing operator: reported by the schema
      default:
        errs.push(invalid(child(at, 'operator'), operator, 'not a valid selector operator'));
    }
    const k = str(req, 'key');
    if (k !== undefined) errs.push(...validateLabelName(k, child(at, 'key')));
    for (const [j, v] of values) {
      for (const m of isValidLabelValue(v)) errs.push(invalid(index(child(at, 'values'), j), v, m));
    }
  }
  return errs;
}

export const FIELD_SELECTOR_KEYS = ['provider', 'region', 'zone'] as const;

/**
 * Karmada's ValidatePolicyFieldSelector: the first expression with a key other than provider/region/zone
 * (checked first) or an operator other than In/NotIn; undefined when every expression is supported.
 */
export function fieldSelectorProblem(fieldSelector: Obj): string | undefined {
  for (const [, e] of objectsOf(arr(fieldSelector, 'matchExpressions'))) {
    const k = str(e, 'key') ?? '';
    if (!(FIELD_SELECTOR_KEYS as readonly string[]).includes(k))
      return `unsupported key ${JSON.stringify(k)}, must be provider, region, or zone`;
    const op = str(e, 'operator') ?? '';
    if (op !== 'In' && op !== 'NotIn') return `unsupported operator ${JSON.stringify(op)}, must be In or NotIn`;
  }
  return undefined;
}

/**
 * Karmada's ValidateClusterAffinity (the field selector rule, one error at `<path>.fieldSelector`), then
 * Flotilla's: the label selector must be valid, and In/NotIn field expressions need values (without them the
 * selector cannot be built and the affinity matches no cluster).
 */
export function validateClusterAffinity(affinity: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const fieldSelector = obj(affinity, 'fieldSelector');
  if (fieldSelector) {
    const problem = fieldSelectorProblem(fieldSelector);
    if (problem) errs.push(invalid(child(path, 'fieldSelector'), fieldSelector, problem));
    for (const [i, e] of objectsOf(arr(fieldSelector, 'matchExpressions'))) {
      const op = str(e, 'operator');
      if ((op === 'In' || op === 'NotIn') && (arr(e, 'values')?.length ?? 0) === 0) {
        errs.push(
          required(
            child(index(child(child(path, 'fieldSelector'), 'matchExpressions'), i), 'values'),
            "must be specified when `operator` is 'In' or 'NotIn'",
          ),
        );
      }
    }
  }
  const labelSelector = obj(affinity, 'labelSelector');
  if (labelSelector) errs.push(...validateLabelSelector(labelSelector, child(path, 'labelSelector')));
  return errs;
}

/** True when the affinity constrains nothing (Karmada: no label/field selector, clusterNames or exclude). */
export function isEmptyAffinity(affinity: Obj): boolean {
  return (
    !isSet(affinity, 'labelSelector') &&
    !isSet(affinity, 'fieldSelector') &&
    (arr(affinity, 'clusterNames')?.length ?? 0) === 0 &&
    (arr(affinity, 'exclude')?.length ?? 0) === 0
  );
}

/**
 * Warnings for clusterNames/exclude entries that name no known cluster. `known` undefined means the caller
 * does not know the clusters, so nothing is said.
 */
export function unknownClusterWarnings(affinity: Obj, path: string, known: ReadonlySet<string> | undefined): string[] {
  if (!known) return [];
  const out: string[] = [];
  for (const field of ['clusterNames', 'exclude'] as const) {
    for (const [i, name] of stringsOf(arr(affinity, field))) {
      if (!known.has(name))
        out.push(
          `${index(child(path, field), i)}: cluster ${JSON.stringify(name)} is not among the known clusters (${describeKnown(known)})`,
        );
    }
  }
  return out;
}

function describeKnown(known: ReadonlySet<string>): string {
  const names = [...known].sort();
  if (names.length === 0) return 'none';
  return names.length <= 8 ? names.join(', ') : `${names.slice(0, 8).join(', ')}, … ${names.length - 8} more`;
}

// ---- resource selectors --------------------------------------------------------------------------------

/**
 * The apiVersions built-in kinds are served under today. A selector compares apiVersion exactly, so
 * `extensions/v1beta1` for a Deployment matches nothing on a current cluster.
 */
const BUILT_IN_KINDS: Readonly<Record<string, readonly string[]>> = {
  Pod: ['v1'],
  Service: ['v1'],
  ConfigMap: ['v1'],
  Secret: ['v1'],
  ServiceAccount: ['v1'],
  PersistentVolumeClaim: ['v1'],
  PersistentVolume: ['v1'],
  Namespace: ['v1'],
  LimitRange: ['v1'],
  ResourceQuota: ['v1'],
  Deployment: ['apps/v1'],
  StatefulSet: ['apps/v1'],
  DaemonSet: ['apps/v1'],
  ReplicaSet: ['apps/v1'],
  Job: ['batch/v1'],
  CronJob: ['batch/v1'],
  HorizontalPodAutoscaler: ['autoscaling/v2', 'autoscaling/v1'],
  PodDisruptionBudget: ['policy/v1'],
  Ingress: ['networking.k8s.io/v1'],
  IngressClass: ['networking.k8s.io/v1'],
  NetworkPolicy: ['networking.k8s.io/v1'],
  Role: ['rbac.authorization.k8s.io/v1'],
  RoleBinding: ['rbac.authorization.k8s.io/v1'],
  ClusterRole: ['rbac.authorization.k8s.io/v1'],
  ClusterRoleBinding: ['rbac.authorization.k8s.io/v1'],
  StorageClass: ['storage.k8s.io/v1'],
  PriorityClass: ['scheduling.k8s.io/v1'],
  CustomResourceDefinition: ['apiextensions.k8s.io/v1'],
};

/** Groups Kubernetes itself serves; a kind name under any other group is someone's CRD and not judged. */
function isBuiltInGroup(apiVersion: string): boolean {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return true; // the core group
  const group = apiVersion.slice(0, slash);
  return ['apps', 'batch', 'extensions', 'autoscaling', 'policy'].includes(group) || group.endsWith('.k8s.io');
}

/** A warning when a selector pairs a built-in kind with an apiVersion that kind is not served under. */
export function apiVersionKindWarning(selector: Obj, path: string): string | undefined {
  const apiVersion = str(selector, 'apiVersion');
  const kind = str(selector, 'kind');
  if (apiVersion === undefined || kind === undefined) return undefined;
  const served = Object.hasOwn(BUILT_IN_KINDS, kind) ? BUILT_IN_KINDS[kind] : undefined;
  if (!served || served.includes(apiVersion) || !isBuiltInGroup(apiVersion)) return undefined;
  return `${path}: kind ${kind} is served as ${served.join(' or ')}, not ${apiVersion}; selectors compare apiVersion exactly, so this one matches no ${kind} on a current cluster`;
}

export interface ResourceSelectorFindings {
  errors: FieldError[];
  warnings: string[];
}

/**
 * Karmada's validateResourceSelectors when the policy is namespaced (a selector naming another namespace
 * is denied), then Flotilla's label selector check; warnings for doubtful apiVersion/kind pairs and for a
 * labelSelector that `name` makes irrelevant.
 */
export function checkResourceSelectors(
  list: readonly unknown[] | undefined,
  path: string,
  policyNamespace: string | undefined,
): ResourceSelectorFindings {
  const out: ResourceSelectorFindings = { errors: [], warnings: [] };
  for (const [i, rs] of objectsOf(list)) {
    const at = index(path, i);
    const ns = str(rs, 'namespace');
    if (policyNamespace && ns && ns !== policyNamespace) {
      out.errors.push(
        invalid(
          child(at, 'namespace'),
          ns,
          'namespace of resource selector must be the same as the namespace of the policy',
        ),
      );
    }
    const labelSelector = obj(rs, 'labelSelector');
    if (labelSelector) out.errors.push(...validateLabelSelector(labelSelector, child(at, 'labelSelector')));
    const w = apiVersionKindWarning(rs, at);
    if (w) out.warnings.push(w);
    if (str(rs, 'name') && labelSelector) out.warnings.push(`${at}: labelSelector is ignored because name is set`);
  }
  return out;
}
