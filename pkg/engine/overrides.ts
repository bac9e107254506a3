// Which override rules apply to a template, in application order (Karmada overridemanager.go):
// every ClusterOverridePolicy, then the OverridePolicies of the template's namespace; within each kind,
// ascending by (implicit priority, name), so the most specific and then the last-named policy is applied
// last and has the last word. Empty selectors match everything with the lowest implicit priority. A policy
// without overrideRules contributes its deprecated top-level targetCluster/overriders as rule -1.

import type { ClusterAffinity, Overriders } from '../../api/policy/v1alpha1/types.js';
import { arr, isObject, obj } from './json.js';
import type { PolicyEntry, Template } from './inputs.js';
import { MatchPriority, selectorsPriority } from './selectors.js';

export interface OverrideRule {
  policy: PolicyEntry;
  /** Index in spec.overrideRules; -1 for the deprecated top-level form. */
  index: number;
  targetCluster: ClusterAffinity | undefined;
  overriders: Overriders;
  /** The admission operations the rule acts on (spec.overrideRules[i].targetOperations; absent: CREATE). */
  operations: ReadonlySet<string>;
}

/** Admission operations an override rule can name. Rendering for propagation is a CREATE. */
export type AdmissionOperation = 'CREATE' | 'UPDATE';

const CREATE_ONLY: ReadonlySet<string> = new Set(['CREATE']);

function operationsOf(rule: Record<string, unknown>): ReadonlySet<string> {
  const ops = arr(rule.targetOperations);
  if (!ops || ops.length === 0) return CREATE_ONLY;
  return new Set(ops.filter((o): o is string => typeof o === 'string'));
}

/** True when the rule acts on an object admitted with `operation`. */
export function ruleActsOn(rule: OverrideRule, operation: AdmissionOperation): boolean {
  return rule.operations.has(operation);
}

const ruleCache = new WeakMap<PolicyEntry, OverrideRule[]>();

/** The policy's rules, read once per policy entry (entries are immutable once built). */
function rulesOf(p: PolicyEntry): OverrideRule[] {
  let rules = ruleCache.get(p);
  if (!rules) {
    rules = readRules(p);
    ruleCache.set(p, rules);
  }
  return rules;
}

function readRules(p: PolicyEntry): OverrideRule[] {
  const rules = arr(p.spec.overrideRules);
  if (rules && rules.length > 0) {
    return rules.flatMap((r, index) =>
      isObject(r)
        ? [
            {
              policy: p,
              index,
              targetCluster: obj(r.targetCluster),
              overriders: obj(r.overriders) ?? {},
              operations: operationsOf(r),
            },
          ]
        : [],
    );
  }
  const overriders = obj(p.spec.overriders);
  if (!overriders) return [];
  return [
    {
      policy: p,
      index: -1,
      targetCluster: obj(p.spec.targetCluster),
      overriders: overriders,
      operations: CREATE_ONLY,
    },
  ];
}

function ordered(policies: readonly PolicyEntry[], t: Template): OverrideRule[] {
  const matched: Array<{ p: PolicyEntry; priority: MatchPriority }> = [];
  for (const p of policies) {
    const selectors = arr(p.spec.resourceSelectors);
    const priority =
      !selectors || selectors.length === 0 ? MatchPriority.All : selectorsPriority(selectors, t.ref, t.labels);
    if (priority !== MatchPriority.MisMatch) matched.push({ p, priority });
  }
  matched.sort((a, b) => a.priority - b.priority || (a.p.name < b.p.name ? -1 : a.p.name > b.p.name ? 1 : 0));
  return matched.flatMap((m) => rulesOf(m.p));
}

export class OverrideCatalog {
  private readonly clusterWide: PolicyEntry[];
  private readonly byNamespace = new Map<string, PolicyEntry[]>();

  constructor(policies: readonly PolicyEntry[]) {
    this.clusterWide = policies.filter((p) => p.kind === 'ClusterOverridePolicy');
    for (const p of policies) {
      if (p.kind !== 'OverridePolicy') continue;
      const list = this.byNamespace.get(p.namespace);
      if (list) list.push(p);
      else this.byNamespace.set(p.namespace, [p]);
    }
  }

  /** Every rule that may apply to the template, in application order (cluster targeting comes later). */
  rulesFor(t: Template): OverrideRule[] {
    const rules = ordered(this.clusterWide, t);
    if (t.ref.namespace !== undefined) rules.push(...ordered(this.byNamespace.get(t.ref.namespace) ?? [], t));
    return rules;
  }
}
