// Choosing the propagation policy for each template (Karmada pkg/detector/policy.go, compare.go):
// any matching PropagationPolicy (same namespace) beats any ClusterPropagationPolicy; among one kind, higher
// explicit spec.priority wins, then higher implicit priority (name > labelSelector > all), then the
// byte-wise smaller name.
//
// Policies are indexed by (apiVersion, kind, namespace, name) of their selectors, so a template is only
// compared with the policies that name its kind — no scan of every policy per template.

import { arr, isObject, str } from './json.js';
import type { PolicyEntry, Template } from './inputs.js';
import { MatchPriority, selectorPriority } from './selectors.js';

/** Namespaces whose objects are never propagated (Karmada skips kube-* and its own system namespaces). */
export function isReservedNamespace(ns: string | undefined): boolean {
  return ns !== undefined && (ns.startsWith('kube-') || ns === 'flotilla-system');
}

const ANY = '\u0000*';
const key = (apiVersion: string, kind: string, namespace: string, name: string) =>
  `${apiVersion}\n${kind}\n${namespace}\n${name}`;

export interface Claim {
  policy: PolicyEntry;
  priority: MatchPriority;
}

export class PolicyIndex {
  private readonly buckets = new Map<string, PolicyEntry[]>();

  constructor(policies: readonly PolicyEntry[]) {
    for (const p of policies) {
      const seen = new Set<string>();
      for (const s of arr(p.spec.resourceSelectors) ?? []) {
        if (!isObject(s)) continue;
        const apiVersion = str(s.apiVersion) ?? '';
        const kind = str(s.kind) ?? '';
        // A PropagationPolicy only ever claims templates of its own namespace; its empty selector namespace
        // means that namespace (the mutating webhook's default).
        const ns = p.kind === 'PropagationPolicy' ? p.namespace : str(s.namespace) || ANY;
        const k = key(apiVersion, kind, ns, str(s.name) ?? '');
        if (seen.has(k)) continue;
        seen.add(k);
        const list = this.buckets.get(k);
        if (list) list.push(p);
        else this.buckets.set(k, [p]);
      }
    }
  }

  /** Every policy that has a selector which could match the template (then checked in full). */
  candidates(t: Template): PolicyEntry[] {
    const { apiVersion, kind, name } = t.ref;
    const ns = t.ref.namespace ?? '';
    const out = new Set<PolicyEntry>();
    for (const n of ns ? [ns, ANY] : [ANY, '']) {
      for (const nm of [name, '']) for (const p of this.buckets.get(key(apiVersion, kind, n, nm)) ?? []) out.add(p);
    }
    return [...out];
  }
}

/** Implicit priority of a propagation policy for a template; PP selectors default to the policy namespace. */
export function propagationPriority(p: PolicyEntry, t: Template): MatchPriority {
  let best = MatchPriority.MisMatch;
  for (const s of arr(p.spec.resourceSelectors) ?? []) {
    const sel =
      p.kind === 'PropagationPolicy' && isObject(s) && !str(s.namespace) ? { ...s, namespace: p.namespace } : s;
    const pr = selectorPriority(sel, t.ref, t.labels);
    if (pr > best) best = pr;
  }
  return best;
}

function explicitPriority(p: PolicyEntry): number {
  const v = p.spec.priority;
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** True when a beats b: explicit priority, then implicit, then the smaller name (later wins on equal names). */
function beats(a: Claim, b: Claim): boolean {
  const ea = explicitPriority(a.policy);
  const eb = explicitPriority(b.policy);
  if (ea !== eb) return ea > eb;
  if (a.priority !== b.priority) return a.priority > b.priority;
  return a.policy.name <= b.policy.name;
}

function highest(candidates: readonly PolicyEntry[], t: Template): Claim | undefined {
  let best: Claim | undefined;
  for (const p of candidates) {
    const priority = propagationPriority(p, t);
    if (priority === MatchPriority.MisMatch) continue;
    const claim = { policy: p, priority };
    if (!best || beats(claim, best)) best = claim;
  }
  return best;
}

export class PropagationMatcher {
  private readonly namespaced: PolicyIndex;
  private readonly clusterWide: PolicyIndex;

  constructor(policies: readonly PolicyEntry[]) {
    this.namespaced = new PolicyIndex(policies.filter((p) => p.kind === 'PropagationPolicy'));
    this.clusterWide = new PolicyIndex(policies.filter((p) => p.kind === 'ClusterPropagationPolicy'));
  }

  /** The claiming policy, or undefined when none matches (or the namespace is reserved). */
  claim(t: Template): Claim | undefined {
    if (isReservedNamespace(t.ref.namespace)) return undefined;
    if (t.ref.namespace !== undefined) {
      const pp = highest(
        this.namespaced.candidates(t).filter((p) => p.namespace === t.ref.namespace),
        t,
      );
      if (pp) return pp;
    }
    return highest(this.clusterWide.candidates(t), t);
  }
}
