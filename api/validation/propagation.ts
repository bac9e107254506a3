// PropagationPolicy / ClusterPropagationPolicy admission rules: Karmada's validating webhook
// (pkg/webhook/{propagationpolicy,clusterpropagationpolicy}/validating.go and ValidatePropagationSpec),
// in its order and with its messages, then Flotilla's additions.
//
// Defaults: the API server applies the CRD defaults before any webhook, and Karmada's mutating webhook
// fills in the rest; offline there is neither, so an absent field is read as what those defaults would
// make it wherever a rule depends on it (noted at each place).

import { propagationNotActedUpon } from './not-acted-upon.js';
import { forbidden, invalid, required, unsupported, type FieldError } from './errors.js';
import { isQualifiedName, validateLabelName } from './names.js';
import {
  checkResourceSelectors,
  isEmptyAffinity,
  unknownClusterWarnings,
  validateClusterAffinity,
} from './selectors.js';
import { arr, bool, child, index, isObject, isSet, key, num, obj, objectsOf, str, type Obj } from './shape.js';

export const FLOTILLA_PERMANENT_ID_LABEL = 'policy.flotilla.io/permanent-id';
export const KARMADA_PP_PERMANENT_ID_LABEL = 'propagationpolicy.karmada.io/permanent-id';
export const KARMADA_CPP_PERMANENT_ID_LABEL = 'clusterpropagationpolicy.karmada.io/permanent-id';

const DEFAULT_SCHEDULER = 'default-scheduler';

export interface PropagationContext {
  kind: 'PropagationPolicy' | 'ClusterPropagationPolicy';
  /** The policy's namespace (Karmada's request namespace); undefined for CPP or when not known. */
  namespace: string | undefined;
  operation: 'CREATE' | 'UPDATE' | undefined;
  oldObject: unknown;
  requirePermanentId: boolean;
  knownClusters: ReadonlySet<string> | undefined;
}

export interface Findings {
  errors: FieldError[];
  warnings: string[];
}

/** The permanent-id label keys accepted on a policy of this kind: Flotilla's, then Karmada's. */
export function permanentIdLabels(kind: PropagationContext['kind']): readonly string[] {
  return [
    FLOTILLA_PERMANENT_ID_LABEL,
    kind === 'PropagationPolicy' ? KARMADA_PP_PERMANENT_ID_LABEL : KARMADA_CPP_PERMANENT_ID_LABEL,
  ];
}

function labelsOf(o: unknown): Obj | undefined {
  return isObject(o) ? obj(obj(o, 'metadata'), 'labels') : undefined;
}

/**
 * Karmada's webhook checks that stop at the first failing one (schedulerName immutable, permanent-id
 * immutable, permanent-id present); undefined when all pass.
 */
function checkIdentity(policy: Obj, ctx: PropagationContext): FieldError | undefined {
  if (ctx.operation === 'UPDATE' && isObject(ctx.oldObject)) {
    // CRD default: an absent schedulerName is default-scheduler on both sides.
    const now = str(obj(policy, 'spec'), 'schedulerName') || DEFAULT_SCHEDULER;
    const before = str(obj(ctx.oldObject, 'spec'), 'schedulerName') || DEFAULT_SCHEDULER;
    if (now !== before) return forbidden('spec.schedulerName', 'the schedulerName should not be updated');
    const labels = labelsOf(policy);
    const oldLabels = labelsOf(ctx.oldObject);
    for (const k of permanentIdLabels(ctx.kind)) {
      if ((str(labels, k) ?? '') !== (str(oldLabels, k) ?? '')) {
        return forbidden(
          key('metadata.labels', k),
          `label ${k} is immutable, it can only be set by the system during creation`,
        );
      }
    }
  }
  if (ctx.operation !== undefined && ctx.requirePermanentId) {
    const labels = labelsOf(policy);
    if (!permanentIdLabels(ctx.kind).some((k) => str(labels, k))) {
      return required(
        'metadata.labels',
        `label ${FLOTILLA_PERMANENT_ID_LABEL} is required, it should be set by the mutating admission webhook during creation`,
      );
    }
  }
  return undefined;
}

/**
 * Whether overflow affinities are allowed: Divided with Aggregated, or Weighted with a dynamic weight.
 * replicaSchedulingType defaults to Divided (CRD) and an empty preference under Divided to Weighted
 * (mutating webhook).
 */
function allowsOverflow(placement: Obj): boolean {
  const rs = obj(placement, 'replicaScheduling');
  if (!rs) return false;
  if ((str(rs, 'replicaSchedulingType') || 'Divided') !== 'Divided') return false;
  const preference = str(rs, 'replicaDivisionPreference') || 'Weighted';
  if (preference === 'Aggregated') return true;
  return preference === 'Weighted' && (str(obj(rs, 'weightPreference'), 'dynamicWeight') ?? '') !== '';
}

function validateClusterAffinities(placement: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const list = arr(placement, 'clusterAffinities');
  const names = new Set<string>();
  for (const [i, term] of objectsOf(list)) {
    const at = index(path, i);
    const name = str(term, 'affinityName') ?? '';
    for (const m of isQualifiedName(name)) errs.push(invalid(at, name, m));
    if (names.has(name)) errs.push(invalid(path, list, 'each affinity term in a policy must have a unique name'));
    else names.add(name);
    errs.push(...validateClusterAffinity(term, at));
    if (!isSet(term, 'overflowAffinities')) continue;
    const overflowPath = child(at, 'overflowAffinities');
    const overflow = arr(term, 'overflowAffinities');
    if (isEmptyAffinity(term))
      errs.push(
        invalid(
          overflowPath,
          overflow ?? term.overflowAffinities,
          'overflowAffinities can only be used together with the inline ClusterAffinity',
        ),
      );
    const seen = new Set<string>([name]);
    for (const [j, o] of objectsOf(overflow)) {
      const oAt = index(overflowPath, j);
      const oName = str(o, 'affinityName') ?? '';
      for (const m of isQualifiedName(oName)) errs.push(invalid(child(oAt, 'affinityName'), oName, m));
      if (seen.has(oName)) {
        errs.push(
          invalid(
            child(oAt, 'affinityName'),
            oName,
            "overflow affinity name must be unique and must not duplicate the primary group's affinityName",
          ),
        );
      } else seen.add(oName);
      errs.push(...validateClusterAffinity(o, oAt));
    }
  }
  return errs;
}

/** Karmada's ValidateSpreadConstraint, word for word. */
function validateSpreadConstraints(list: readonly unknown[] | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  // byField value -> whether a "multiple" error was already reported for it
  const byField = new Map<string, boolean>();
  for (const [i, c] of objectsOf(list)) {
    const at = index(path, i);
    const field = str(c, 'spreadByField') ?? '';
    const label = str(c, 'spreadByLabel') ?? '';
    const min = num(c, 'minGroups') ?? 0;
    const max = num(c, 'maxGroups') ?? 0;
    if (field && label) errs.push(invalid(at, c, 'spreadByLabel should not co-exist with spreadByField'));
    if (min < 0) errs.push(invalid(at, c, 'minGroups lower than 0 is not allowed'));
    if (max < 0) errs.push(invalid(at, c, 'maxGroups lower than 0 is not allowed'));
    if (max > 0 && max < min) errs.push(invalid(at, c, 'maxGroups lower than minGroups is not allowed'));
    if (field) {
      const reported = byField.get(field);
      if (reported === false) {
        errs.push(invalid(path, list, `multiple ${field} spread constraints are not allowed`));
        byField.set(field, true);
      } else if (reported === undefined) byField.set(field, false);
    }
  }
  if (byField.size > 0 && !byField.has('cluster')) {
    errs.push(
      invalid(
        path,
        list,
        'the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled',
      ),
    );
  }
  return errs;
}

function validateWorkloadAffinity(wa: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const affinityKey = str(obj(wa, 'affinity'), 'groupByLabelKey');
  const antiKey = str(obj(wa, 'antiAffinity'), 'groupByLabelKey');
  if (affinityKey !== undefined) {
    for (const m of isQualifiedName(affinityKey))
      errs.push(invalid(`${path}.affinity.groupByLabelKey`, affinityKey, m));
  }
  if (antiKey !== undefined) {
    for (const m of isQualifiedName(antiKey)) errs.push(invalid(`${path}.antiAffinity.groupByLabelKey`, antiKey, m));
  }
  if (affinityKey !== undefined && affinityKey === antiKey) {
    errs.push(invalid(path, wa, 'affinity and antiAffinity must not use the same groupByLabelKey'));
  }
  return errs;
}

const TOLERATION_OPERATORS = ['', 'Exists', 'Equal'];

/** Karmada's ValidatePlacement (plus Flotilla's selector checks on staticWeightList targets). */
function validatePlacement(placement: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (isSet(placement, 'clusterAffinity') && isSet(placement, 'clusterAffinities')) {
    errs.push(invalid(path, placement, 'clusterAffinities cannot co-exist with clusterAffinity'));
  }
  const termsPath = child(path, 'clusterAffinities');
  if (!allowsOverflow(placement)) {
    for (const [i, term] of objectsOf(arr(placement, 'clusterAffinities'))) {
      if (isSet(term, 'overflowAffinities')) {
        errs.push(
          invalid(
            child(index(termsPath, i), 'overflowAffinities'),
            term.overflowAffinities,
            'overflowAffinities can only be used together with dynamic weight or aggregated scheduling',
          ),
        );
      }
    }
  }
  const affinity = obj(placement, 'clusterAffinity');
  if (affinity) errs.push(...validateClusterAffinity(affinity, child(path, 'clusterAffinity')));
  errs.push(...validateClusterAffinities(placement, termsPath));
  errs.push(...validateSpreadConstraints(arr(placement, 'spreadConstraints'), child(path, 'spreadConstraints')));
  const wa = obj(placement, 'workloadAffinity');
  if (wa) errs.push(...validateWorkloadAffinity(wa, child(path, 'workloadAffinity')));
  for (const [i, t] of objectsOf(arr(placement, 'clusterTolerations'))) {
    const op = str(t, 'operator');
    if (op !== undefined && !TOLERATION_OPERATORS.includes(op)) {
      errs.push(unsupported(child(index(child(path, 'clusterTolerations'), i), 'operator'), op, TOLERATION_OPERATORS));
    }
  }
  const weightsPath = `${path}.replicaScheduling.weightPreference.staticWeightList`;
  for (const [i, w] of objectsOf(
    arr(obj(obj(placement, 'replicaScheduling'), 'weightPreference'), 'staticWeightList'),
  )) {
    const target = obj(w, 'targetCluster');
    if (target) errs.push(...validateClusterAffinity(target, child(index(weightsPath, i), 'targetCluster')));
  }
  return errs;
}

function validateStatePreservation(failover: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const rulesPath = child(child(path, 'statePreservation'), 'rules');
  for (const [k, rule] of objectsOf(arr(obj(failover, 'statePreservation'), 'rules'))) {
    const alias = str(rule, 'aliasLabelName');
    if (alias !== undefined) errs.push(...validateLabelName(alias, child(index(rulesPath, k), 'aliasLabelName')));
  }
  return errs;
}

function validateFailover(failover: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const app = obj(failover, 'application');
  if (app) {
    const at = child(path, 'application');
    // An absent tolerationSeconds is the CRD default, 300.
    const toleration = num(obj(app, 'decisionConditions'), 'tolerationSeconds');
    if (toleration !== undefined && toleration < 0) {
      errs.push(
        invalid(`${at}.decisionConditions.tolerationSeconds`, toleration, 'must be greater than or equal to 0'),
      );
    }
    // An absent purgeMode is the CRD default, Gracefully, and then the mutating webhook also fills in
    // gracePeriodSeconds (600); so only an explicit Gracefully can lack a grace period.
    const purgeMode = str(app, 'purgeMode');
    const grace = num(app, 'gracePeriodSeconds');
    const gracePath = child(at, 'gracePeriodSeconds');
    if ((purgeMode ?? 'Gracefully') !== 'Gracefully' && grace !== undefined) {
      errs.push(invalid(gracePath, grace, 'only takes effect when purgeMode is gracefully'));
    }
    if (purgeMode === 'Gracefully' && grace === undefined && !isSet(app, 'gracePeriodSeconds')) {
      errs.push(invalid(gracePath, null, 'should not be empty when purgeMode is gracefully'));
    }
    if (grace !== undefined && grace <= 0) errs.push(invalid(gracePath, grace, 'must be greater than 0'));
    errs.push(...validateStatePreservation(app, at));
  }
  const cluster = obj(failover, 'cluster');
  if (cluster) errs.push(...validateStatePreservation(cluster, child(path, 'cluster')));
  return errs;
}

/** Karmada's ValidatePropagationSpec, accumulating, in its order; `namespace` is the request namespace. */
function validatePropagationSpec(spec: Obj, namespace: string | undefined): Findings {
  const errors: FieldError[] = [];
  const placement = obj(spec, 'placement');
  if (placement) errors.push(...validatePlacement(placement, 'spec.placement'));
  const failover = obj(spec, 'failover');
  if (obj(failover, 'application') && bool(spec, 'propagateDeps') !== true) {
    errors.push(invalid('spec.propagateDeps', false, 'application failover is set, propagateDeps must be true'));
  }
  if (failover) errors.push(...validateFailover(failover, 'spec.failover'));
  const selectors = arr(spec, 'resourceSelectors');
  const rs = checkResourceSelectors(selectors, 'spec.resourceSelectors', namespace);
  errors.push(...rs.errors);
  if (str(spec, 'preemption') === 'Always') {
    for (const [i, s] of objectsOf(selectors)) {
      const name = str(s, 'name') ?? '';
      if (name === '') {
        errors.push(
          invalid(
            `spec.resourceSelectors[${i}].name`,
            name,
            'name cannot be empty if preemption is Always, the empty name may cause unexpected resources preemption',
          ),
        );
      }
    }
  }
  const suspension = obj(spec, 'suspension');
  if (
    suspension &&
    bool(suspension, 'dispatching') === true &&
    (arr(obj(suspension, 'dispatchingOnClusters'), 'clusterNames')?.length ?? 0) > 0
  ) {
    errors.push(
      invalid(
        'spec.suspension.suspension',
        suspension,
        'suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames',
      ),
    );
  }
  return { errors, warnings: rs.warnings };
}

/** Every place a propagation policy names clusters, for the unknown-cluster warnings. */
function clusterWarnings(spec: Obj, known: ReadonlySet<string> | undefined): string[] {
  if (!known) return [];
  const out: string[] = [];
  const placement = obj(spec, 'placement');
  const affinity = obj(placement, 'clusterAffinity');
  if (affinity) out.push(...unknownClusterWarnings(affinity, 'spec.placement.clusterAffinity', known));
  for (const [i, term] of objectsOf(arr(placement, 'clusterAffinities'))) {
    const at = `spec.placement.clusterAffinities[${i}]`;
    out.push(...unknownClusterWarnings(term, at, known));
    for (const [j, o] of objectsOf(arr(term, 'overflowAffinities')))
      out.push(...unknownClusterWarnings(o, `${at}.overflowAffinities[${j}]`, known));
  }
  const weights = arr(obj(obj(placement, 'replicaScheduling'), 'weightPreference'), 'staticWeightList');
  for (const [i, w] of objectsOf(weights)) {
    const target = obj(w, 'targetCluster');
    if (target)
      out.push(
        ...unknownClusterWarnings(
          target,
          `spec.placement.replicaScheduling.weightPreference.staticWeightList[${i}].targetCluster`,
          known,
        ),
      );
  }
  const dispatching = obj(obj(spec, 'suspension'), 'dispatchingOnClusters');
  if (dispatching) out.push(...unknownClusterWarnings(dispatching, 'spec.suspension.dispatchingOnClusters', known));
  return out;
}

/** The webhook-level rules for a PP/CPP whose apiVersion, kind and metadata have been checked. */
export function validatePropagationPolicy(policy: Obj, ctx: PropagationContext): Findings {
  const identity = checkIdentity(policy, ctx);
  if (identity) return { errors: [identity], warnings: [] };
  const spec = obj(policy, 'spec');
  if (!spec) return { errors: [], warnings: [] };
  const findings = validatePropagationSpec(spec, ctx.namespace);
  findings.warnings.push(...clusterWarnings(spec, ctx.knownClusters), ...propagationNotActedUpon(spec));
  return findings;
}
