// Choosing the propagation policy for each template (Karmada pkg/detector/policy.go, compare.go):
// any matching PropagationPolicy (same namespace) beats any ClusterPropagationPolicy; among one kind, higher
// explicit spec.priority wins, then higher implicit priority (name > labelSelector > all), then the
// byte-wise smaller name.
//
// Policies are indexed by (apiVersion, kind, namespace, name) of their selectors, so a template is only
// compared with the policies that name its kind — no scan of every policy per template.
//
// Claims stick (Karmada pkg/detector: ClaimPolicyForObject, preemption.go): a template that records its
// claim (CLAIM_* labels and annotations, Karmada's own keys, which the controller writes on the hub) stays
// with that policy while it exists and still selects it, even when a better policy appears; the better
// policy takes it only with `preemption: Always` and, like Karmada, a PropagationPolicy preempts a
// ClusterPropagationPolicy whatever the priorities, a policy of the same kind needs a strictly higher
// explicit priority, and a ClusterPropagationPolicy never preempts a PropagationPolicy.

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

/** Karmada's claim metadata on a resource template. */
export const CLAIM_PP_ID_LABEL = 'propagationpolicy.karmada.io/permanent-id';
export const CLAIM_PP_NAMESPACE_ANNOTATION = 'propagationpolicy.karmada.io/namespace';
export const CLAIM_PP_NAME_ANNOTATION = 'propagationpolicy.karmada.io/name';
export const CLAIM_CPP_ID_LABEL = 'clusterpropagationpolicy.karmada.io/permanent-id';
export const CLAIM_CPP_NAME_ANNOTATION = 'clusterpropagationpolicy.karmada.io/name';
export const CLAIM_LABELS: readonly string[] = [CLAIM_PP_ID_LABEL, CLAIM_CPP_ID_LABEL];
export const CLAIM_ANNOTATIONS: readonly string[] = [
  CLAIM_PP_NAMESPACE_ANNOTATION,
  CLAIM_PP_NAME_ANNOTATION,
  CLAIM_CPP_NAME_ANNOTATION,
];

/** The policies' own permanent-id labels: Flotilla's, and Karmada's (per kind). */
const POLICY_ID_LABELS = [
  'policy.flotilla.io/permanent-id',
  'propagationpolicy.karmada.io/permanent-id',
  'clusterpropagationpolicy.karmada.io/permanent-id',
];

export interface RecordedClaim {
  kind: 'PropagationPolicy' | 'ClusterPropagationPolicy';
  namespace: string;
  name: string;
  id: string | undefined;
}

/** The claim a template records, if any (a PropagationPolicy's first: Karmada removes the other on claim). */
export function recordedClaim(t: Template): RecordedClaim | undefined {
  const meta = isObject(t.object.metadata) ? t.object.metadata : {};
  const annotations = isObject(meta.annotations) ? meta.annotations : {};
  const ppName = str(annotations[CLAIM_PP_NAME_ANNOTATION]);
  if (ppName && t.ref.namespace !== undefined)
    return {
      kind: 'PropagationPolicy',
      namespace: str(annotations[CLAIM_PP_NAMESPACE_ANNOTATION]) || t.ref.namespace,
      name: ppName,
      id: t.labels[CLAIM_PP_ID_LABEL] || undefined,
    };
  const cppName = str(annotations[CLAIM_CPP_NAME_ANNOTATION]);
  if (cppName)
    return {
      kind: 'ClusterPropagationPolicy',
      namespace: '',
      name: cppName,
      id: t.labels[CLAIM_CPP_ID_LABEL] || undefined,
    };
  return undefined;
}

/** A policy object's permanent id (Flotilla's label, or Karmada's for its kind), when it has one. */
export function permanentIdOf(policy: unknown): string | undefined {
  const meta = isObject(policy) && isObject(policy.metadata) ? policy.metadata : {};
  const labels = isObject(meta.labels) ? meta.labels : {};
  for (const l of POLICY_ID_LABELS) {
    const v = str(labels[l]);
    if (v) return v;
  }
  return undefined;
}

function holds(p: PolicyEntry, r: RecordedClaim): boolean {
  if (p.kind !== r.kind || p.name !== r.name || p.namespace !== r.namespace) return false;
  const id = permanentIdOf(p.object);
  return r.id === undefined || id === undefined || r.id === id;
}

/** Karmada's preemption rules: may `preemptor` take a template claimed by `holder`? */
function preempts(preemptor: PolicyEntry, holder: PolicyEntry): boolean {
  if (preemptor === holder || str(preemptor.spec.preemption) !== 'Always') return false;
  if (preemptor.kind === 'PropagationPolicy' && holder.kind === 'ClusterPropagationPolicy') return true;
  if (preemptor.kind === 'ClusterPropagationPolicy' && holder.kind === 'PropagationPolicy') return false;
  return explicitPriority(preemptor) > explicitPriority(holder);
}

export class PropagationMatcher {
  private readonly namespaced: PolicyIndex;
  private readonly clusterWide: PolicyIndex;

  constructor(policies: readonly PolicyEntry[]) {
    this.namespaced = new PolicyIndex(policies.filter((p) => p.kind === 'PropagationPolicy'));
    this.clusterWide = new PolicyIndex(policies.filter((p) => p.kind === 'ClusterPropagationPolicy'));
  }

  /**
   * The claiming policy, or undefined when none matches (or the namespace is reserved): the recorded
   * claim while its policy still selects the template and no policy preempts it, else the best match.
   */
  claim(t: Template): Claim | undefined {
    if (isReservedNamespace(t.ref.namespace)) return undefined;
    const namespaced =
      t.ref.namespace !== undefined ? this.namespaced.candidates(t).filter((p) => p.namespace === t.ref.namespace) : [];
    const clusterWide = this.clusterWide.candidates(t);
    const best = highest(namespaced, t) ?? highest(clusterWide, t);
    const recorded = recordedClaim(t);
    if (!recorded || !best) return best;
    const holder = (recorded.kind === 'PropagationPolicy' ? namespaced : clusterWide).find((p) => holds(p, recorded));
    if (!holder) return best;
    const priority = propagationPriority(holder, t);
    if (priority === MatchPriority.MisMatch) return best;
    // The best of the policies that may preempt the holder, if any does.
    const preemptors = [...namespaced, ...clusterWide].filter((p) => preempts(p, holder));
    const preemptor =
      highest(
        preemptors.filter((p) => p.kind === 'PropagationPolicy'),
        t,
      ) ??
      highest(
        preemptors.filter((p) => p.kind === 'ClusterPropagationPolicy'),
        t,
      );
    return preemptor ?? { policy: holder, priority };
  }
}
