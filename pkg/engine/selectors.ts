// Selector semantics (Karmada pkg/util/selector.go): label selectors, resource selectors with implicit
// priority, and cluster affinity matching.

import { arr, isObject, obj, own, str, stringList } from './json.js';
import type { ClusterInfo, ObjectRef } from './types.js';

/** Implicit priority of a selector match. */
export const enum MatchPriority {
  MisMatch = 0,
  All = 1,
  LabelSelector = 2,
  Name = 3,
}

const QUALIFIED_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/**
 * Matches a metav1.LabelSelector (given as unknown input) against labels. An invalid selector (empty key, unknown operator, In
 * without values, Exists with values) matches nothing, as LabelSelectorAsSelector's error does. An empty
 * selector `{}` matches everything.
 */
export function matchLabelSelector(selector: unknown, labels: Readonly<Record<string, string>>): boolean {
  if (!isObject(selector)) return false;
  const ml = selector.matchLabels;
  if (ml !== undefined && ml !== null) {
    if (!isObject(ml)) return false;
    for (const [k, v] of Object.entries(ml)) {
      if (!QUALIFIED_KEY.test(k) || typeof v !== 'string') return false;
      if (own(labels, k) !== v) return false;
    }
  }
  const exprs = selector.matchExpressions;
  if (exprs !== undefined && exprs !== null) {
    if (!Array.isArray(exprs)) return false;
    for (const e of exprs) {
      if (!isObject(e)) return false;
      const key = str(e.key) ?? '';
      if (!QUALIFIED_KEY.test(key)) return false;
      const values = stringList(e.values);
      const value = own(labels, key);
      const has = value !== undefined;
      switch (e.operator) {
        case 'In':
          if (values.length === 0) return false;
          if (!has || !values.includes(value)) return false;
          break;
        case 'NotIn':
          if (values.length === 0) return false;
          if (has && values.includes(value)) return false;
          break;
        case 'Exists':
          if (values.length > 0) return false;
          if (!has) return false;
          break;
        case 'DoesNotExist':
          if (values.length > 0) return false;
          if (has) return false;
          break;
        default:
          return false;
      }
    }
  }
  return true;
}

/** ResourceSelectorPriority: how well one selector matches an object. */
export function selectorPriority(
  selector: unknown,
  ref: ObjectRef,
  labels: Readonly<Record<string, string>>,
): MatchPriority {
  if (!isObject(selector)) return MatchPriority.MisMatch;
  if (selector.apiVersion !== ref.apiVersion || selector.kind !== ref.kind) return MatchPriority.MisMatch;
  const ns = str(selector.namespace) ?? '';
  if (ns !== '' && ns !== (ref.namespace ?? '')) return MatchPriority.MisMatch;
  const name = str(selector.name) ?? '';
  if (name !== '') return name === ref.name ? MatchPriority.Name : MatchPriority.MisMatch;
  if (selector.labelSelector === undefined || selector.labelSelector === null) return MatchPriority.All;
  return matchLabelSelector(selector.labelSelector, labels) ? MatchPriority.LabelSelector : MatchPriority.MisMatch;
}

/** ResourceMatchSelectorsPriority: the best match over a list (nil/empty list: MisMatch). */
export function selectorsPriority(
  selectors: unknown,
  ref: ObjectRef,
  labels: Readonly<Record<string, string>>,
): MatchPriority {
  let best = MatchPriority.MisMatch;
  for (const s of arr(selectors) ?? []) {
    const p = selectorPriority(s, ref, labels);
    if (p > best) best = p;
    if (best === MatchPriority.Name) break;
  }
  return best;
}

function matchZones(operator: unknown, values: string[], zones: readonly string[]): boolean {
  switch (operator) {
    case 'In':
      return zones.length > 0 && zones.some((z) => values.includes(z));
    case 'NotIn':
      return !zones.some((z) => values.includes(z));
    case 'Exists':
      return zones.length > 0;
    case 'DoesNotExist':
      return zones.length === 0;
    default:
      return false;
  }
}

/** A node-selector requirement against the {provider, region} field set (k8s NodeSelectorRequirementsAsSelector). */
function matchFieldRequirement(
  key: string,
  operator: unknown,
  values: string[],
  fields: Readonly<Record<string, string>>,
): boolean {
  if (key === '' || !QUALIFIED_KEY.test(key)) return false;
  const v = own(fields, key);
  const has = v !== undefined;
  switch (operator) {
    case 'In':
      return values.length > 0 && has && values.includes(v ?? '');
    case 'NotIn':
      return values.length > 0 && !(has && values.includes(v ?? ''));
    case 'Exists':
      return values.length === 0 && has;
    case 'DoesNotExist':
      return values.length === 0 && !has;
    case 'Gt':
    case 'Lt': {
      if (values.length !== 1 || !has) return false;
      const want = Number.parseInt(values[0] ?? '', 10);
      const got = Number.parseInt(v ?? '', 10);
      if (Number.isNaN(want) || Number.isNaN(got)) return false;
      return operator === 'Gt' ? got > want : got < want;
    }
    default:
      return false;
  }
}

/** ClusterMatches: exclude wins; then label selector, field selector and names, all ANDed. */
export function clusterMatches(cluster: ClusterInfo, affinity: unknown): boolean {
  if (!isObject(affinity)) return true;
  const exclude = stringList(affinity.exclude);
  if (exclude.includes(cluster.name)) return false;
  if (affinity.labelSelector !== undefined && affinity.labelSelector !== null) {
    if (!matchLabelSelector(affinity.labelSelector, cluster.labels)) return false;
  }
  const fs = obj(affinity.fieldSelector);
  if (fs) {
    for (const e of arr(fs.matchExpressions) ?? []) {
      if (!isObject(e)) return false;
      const key = str(e.key) ?? '';
      const values = stringList(e.values);
      if (key === 'zone') {
        if (!matchZones(e.operator, values, cluster.zones)) return false;
      } else if (!matchFieldRequirement(key, e.operator, values, cluster.fields)) {
        return false;
      }
    }
  }
  const names = stringList(affinity.clusterNames);
  return names.length === 0 || names.includes(cluster.name);
}
